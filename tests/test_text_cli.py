"""`pdi text FILE FRAGMENT`: output, JSON, --make, exit statuses and the one stderr line."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

SRC = Path(__file__).resolve().parents[1] / "src"
TEXT = "ünë\r\ntwo\nthree\rfour\x85five"


def _file(tmp_path: Path, text: str = TEXT, charset: str = "utf-8") -> Path:
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode(charset))
    return path


def test_text_prints_the_selection(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["text", str(_file(tmp_path)), "line=1,3"])
    assert result.exit_code == 0, result.output
    assert result.output == "two\nthree\r"


def test_text_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["text", str(_file(tmp_path)), "#char=0,4", "--json"])
    assert result.exit_code == 0, result.output
    # ü n ë CRLF: four characters, 3 + 2 + 2 octets... "ü"=2, "n"=1, "ë"=2, CRLF=2: 7 octets
    assert json.loads(result.output) == {
        "ranges": [{"start": 0, "end": 4, "byte_start": 0, "byte_end": 7}],
        "text": "ünë\r\n",
        "clamped": False,
        "integrity": "unchecked",
    }


def test_text_wilde_and_pdi_syntaxes(tmp_path: Path) -> None:
    path = _file(tmp_path)
    wilde = CliRunner().invoke(cli, ["text", str(path), "line(1)match(f[a-z]*)", "--syntax", "wilde"])
    assert wilde.exit_code == 0, wilde.output
    # draft-wilde §2.1.3: only the CRLF ends a line, so line 1 is "ünë\r\n"; the matches follow
    assert wilde.stdout_bytes.decode("utf-8") == "ünë\r\nfourfive"  # (.output turns CRLF into LF)
    second = CliRunner().invoke(cli, ["text", str(path), "line(2)", "--syntax", "wilde"])
    assert second.output == "two\nthree\rfour\x85five"  # LF, CR and NEL do not end a line
    pdi = CliRunner().invoke(cli, ["text", str(path), "char=3,6", "--syntax", "pdi", "--json"])
    assert pdi.exit_code == 0, pdi.output
    out = json.loads(pdi.output)
    assert out["text"] == "\r\nt"
    assert out["canonicalized"] is True


def test_text_charset(tmp_path: Path) -> None:
    path = _file(tmp_path, "a\nb\nc", "utf-16")
    result = CliRunner().invoke(cli, ["text", str(path), "line=1,2", "--charset", "UTF-16"])
    assert result.exit_code == 0, result.output
    assert result.output == "b\n"


def test_text_make_and_verify(tmp_path: Path) -> None:
    path = _file(tmp_path)
    digest = hashlib.md5(path.read_bytes()).hexdigest()
    made = CliRunner().invoke(cli, ["text", str(path), "--make", "line=1,2", "--md5", "--length"])
    assert made.exit_code == 0, made.output
    # 3 + 1 (CRLF) + 3 + 1 + 5 + 1 + 4 + 1 (NEL) + 4 = 23 characters
    assert made.output == f"line=1,2;length=23,UTF-8;md5={digest},UTF-8\n"
    checked = CliRunner().invoke(cli, ["text", str(path), made.output.strip(), "--json"])
    assert json.loads(checked.output)["integrity"] == "ok"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "pdi", "text", *args], capture_output=True, text=True, env=env, check=False
    )


def test_text_exit_statuses(tmp_path: Path) -> None:
    path = str(_file(tmp_path))
    ok = _run(path, "char=0,1")
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "ü", "")
    syntax = _run(path, "line=20,10")
    assert syntax.returncode == 1
    assert syntax.stdout == ""
    assert len(syntax.stderr.strip().splitlines()) == 1
    assert "not properly ordered" in syntax.stderr
    failed = _run(path, "char=0,1;length=99")
    assert failed.returncode == 3
    assert len(failed.stderr.strip().splitlines()) == 1
    assert "length=99" in failed.stderr
    missing = _run(str(tmp_path / "nope.txt"), "char=0")
    assert missing.returncode == 4
    usage = _run(path)
    assert usage.returncode == 2


def test_what_the_passage_does_not_show_is_said_on_stderr(tmp_path: Path) -> None:
    """A selection clamped at the end, a check for another charset left unmade and a part of a draft-wilde fragment
    ignored are said on stderr (the passage alone on stdout, exit 0), as `pdi get` says a clamped name: a reader who
    sees only the passage would take a check of the wrong charset for one that held."""
    path = str(_file(tmp_path))
    # RFC 5147 §2.1: CRLF, LF, CR and NEL each end a line, so TEXT has 5 lines and line=3,9 runs to its end
    clamped = _run(path, "line=3,9")
    assert (clamped.returncode, clamped.stdout) == (0, "four\x85five")
    assert clamped.stderr == "warning: line=3,9 reaches past the end: clamped to it\n"
    assert _run(path, "line=3,5").stderr == ""  # line 5 is the end itself: nothing clamped

    wrong = hashlib.md5(b"not the text").hexdigest()
    unmade = _run(path, f"char=0,3;md5={wrong},ISO-8859-1")  # the file is read as UTF-8 (§2.3: not this check's)
    assert (unmade.returncode, unmade.stdout) == (0, "ünë")
    assert f"md5={wrong},ISO-8859-1 was not made" in unmade.stderr
    assert "--transcode" in unmade.stderr
    assert _run(path, f"char=0,3;md5={wrong},ISO-8859-1", "--transcode").returncode == 3  # made, it fails
    latin1 = hashlib.md5(TEXT.encode("latin-1")).hexdigest()
    made = _run(path, f"char=0,3;md5={latin1},ISO-8859-1", "--transcode")
    assert (made.returncode, made.stdout, made.stderr) == (0, "ünë", "")

    many = _run(path, "char=0,1" + "".join(f";length={n},ISO-8859-1" for n in range(1, 9)))
    assert many.returncode == 0
    assert len(many.stderr.splitlines()) == 6  # five checks named, then how many more
    assert many.stderr.splitlines()[-1] == "… and 3 more like them"

    # draft-wilde §3: a range whose counts are not properly ordered is ignored, the rest of the fragment used
    wilde = _run(path, "char(5,2)char(1,3)", "--syntax", "wilde")  # 1-based and closed: the first three
    assert (wilde.returncode, wilde.stdout) == (0, "ünë")
    assert wilde.stderr == "warning: char(5,2): range is not properly ordered: ignored\n"


def test_text_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    result = CliRunner().invoke(cli, ["text", str(path), "line=0,5", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["clamped"] is True
    assert result.stderr == "warning: line=0,5 reaches past the end: clamped to it\n"


def test_a_passage_piped_on_keeps_its_escape_sequences_octet_for_octet(tmp_path: Path) -> None:
    """The passage is the file's own characters: an ESC [ … m a file holds is not stripped on the way to a pipe
    (click strips colour codes from what it echoes to a non-terminal), so it equals what `pdi get` gives."""
    text = "red \x1b[31mRED\x1b[0m end\x1b]0;title\x07"
    path = _file(tmp_path, text)
    whole = _run(str(path), f"char=0,{len(text)}")
    assert (whole.returncode, whole.stdout) == (0, text)
    # chars 4..13 are ESC [ 3 1 m R E D ESC [ (ten code points)
    assert _run(str(path), "char=4,14").stdout == "\x1b[31mRED\x1b["


def test_a_pipe_is_read_as_it_comes_not_as_an_empty_file() -> None:
    """A pipe (`pdi text <(cmd) …`, /dev/stdin) has no size to map: its octets are read, not taken for none."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    piped = subprocess.run(
        [sys.executable, "-m", "pdi", "text", "/dev/stdin", "char=6,11", "--json"], input=b"hello world\r\n",
        capture_output=True, env=env, check=False, timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == {
        "ranges": [{"start": 6, "end": 11, "byte_start": 6, "byte_end": 11}],
        "text": "world", "clamped": False, "integrity": "unchecked",
    }


def test_a_pipe_longer_than_the_limit_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a pipe gives is held in memory: past :data:`MAX_STREAM` octets it is refused (exit 7), not read on."""
    from pdi.cli import text_cmd

    monkeypatch.setattr(text_cmd, "MAX_STREAM", 10)
    read, write = os.pipe()
    try:
        os.write(write, b"x" * 11)
        os.close(write)
        result = CliRunner().invoke(cli, ["text", f"/dev/fd/{read}", "char=0,1"])
    finally:
        os.close(read)
    assert result.exit_code == 7, result.output
    assert "10 octets" in result.output and "save it to a file" in result.output
