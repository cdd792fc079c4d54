"""WARC records read as WARC 1.1 (ISO 28500:2017) and HTTP (RFC 9112) say, where pdi read them otherwise.

Each record is written here octet by octet; what is expected of it is worked out from the specification (and the
standard library's ``email.header`` for RFC 2047), never from pdi's own output.
"""

from __future__ import annotations

import datetime
import email.header
import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.errors import LimitError, ParseError, UnsupportedError
from pdi.identifier import PDI
from pdi.interop.warc import read_index, sources_for

BLOCK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello"
URI = "http://example.org/a"
S = "web.example.us"


def _record(fields: dict[str, str | None] | None = None, block: bytes = BLOCK, *, version: str = "WARC/1.1",
            length: int | None = None) -> bytes:
    values: dict[str, str | None] = {
        "WARC-Record-ID": "<urn:uuid:6f2c4f7e-0000-4000-8000-000000000001>", "WARC-Date": "2024-05-06T10:00:00Z",
        "WARC-Type": "response", "WARC-Target-URI": URI, "Content-Type": "application/http"}
    values.update(fields or {})
    values["Content-Length"] = str(len(block) if length is None else length)
    head = "".join(f"{name}: {value}\r\n" for name, value in values.items() if value is not None)
    return (version + "\r\n" + head).encode() + b"\r\n" + block + b"\r\n\r\n"


def _read(raw: bytes, folder: Path, gzipped: bool = False) -> object:
    path = folder / ("a.warc.gz" if gzipped else "a.warc")
    path.write_bytes(gzip.compress(raw) if gzipped else raw)
    return read_index(sources_for(path), limit=1 << 20)


# --- 2. a target URI in angle brackets with spaces inside them, or written as an RFC 2047 encoded word ----------

@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("written", [f"< {URI} >", f"<{URI} >", f"<  {URI}>", f" < {URI} > "])
def test_a_target_uri_with_spaces_inside_its_brackets_is_read_as_the_uri(
        tmp_path: Path, written: str, gzipped: bool) -> None:
    """WARC 1.0 wrote ``"<" uri ">"`` (WARC 1.1 §5.11's erratum dropped the brackets); the spaces around a URI are
    no part of it (RFC 3986 appendix C: "the extra whitespace should be ignored" of a delimited URI). pdi read the
    record as nothing, unsaid: warcio turns each space into %20, so the URI no longer began ``http:``."""
    index = _read(_record({"WARC-Target-URI": written}), tmp_path, gzipped)
    (entry,) = index.entries  # type: ignore[attr-defined]
    assert (entry.kind, entry.uri, entry.status) == ("response", URI, 200)
    assert index.kept[(0, entry.offset)] == b"hello"  # type: ignore[attr-defined]


@settings(max_examples=40)
@given(charset=st.sampled_from(["utf-8", "iso-8859-1", "koi8-r"]), path=st.from_regex(r"[a-z0-9/]{0,20}", fullmatch=True),
       gzipped=st.booleans(), bracketed=st.booleans())
def test_a_target_uri_written_as_rfc_2047_encoded_words_is_read_decoded(
        tmp_path_factory: pytest.TempPathFactory, charset: str, path: str, gzipped: bool, bracketed: bool) -> None:
    """WARC 1.1 §4 lets a field's words be RFC 2047 encoded words; the standard library writes them here (its
    ``email.header.Header``, which picks Q or B encoding), and the record is read under the URI they spell."""
    uri = f"http://example.org/{path}"
    written = email.header.Header(uri, charset).encode(maxlinelen=1000)
    assert written.startswith("=?")  # an encoded word, not the URI as it is
    if bracketed:
        written = f"<{written}>"
    index = _read(_record({"WARC-Target-URI": written}), tmp_path_factory.mktemp("w"), gzipped)
    (entry,) = index.entries  # type: ignore[attr-defined]
    assert (entry.kind, entry.uri, entry.status) == ("response", uri, 200)


# --- 5. a last record whose Content-Length ends before its block does ------------------------------------------

@settings(max_examples=40)
@given(short=st.integers(1, 200), before=st.integers(0, 2))
def test_a_content_length_short_of_the_last_records_block_is_said_so_not_a_file_cut_short(
        tmp_path_factory: pytest.TempPathFactory, short: int, before: int) -> None:
    """ISO 28500 §4: ``warc-record = header CRLF block CRLF CRLF``, the block ``Content-Length`` octets long. A file
    whose last record's Content-Length falls short of its block holds every octet it should, but octets that are no
    blank line stand between where the length ends and the CRLF CRLF: the length is wrong, the file is not cut. pdi
    said "the file ends before the blank lines … (the file is cut short)"."""
    payload = b"x" * 200  # no CR or LF: what is left after the short length is one line that is not blank
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + payload
    good = _record()
    raw = good * before + _record(block=block, length=len(block) - short)
    with pytest.raises(ParseError) as refused:
        _read(raw, tmp_path_factory.mktemp("w"))
    said = str(refused.value)
    assert f"a.warc: the record at offset {len(good) * before} ({URI}) is damaged: its Content-Length does not end" \
           " where the blank lines (CRLF CRLF) that close the record begin" in said, said
    assert "cut short" not in said, said


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
def test_a_file_cut_in_the_last_records_closing_crlfs_is_still_said_to_be_cut_short(tmp_path: Path, cut: int) -> None:
    with pytest.raises(ParseError, match=r"the file ends before the blank lines \(CRLF CRLF\) that close the record"
                                         r" \(the file is cut short\)"):
        _read(_record()[:-cut], tmp_path)


# --- 6. a refusal met while warcio reads the record names its URI too ------------------------------------------

@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize(("fields", "block", "error", "said"), [
    ({"WARC-Payload-Digest": "sha1:ZZZZ"}, BLOCK, ParseError, "is damaged: its WARC-Payload-Digest 'sha1:ZZZZ' spells"),
    ({"WARC-Block-Digest": "sha256:AB"}, BLOCK, ParseError, "is damaged: its WARC-Block-Digest 'sha256:AB' spells"),
    ({}, b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (300 << 10) + b"\r\n\r\nhello", LimitError,
     "is refused: a header line is longer than"),
], ids=["payload-digest", "block-digest", "http-header-line"])
def test_a_refusal_met_inside_the_records_reading_names_its_uri_and_offset(
        tmp_path: Path, fields: dict[str, str | None], block: bytes, error: type[Exception], said: str,
        gzipped: bool) -> None:
    """The record's WARC header block was read, so its URI is known: the refusal named the record by its offset
    alone (``the record at offset N is damaged``), where every other refusal names both."""
    good = gzip.compress(_record()) if gzipped else _record()  # (a gzip member a record: WARC 1.1 annex D)
    bad = _record({**fields, "WARC-Target-URI": "http://example.org/b"}, block)
    path = tmp_path / ("a.warc.gz" if gzipped else "a.warc")
    path.write_bytes(good + (gzip.compress(bad) if gzipped else bad))
    with pytest.raises(error) as refused:
        read_index(sources_for(path), limit=1 << 20)
    offset = len(good)
    assert f"the record at offset {offset} (http://example.org/b) {said}" in str(refused.value), str(refused.value)


# --- 1. a digest of an algorithm pdi does not know --------------------------------------------------------------

def _unknown(name: str) -> bool:
    """Whether Python's hashlib (the checker pdi has) knows no algorithm ``name``."""
    try:
        hashlib.new(name)
    except (ValueError, TypeError):
        return True
    return False


@settings(max_examples=40)
@given(name=st.from_regex(r"[a-z][a-z0-9-]{1,12}", fullmatch=True).filter(_unknown),
       field=st.sampled_from(["WARC-Block-Digest", "WARC-Payload-Digest"]), gzipped=st.booleans())
def test_a_digest_of_an_algorithm_pdi_does_not_know_is_refused_as_unsupported_naming_it(
        tmp_path_factory: pytest.TempPathFactory, name: str, field: str, gzipped: bool) -> None:
    """WARC 1.1 §5.8, §5.9: "No particular algorithm is recommended". A digest of one pdi has no code for is no
    damage (pdi said "is damaged: unknown hash algorithm name in block digest", exit 3), but pdi cannot check it, and
    an archive that vouches for its octets' fixity deposits nothing it has not checked: refused as unsupported
    (exit 6), naming the field and the algorithm."""
    value = f"{name}:ABCDEFGH"
    with pytest.raises(UnsupportedError) as refused:
        _read(_record({field: value}), tmp_path_factory.mktemp("w"), gzipped)
    said = str(refused.value)
    assert f"the record at offset 0 ({URI}) is refused: its {field} '{value}' is of an algorithm pdi does not know" \
           f" ('{name}'), so it cannot check it" in said, said


def _pdi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, check=False)


def test_the_command_refuses_such_a_file_with_exit_6_and_with_partial_keeps_the_records_before(tmp_path: Path) -> None:
    good = _record({"WARC-Target-URI": "http://example.org/t.txt"})
    warc = tmp_path / "a.warc"
    warc.write_bytes(good + _record({"WARC-Block-Digest": "blake3:ABCDEFGH"}))
    archive = tmp_path / "archive"
    Archive.init(archive).add_series(S)
    refused = _pdi("import", str(warc), "--series", S, "--archive", str(archive))
    assert refused.returncode == 6, refused.stderr  # docs/reference/exit-codes.md: 6, unsupported
    assert f"a.warc: the record at offset {len(good)} ({URI}) is refused: its WARC-Block-Digest 'blake3:ABCDEFGH'" \
           " is of an algorithm pdi does not know ('blake3')" in refused.stderr, refused.stderr
    assert refused.stdout == ""
    kept = _pdi("import", str(warc), "--series", S, "--partial", "--archive", str(archive))
    assert kept.returncode == 14, kept.stderr  # --partial: the whole records before it, the rest dropped
    assert kept.stdout.split() == [str(PDI.build(series=S, date=datetime.date(2024, 5, 6),
                                                 foreign_id="http://example.org/t.txt", format="text", version=1))]
    assert f"dropped: a.warc: the record at offset {len(good)} ({URI}) is refused" in kept.stderr


# --- 4. an HTTP response whose header section has no empty line closing it -------------------------------------

@settings(max_examples=40)
@given(fields=st.lists(st.sampled_from(["Content-Type: text/html", "Server: x", "Content-Length: 5"]), max_size=3),
       ending=st.sampled_from(["\r\n", ""]), gzipped=st.booleans())
def test_a_response_whose_header_section_has_no_closing_empty_line_is_refused_naming_it(
        tmp_path_factory: pytest.TempPathFactory, fields: list[str], ending: str, gzipped: bool) -> None:
    """RFC 9112 §2.1: ``HTTP-message = start-line CRLF *( field-line CRLF ) CRLF [ message-body ]``. A response
    record's block (WARC 1.1 §6.3: the full HTTP response) that ends before the empty line is cut inside its header
    section; pdi read it as a response with an empty payload, and deposited that as the page."""
    block = ("\r\n".join(["HTTP/1.1 200 OK", *fields]) + ending).encode()
    assert b"\r\n\r\n" not in block
    with pytest.raises(ParseError) as refused:
        _read(_record(block=block), tmp_path_factory.mktemp("w"), gzipped)
    said = str(refused.value)
    assert f"the record at offset 0 ({URI}) is damaged: its HTTP header block ends without the empty line that" \
           " closes it" in said, said


@pytest.mark.parametrize("block", [b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
                                   b"HTTP/1.1 204 No Content\r\n\r\n"])
def test_a_response_with_its_empty_line_and_no_payload_is_read(tmp_path: Path, block: bytes) -> None:
    index = _read(_record(block=block), tmp_path)
    (entry,) = index.entries  # type: ignore[attr-defined]
    assert (entry.uri, entry.size) == (URI, 0)


# --- 3. a warcinfo record with a WARC-Target-URI ------------------------------------------------------------------

@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("target", ["http://example.org/", "<http://example.org/a>", "urn:x"])
def test_a_warcinfo_record_with_a_target_uri_is_read_as_warcinfo_the_field_ignored(
        tmp_path: Path, target: str, gzipped: bool) -> None:
    """WARC 1.1 §5.11 gives a target URI to the records that are about one; a warcinfo record (§6.2) is about the
    file, and its block is ``application/warc-fields``, no HTTP. One that carries the field anyway is read as the
    warcinfo record it says it is, the field ignored (docs/explanation/web-archives.md): it imports nothing, and
    the records after it are read as without it."""
    info = _record({"WARC-Type": "warcinfo", "Content-Type": "application/warc-fields", "WARC-Target-URI": target},
                   block=b"software: an old crawler\r\nformat: WARC File Format 1.0\r\n")
    raw = (gzip.compress(info) + gzip.compress(_record())) if gzipped else info + _record()
    path = tmp_path / ("a.warc.gz" if gzipped else "a.warc")
    path.write_bytes(raw)
    index = read_index(sources_for(path), limit=1 << 20)
    assert index.records == 2
    (entry,) = index.entries
    assert (entry.kind, entry.uri, entry.offset) == ("response", URI, len(gzip.compress(info)) if gzipped else len(info))
    assert index.kept[(0, entry.offset)] == b"hello"


# --- 7. leniencies: bare-LF header lines, the draft versions 0.17 and 0.18, white space before a colon ------------

def _read_as_documented(raw: bytes, folder: Path, gzipped: bool, *, payload: bytes = b"hello",
                        media: str = "text/plain") -> None:
    index = _read(raw, folder, gzipped)
    (entry,) = index.entries  # type: ignore[attr-defined]
    assert (entry.kind, entry.uri, entry.status, entry.media_type) == ("response", URI, 200, media)
    assert index.kept[(0, entry.offset)] == payload  # type: ignore[attr-defined]


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("where", ["warc", "http", "both"])
def test_header_lines_ending_in_a_bare_lf_are_read(tmp_path: Path, where: str, gzipped: bool) -> None:
    """A leniency (docs/explanation/web-archives.md): WARC 1.1 §4 and RFC 9112 §2.1 end each header line with CRLF;
    files of old crawlers and converters end them with LF alone, and their fields are read as the same fields."""
    block = BLOCK.replace(b"\r\n", b"\n") if where in ("http", "both") else BLOCK
    raw = _record(block=block)
    if where in ("warc", "both"):
        head, _, rest = raw.partition(b"\r\n\r\n")
        raw = head.replace(b"\r\n", b"\n") + b"\n\n" + rest
    _read_as_documented(raw, tmp_path, gzipped)


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("version", ["WARC/0.17", "WARC/0.18", "WARC/1.0", "WARC/1.1"])
def test_the_draft_versions_0_17_and_0_18_are_read_as_warc(tmp_path: Path, version: str, gzipped: bool) -> None:
    """A leniency: ``WARC/0.17`` and ``WARC/0.18``, the drafts of ISO 28500 that Heritrix 1.x and the tools of its
    time wrote (2006 to 2008), whose records are laid out as WARC 1.0's, are read as WARC 1.0."""
    _read_as_documented(_record(version=version), tmp_path, gzipped)


@pytest.mark.parametrize("version", ["WARC/0.9", "WARC/2.0"])
def test_another_version_is_refused(tmp_path: Path, version: str) -> None:
    with pytest.raises(ParseError, match=rf"the record at offset 0 .*is damaged: .*{version}"):
        _read(_record(version=version), tmp_path)


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("space", [" ", "\t", "  "])
@pytest.mark.parametrize("where", ["WARC-Target-URI", "Content-Type"])
def test_white_space_before_a_fields_colon_is_read_as_the_field(
        tmp_path: Path, where: str, space: str, gzipped: bool) -> None:
    """A leniency: a field name is a ``token`` followed by its colon (WARC 1.1 §4; RFC 9112 §5.1: "No whitespace is
    allowed between the field name and colon"); a name with white space before its colon is read as the name (the
    WARC ``WARC-Target-URI``, the HTTP ``Content-Type``)."""
    raw = _record(block=BLOCK.replace(b"Content-Type:", f"Content-Type{space}:".encode()) if where == "Content-Type"
                  else BLOCK)
    if where == "WARC-Target-URI":
        raw = raw.replace(b"WARC-Target-URI:", f"WARC-Target-URI{space}:".encode(), 1)
    _read_as_documented(raw, tmp_path, gzipped)


@pytest.mark.parametrize("gzipped", [False, True])
def test_with_partial_the_records_before_a_response_cut_in_its_headers_are_kept(tmp_path: Path, gzipped: bool) -> None:
    good = _record({"WARC-Target-URI": "http://example.org/t.txt"})
    bad = _record(block=b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
    raw = (gzip.compress(good) + gzip.compress(bad)) if gzipped else good + bad
    path = tmp_path / ("a.warc.gz" if gzipped else "a.warc")
    path.write_bytes(raw)
    index = read_index(sources_for(path), limit=1 << 20, partial=True)
    assert [entry.uri for entry in index.entries] == ["http://example.org/t.txt"]
    (dropped,) = index.dropped
    at = len(gzip.compress(good)) if gzipped else len(good)
    assert dropped.startswith(f"{path.name}: the record at offset {at} ({URI}) is damaged: its HTTP header block ends"
                              " without the empty line that closes it"), dropped


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_record_whose_fields_are_damaged_is_said_damaged_before_its_unknown_digest(
        tmp_path: Path, gzipped: bool) -> None:
    """A record that gives its WARC-Block-Digest twice, once of an algorithm pdi does not know, is damaged (WARC 1.1
    §5.1), whatever its digest: the damage is said, not the algorithm."""
    raw = _record({"WARC-Block-Digest": "blake3:ABCDEFGH"})
    raw = raw.replace(b"WARC-Block-Digest", b"WARC-Block-Digest: blake3:ABCDEFGH\r\nWARC-Block-Digest", 1)
    with pytest.raises(ParseError, match=r"is damaged: it gives its WARC-Block-Digest twice"):
        _read(raw, tmp_path, gzipped)
