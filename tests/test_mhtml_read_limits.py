"""MHTML read within bounds: a header block's fields and the time to parse a file (pdi.mhtml.limits).

A part of a browser's MHTML has four to six header lines; a file of header
lines costs half a second a megabyte to parse. Both bounds are tried on files
built here, and the corpus's real captures (``tests/data/corpus/mhtml``) must
stay within them.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from pdi.errors import LimitError, ParseError
from pdi.mhtml import parse
from pdi.mhtml.limits import Limits

CORPUS = Path(__file__).resolve().parent / "data" / "corpus" / "mhtml"
HEAD = b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"\r\n\r\n'


def _lines(count: int) -> bytes:
    return (HEAD + b"--b\r\nContent-Type: text/html\r\nContent-Location: http://example.org/\r\n"
            + b"X: a\r\n" * count + b"\r\n<p>x</p>\r\n--b--\r\n")


def test_a_header_block_of_more_than_1000_fields_is_refused() -> None:
    assert parse(_lines(998)).root.data == b"<p>x</p>"  # with its two others: 1,000
    with pytest.raises(LimitError, match=rf"header block at offset {len(HEAD) + 5} has more than 1,?000 fields"):
        parse(_lines(999))
    assert parse(_lines(5000), limits=Limits(max_header_lines=6000)).root.data == b"<p>x</p>"


def test_a_file_of_header_lines_is_refused_fast(tmp_path: Path) -> None:
    # 20 parts of 40,000 header lines: 2.6 s and 100 MiB to read before the line bound; now the first block stops it.
    part = b"--b\r\nContent-Type: text/plain\r\n" + b"X: a\r\n" * 40_000 + b"\r\nx\r\n"
    (tmp_path / "lines.mht").write_bytes(HEAD + part * 20 + b"--b--\r\n")
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pdi", "mhtml", "ls", str(tmp_path / "lines.mht")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == LimitError.exit_code, done.stderr
    assert f"header block at offset {len(HEAD) + 5} has more than" in done.stderr
    assert time.monotonic() - began < 30


def test_the_parse_time_limit() -> None:
    data = _lines(10)
    with pytest.raises(LimitError, match=r"parsing took more than 1e-09 CPU seconds \(the time limit for one file\), at offset"):
        parse(data, limits=Limits(max_parse_seconds=1e-9))
    assert parse(data, limits=Limits(max_parse_seconds=None)).root.data == b"<p>x</p>"


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.iterdir() if p.suffix in (".mht", ".mhtml")), ids=lambda p: p.name)
def test_the_corpus_parses_within_the_bounds(path: Path) -> None:
    try:
        parse(path.read_bytes())
    except ParseError:
        assert path.name.startswith("msindwan_missing_boundary")  # damaged on purpose (corpus/mhtml/README.md)
