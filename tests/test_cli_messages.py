"""What the command line says when it refuses: what was wrong, and the near value meant where there is one.

Each message here misled a new archivist once (issue 26, item 7): a directory
asked for --format, an unknown token or country listed nothing, Ctrl-C exited 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pdi.cli import cli
from pdi.cli.commands import EXIT_INTERRUPTED
from pdi.formats import media_type_for, near_tokens

S = "example.ac.gb"


@pytest.fixture
def archive(tmp_path: Path) -> str:
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    return location


def test_pdi_add_of_a_directory_says_it_is_a_directory_and_what_to_do(archive: str, tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    for extra in ([], ["--format", "text"]):  # with a format given too: not "cannot read", not "give --format"
        r = CliRunner().invoke(cli, ["add", "-s", S, str(folder), "--archive", archive, *extra])
        assert r.exit_code == 2, r.output
        assert f"{folder} is a directory: pdi deposits files, not a directory" in r.output
        assert f"pdi add -s SERIES {folder}/*;" in r.output
        assert "--format" not in r.output.split("Error:")[1]
    r = CliRunner().invoke(cli, ["version", "urn:pdi://example.ac.gb/2026/01/01/1", str(folder), "--archive", archive])
    assert r.exit_code == 2 and "is a directory" in r.output


def test_an_unknown_format_token_is_refused_with_the_near_tokens_and_the_rule(archive: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"some notes\n")
    r = CliRunner().invoke(cli, ["add", "-s", S, "-f", "txt", str(tmp_path / "notes.txt"), "--archive", archive])
    assert r.exit_code == 6
    assert r.output.startswith("pdi: unsupported: unknown format token 'txt'; did you mean 'text'? (tokens are the"
                               " draft's text, html, xml, sgml and header;")
    r = CliRunner().invoke(cli, ["ls", "--archive", archive])
    assert r.output == ""  # nothing deposited


@pytest.mark.parametrize(("given", "meant"), [
    ("txt", "text"),         # a file-name suffix: what a file so named holds
    ("jpg", "image+jpeg"),   # image/jpeg's minor type is registered under video too
    ("mp3", "audio+mpeg"),
    ("htm", "html"),
    ("pdff", "pdf"),         # a letter too many
    ("utf8", "utf-8"),       # a charset token
    ("TXT", "text"),         # tokens are case-insensitive
])
def test_each_suggested_token_is_a_real_token(given: str, meant: str) -> None:
    near = near_tokens(given)
    assert near[0] == meant
    for token in near:
        media_type_for(token)  # resolves: a suggestion is never itself refused


def test_a_token_near_nothing_suggests_nothing() -> None:
    assert near_tokens("qqqqzzzz") == []


def test_a_country_that_is_not_iso_3166_suggests_the_code_that_is(archive: str) -> None:
    r = CliRunner().invoke(cli, ["series", "add", "library.example.uk", "--archive", archive])
    assert r.exit_code == 1
    assert "not 'uk' (§2.3); did you mean 'library.example.gb'?" in r.output
    # reading a name with .uk is a warning, with the same suggestion
    r = CliRunner().invoke(cli, ["parse", "pdi://library.example.uk/2026/11/25/1.text.1"])
    assert r.exit_code == 0
    assert "'uk' is not an ISO 3166-1 alpha-2 country code (§2.3); did you mean 'gb'?" in r.output
    r = CliRunner().invoke(cli, ["series", "add", "library.example.zz", "--archive", archive])
    assert r.exit_code == 1 and "did you mean" not in r.output  # no code is near a made-up one


def test_an_unknown_fragment_scheme_names_the_schemes_there_are(archive: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one two three\n")
    r = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "a.txt"), "--archive", archive])
    name = r.output.strip()
    r = CliRunner().invoke(cli, ["get", f"{name}#chr=0,3", "--archive", archive])
    assert r.exit_code == 6
    assert "no evaluator for fragment scheme 'chr' on text/plain; did you mean 'char'?" in r.output
    assert "(there: byte, char, line)" in r.output  # elt and name: HTML and XML schemes, not text/plain's (the draft)
    r = CliRunner().invoke(cli, ["get", f"{name}#elt=1,2", "--archive", archive])
    assert r.exit_code == 1 and "(allowed: byte, char, line, or an extension scheme)" in r.output  # the grammar's list


def test_an_output_file_that_cannot_be_written_is_a_usage_mistake_said_before_reading(archive: str,
                                                                                       tmp_path: Path) -> None:
    # -o into a folder that is not there, or under a file: the user's mistake (exit 2), not the archive's storage
    # failing (8), and no traceback; by click and by the fast path (a whole process) alike
    (tmp_path / "a.txt").write_bytes(b"one two three\n")
    name = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "a.txt"), "--archive", archive]).output.strip()
    (tmp_path / "plain").write_bytes(b"")
    for target, why in ((tmp_path / "missing" / "x.txt", f"the folder {tmp_path / 'missing'} does not exist"),
                        (tmp_path / "plain" / "x.txt", f"{tmp_path / 'plain'} is not a folder")):
        r = CliRunner().invoke(cli, ["get", name, "-o", str(target), "--archive", archive])
        assert r.exit_code == 2 and f"pdi: cannot write {target}: {why}" in r.output, r.output
        whole = subprocess.run([sys.executable, "-m", "pdi", "get", name, "-o", str(target), "--archive", archive],
                               capture_output=True, text=True, timeout=60)
        assert (whole.returncode, whole.stderr) == (2, f"pdi: cannot write {target}: {why}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "archive", "plain"]
    # --info writes no -o: nothing to refuse
    info = CliRunner().invoke(cli, ["get", name, "--info", "-o", str(tmp_path / "missing" / "x"), "--archive", archive])
    assert info.exit_code == 0 and "sha256" in info.output.lower(), info.output
    written = tmp_path / "out.txt"
    assert CliRunner().invoke(cli, ["get", name, "-o", str(written), "--archive", archive]).exit_code == 0
    assert written.read_bytes() == b"one two three\n"


def test_an_unknown_command_suggests_the_near_command_even_before_it_is_loaded() -> None:
    r = subprocess.run([sys.executable, "-m", "pdi", "ad"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "No such command 'ad'. Did you mean 'add'?" in r.stderr


def _files(root: Path) -> dict[str, bytes]:
    """Every file the archive holds but its SQLite catalog (which a read may touch), with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith("catalog.sqlite")}


def test_ctrl_c_during_a_large_add_exits_130_and_leaves_the_archive_as_it_was(archive: str, tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_bytes(b"deposited before\n")
    kept = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "kept.txt"), "--archive", archive]).output
    before = _files(Path(archive))
    listed = CliRunner().invoke(cli, ["ls", "--archive", archive]).output
    child = subprocess.Popen(
        [sys.executable, "-m", "pdi", "add", "-s", S, "-f", "octet-stream", "--no-progress", "-", "--archive", archive],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ},
    )
    assert child.stdin is not None
    try:
        chunk = os.urandom(1 << 20)
        for _ in range(16):  # a pipe holds 64 KiB: 16 MiB written is 16 MiB the deposit has read and is storing
            child.stdin.write(chunk)
            child.stdin.flush()
        child.send_signal(signal.SIGINT)  # the input is still open: the deposit is mid-stream
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == EXIT_INTERRUPTED == 130, err
    assert out == b""  # no name printed: nothing was minted
    assert err.decode().strip().endswith("pdi: interrupted: nothing it was writing was kept")
    assert _files(Path(archive)) == before  # no blob, no partial file left behind
    assert CliRunner().invoke(cli, ["ls", "--archive", archive]).output == listed
    verified = CliRunner().invoke(cli, ["verify", "--archive", archive])
    assert verified.exit_code == 0, verified.output
    # and the archive takes the next deposit as if nothing had happened
    (tmp_path / "next.txt").write_bytes(b"deposited after\n")
    after = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "next.txt"), "--archive", archive])
    assert after.exit_code == 0 and after.output.strip().endswith("/2.text.1"), (kept, after.output)


def test_pdi_audit_names_the_exact_versioned_name_of_a_deposit(archive: str, tmp_path: Path) -> None:
    # a deposit embargoed from the start is audited (as every deposit through the API is)
    (tmp_path / "sealed.txt").write_bytes(b"sealed until then\n")
    r = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "sealed.txt"), "--embargo-until", "2099-01-01",
                                 "--archive", archive])
    assert r.exit_code == 0, r.output
    name = r.output.strip()
    (line,) = [f for f in CliRunner().invoke(cli, ["audit", "--archive", archive]).output.splitlines()
               if f.split("\t")[3] == "deposit"]
    _, _, _, _, subject, detail, _ = line.split("\t")
    # the document, then the name written (…/1.text.1) and the embargo it was deposited under
    assert (subject, detail) == (name.rsplit(".", 2)[0], f"{name}; embargoed until 2099-01-01T00:00:00.000000Z")


def test_pdi_audit_names_the_embargo_of_a_version(archive: str, tmp_path: Path) -> None:
    """pdi version --embargo-until: its entry names the embargo (GMT) with the name written; a deposit without an
    embargo made on the command line is not in the log."""
    (tmp_path / "open.txt").write_bytes(b"open\n")
    first = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "open.txt"), "--archive", archive])
    assert first.exit_code == 0, first.output
    generic = first.stdout.strip().rsplit(".", 2)[0]
    (tmp_path / "amended.txt").write_bytes(b"amended, sealed\n")
    second = CliRunner().invoke(cli, ["version", generic, str(tmp_path / "amended.txt"), "--embargo-until",
                                      "2098-03-04T05:06:07+01:00", "--archive", archive])
    assert second.exit_code == 0, second.output
    lines = [f.split("\t") for f in CliRunner().invoke(cli, ["audit", "--archive", archive]).stdout.splitlines()]
    assert [(f[3], f[4], f[5]) for f in lines] == [
        ("version", generic, f"{second.stdout.strip()}; embargoed until 2098-03-04T04:06:07.000000Z")]


@pytest.mark.parametrize("refused", ["bad key=2", "ok=\x00", f"long={'x' * 70_000}"])
def test_meta_with_one_statement_refused_makes_none_of_them(archive: str, tmp_path: Path, refused: str) -> None:
    """Statements given together are made together: one refused (a bad key, a NUL, a value too long) and the
    command fails having stated nothing, not the ones before it."""
    (tmp_path / "a.txt").write_bytes(b"text\n")
    name = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "a.txt"), "--archive", archive]).output.strip()
    failed = CliRunner().invoke(cli, ["meta", name, "title=first", refused, "creator=last", "--archive", archive])
    assert failed.exit_code in (1, 7), failed.output
    assert "stated" not in failed.output
    shown = CliRunner().invoke(cli, ["meta", name, "--history", "--archive", archive])
    assert (shown.exit_code, shown.stdout) == (0, "")


def test_meta_of_a_name_nothing_is_stated_about_says_so_and_where_statements_are(archive: str, tmp_path: Path) -> None:
    """The court's guide states a title of ``…/2.text.1``; ``pdi meta …/2`` (its generic name) printed nothing at
    all, as if the title were lost. Still nothing on stdout (a statement is about exactly the name it was made of),
    but a note on stderr says nothing is stated about that name and which name to ask; a name with statements
    prints them and no note."""
    (tmp_path / "a.txt").write_bytes(b"one\ntwo\n")
    name = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "a.txt"), "--archive", archive]).stdout.strip()
    generic = name.rsplit(".", 2)[0]
    assert name == f"{generic}.text.1"
    stated = CliRunner().invoke(cli, ["meta", name, "title=Schedule", "--archive", archive])
    assert stated.exit_code == 0, stated.output
    for argv in ([generic], [generic, "--history"]):
        r = CliRunner().invoke(cli, ["meta", *argv, "--archive", archive])
        assert (r.exit_code, r.stdout) == (0, ""), r.output
        assert r.stderr == (f"note: nothing is stated about {generic}; a statement is about the name it was made of:"
                            " those about a version are shown by pdi meta and the version's name, which pdi get"
                            f" '{generic}' lists\n")
        assert name in CliRunner().invoke(cli, ["get", generic, "--archive", archive]).stdout.splitlines()
    passage = f"{name}#line=1,2"
    r = CliRunner().invoke(cli, ["meta", passage, "--archive", archive])
    assert (r.exit_code, r.stdout) == (0, "")
    assert r.stderr == (f"note: nothing is stated about {passage}; a statement is about the name it was made of:"
                        f" those about {name} are shown by pdi meta '{name}'\n")
    shown = CliRunner().invoke(cli, ["meta", name, "--archive", archive])
    assert (shown.exit_code, shown.stdout, shown.stderr) == (0, "title\tSchedule\n", "")
    (tmp_path / "b.txt").write_bytes(b"three\n")
    other = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "b.txt"), "--archive", archive]).stdout.strip()
    r = CliRunner().invoke(cli, ["meta", other, "--archive", archive])
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", f"note: nothing is stated about {other}\n")


def test_a_refusal_of_a_document_names_it_by_its_generic_name(archive: str, tmp_path: Path) -> None:
    """``pdi version`` of a serial not minted, a version not there, a format deposited with other bytes: each names
    the document by the name a reader gives pdi (``urn:pdi://…/9``), where it said ``example.ac.gb 2026-12-02 9``,
    which no command reads."""
    (tmp_path / "a.txt").write_bytes(b"one\n")
    (tmp_path / "b.txt").write_bytes(b"two\n")
    name = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "a.txt"), "--archive", archive]).stdout.strip()
    generic = name.rsplit(".", 2)[0]
    absent = generic.rsplit("/", 1)[0] + "/9"
    cases = [
        # (and, as pdi get says of it, the documents its day holds: test_cli_nearest_writers.py)
        (["version", absent, str(tmp_path / "b.txt")], 4, f"pdi: not found: no document {absent} in the archive;"
         f" {S} holds these documents minted on {generic.split('/')[-4]}-{generic.split('/')[-3]}-"
         f"{generic.split('/')[-2]}: {generic}\n"),
        (["version", f"{generic}.text.5", str(tmp_path / "b.txt"), "--add-format"], 4,
         f"pdi: not found: no version 5 of {generic} in the archive\n"),
        (["version", name, str(tmp_path / "b.txt"), "--add-format"], 5,
         f"pdi: immutability conflict: format text of version 1 of {generic} is already deposited with other bytes;"
         " deposited bytes never change (deposit a new version instead)\n"),
    ]
    for argv, code, said in cases:
        r = CliRunner().invoke(cli, [*argv, "--archive", archive])
        assert (r.exit_code, r.stderr) == (code, said), r.output
    assert CliRunner().invoke(cli, ["get", generic, "--archive", archive]).exit_code == 0  # the name said is read


def test_ls_after_a_name_that_is_none_names_the_option(archive: str) -> None:
    r = CliRunner().invoke(cli, ["ls", "--after", "x", "--archive", archive])
    assert r.exit_code == 1
    # the offset is into the option's value
    assert r.stderr == "pdi: syntax error: --after: expected 'urn:pdi:' or 'pdi:' (rule pdi, offset 0)\n"


def test_cite_says_which_side_of_the_citation_is_no_pdi(archive: str) -> None:
    r = CliRunner().invoke(cli, ["cite", "x@y", "--archive", archive])
    assert r.exit_code == 1
    assert r.stderr == ("pdi: syntax error: the citing PDI (before '@'): expected 'urn:pdi:' or 'pdi:'"
                        " (rule pdi, offset 0)\n")
    citing = f"urn:pdi://{S}/2026/11/27/1.text.1"
    r = CliRunner().invoke(cli, ["cite", f"{citing}@5=y", "--archive", archive])
    assert r.exit_code == 1
    # the cited PDI starts after "@5=": at offset len(citing) + 3
    assert r.stderr == ("pdi: syntax error: the cited PDI (after '='): expected 'urn:pdi:' or 'pdi:'"
                        f" (rule pdi, offset {len(citing) + 3})\n")


def test_registering_a_series_again_as_it_is_changes_nothing_and_says_so(archive: str) -> None:
    # a series is registered once; asking again for what is already so (as a re-run script does) is no conflict
    again = CliRunner().invoke(cli, ["series", "add", S.upper(), "--archive", archive])
    assert again.exit_code == 0, again.output
    assert again.stdout == f"series {S}\n"
    assert again.stderr.startswith(f"pdi: series {S} is registered already (since ") and "nothing changed" in again.stderr
    listed = CliRunner().invoke(cli, ["series", "ls", "--archive", archive])
    assert listed.stdout == f"{S}\n"


def test_registering_a_series_again_otherwise_says_what_is_recorded_and_what_to_do(archive: str) -> None:
    sub = f"press.{S}"
    assert CliRunner().invoke(cli, ["series", "add", sub, "--authority", "the press office", "--archive",
                                    archive]).exit_code == 0
    other = CliRunner().invoke(cli, ["series", "add", sub, "--authority", "someone else", "--archive", archive])
    assert other.exit_code == 5  # an immutability conflict (the exit-codes page): what is recorded never changes
    message = other.stderr
    assert message.startswith(f"pdi: immutability conflict: series {sub} is registered already"), message
    assert "'the press office'" in message and "'someone else'" in message
    assert "pdi series ls" in message and "\n" not in message.rstrip("\n")
    listed = CliRunner().invoke(cli, ["series", "ls", "--archive", archive])
    assert listed.stdout == f"{S}\n{sub}\t(under {S})\n"  # as it was


def test_a_name_whose_hash_is_written_as_in_a_resolvers_address_is_refused_with_the_name_meant(
    archive: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The name part of the README's N2R address (``…/1.text.1%23line=5,6``: RFC 2169 writes the ``#`` as ``%23``)
    given to ``pdi get``: a version ``1%23line=0,1`` is no version, so the error offers the name with its ``#``, as
    the reader's Resolve box does; the last ``%23`` is the fragment's, an id's own escaped ``#`` (``a%23b``:
    PDI-GRAMMAR.md, reserved characters) stays as it is. Both readings of the command line say it."""
    from pdi.cli import main

    (tmp_path / "two.txt").write_bytes(b"one\ntwo\n")
    names = []
    for extra in ([], ["--id", "a#b"]):
        added = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "two.txt"), "--archive", archive, *extra])
        assert added.exit_code == 0, added.output
        names.append(added.stdout.strip())
    assert "/a%23b.text.1" in names[1]  # the id's "#" escaped in the name
    for name in names:
        meant = f"did you mean '{name}#line=0,1'?"
        r = CliRunner().invoke(cli, ["get", name + "%23line=0,1", "--info", "--archive", archive])  # click reads it
        assert r.exit_code == 1, r.output
        assert r.stderr.startswith("pdi: syntax error: ") and meant in r.stderr, r.stderr
        with pytest.raises(SystemExit) as ended:  # the plain command line, read without click
            main(["get", name + "%23line=0,1", "--archive", archive])
        assert ended.value.code == 1
        said = capsys.readouterr().err
        assert said.startswith("pdi: syntax error: ") and meant in said, said
        got = CliRunner().invoke(cli, ["get", name + "#line=0,1", "--archive", archive])
        assert got.stdout_bytes == b"one\r\n"  # the name meant: line 0 of the CRLF-canonical text (PDI-GRAMMAR §3)
    nothing = CliRunner().invoke(cli, ["get", names[0] + "%23line", "--archive", archive])  # #line is no fragment
    assert nothing.exit_code == 1 and "did you mean" not in nothing.stderr


def test_a_resolvers_address_given_for_a_name_is_refused_with_the_name_it_holds(archive: str, tmp_path: Path) -> None:
    """A link of the guides (``http://127.0.0.1:8000/view?pdi=NAME%23char=…``, or the name's RFC 2169 address)
    given whole to ``pdi get``, ``pdi meta``, ``pdi version``: still refused (exit 1, nothing done), and the error
    names the PDI the address holds, to give instead, where it said only "expected 'urn:pdi:' or 'pdi:'". An address
    that holds no name is said as before."""
    (tmp_path / "two.txt").write_bytes(b"one\ntwo\n")
    added = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "two.txt"), "--id", "q3.report",
                                     "--archive", archive])
    assert added.exit_code == 0, added.output
    name = added.stdout.strip()
    assert name.endswith("/q3%2Ereport.text.1")  # an escape of its own, which the link writes %252E
    cited = name + "#line=0,1"
    links = {
        # as the viewer's address bar shows it, the name percent-encoded as a query's value (WHATWG URL)
        f"http://127.0.0.1:8000/view?pdi={urllib.parse.quote(cited, safe='')}": "",
        # as the guides write it by hand: only the "#" as %23
        f"http://127.0.0.1:8000/view?pdi={cited.replace('%', '%25').replace('#', '%23')}": "",
        # RFC 2169: the name is the query, its "#" %23; a "#" after it is the browser's
        f"HTTPS://resolver.example/uri-res/N2R?{cited.replace('#', '%23')}#char=0,3": "char=0,3",
    }
    for link, browsers in links.items():
        for argv in (["get", link], ["meta", link], ["version", link, str(tmp_path / "two.txt")]):
            r = CliRunner().invoke(cli, [*argv, "--archive", archive])
            assert r.exit_code == 1, (argv, r.output)
            said = r.stderr
            assert said.startswith("pdi: syntax error: expected 'urn:pdi:' or 'pdi:'; this is a resolver's address"
                                   f" of the PDI '{cited}': give the name itself"), said
            assert (f"(the #{browsers} after the address is the browser's" in said) == bool(browsers), said
    listed = CliRunner().invoke(cli, ["ls", S, "--archive", archive])
    assert listed.stdout.split() == [name]  # no version deposited
    for other in ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/view?pdi=urn:pdi:nothing", "http://[x"):
        r = CliRunner().invoke(cli, ["get", other, "--archive", archive])
        assert (r.exit_code, r.stderr) == (1, "pdi: syntax error: expected 'urn:pdi:' or 'pdi:' (rule pdi, offset"
                                              " 0)\n"), r.stderr
    got = CliRunner().invoke(cli, ["get", cited, "--archive", archive])
    assert got.stdout_bytes == b"one\r\n"  # the name offered: line 0 of the CRLF-canonical text (PDI-GRAMMAR §3)


@given(st.text(max_size=80), st.sampled_from(["http://h/view?pdi=", "https://h/a/view?x=1&pdi=",
                                              "http://h/uri-res/N2R?", "http://h/uri-res/N2Ls?", "http://["]))
def test_the_name_in_an_address_is_a_pdi_or_none_whatever_the_address_holds(tail: str, head: str) -> None:
    from pdi.identifier import PDI
    from pdi.server.protocol.rfc2169 import name_in_address

    held = name_in_address(head + tail)  # never raises
    if held is not None:
        PDI.parse(held[0])


@given(st.integers(1, 10**6), st.integers(0, 500), st.integers(0, 500))
def test_a_viewers_address_as_a_browser_writes_it_gives_back_its_name(serial: int, a: int, b: int) -> None:
    from pdi.server.protocol.rfc2169 import name_in_address

    name = f"urn:pdi://{S}/2026/12/02/{serial}.text.1#char={min(a, b)},{max(a, b)}"
    assert name_in_address(f"http://h:8000/view?pdi={urllib.parse.quote(name, safe='')}") == (name, "")
    assert name_in_address(f"http://h:8000/uri-res/N2R?{name.replace('#', '%23')}#t") == (name, "t")


@pytest.mark.parametrize("name", ["crawl.warc", "crawl.warc.gz", "crawl.wacz"])
def test_import_of_a_web_archive_that_is_not_there_says_so_before_asking_for_a_series(
        archive: str, tmp_path: Path, name: str) -> None:
    # as for a bag that is not there: asking for --series first sent a mistyped path through two runs
    missing = str(tmp_path / name)
    for extra in ([], ["--series", S]):
        r = CliRunner().invoke(cli, ["import", missing, "--archive", archive, *extra])
        assert (r.exit_code, r.stderr) == (4, f"pdi: not found: no file {missing}\n")
    bag = CliRunner().invoke(cli, ["import", str(tmp_path / "bag"), "--archive", archive])
    assert (bag.exit_code, bag.stderr) == (4, f"pdi: not found: no file or directory {tmp_path / 'bag'}\n")


def test_mirror_add_no_check_of_an_origin_that_is_down_says_to_give_its_key(archive: str) -> None:
    # --no-check reads no manifest, but the key is still fetched unless --key gives it: the help says "it is down,
    # say; give --key", and the refusal now says so too, not only "Connection refused"
    import socket

    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    down = CliRunner().invoke(cli, ["mirror", "add", base, "--series", S, "--no-check", "--archive", archive])
    assert down.exit_code == 16
    assert down.stderr.startswith(f"pdi: remote error: cannot fetch the key set {base}/api/keys: ")
    assert down.stderr.endswith(f"; --no-check reads nothing else of {base}: give its key with --key JWK|FILE|URL\n")
    checked = CliRunner().invoke(cli, ["mirror", "add", base, "--series", S, "--archive", archive])
    assert checked.exit_code == 16 and "--no-check" not in checked.stderr  # without it the origin must answer


UNKNOWN = "neither in the IANA registry nor a codec"


@pytest.mark.parametrize(("typed", "meant"), [("utf8x", "UTF-8"), ("utf-9", "UTF-8"), ("shift-jiss", "Shift_JIS"),
                                              ("windows-1252x", "windows-1252"), ("koi8r", "KOI8-R")])
def test_an_unknown_charset_names_the_option_its_value_and_the_charset_meant(
        archive: str, tmp_path: Path, typed: str, meant: str) -> None:
    text = tmp_path / "letter.txt"
    text.write_bytes(b"Dear Sir,\n")
    for argv in (["add", "-s", S, str(text), "--charset", typed, "--archive", archive],
                 ["text", str(text), "#char=0,4", "--charset", typed]):
        result = CliRunner().invoke(cli, argv)
        assert (result.exit_code, result.stdout) == (6, ""), argv  # unsupported, nothing printed or deposited
        said = f"pdi: unsupported: --charset: unknown charset '{typed}': {UNKNOWN}; did you mean '{meant}'"
        assert result.stderr.startswith(said), result.stderr
        assert result.stderr.endswith("?\n") and result.stderr.count("\n") == 1
    assert CliRunner().invoke(cli, ["ls", "--archive", archive]).stdout == ""


def test_a_charset_near_none_is_named_without_a_guess(archive: str, tmp_path: Path) -> None:
    text = tmp_path / "letter.txt"
    text.write_bytes(b"Dear Sir,\n")
    result = CliRunner().invoke(cli, ["add", "-s", S, str(text), "--charset", "klingon", "--archive", archive])
    assert (result.exit_code, result.stderr) == (6, f"pdi: unsupported: --charset: unknown charset 'klingon': {UNKNOWN}\n")


def test_pdi_version_names_its_charset_option_too(archive: str, tmp_path: Path) -> None:
    text = tmp_path / "letter.txt"
    text.write_bytes(b"Dear Sir,\n")
    name = CliRunner().invoke(cli, ["add", "-s", S, str(text), "--archive", archive]).stdout.strip()
    result = CliRunner().invoke(cli, ["version", name.rsplit(".", 2)[0], str(text), "--charset", "latin-1x",
                                      "--archive", archive])
    assert result.exit_code == 6
    assert result.stderr.startswith(f"pdi: unsupported: --charset: unknown charset 'latin-1x': {UNKNOWN};"
                                    " did you mean 'ISO-8859-1'")


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.:", min_size=1, max_size=45))
def test_every_charset_offered_is_one_pdi_reads_and_at_most_three(label: str) -> None:
    from pdi.charsets import codec_for, near_charsets

    near = near_charsets(label)
    assert len(near) <= 3 and len(set(near)) == len(near)
    for name in near:
        codec_for(name)  # raises if pdi would refuse the name it offered


@pytest.mark.parametrize(("typed", "offset", "said", "meant"), [
    ("http://127.0.0.1:9/a b.html", 20, "a URI writes ' ' as %20 (RFC 3986 §2.1)", "http://127.0.0.1:9/a%20b.html"),
    ("http://127.0.0.1:9/bücher", 20, "a URI writes 'ü' as %C3%BC, its UTF-8 octets (RFC 3987 §3.1)",
     "http://127.0.0.1:9/b%C3%BCcher"),
    ("http://127.0.0.1:9/100%.html", 22, "a URI writes a '%' that begins no %HH escape as %25 (RFC 3986 §2.1)",
     "http://127.0.0.1:9/100%25.html"),
    ("http://bücher.example/a b", 8, "a URI writes the host's 'ü' in IDNA's ASCII form (RFC 3987 §3.1)",
     "http://xn--bcher-kva.example/a%20b"),  # the A-label as Python's idna codec writes it: "bücher".encode("idna")
])
def test_capture_of_a_url_not_escaped_says_the_url_meant_and_fetches_nothing(
        archive: str, typed: str, offset: int, said: str, meant: str) -> None:
    # the name minted holds the URL as given: "a b" and "a%20b", one page to a browser, would be two documents
    result = CliRunner().invoke(cli, ["capture", typed, "--series", S, "--allow-private", "--archive", archive])
    assert (result.exit_code, result.stdout) == (1, "")  # a syntax error; port 9 (discard) is never asked
    assert result.stderr == (f"pdi: syntax error: {said}, as a browser sends it, and the name a capture mints holds"
                             f" the URL as given: did you mean '{meant}'? (rule RFC 3986 URI, offset {offset})\n")
    assert CliRunner().invoke(cli, ["ls", "--archive", archive]).stdout == ""

