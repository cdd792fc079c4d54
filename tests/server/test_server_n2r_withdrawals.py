"""An N2R answer reads the tombstones of its own document, never every withdrawal in the catalog.

A document's TimeMap (RFC 7089 §5: withdrawn versions left out) and a
generic name's format chosen by ``Accept`` (the newest version not
withdrawn) need to know which of the document's versions were withdrawn;
a versioned name's own N2R (its memento headers name no other memento)
needs none. Reading every
tombstone of the catalog for that (as the resolver did) made each answer
grow with the withdrawals of a large catalog: 296 ms at a million names
with 10,000 withdrawn against 4.4 ms now with 11,000 (bench/bench_scale.py, docs/benchmarks.md,
"Scale"). Here the resolver's store refuses the whole list, and the answers
must still be what RFC 7089 and RFC 9110 say, on both stores.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import pytest
from server_helpers import Clock

from pdi.archive import Archive, Content
from pdi.archive.store import DocumentKey, WithdrawalRecord
from pdi.server.process.cache import Entity
from pdi.server.process.limits import WorkLimits
from pdi.server.protocol.memento_oaipmh import Mementos
from pdi.server.protocol.resolver import Resolver
from pdi.server.protocol.rfc2169 import rfc2169_query

S = "scale.example.us"
BASE = "http://resolver.example/"
TIMES = [datetime.datetime(2021, 1, 1, 12, 0, 0, tzinfo=datetime.UTC) + datetime.timedelta(hours=h) for h in range(6)]


def _field(entity: Entity, name: str) -> str:
    return next(v.decode("latin-1") for k, v in entity.headers if k == name.encode())


def test_n2r_asks_only_about_its_own_documents_withdrawals(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(TIMES[0])
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        v1 = archive.add(S, b"version one\n", format="text")
        generic = str(v1).rsplit(".", 2)[0]
        clock.now = TIMES[1]
        v2 = archive.add_version(generic, [Content(b"version two\n", "text")]).names[0]
        clock.now = TIMES[2]
        v3 = archive.add_version(generic, [Content(b"version three\n", "text")]).names[0]
        others = [archive.add(S, f"other {i}\n".encode(), format="text") for i in range(5)]
        clock.now = TIMES[3]
        archive.withdraw(v2, "version two was wrong")
        for other in others:  # tombstones of other documents, which no answer about this one reads
            archive.withdraw(other, "not this document")
        clock.now = TIMES[4]
        last = archive.add_version(generic, [Content(b"version four\n", "text")]).names[0]
        archive.withdraw(last, "version four was wrong too")

        asked: list[list[DocumentKey]] = []
        own = archive.store.withdrawals_of

        def withdrawals_of(keys: Sequence[DocumentKey]) -> list[WithdrawalRecord]:
            asked.append(list(keys))
            return own(keys)

        def every_withdrawal() -> object:
            raise AssertionError("an N2R read every withdrawal in the catalog")

        monkeypatch.setattr(archive.store, "withdrawals_of", withdrawals_of)
        monkeypatch.setattr(archive.store, "iter_withdrawals", every_withdrawal)
        resolver = Resolver(archive, WorkLimits())
        key = DocumentKey(S, TIMES[0].date(), v1.unique_id)

        answer = resolver.representation(str(v3), BASE)
        assert isinstance(answer, Entity) and answer.body == b"version three\n"
        # RFC 7089 §2.2.1: the memento's own answer (immutable) names only the original, the TimeGate,
        # the TimeMap and itself, so no tombstone at all is read for it
        assert asked == []
        link = _field(answer, "link")
        assert f'<{BASE}uri-res/N2R?{rfc2169_query(str(v3))}>; rel="memento"' in link
        assert rfc2169_query(str(v1)) not in link and rfc2169_query(str(v2)) not in link
        assert _field(answer, "memento-datetime") == "Fri, 01 Jan 2021 14:00:00 GMT"
        # the TimeMap, which names every memento, leaves version two (withdrawn) out, reading only
        # this document's tombstones
        uris = [m.uri for m in Mementos(archive).subject(rfc2169_query(generic), BASE).mementos]
        assert uris == [f"{BASE}uri-res/N2R?{rfc2169_query(str(v))}" for v in (v1, v3)]
        assert asked == [[key]]

        # a generic name and Accept: the newest version not withdrawn is version three (RFC 9110 §12.5.1)
        asked.clear()
        chosen = resolver.representation(generic, BASE, "text/plain")
        assert not isinstance(chosen, Entity)
        assert getattr(chosen, "status_code", None) == 302
        assert chosen.headers["location"] == f"/uri-res/N2R?{rfc2169_query(str(v3))}"  # type: ignore[union-attr]
        assert asked == [[key]]
