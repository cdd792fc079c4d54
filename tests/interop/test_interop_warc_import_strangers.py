"""Three leftovers of reading a stranger's WARC: a header line that is no field, records whose target is no HTTP URI,
and a .warc.gz whose gzip member holds several records.

Each record is written here octet by octet; what is expected is worked out from WARC 1.1 (ISO 28500:2017) §4 and
annex D, RFC 1952 (gzip members, with the standard library's ``gzip``) and warcio's own reading, never from pdi's
output.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from pdi.archive import Archive
from pdi.errors import ParseError
from pdi.interop.warc import read_index, sources_for

S = "web.example.us"
BLOCK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello"


def _record(n: int, extra: str = "", uri: str | None = None, kind: str = "response", block: bytes = BLOCK) -> bytes:
    head = (f"WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:6f2c4f7e-0000-4000-8000-{n:012d}>\r\n"
            f"WARC-Date: 2024-05-06T10:00:00Z\r\n{extra}"
            f"WARC-Target-URI: {uri or f'http://example.org/{n}'}\r\n"
            f"Content-Type: application/http;msgtype=response\r\nContent-Length: {len(block)}\r\n\r\n")
    return head.encode() + block + b"\r\n\r\n"


def _write(folder: Path, records: list[bytes], compression: str) -> Path:
    """``compression``: "" (none), "members" (a gzip member a record, WARC 1.1 annex D), "whole" (one member)."""
    path = folder / ("a.warc" if not compression else "a.warc.gz")
    if compression == "members":
        path.write_bytes(b"".join(gzip.compress(r) for r in records))
    elif compression == "whole":
        path.write_bytes(gzip.compress(b"".join(records)))
    else:
        path.write_bytes(b"".join(records))
    return path


def _pdi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, check=False)


def _archive(folder: Path) -> Path:
    archive = folder / "archive"
    Archive.init(archive).add_series(S)
    return archive


# --- a WARC header line that is no field (WARC 1.1 §4: named-field = field-name ":" [ field-value ]) ----------------

#: WARC 1.1 §4 (from RFC 2616's): a field-name is a token, characters that are no CTL nor separator, SP and HT among
#: the separators, then its colon. pdi reads white space before the colon (a leniency, docs/explanation/web-archives.md)
#: and, as warcio does, a name holding another separator ("X-/"); white space inside a name, or no colon, it refuses.
_NAMED_FIELD = re.compile(r"[^\x00-\x20\x7f:]+[ \t]*:.*")


@settings(max_examples=150, deadline=None)
@given(rest=st.text(alphabet="abcXYZ09-_.: \t/", max_size=24), compression=st.sampled_from(["", "members"]))
def test_a_warc_header_line_that_is_no_field_is_refused_naming_the_record_and_the_line(
        tmp_path_factory: pytest.TempPathFactory, rest: str, compression: str) -> None:
    """warcio drops a line with no colon unsaid (and reads ``WARC-Payload-Digest sha1:…`` as a field named
    ``WARC-Payload-Digest sha1``, the digest unchecked); pdi refuses a line that is no named field, in the direct
    reader and in warcio's alike, naming the record (the second here, its offset) and the line."""
    line = "X-" + rest
    first = _record(0)
    path = _write(tmp_path_factory.mktemp("w"), [first, _record(1, extra=line + "\r\n")], compression)
    offset = len(gzip.compress(first)) if compression else len(first)
    if _NAMED_FIELD.fullmatch(line):
        index = read_index(sources_for(path), limit=1 << 20)
        assert [e.uri for e in index.entries] == ["http://example.org/0", "http://example.org/1"]
        return
    # warcio reads it: the oracle that the file is otherwise whole
    with path.open("rb") as fh:
        assert len(list(ArchiveIterator(fh))) == 2
    with pytest.raises(ParseError) as caught:
        read_index(sources_for(path), limit=1 << 20)
    shown = line.replace("\t", "\\t")  # (a tab shown as \t, as every stranger's text in a message)
    assert str(caught.value).startswith(f"{path.name}: the record at offset {offset} (http://example.org/1) is"
                                        f" damaged: its WARC header line '{shown}' is no field"), str(caught.value)


@pytest.mark.parametrize("line", ["WARC-Foo bar", "WARC-Payload-Digest sha1:AAAA", "WARC-Foo"])
@pytest.mark.parametrize("compression", ["", "members"])
def test_the_command_refuses_a_header_line_without_its_colon(tmp_path: Path, line: str, compression: str) -> None:
    path = _write(tmp_path, [_record(0, extra=line + "\r\n")], compression)
    done = _pdi("import", str(path), "--series", S, "--archive", str(_archive(tmp_path)))
    assert done.returncode == 1, done.stderr
    assert f"the record at offset 0 (http://example.org/0) is damaged: its WARC header line '{line}' is no field" in done.stderr
