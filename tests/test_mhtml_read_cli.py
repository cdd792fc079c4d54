"""`pdi mhtml ls` and `pdi mhtml check` on corpus files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pdi.cli import cli

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus" / "mhtml"


def test_ls_json_lists_parts_and_their_references() -> None:
    r = CliRunner().invoke(cli, ["mhtml", "ls", "--json", str(CORPUS / "pimht_example_com.mhtml")])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    parts = out["parts"]
    assert [p["content_type"] for p in parts] == ["text/html", "text/css", "image/png"]
    assert parts[0]["root"] is True
    assert parts[0]["location"] == "https://www.example.com/"
    sheet = parts[0]["references"][0]
    assert (sheet["kind"], sheet["status"], sheet["part"], sheet["rule"]) == (
        "stylesheet",
        "satisfied",
        1,
        "cid-content-location",
    )
    assert parts[1]["referenced_by"] == [0]
    assert parts[2]["referenced_by"] == []
    assert out["warnings"] == []
    assert (out["root"], out["title"], out["snapshot_location"]) == (0, "Example Domain", "https://www.example.com/")


def test_ls_table() -> None:
    r = CliRunner().invoke(cli, ["mhtml", "ls", str(CORPUS / "fastmhtml_hn.mhtml")])
    assert r.exit_code == 0
    assert "https://news.ycombinator.com/news.css?i3QZFyQGGgTNEupNTrnX" in r.output
    assert "image/gif" in r.output
    assert r.output.startswith("5 parts, 53120 bytes; root: part 0\nsaved from: https://news.ycombinator.com/\ntitle: Hacker News\n")


def test_check_clean_file_exits_zero() -> None:
    r = CliRunner().invoke(cli, ["mhtml", "check", str(CORPUS / "fastmhtml_example.com.mhtml")])
    assert r.exit_code == 0
    assert "1 part, 0 references satisfied, 0 errors, 0 warnings, 1 link to pages outside the file" in r.output


def test_check_warnings_fail_only_with_strict() -> None:
    path = str(CORPUS / "pimht_example_com.mhtml")
    r = CliRunner().invoke(cli, ["mhtml", "check", path])
    assert r.exit_code == 0
    assert "warning: unreferenced-part (part 2)" in r.output
    r = CliRunner().invoke(cli, ["mhtml", "check", "--strict", path])
    assert r.exit_code == 3


def test_check_duplicate_locations_is_an_error() -> None:
    r = CliRunner().invoke(cli, ["mhtml", "check", str(CORPUS / "fastmhtml_marketwatch.mhtml")])
    assert r.exit_code == 3
    assert r.output.count("error: duplicate-location") == 26


def test_malformed_file_is_one_line_and_a_syntax_status() -> None:
    r = CliRunner().invoke(cli, ["mhtml", "check", str(CORPUS / "msindwan_missing_boundary_header.mhtml")])
    assert r.exit_code == 1
    assert r.output.strip() == "pdi: syntax error: multipart/related has no boundary parameter (rule boundary, offset 0)"


def test_missing_file_is_not_found(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["mhtml", "ls", str(tmp_path / "nope.mhtml")])
    assert r.exit_code == 4


def test_ls_and_check_read_standard_input_as_unpack_does(tmp_path: Path) -> None:
    data = (CORPUS / "pimht_example_com.mhtml").read_bytes()
    r = CliRunner().invoke(cli, ["mhtml", "ls", "--json", "-"], input=data)
    assert r.exit_code == 0, r.output
    assert [p["content_type"] for p in json.loads(r.output)["parts"]] == ["text/html", "text/css", "image/png"]
    r = CliRunner().invoke(cli, ["mhtml", "check", "-"], input=data)
    assert r.exit_code == 0, r.output
    assert "3 parts" in r.output
    # Something that is not a readable file is a storage error (exit 8), not a traceback.
    (tmp_path / "f").write_bytes(data)
    r = CliRunner().invoke(cli, ["mhtml", "check", str(tmp_path / "f" / "y")])  # ENOTDIR
    assert r.exit_code == 8, r.output
    assert r.output.count("\n") == 1


def test_ls_prints_labels_as_written_never_as_terminal_markup(tmp_path: Path) -> None:
    # A label is data from the file: "[/x]" or "[bold]" (rich markup) and ":smile:" (an
    # emoji code) are printed as they are, and never make the listing fail.
    data = (
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        b"--b\r\nContent-Type: text/html\r\nContent-Location: http://x/[/nope]\r\n\r\n"
        b'<img src="http://x/[bold]a[/bold].png">\r\n'
        b"--b\r\nContent-Type: image/png\r\nContent-Location: http://x/[bold]a[/bold].png\r\n\r\nPNG\r\n"
        b"--b\r\nContent-Type: image/png\r\nContent-Location: http://x/:smile:.png\r\n\r\nPNG\r\n"
        b"--b--\r\n"
    )
    path = tmp_path / "m.mht"
    path.write_bytes(data)
    r = CliRunner().invoke(cli, ["mhtml", "ls", str(path)])
    assert r.exit_code == 0, r.output
    for label in ("http://x/[/nope]", "http://x/[bold]a[/bold].png", "http://x/:smile:.png"):
        assert label in r.output


def test_check_and_unpack_never_send_control_characters_from_the_file_to_the_terminal(tmp_path: Path) -> None:
    # An OSC sequence (ESC ] … BEL) in a label would retitle or confuse a terminal.
    data = (
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        b'--b\r\nContent-Type: text/html\r\nContent-Location: http://x/i.html\r\n\r\n<img src="a\x1b]0;pwned\x07.png">\r\n'
        b"--b\r\nContent-Type: image/png\r\nContent-Location: http://x/\x1b]0;pwned\x07\r\n\r\nPNG\r\n"
        b"--b--\r\n"
    )
    path = tmp_path / "m.mht"
    path.write_bytes(data)
    for args in (["check", str(path)], ["ls", str(path)], ["unpack", str(path), str(tmp_path / "out")]):
        r = CliRunner().invoke(cli, ["mhtml", *args])
        assert r.exit_code == 0, r.output
        assert "\x1b" not in r.output and "\x07" not in r.output, (args, r.output)
        assert "pwned" in r.output or args[0] == "unpack"
