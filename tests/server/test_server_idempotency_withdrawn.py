"""A retry under an Idempotency-Key of a write that succeeded, made after what it wrote was withdrawn, answers the
first answer again, saying the withdrawal (both stores).

draft-ietf-httpapi-idempotency-key-header §2.6: a request retried with the same key and the same payload is
answered with the result of the operation it first made. The retry's client asks "did my write happen?": it did,
and what it made is now withdrawn. docs/reference/write-api.md: the first answer is replayed (its status, its
members, ``Idempotent-Replayed: true``), with ``withdrawn`` (``at``, ``reason``, ``who``, ``purged``, as N2C
describes a tombstone) beside them; nothing is stored. The same key with another body is ``422`` as ever, and a
new request (another key, or none) is refused as ever (``410``; ``409`` for a version of the octets a
withdrawn version holds).
"""

from __future__ import annotations

import datetime

import pytest
from server_helpers import Clock
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.server import create_app

S = "court.example.us"
NOW = datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC)
WITHDRAWN_AT = "2026-11-22T15:30:00.000000Z"
REASON = "sealed by order of 2026-11-20"
DOC = f"urn:pdi://{S}/2026/11/22/1"


def snapshot(archive: Archive) -> object:
    """What a replay must leave as it was: the representations, the blobs, the audit log, the tombstones."""
    store = archive.store
    return (list(store.iter_representations()), sorted(store.blob_names()),
            [(e.action, e.subject) for e in store.audit_log()], list(store.iter_withdrawals()))


def _made(archive: Archive) -> None:
    archive.add_series(S)
    archive.add(S, b"ruling, first text\n", format="text")


# what each write posts, what it names, the name withdrawn before its retry, and what a new request answers then:
# 410 (no format for a withdrawn version, no version for a document withdrawn whole), or 409 (a new version of
# the octets a withdrawn version holds)
WRITES = {
    "a format, its version withdrawn": (f"/api/format?pdi={DOC}.text.1&format=utf-8", f"{DOC}.utf-8.1",
                                        f"{DOC}.text.1", 410),
    "a format, its document withdrawn": (f"/api/format?pdi={DOC}.text.1&format=utf-8", f"{DOC}.utf-8.1", DOC, 410),
    "a version, its document withdrawn": (f"/api/version?pdi={DOC}&format=text", f"{DOC}.text.2", DOC, 410),
    "a version, itself withdrawn": (f"/api/version?pdi={DOC}&format=text", f"{DOC}.text.2", f"{DOC}.text.2", 409),
}


@pytest.mark.parametrize("case", list(WRITES))
@pytest.mark.parametrize("purge", [False, True], ids=["withdrawn", "purged"])
def test_a_retry_after_the_withdrawal_replays_the_first_answer_naming_the_tombstone(
        location: str, case: str, purge: bool) -> None:
    target, written, withdrawn, refused = WRITES[case]
    body = b"ruling, second text\n" if "version" in target else b"ruling, first text\n"
    clock = Clock(NOW)
    with Archive.init(location, clock=clock) as archive:
        _made(archive)
        _, token = archive.add_token("intake", role="deposit", series=[S])
        client = TestClient(create_app(location, archive=archive))
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain", "Idempotency-Key": "k-1"}
        first = client.post(target, content=body, headers=headers)
        assert first.status_code == 201, first.text
        assert first.json()["pdi"] == written
        clock.now = NOW + datetime.timedelta(hours=1)
        archive.who = "clerk"
        archive.withdraw(withdrawn, REASON, purge=purge)
        before = snapshot(archive)
        again = client.post(target, content=body, headers=headers)
        assert again.status_code == 201, again.text
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.headers["Location"] == first.headers["Location"]
        replayed = again.json()
        assert {k: v for k, v in replayed.items() if k != "withdrawn"} == first.json()
        assert replayed["withdrawn"] == {"at": WITHDRAWN_AT, "reason": REASON, "who": "clerk", "purged": purge}
        assert snapshot(archive) == before
        # the name it wrote answers with its tombstone, as before the retry
        assert client.get(f"/uri-res/N2R?{written}").status_code == 410
        # the same key with another body: the key was used for another request
        other = client.post(target, content=b"another text\n", headers=headers)
        assert other.status_code == 422, other.text
        # a new request (a new key, or none) to what was withdrawn is refused as ever
        fresh = client.post(target, content=body, headers={**headers, "Idempotency-Key": "k-2"})
        assert fresh.status_code == refused, fresh.text
        del headers["Idempotency-Key"]
        assert client.post(target, content=body, headers=headers).status_code == refused
        assert snapshot(archive) == before


def test_a_retry_of_a_deposit_whose_document_was_withdrawn_replays_it_naming_the_tombstone(location: str) -> None:
    clock = Clock(NOW)
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        _, token = archive.add_token("intake", role="deposit", series=[S])
        client = TestClient(create_app(location, archive=archive))
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain", "Idempotency-Key": "k-1"}
        first = client.post(f"/api/deposit?series={S}&format=text", content=b"a ruling\n", headers=headers)
        assert first.status_code == 201, first.text
        clock.now = NOW + datetime.timedelta(hours=1)
        archive.who = "clerk"
        archive.withdraw(DOC, REASON)
        before = snapshot(archive)
        again = client.post(f"/api/deposit?series={S}&format=text", content=b"a ruling\n", headers=headers)
        assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true", again.text
        assert {k: v for k, v in again.json().items() if k != "withdrawn"} == first.json()
        assert again.json()["withdrawn"] == {"at": WITHDRAWN_AT, "reason": REASON, "who": "clerk", "purged": False}
        assert snapshot(archive) == before


def test_a_replay_of_a_write_still_in_service_says_no_withdrawal(location: str) -> None:
    with Archive.init(location, clock=Clock(NOW)) as archive:
        _made(archive)
        archive.add_version(DOC, [Content(b"ruling, second text\n", "text")])
        archive.withdraw(f"{DOC}.text.2", REASON)  # another version's tombstone says nothing of version 1
        _, token = archive.add_token("intake", role="deposit", series=[S])
        client = TestClient(create_app(location, archive=archive))
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "text/plain", "Idempotency-Key": "k-1"}
        target = f"/api/format?pdi={DOC}.text.1&format=utf-8"
        first = client.post(target, content=b"ruling, first text\n", headers=headers)
        again = client.post(target, content=b"ruling, first text\n", headers=headers)
        assert first.status_code == again.status_code == 201, again.text
        assert again.headers["Idempotent-Replayed"] == "true" and again.json() == first.json()
