"""``Archive.withdrawals_of``: the tombstones of the documents asked about, and only theirs (both stores).

A resolver asks this about the one document it answers for (the memento's
headers of an N2R, a generic name's newest formats): read by index, it must
give exactly what the whole list of tombstones (:meth:`Archive.withdrawals`)
holds for those documents, oldest first.
"""

from __future__ import annotations

import datetime
import random

from archive_helpers import Clock

from pdi.archive import Archive, Content
from pdi.archive.store import DocumentKey
from pdi.identifier import PDI

S = "oma.eop.gov.us"


def _key(name: PDI) -> DocumentKey:
    assert name.date is not None
    return DocumentKey(name.series_name.lower(), name.date, name.unique_id)


def test_a_documents_tombstones_and_no_other(archive: Archive, clock: Clock) -> None:
    kept = archive.add(S, b"kept\n", format="text")
    versions = archive.add(S, b"one\n", format="text")
    archive.add_version(str(versions).rsplit(".", 2)[0], [Content(b"two\n", "text")])
    whole = archive.add(S, b"whole\n", format="text")
    clock.now += datetime.timedelta(hours=1)
    archive.withdraw(versions, "the first version was wrong")
    clock.now += datetime.timedelta(hours=1)
    archive.withdraw(str(whole).rsplit(".", 2)[0], "filed in error")

    assert archive.withdrawals_of([]) == []
    assert archive.withdrawals_of([_key(kept)]) == []
    (one,) = archive.withdrawals_of([_key(versions)])
    assert (one.key, one.version, one.reason) == (_key(versions), 1, "the first version was wrong")
    # oldest first whatever the order asked in; a key asked twice gives its tombstones once
    both = archive.withdrawals_of([_key(whole), _key(kept), _key(versions), _key(whole)])
    assert [(w.key, w.version, w.reason) for w in both] == [
        (_key(versions), 1, "the first version was wrong"), (_key(whole), None, "filed in error")]
    assert both == archive.withdrawals()


def test_many_documents_asked_at_once_agree_with_the_whole_list(archive: Archive) -> None:
    # some withdrawn whole, some a version
    names = [archive.add(S, f"document {i}\n".encode(), format="text") for i in range(230)]
    for i, name in enumerate(names):
        if i % 7 == 3:
            archive.withdraw(name, f"version of {i}")
        elif i % 11 == 5:
            archive.withdraw(str(name).rsplit(".", 2)[0], f"document {i}")
    everything = archive.withdrawals()
    assert len(everything) == len([i for i in range(230) if i % 7 == 3 or i % 11 == 5])
    rng = random.Random(15)
    for size in (1, 99, 100, 101, 230):
        asked = {_key(name) for name in rng.sample(names, size)}
        assert archive.withdrawals_of(asked) == [w for w in everything if w.key in asked]

    # beside keys of no document, more keys than one statement asks about (10,000), in any order
    unknown = [DocumentKey(S, datetime.date(1999, 1, 1) + datetime.timedelta(days=j % 400), f"never-{j}")
               for j in range(10_050)]
    asked_all = [*unknown[:5_000], *(_key(name) for name in reversed(names)), *unknown[5_000:]]
    assert archive.withdrawals_of(asked_all) == everything
