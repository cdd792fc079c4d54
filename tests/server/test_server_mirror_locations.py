"""Where else a series lives (:class:`pdi.server.protocol.mirrored.Locations`), read beside the catalog's lock.

A resolver's worker thread reads a name inside a snapshot of the catalog (holding its lock) and then asks
whether the name's series is mirrored; the event loop asks the same of every plain answer. Found by a
stranger's load on ``pdi serve`` (a worker that stopped answering for good): the recorded mirrors were read
holding a lock of the module's own, so the two threads took the two locks in opposite orders. These tests
take them in that order on purpose.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import pdi.server.protocol.mirrored as mirrored
from pdi.archive import Archive
from pdi.server.protocol.mirrored import Locations
from pdi.signing import SigningKey

S = "copied.example.us"
ORIGIN = "https://origin.example.org"


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    with Archive.init(tmp_path / "archive") as made:
        made.add_mirror(S, ORIGIN, "origin", json.dumps({"keys": [SigningKey.generate().public.jwk()]}))
    return Archive.open(tmp_path / "archive")


def test_a_thread_holding_a_snapshot_and_another_reading_the_mirrors_do_not_wait_for_each_other(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    locations = Locations(archive)
    monkeypatch.setattr(mirrored, "REFRESH_SECONDS", 0.0)  # every asking reads the recorded mirrors again
    holding, reading = threading.Event(), threading.Event()
    found: dict[str, str | None] = {}

    def in_a_snapshot() -> None:  # Resolver.representation: a snapshot, then the series' origin
        with archive.snapshot():
            holding.set()
            reading.wait(10)
            time.sleep(0.3)  # the other thread is now waiting for the catalog's lock
            found["snapshot"] = locations.origin(S)

    def asking() -> None:
        holding.wait(10)
        reading.set()
        found["other"] = locations.origin(S)  # waits for the snapshot's end, holding nothing of its own

    threads = [threading.Thread(target=in_a_snapshot, daemon=True), threading.Thread(target=asking, daemon=True)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert not any(thread.is_alive() for thread in threads), "the two threads wait for each other"
        assert found == {"snapshot": ORIGIN, "other": ORIGIN}
    finally:
        if not any(thread.is_alive() for thread in threads):  # else closing would wait for them too
            archive.close()


def test_the_event_loops_asking_never_waits_for_the_catalog(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    locations = Locations(archive)
    assert locations.origin_at_once(S) == ORIGIN  # the first asking reads them, holding no lock of its own
    monkeypatch.setattr(mirrored, "REFRESH_SECONDS", 0.0)  # due to be read again at every asking
    holding, asked, let_go = threading.Event(), threading.Event(), threading.Event()

    def in_a_snapshot() -> None:
        with archive.snapshot():
            holding.set()
            asked.wait(10)
        let_go.set()

    thread = threading.Thread(target=in_a_snapshot, daemon=True)
    try:
        thread.start()
        assert holding.wait(10)
        origin = locations.origin_at_once(S)
        assert not let_go.is_set()  # answered while the catalog's lock was held by the other thread
        asked.set()
        assert origin == ORIGIN  # as read last
        assert locations.origin_at_once("other.example.us") is None  # a series of this archive's own
        thread.join(10)
        _wait_for_reading(locations)  # its own thread read them again
    finally:
        archive.close()


def _wait_for_reading(locations: Locations) -> None:
    """Until the thread :meth:`Locations.origin_at_once` started has read the recorded mirrors."""
    deadline = time.monotonic() + 10
    while locations._reading.locked() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not locations._reading.locked()
