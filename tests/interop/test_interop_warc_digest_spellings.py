"""A record's digests in each spelling WARC 1.1 allows, checked as the octets they spell (pdi.interop.warc.digests).

WARC 1.1 §5.8, §5.9: ``labelled-digest = algorithm ":" digest-value``, ``digest-value = token`` (a token holds no
``=``), "No particular algorithm is recommended", its example "a SHA-1 labelled Base32 ([RFC4648]) value". warcio's
checker reads a value by its length alone, so a SHA-256 in base32 without its padding (the grammar's own form) and
base32 in lower case were refused as damaged ("its payload does not match its WARC-Payload-Digest"), though they
match; a value that spells nothing was said to be the payload that "cannot be decoded: Incorrect padding"; and a
revisit whose digest was spelt otherwise than its original's was not found by it. The digests here are made by
hashlib and spelt by the standard library's ``base64``, not by pdi.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.errors import IntegrityError, ParseError
from pdi.interop.warc import import_warc, read_index, sources_for
from pdi.interop.warc.digests import digest_key, digest_octets

S = "web.example.us"
ALGORITHMS = {"sha1": "sha1", "SHA1": "sha1", "sha-1": "sha1", "sha256": "sha256", "sha512": "sha512", "md5": "md5",
              "SHA-256": "sha256"}
SPELLINGS = {
    "base32": lambda d: base64.b32encode(d).decode(),
    "base32-unpadded": lambda d: base64.b32encode(d).decode().rstrip("="),
    "base32-lower": lambda d: base64.b32encode(d).decode().lower(),
    "base16": lambda d: d.hex(),
    "base16-upper": lambda d: d.hex().upper(),
    "base64": lambda d: base64.b64encode(d).decode(),
    "base64-url-unpadded": lambda d: base64.urlsafe_b64encode(d).decode().rstrip("="),
}


def _record(payload: bytes, fields: list[tuple[str, str]], kind: str = "response", uri: str = "http://example.org/",
            date: str = "2024-05-06T10:00:00Z", record_id: str = "<urn:uuid:00000000-0000-4000-8000-000000000001>",
            block: bytes | None = None) -> bytes:
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + payload if block is None else block
    head = [("WARC-Type", kind), ("WARC-Record-ID", record_id), ("WARC-Date", date), ("WARC-Target-URI", uri),
            ("Content-Type", "application/http; msgtype=response"), *fields, ("Content-Length", str(len(block)))]
    return ("WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head) + "\r\n").encode() + block + b"\r\n\r\n"


def _digest(label: str, spelling: str, data: bytes) -> str:
    return f"{label}:{SPELLINGS[spelling](hashlib.new(ALGORITHMS[label], data).digest())}"


def _index(raw: bytes, folder: Path, gzipped: bool) -> object:
    path = folder / ("a.warc.gz" if gzipped else "a.warc")
    path.write_bytes(gzip.compress(raw) if gzipped else raw)
    return read_index(sources_for(path), limit=1 << 20)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=500), st.sampled_from(sorted(ALGORITHMS)), st.sampled_from(sorted(SPELLINGS)),
       st.sampled_from(["WARC-Payload-Digest", "WARC-Block-Digest", "both"]), st.booleans(), st.booleans())
def test_a_digest_in_any_spelling_is_checked_as_its_octets(
        tmp_path_factory: pytest.TempPathFactory, payload: bytes, label: str, spelling: str, field: str,
        gzipped: bool, wrong: bool) -> None:
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + payload
    of = {"WARC-Payload-Digest": payload, "WARC-Block-Digest": block}
    named = list(of) if field == "both" else [field]
    fields = [(name, _digest(label, spelling, of[name] + (b"x" if wrong else b""))) for name in named]
    raw = _record(payload, fields)
    folder = tmp_path_factory.mktemp("w")
    if not wrong:
        index = _index(raw, folder, gzipped)
        (entry,) = index.entries  # type: ignore[attr-defined]
        assert index.kept[(0, entry.offset)] == payload  # type: ignore[attr-defined]
        return
    with pytest.raises(IntegrityError) as refused:
        _index(raw, folder, gzipped)
    # the first field found wrong is named, as the record spells it
    said = str(refused.value)
    assert any(f"does not match its {name} {value}" in said for name, value in fields), said


_BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(ALGORITHMS)), st.data(), st.booleans(), st.booleans())
def test_base32_is_read_as_the_standard_library_reads_it(label: str, data: st.DataObject, lower: bool,
                                                          padded: bool) -> None:
    """Any base32 value of a digest's length (its last character's spare bits set or not) spells the octets
    ``base64.b32decode`` reads from it, in either case, padded or not."""
    algorithm = ALGORITHMS[label]
    size = hashlib.new(algorithm).digest_size
    chars = -(-8 * size // 5)
    bare = data.draw(st.text(alphabet=_BASE32, min_size=chars, max_size=chars))
    padding = "=" * (-chars % 8)
    expected = base64.b32decode(bare + padding)
    value = f"{label}:{bare.lower() if lower else bare}{padding if padded else ''}"
    assert digest_octets(value) == (algorithm, expected)
    assert digest_key(value) == f"{algorithm}:{expected.hex()}"


@pytest.mark.parametrize("value", ["sha1:notadigest", "sha256:" + "A" * 51, "sha1:" + "0" * 39])
def test_a_digest_that_spells_none_is_refused_saying_so(tmp_path: Path, value: str) -> None:
    raw = _record(b"<p>hi</p>", [("WARC-Payload-Digest", value)])
    with pytest.raises(ParseError, match=rf"a\.warc: the record at offset 0 \(http://example\.org/\) is damaged: its WARC-Payload-Digest"
                                         rf" '{value}' spells no sha(1|256) digest \(its (20|32) octets in base32, base16"
                                         r" or base64\)"):
        _index(raw, tmp_path, False)


@pytest.mark.parametrize(("original", "revisit"), [("base32", "base16"), ("base16", "base32"),
                                                   ("base32", "base32-unpadded")])
def test_a_revisit_finds_its_original_however_its_digest_is_spelt(tmp_path: Path, original: str, revisit: str) -> None:
    """A revisit naming its original by WARC-Refers-To alone (no target URI and date to fall back on): its digest
    spelt otherwise than the original's made it "a revisit of a payload that is not in the file"."""
    page = b"<html><body>the same page</body></html>"
    label = "sha256"
    first = _record(page, [("WARC-Payload-Digest", _digest(label, original, page))])
    again = _record(b"", [("WARC-Payload-Digest", _digest(label, revisit, page)),
                          ("WARC-Refers-To", "<urn:uuid:00000000-0000-4000-8000-000000000001>"),
                          ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")],
                    kind="revisit", date="2024-06-06T10:00:00Z", record_id="<urn:uuid:00000000-0000-4000-8000-000000000002>",
                    block=b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")
    path = tmp_path / "revisit.warc"
    path.write_bytes(first + again)
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    done, plan = import_warc(archive, path, S)
    assert plan.skipped == [], plan.skipped
    assert sorted(str(d.name).split("/")[4] for d in done) == ["05", "06"]  # the page, and its revisit a month on
