"""``Range`` of a large message's part by N2R: a ``206`` of the octets Python's :mod:`email` decodes there, as a
stored blob's range is answered (RFC 9110 §14), and the part decoded once for its first whole answer
(``docs/email.md`` §5).

Before, such a part answered ``Accept-Ranges: none`` and the whole to every ``Range`` (a client resuming a 200 MB
scan started again), and its first answer decoded it twice, once to learn its size. The threshold of a large
message is lowered here (to 100 octets), so that a message of some MB, written by Python's :mod:`email`, takes
the large path in the app itself; the reference for every range is ``get_payload(decode=True)`` of the same
message read whole by Python.
"""

from __future__ import annotations

import base64
import binascii
import email
import email.message
import email.policy
import hashlib
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "mail.example.us"
SCAN = random.Random(11).randbytes(3_000_000)  # three windows of the message and more, in base64
NOTES = "".join(f"Line {k}: caf\u00e9, na\u00efve, \u00fcber.\n" for k in range(40_000)).encode()  # quoted-printable


def _message() -> bytes:
    message = email.message.EmailMessage()
    message["From"], message["Subject"], message["Message-ID"] = "a@example.org", "Scans", "<ranges@example.org>"
    message.set_content("The scan and the notes are attached.\n")
    message.add_attachment(SCAN, maintype="image", subtype="tiff", filename="scan.tif")
    message.add_attachment(NOTES.decode(), subtype="plain", charset="utf-8", cte="quoted-printable",
                           filename="notes.txt")
    return message.as_bytes(policy=email.policy.SMTP)


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, str, list[bytes]]]:
    import pdi.archive.record_facts

    data = _message()
    python = [cast(bytes, cast(Any, p).get_payload(decode=True)) for p in
              email.message_from_bytes(data, policy=email.policy.default).walk() if not p.is_multipart()]
    assert python[1] == SCAN and python[2].replace(b"\r\n", b"\n") == NOTES
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr(pdi.archive.record_facts, "_PARTS", pdi.archive.record_facts._Kept(256))  # none located yet
    yield TestClient(create_app(str(tmp_path / "a"))), f"/uri-res/N2R?{name}%23part=", python


def test_a_range_of_a_large_messages_part_is_answered_206(served: tuple[TestClient, str, list[bytes]]) -> None:
    client, n2r, python = served
    whole = client.get(f"{n2r}1")
    assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
    assert whole.content == SCAN and whole.headers["content-length"] == str(len(SCAN))
    size, tag = len(SCAN), whole.headers["etag"]
    for spelled, first, last in (("1500000-1500099", 1_500_000, 1_500_099), ("0-0", 0, 0), ("-10", size - 10, size - 1),
                                 (f"{size - 5}-", size - 5, size - 1), (f"2999990-{size * 2}", 2_999_990, size - 1),
                                 ("1048570-1048580", 1_048_570, 1_048_580)):  # across a window of the message
        answer = client.get(f"{n2r}1", headers={"Range": f"bytes={spelled}"})
        assert answer.status_code == 206, (spelled, answer.text[:300])
        assert answer.headers["content-range"] == f"bytes {first}-{last}/{size}"
        assert answer.content == python[1][first : last + 1] and answer.headers["etag"] == tag
        assert answer.headers["content-length"] == str(last - first + 1)
        assert answer.headers["content-type"] == "image/tiff"
    notes = python[2]
    answer = client.get(f"{n2r}2", headers={"Range": "bytes=700000-700199"})  # quoted-printable, decoded
    assert answer.status_code == 206 and answer.content == notes[700_000:700_200]
    assert answer.headers["content-range"] == f"bytes 700000-700199/{len(notes)}"

    head = client.head(f"{n2r}1", headers={"Range": "bytes=10-19"})  # range handling is GET's (RFC 9110 §14.2)
    assert (head.status_code, head.headers["content-length"], head.content) == (200, str(size), b"")
    held = client.get(f"{n2r}1", headers={"Range": "bytes=10-19", "If-Range": tag})
    assert held.status_code == 206 and held.content == SCAN[10:20] and "content-type" not in held.headers
    changed = client.get(f"{n2r}1", headers={"Range": "bytes=10-19", "If-Range": '"another"'})
    assert changed.status_code == 200 and changed.content == SCAN  # not the tag it has: the whole (§13.1.5)
    several = client.get(f"{n2r}1", headers={"Range": "bytes=0-9,100-109"})
    assert several.status_code == 200 and hashlib.sha256(several.content).digest() == hashlib.sha256(SCAN).digest()


def test_a_range_past_a_large_messages_part_is_416_naming_it(served: tuple[TestClient, str, list[bytes]]) -> None:
    client, n2r, _ = served
    answer = client.get(f"{n2r}1", headers={"Range": f"bytes={len(SCAN)}-"})
    assert answer.status_code == 416 and answer.headers["content-range"] == f"bytes */{len(SCAN)}"
    assert f"the Range 'bytes={len(SCAN)}-' selects none of the {len(SCAN)} octets" in answer.json()["detail"]
    assert answer.headers["cache-control"] == "no-store"


def test_the_first_answer_of_a_large_part_decodes_it_once(
    served: tuple[TestClient, str, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its ``Content-Length`` is learnt by counting its base64, not decoding it: the whole answer decodes each
    character once (it decoded the part twice); a range decodes a window, not what goes before it."""
    client, n2r, _ = served
    decoded: list[int] = []
    real = binascii.a2b_base64
    monkeypatch.setattr(binascii, "a2b_base64", lambda s, *a, **k: decoded.append(len(s)) or real(s, *a, **k))
    answer = client.get(f"{n2r}1")
    assert answer.status_code == 200 and answer.content == SCAN
    characters = len(SCAN) * 4 // 3 + 4
    assert characters - 8 <= sum(decoded) <= characters + 8  # once (and its padding, checked as Python reads it)
    decoded.clear()
    part = client.get(f"{n2r}1", headers={"Range": "bytes=2500000-2500009"})
    assert part.content == SCAN[2_500_000:2_500_010] and sum(decoded) <= 1 << 20 + 16


def test_a_large_messages_base64_with_stray_characters_is_served_as_python_decodes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deposited, its part was refused when served (``415``), though Python's :mod:`email` (and pdi's reading of a
    small message) decodes it past them: now the whole and every range are Python's octets."""
    import pdi.archive.record_facts

    data = _message()
    at = data.index(base64.b64encode(SCAN[:300])[:76])
    data = data[:at + 1_500_000] + b"!\t" + data[at + 1_500_000 : at + 2_000_000] + b"==" + data[at + 2_000_000:]
    python = [cast(bytes, cast(Any, p).get_payload(decode=True)) for p in
              email.message_from_bytes(data, policy=email.policy.default).walk() if not p.is_multipart()]
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        small = archive.get(str(archive.add(S, data, format="rfc822")) + "#part=1")
        assert small.data == python[1] != SCAN  # read whole: Python's reading (its "==" ends the decoding)
        name = str(archive.add(S, data + b"\r\n", format="rfc822", foreign_id="large"))
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr(pdi.archive.record_facts, "_PARTS", pdi.archive.record_facts._Kept(256))
    client = TestClient(create_app(str(tmp_path / "a")))
    whole = client.get(f"/uri-res/N2R?{name}%23part=1")
    assert whole.status_code == 200 and whole.content == python[1]
    size = len(python[1])
    for first, last in ((0, 9), (1_100_000, 1_100_099), (size - 1, size - 1)):
        answer = client.get(f"/uri-res/N2R?{name}%23part=1", headers={"Range": f"bytes={first}-{last}"})
        assert answer.status_code == 206 and answer.content == python[1][first : last + 1]


def test_ranges_at_the_places_a_large_parts_decoding_starts_again(served: tuple[TestClient, str, list[bytes]]) -> None:
    """A range that starts exactly where the part's map starts decoding again, one that ends just before, the
    last octet alone; ``If-Range`` with the part's date (held: ``206``) and an older one (the whole)."""
    from pdi.mail.large import part_map, read_large

    client, n2r, python = served
    first = client.get(f"{n2r}1")
    data = _message()
    places = [decoded for decoded, _, _ in part_map(data, read_large(data).parts[1]).resumes]
    assert len(places) >= 3
    for place in places[1:-1]:
        for start, end in ((place, place + 9), (place - 10, place - 1), (place - 1, place)):
            answer = client.get(f"{n2r}1", headers={"Range": f"bytes={start}-{end}"})
            assert answer.status_code == 206 and answer.content == python[1][start : end + 1], (start, end)
    last = len(python[1]) - 1
    answer = client.get(f"{n2r}1", headers={"Range": f"bytes={last}-{last}"})
    assert answer.status_code == 206 and answer.content == python[1][last:]
    dated = first.headers["last-modified"]
    time.sleep(1.1)  # a date is a strong validator once a second or more old (RFC 9110 §8.8.2.2)
    held = client.get(f"{n2r}1", headers={"Range": "bytes=5-9", "If-Range": dated})
    assert held.status_code == 206 and held.content == SCAN[5:10]
    stale = client.get(f"{n2r}1", headers={"Range": "bytes=5-9", "If-Range": "Mon, 01 Jan 2001 00:00:00 GMT"})
    assert stale.status_code == 200 and len(stale.content) == len(SCAN)
