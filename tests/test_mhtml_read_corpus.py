"""Every file of tests/data/corpus/mhtml read and checked.

Well-formed files are read without loss: each part's headers, labels and decoded bytes
are compared with what the standard library's ``email`` parser (``compat32``, whole
file in memory, a different splitter) gives for the same file; the parts are counted
from the delimiter lines; the root is the page Chromium names in
``Snapshot-Content-Location``. Reading from a stream gives the same parts as reading
from bytes. Each malformed file has its documented outcome (see the table below).
"""

from __future__ import annotations

import email
import io
import re
from email.message import Message
from email.policy import compat32
from pathlib import Path

import pytest

from pdi.errors import ParseError
from pdi.mhtml import Aggregate, Limits, check, parse

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus" / "mhtml"

WELL_FORMED = [
    "fastmhtml_example.com.mhtml",
    "fastmhtml_hn.mhtml",
    "fastmhtml_marketwatch.mhtml",
    "fastmhtml_mdn.mhtml",
    "fastmhtml_stackoverflow.mhtml",
    "fastmhtml_wikipedia.mhtml",
    "msindwan_iframes.mhtml",
    "pimht_example_com.mhtml",
]
MALFORMED = [
    "msindwan_missing_boundary.mhtml",
    "msindwan_missing_boundary_header.mhtml",
    "msindwan_missing_headers.mhtml",
    "msindwan_unexpected_eof.mhtml",
    "msindwan_portfolio.mhtml",
]


def test_the_corpus_is_the_one_these_tests_know() -> None:
    assert sorted(p.name for p in CORPUS.glob("*.mhtml")) == sorted(WELL_FORMED + MALFORMED)


def _email_leaves(data: bytes) -> list[Message]:
    msg = email.message_from_bytes(data, policy=compat32)
    return [m for m in msg.walk() if not m.is_multipart()]


def _delimiter_count(data: bytes) -> int:
    boundary = re.search(rb'boundary="([^"]+)"', data)
    assert boundary is not None
    return len(re.findall(rb"^--" + re.escape(boundary.group(1)) + rb"\r?$", data, re.M))


def _same_as_email(agg: Aggregate, data: bytes) -> None:
    leaves = _email_leaves(data)
    assert len(agg.parts) == len(leaves)
    for part, leaf in zip(agg.parts, leaves, strict=True):
        assert part.content_type == leaf.get_content_type()
        assert part.content_location == leaf.get("Content-Location")
        cid = leaf.get("Content-ID")
        assert part.content_id == (cid.strip("<>") if cid else None)
        payload = leaf.get_payload(decode=True)
        assert isinstance(payload, bytes)
        assert part.data == payload, f"part {part.index} differs"
        assert [n for n, _ in part.headers] == list(leaf.keys())


@pytest.mark.parametrize("name", WELL_FORMED)
def test_corpus_well_formed_file_reads_without_loss(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    agg = parse(data)
    assert agg.warnings == ()
    assert len(agg.parts) == _delimiter_count(data)
    _same_as_email(agg, data)
    snapshot = re.search(rb"^Snapshot-Content-Location: (\S+)\r?$", data, re.M)
    assert snapshot is not None
    assert agg.root is agg.parts[0]
    assert agg.root.location == snapshot.group(1).decode()
    assert agg.root.content_type == "text/html"
    # Chromium writes no charset= but a <meta> saying UTF-8
    assert agg.root.charset is None and agg.root.encoding == "UTF-8"
    assert agg.root.encoding_source == "meta"
    # a stream read in small chunks gives the same parts
    streamed = parse(io.BytesIO(data), limits=Limits(chunk_size=4096))
    assert [p.data for p in streamed.parts] == [p.data for p in agg.parts]
    assert [p.headers for p in streamed.parts] == [p.headers for p in agg.parts]
    # every frame reference reaches its own part by Content-ID
    frames = [r for r in agg.references if r.reference.kind == "frame"]
    assert all(r.satisfied and r.rule == "content-id" for r in frames)
    assert len({id(r.target) for r in frames}) == len(frames)
    report = check(agg)
    assert {f.code for f in report.errors} <= {"duplicate-location"}


def test_corpus_example_com_is_clean() -> None:
    agg = parse((CORPUS / "fastmhtml_example.com.mhtml").read_bytes())
    report = check(agg)
    assert report.findings == ()
    assert len(agg.parts) == 1


def test_corpus_pimht_inline_stylesheet_found_by_the_chromium_rule() -> None:
    agg = parse((CORPUS / "pimht_example_com.mhtml").read_bytes())
    html, css, png = agg.parts
    assert html is agg.root
    assert css.content_location == "cid:css-abe2e82c-a3e6-420f-bdcd-7c12e58a7e6a@mhtml.blink"
    assert css.content_id is None
    (sheet,) = [r for r in agg.references if r.reference.kind == "stylesheet"]
    assert sheet.target is css and sheet.rule == "cid-content-location"
    # the PNG is in the file but nothing in the page refers to it
    report = check(agg)
    assert [(f.code, f.part) for f in report.findings] == [("unreferenced-part", 2)]
    assert png.content_type == "image/png" and png.data.startswith(b"\x89PNG")


def test_corpus_marketwatch_27_frames_share_one_location_and_each_is_reached() -> None:
    agg = parse((CORPUS / "fastmhtml_marketwatch.mhtml").read_bytes())
    sharing = [p for p in agg.parts if p.location == "https://www.marketwatch.com/"]
    assert len(sharing) == 27
    # the first wins a lookup by location
    assert agg.by_location("https://www.marketwatch.com/") is agg.parts[0]
    report = check(agg)
    dup = [f for f in report.errors if f.code == "duplicate-location"]
    assert sorted(f.part for f in dup) == sorted(p.index for p in sharing[1:])
    frames = [r for r in agg.references if r.reference.kind == "frame"]
    assert {r.target.index for r in frames if r.target} <= {p.index for p in agg.parts if p.content_id}


def test_corpus_malformed_missing_boundary_is_a_parse_error() -> None:
    # The boundary is declared but no delimiter line follows: nothing to split on.
    with pytest.raises(ParseError) as exc:
        parse((CORPUS / "msindwan_missing_boundary.mhtml").read_bytes())
    assert exc.value.rule == "multipart-body" and exc.value.offset == 0


def test_corpus_malformed_missing_boundary_header_is_a_parse_error() -> None:
    # multipart/related with no boundary parameter: refused rather than guessed.
    with pytest.raises(ParseError) as exc:
        parse((CORPUS / "msindwan_missing_boundary_header.mhtml").read_bytes())
    assert exc.value.rule == "boundary"


def test_corpus_malformed_missing_headers_is_recovered_with_a_warning() -> None:
    # Recovery: the second part (no labels) runs to the end; the missing closing
    # delimiter is a warning.
    data = (CORPUS / "msindwan_missing_headers.mhtml").read_bytes()
    agg = parse(data)
    assert len(agg.parts) == 2
    assert len(agg.warnings) == 1 and "missing closing delimiter" in agg.warnings[0]
    second = agg.parts[1]
    assert second.content_location is None and second.content_id is None
    assert second.text() == '<!DOCTYPE html><html lang="en" class=" supports csstransforms3d preserv'
    codes = [f.code for f in check(agg).findings]
    assert codes == ["parse-recovery", "unreferenced-part"]


def test_corpus_malformed_unexpected_eof_is_recovered_with_a_warning() -> None:
    # Recovery: the truncated part keeps what is there; a warning names the offset.
    data = (CORPUS / "msindwan_unexpected_eof.mhtml").read_bytes()
    agg = parse(data)
    assert len(agg.parts) == 1
    assert agg.warnings == (
        f"offset {len(data)}: missing closing delimiter for boundary "
        "'----MultipartBoundary--13Auk8ODqvYITpKWs1cqVnvH965JWLgToStNEOgxaj----'",
    )
    assert agg.root.text().endswith("csstransforms3d preserv")


def test_corpus_lf_only_2016_file_with_a_header_line_without_colon() -> None:
    # Recovery: "lines" continues X-Snapshot-Title, with a warning; LF-only line ends.
    data = (CORPUS / "msindwan_portfolio.mhtml").read_bytes()
    assert b"\r\n" not in data
    agg = parse(data)
    assert agg.warnings == ("offset 0: header line without a colon read as a continuation: 'lines'",)
    assert agg.header("X-Snapshot-Title") == "=?utf-8?Q?This is on multiple lines"
    assert agg.tree is not None and agg.tree.type == "text/html"
    # Without loss: the same parts as email gives once the line is indented as intended.
    fixed = data.replace(b"multiple\nlines\n", b"multiple\n lines\n", 1)
    _same_as_email(agg, fixed)
    assert len(agg.parts) == 13
    assert agg.root.location == "http://msindwan.bitbucket.org/"
