"""Withdrawal: a tombstone keeps the name, answers 410 Gone with the reason, travels in a bag, and reaches every cache.

Issue 15. A withdrawn name is never minted again, still listed, and
resolves to its tombstone (RFC 9110 §15.5.11: 410 Gone, "no longer
available at the origin server and this condition is likely to be
permanent"); N2C describes the tombstone; the bytes are kept and `verify`
still checks them; the withdrawal is audited. Every statement is checked
against what the test did, never against pdi's own output.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import httpx
import pytest
from server_helpers import serving
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.archive.store import WithdrawalRecord
from pdi.errors import ImmutabilityError, WithdrawnError
from pdi.server import create_app

S = "court.example.us"


def test_a_withdrawn_version_is_410_with_its_reason_and_the_rest_stays(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        _, depositor = archive.add_token("intake", role="deposit", series=[S])
        first = archive.add(S, b"ruling, first text\n", format="text")
        generic = str(first).rsplit(".", 2)[0]
        second = archive.add_version(generic, [Content(b"ruling, corrected\n", "text")])[0]
        other = archive.add(S, b"another ruling\n", format="text")
        client = TestClient(create_app(location, archive=archive))
        auth = {"Authorization": f"Bearer {depositor}"}
        refused = client.post(f"/api/withdraw?pdi={first}", content=b"sealed", headers=auth)
        assert refused.status_code == 403
        auth = {"Authorization": f"Bearer {curator}"}
        made = client.post(f"/api/withdraw?pdi={first}", content=b"sealed by order of 2026-11-20",
                           headers=auth)
        assert made.status_code == 201, made.text
        assert made.json()["version"] == 1
        gone = client.get(f"/uri-res/N2R?{first}")
        assert gone.status_code == 410
        assert gone.headers["content-type"] == "application/problem+json"
        assert "sealed by order of 2026-11-20" in gone.json()["detail"]
        # a fragment of it, and If-None-Match from a cache that held it, are gone too
        assert client.get(f"/uri-res/N2R?{first}%23char=0,6").status_code == 410
        tag = hashlib.sha256(b"ruling, first text\n").hexdigest()
        assert client.get(f"/uri-res/N2R?{first}", headers={"If-None-Match": f'"{tag}"'}).status_code == 410
        described = client.get(f"/uri-res/N2C?{first}")
        assert described.status_code == 200
        assert described.json()["withdrawn"]["reason"] == "sealed by order of 2026-11-20"
        assert described.json()["withdrawn"]["who"] == "token:clerk"
        # version 2 and the other document still resolve, byte for byte
        assert client.get(f"/uri-res/N2R?{second}").content == b"ruling, corrected\n"
        assert client.get(f"/uri-res/N2R?{other}").content == b"another ruling\n"
        # the name is still listed; its bytes are kept and verified
        assert first in archive.ls(series=S)
        report = archive.verify()
        assert report.ok and report.checked_representations == 3
        with pytest.raises(WithdrawnError):
            archive.get(first)
        audit = [(e.who, e.action, e.subject) for e in archive.audit() if e.action == "withdraw"]
        assert audit == [("token:clerk", "withdraw", str(first))]


def test_a_generic_name_offers_only_versions_in_service_and_is_gone_with_the_last(location: str) -> None:
    """A generic name resolves as its versioned names do: a withdrawn version is never offered (not in N2R's
    300 list, not chosen by Accept, not N2L's location, not pdi get's list), and with none left the generic name
    is its tombstone, 410 (RFC 9110 §15.5.11), as the document page already was."""
    with Archive.init(location) as archive:
        archive.add_series(S)
        first = archive.add(S, b"ruling, first text\n", format="text")
        generic = str(first).rsplit(".", 2)[0]
        second = archive.add_version(generic, [Content(b"ruling, corrected\n", "text")])[0]
        client = TestClient(create_app(location, archive=archive))
        archive.withdraw(str(second), reason="corrected in error", who="clerk")
        # version 2 withdrawn: version 1 is what the generic name offers, and its newest
        listed = client.get(f"/uri-res/N2R?{generic}")
        assert listed.status_code == 300 and str(second) not in listed.text and str(first) in listed.text
        chosen = client.get(f"/uri-res/N2R?{generic}", headers={"Accept": "text/plain"}, follow_redirects=False)
        assert chosen.status_code == 302 and chosen.headers["location"].endswith(str(first))
        assert [str(n) for n in archive.resolve(generic).names] == [str(first)]  # type: ignore[union-attr]
        assert [str(n) for n in archive.resolve(generic, latest=True).names] == [str(first)]  # type: ignore[union-attr]
        # version 1 withdrawn too: every version is gone, so is the document's generic name
        archive.withdraw(str(first), reason="sealed", who="clerk")
        for answer in (client.get(f"/uri-res/N2R?{generic}"),
                       client.get(f"/uri-res/N2R?{generic}", headers={"Accept": "text/plain"}),
                       client.get(f"/uri-res/N2L?{generic}", follow_redirects=False),
                       client.get(f"/timegate/{generic}", follow_redirects=False)):
            assert answer.status_code == 410, answer.text
            assert answer.json()["detail"].endswith(": sealed")
        with pytest.raises(WithdrawnError) as raised:
            archive.resolve(generic)
        assert (raised.value.reason, raised.value.who) == ("sealed", "clerk")
        assert "every version was withdrawn; version 1 was withdrawn " in str(raised.value)
        assert client.get(f"/uri-res/N2C?{generic}").json()["withdrawn"]["reason"] == "sealed"
        assert client.get(f"/view?pdi={generic}").status_code == 410
        # a document withdrawn whole: its own tombstone
        other = archive.add(S, b"another ruling\n", format="text")
        other_generic = str(other).rsplit(".", 2)[0]
        archive.withdraw(other_generic, reason="not ours", who="clerk")
        with pytest.raises(WithdrawnError, match=r"its document was withdrawn .*: not ours"):
            archive.resolve(other_generic)
        assert client.get(f"/uri-res/N2R?{other_generic}").status_code == 410


def test_a_generic_name_tells_a_reader_no_tombstone_of_what_it_may_not_learn_of(location: str) -> None:
    """An embargo hides a withdrawn version's tombstone as it hides the version: a reader without a token learns
    of neither (403, never the reason or who withdrew it), as the version's own name already answered."""
    with Archive.init(location) as archive:
        archive.add_series(S)
        hidden = str(archive.add(S, b"sealed\n", format="text"))
        hidden_generic = hidden.rsplit(".", 2)[0]
        archive.embargo(hidden_generic, "2099-01-01")
        archive.withdraw(hidden_generic, "SECRET-A")
        first = str(archive.add(S, b"ruling\n", format="text"))
        generic = first.rsplit(".", 2)[0]
        second = str(archive.add_version(generic, [Content(b"ruling, sealed\n", "text")])[0])
        archive.embargo(second, "2099-01-01")
        archive.withdraw(first, "public reason")
        archive.withdraw(second, "SECRET-B")
        client = TestClient(create_app(location, archive=archive))
        for path in ("/uri-res/N2R?", "/uri-res/N2C?", "/uri-res/N2L?", "/timemap/link/", "/view?pdi="):
            answer = client.get(path + hidden_generic, follow_redirects=False)
            assert answer.status_code == 403 and "SECRET" not in answer.text, (path, answer.text)
            answer = client.get(path + generic, follow_redirects=False)  # version 1's tombstone alone
            assert "SECRET" not in answer.text, (path, answer.text)
            assert answer.status_code == (200 if "N2C" in path else 410) and "public reason" in answer.text


def test_withdrawing_again_changes_nothing_and_says_so(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        first = archive.add(S, b"ruling\n", format="text")
        generic = str(first).rsplit(".", 2)[0]
        client = TestClient(create_app(location, archive=archive))
        auth = {"Authorization": f"Bearer {curator}"}
        made = client.post(f"/api/withdraw?pdi={first}&reason=sealed", headers=auth)
        again = client.post(f"/api/withdraw?pdi={first}&reason=another+reason", headers=auth)
        assert (made.status_code, again.status_code) == (201, 200)
        assert again.json()["withdrawn"] == made.json()["withdrawn"]  # the first tombstone, its reason kept
        assert "sealed" in client.get(f"/uri-res/N2R?{first}").json()["detail"]
        # the document withdrawn whole, then again, then a version of it: one more withdrawal, not three
        assert archive.withdraw(generic, "not ours").earlier is False
        assert archive.withdraw(generic, "twice").earlier is True
        later = archive.withdraw(str(first), "thrice")
        assert later.earlier is True and (later.version, later.reason) == (1, "sealed")  # what it resolves to
        assert [(e.subject, e.detail) for e in archive.audit() if e.action == "withdraw"] == [
            (str(first), "version 1: sealed"), (generic, "the document: not ours")]


def test_withdrawals_at_once_record_one_tombstone(location: str) -> None:
    """Curators withdrawing the same name at the same moment, each through an archive of their own (one
    connection each): one tombstone and one audit line, and every other curator told of that one (earlier).
    Whether it was withdrawn before is decided in the withdrawal's own transaction, not read before it."""
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"the sealed affidavit\n", format="text"))
    curators = 6
    opened = [Archive.open(location) for _ in range(curators)]
    start = threading.Barrier(curators)
    records: list[object] = [None] * curators

    def withdraw(i: int) -> None:
        start.wait()
        records[i] = opened[i].withdraw(name, f"order {i}")

    try:
        threads = [threading.Thread(target=withdraw, args=(i,)) for i in range(curators)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for one in opened:
            one.close()
    made = [r for r in records if isinstance(r, WithdrawalRecord)]
    assert len(made) == curators
    assert sum(1 for r in made if not r.earlier) == 1
    first = next(r for r in made if not r.earlier)
    assert {(r.id, r.reason) for r in made} == {(first.id, first.reason)}
    with Archive.open(location) as archive:
        assert len(archive.withdrawals()) == 1
        assert [e.detail for e in archive.audit() if e.action == "withdraw"] == [f"version 1: {first.reason}"]


def test_a_withdrawn_document_keeps_its_serial_and_its_foreign_id(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        one = archive.add(S, b"one\n", format="text")
        report = archive.add(S, b"report\n", format="text", foreign_id="case-12")
        generic = str(report).rsplit(".", 2)[0]
        archive.withdraw(generic, "filed in error")
        for name in (report, generic + ".text.1"):
            with pytest.raises(WithdrawnError, match=r"its document was withdrawn .*: filed in error"):
                archive.get(name)
        # never minted again: the next serial follows, the foreign id stays taken
        assert archive.add(S, b"two\n", format="text").serial == one.serial + 1  # type: ignore[operator]
        with pytest.raises(ImmutabilityError, match="case-12"):
            archive.add(S, b"other bytes\n", format="text", foreign_id="case-12")


def test_withdrawals_travel_in_a_bag(location: str, tmp_path: Path) -> None:
    with Archive.init(tmp_path / "source") as source:
        source.add_series(S)
        kept = source.add(S, b"kept\n", format="text")
        withdrawn = source.add(S, b"withdrawn\n", format="text")
        source.withdraw(withdrawn, "privacy request")
        source.export_bag(tmp_path / "bag")
    with Archive.init(location) as target:
        assert target.import_bag(tmp_path / "bag") == 2
        assert target.get(kept).data == b"kept\n"
        with pytest.raises(WithdrawnError, match="privacy request"):
            target.get(withdrawn)
        # importing again adds no second tombstone
        target.import_bag(tmp_path / "bag")
        assert len(target.withdrawals()) == 1


def test_a_withdrawal_through_one_resolver_reaches_another_resolvers_cache(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"cached everywhere\n", format="text"))
        _, curator = archive.add_token("clerk", role="curate", series=[S])
    with serving(location, "--workers", "1") as (_, a), serving(location, "--workers", "1") as (_, b), \
            httpx.Client() as client:
        for _ in range(3):  # B now answers from its cache
            assert client.get(f"http://127.0.0.1:{b}/uri-res/N2R?{name}").status_code == 200
        made = client.post(f"http://127.0.0.1:{a}/api/withdraw?pdi={name}&reason=recalled",
                           headers={"Authorization": f"Bearer {curator}"})
        assert made.status_code == 201
        withdrawn_at = time.monotonic()
        while client.get(f"http://127.0.0.1:{b}/uri-res/N2R?{name}").status_code != 410:
            assert time.monotonic() - withdrawn_at < 10, "resolver B kept answering from its cache"
            time.sleep(0.1)
