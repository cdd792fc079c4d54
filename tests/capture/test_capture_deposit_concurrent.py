"""Captures of one URL deposited at the same time (two ``pdi capture`` runs, two cron jobs): each is kept or
found unchanged, as when they come one after the other; none fails because another minted the day's name.

Every capture looks for the day's versions before any deposits (a barrier after each one's first look makes
that order certain), both catalogs.
"""

from __future__ import annotations

import datetime
import threading

from pdi.archive import Archive
from pdi.capture.deposit import deposit_capture

URL = "http://e.example/"
NOW = datetime.datetime(2026, 11, 27, 23, 59, 59, tzinfo=datetime.UTC)  # one GMT day for every capture


def page(text: str) -> bytes:
    return (
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=b; type="text/html"\r\n\r\n'
        b"--b\r\nContent-Type: text/html\r\nContent-Location: http://e.example/\r\n\r\n"
        + f"<p>{text}\r\n--b--\r\n".encode()
    )


def capture_at_once(location: str, pages: list[bytes]) -> list[object]:
    looked = threading.Barrier(len(pages))
    results: list[object] = [None] * len(pages)

    def one(i: int) -> None:
        archive = Archive.open(location, clock=lambda: NOW)
        look = archive.versions
        waited = []

        def versions(name: object) -> list[int]:
            found = look(name)
            if not waited:  # the first look: the others look too before any deposits
                waited.append(True)
                looked.wait(timeout=30)
            return found

        archive.versions = versions  # type: ignore[method-assign]
        try:
            results[i] = deposit_capture(archive, "oma.eop.gov.us", URL, pages[i])
        except Exception as exc:  # the outcome under test
            results[i] = exc
        finally:
            archive.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(pages))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def test_different_captures_at_once_become_the_days_versions(location: str) -> None:
    Archive.init(location).add_series("oma.eop.gov.us")
    results = capture_at_once(location, [page(f"edition {i}") for i in range(4)])
    assert not [r for r in results if isinstance(r, Exception)], results
    versions = sorted(r.names[0].version for r in results)  # type: ignore[attr-defined]
    assert versions == [1, 2, 3, 4]
    archive = Archive.open(location)
    name = results[0].names[0]  # type: ignore[attr-defined]
    held = {archive.get(name.with_version(v)).data for v in versions}
    assert held == {page(f"edition {i}") for i in range(4)}


def test_the_same_capture_twice_at_once_is_kept_once(location: str) -> None:
    Archive.init(location).add_series("oma.eop.gov.us")
    results = capture_at_once(location, [page("same"), page("same")])
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sorted(r.unchanged for r in results) == [False, True]  # type: ignore[attr-defined]
    assert {r.names[0].version for r in results} == {1}  # type: ignore[attr-defined]
