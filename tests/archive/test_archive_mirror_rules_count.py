"""The count of changes of its access rules a mirror records of its origin (``mirrors.rules_seen``, schema step 25)
never goes down, whatever runs at once: on PostgreSQL as on SQLite.

Two syncs of one series at once each record the count their page signs; the larger must stay, or a page older than
it (of the smaller count) would be followed afterwards, lifting a rule the origin set since
(tests/server/test_server_mirror_rules_replay.py replays such a page through real ``pdi serve`` processes). Here
the first sync's transaction is held open after it recorded its count while the second records a smaller one: the
order two syncs' transactions can take on PostgreSQL, where writers are not serialized as on SQLite.
"""

from __future__ import annotations

import threading
import time

import pytest

from pdi.archive import Archive
from pdi.errors import IntegrityError
from pdi.signing import SigningKey, jwk_set_text

SERIES = "court.example.fr"
ORIGIN = "https://origin.example.fr"


def test_a_smaller_count_recorded_while_a_larger_one_is_being_committed_is_refused(location: str) -> None:
    jwk = jwk_set_text([SigningKey.generate().public])
    with Archive.init(location) as archive:
        record = archive.add_mirror(SERIES, ORIGIN, "origin", jwk)
        archive.follow_origin_rules_count(record, 5)
        recorded = threading.Event()
        outcome: list[BaseException | None] = []

        def first() -> None:  # a sync whose page says 7: recorded, its transaction not yet committed
            with archive.store._write():
                archive.follow_origin_rules_count(record, 7)
                recorded.set()
                time.sleep(1.0)  # the second sync reads and writes meanwhile

        def second() -> None:  # a sync at once whose page says 6 (signed before the origin's seventh change)
            recorded.wait(10)
            try:
                archive.follow_origin_rules_count(record, 6)
                outcome.append(None)
            except IntegrityError as exc:
                outcome.append(exc)

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], IntegrityError), outcome
        assert "had changed 6 times" in str(outcome[0]) and "said 7 before" in str(outcome[0])
        with pytest.raises(IntegrityError, match="said 7 before"):  # 7 stays: a page of 6 is refused from now on
            archive.follow_origin_rules_count(record, 6)
        archive.follow_origin_rules_count(record, 7)
