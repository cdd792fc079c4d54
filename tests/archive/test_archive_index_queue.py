"""The indexer's queue on both stores: a large deposit is resolvable at once, its text searchable once the queue drains.

A deposit past :data:`pdi.archive.search.QUEUE_PAST` octets writes a row of
``index_queue`` in its own transaction instead of its passages; the tests
make that limit small, so a text of a few hundred kilobytes stands for a
gigabyte. Each hit's ``char`` range is checked against ``str.find`` in the
CRLF-canonical text (written with ``str.replace``, not pdi's code), and the
name resolved through the archive gives exactly the word.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from archive_helpers import SRC, Clock
from click.testing import CliRunner

import pdi.archive.search as search
from pdi.archive import Archive
from pdi.cli import cli

S = "oma.eop.gov.us"


@pytest.fixture(autouse=True)
def small_queue_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "QUEUE_PAST", 50_000)


def long_text(word: str, lines: int = 6000) -> str:
    filler = "".join(f"Line {i} of plain words, here and there.\n" for i in range(lines))
    return filler + f"A {word} stood near the end.\n" + filler[:5000]


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")


def test_a_large_deposit_is_resolvable_at_once_and_found_after_the_queue_drains(archive: Archive) -> None:
    text = long_text("zebra")
    octets = text.encode("utf-8")
    assert len(octets) > search.QUEUE_PAST
    name = archive.add(S, octets, format="text")
    # resolvable at once: the exact octets, and a passage by char (its line index was made in the deposit's pass)
    assert archive.get(name).data == octets
    at = crlf(text).find("zebra")
    assert archive.get(f"{name}#char={at},{at + 5}").data == b"zebra"
    small = archive.add(S, b"a small zebra, indexed at once\n", format="text")
    results = archive.search("zebra")
    assert [str(h.name).split("#")[0] for h in results.hits] == [str(small)]  # the small one only, so far
    assert results.pending == 1
    assert archive.pending_index() == 1
    assert archive.index_pending_of(archive.locate(str(name)).record)  # the reader's page and --info say so
    assert not archive.index_pending_of(archive.locate(str(small)).record)
    (queued,) = archive.queued_indexes()
    assert queued[:4] == (hashlib.sha256(octets).hexdigest(), "text/plain", "utf-8", len(octets))
    run = archive.index_queued()
    assert (run.indexed, run.failed) == (1, ())
    assert run.passages > 1
    results = archive.search("zebra")
    assert results.pending == 0
    assert archive.queued_indexes() == []
    assert not archive.index_pending_of(archive.locate(str(name)).record)
    found = {str(h.name).split("#")[0]: h for h in results.hits}
    hit = found[str(name)]
    assert (hit.start, hit.end) == (at, at + 5)
    assert archive.get(str(hit.name)).data == b"zebra"
    assert archive.index_queued().indexed == 0  # nothing left


def test_the_same_octets_twice_are_queued_once_and_both_names_pending(archive: Archive) -> None:
    octets = long_text("okapi").encode("utf-8")
    first = archive.add(S, octets, format="text")
    second = archive.add(S, octets, format="text", force=True)
    assert first != second
    assert len(archive.queued_indexes()) == 1
    assert archive.pending_index() == 2
    assert archive.pending_index(series=S) == 2
    archive.index_queued()
    assert sorted(str(h.name).split("#")[0] for h in archive.search("okapi").hits) == sorted([str(first), str(second)])


def test_reindex_takes_queued_sources_off_the_queue(archive: Archive) -> None:
    name = archive.add(S, long_text("ibex").encode("utf-8"), format="text")
    assert archive.pending_index() == 1
    archive.reindex()
    assert archive.pending_index() == 0 and archive.queued_indexes() == []
    assert [str(h.name).split("#")[0] for h in archive.search("ibex").hits] == [str(name)]


def test_a_withdrawn_or_private_name_is_not_counted_pending(archive: Archive) -> None:
    name = archive.add(S, long_text("tapir").encode("utf-8"), format="text")
    archive.withdraw(name, "test")
    assert archive.pending_index() == 0


def test_a_killed_indexer_leaves_its_row_to_be_taken_again(location: str, clock: Clock, tmp_path: Path) -> None:
    """A worker killed (SIGKILL) after writing part of a source's passages: the row stays, leased; once the
    lease has run out another worker takes it, deletes what the first left, and makes each passage once."""
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        name = archive.add(S, long_text("quokka", lines=20000).encode("utf-8"), format="text")
    script = textwrap.dedent(f"""
        import os, signal
        import pdi.archive.search as search
        from pdi.archive import Archive
        from pdi.archive.naming import timestamp
        import datetime
        archive = Archive.open({location!r})
        store = archive.store
        now = datetime.datetime.now(datetime.UTC)
        source = store.claim_index("doomed", timestamp(now), timestamp(now + datetime.timedelta(seconds=600)))
        assert source is not None
        with search.index_blob(store, source[0], source[1], source[2] or None) as passages:
            def dying():
                for n, p in enumerate(passages):
                    if n == 5:
                        os.kill(os.getpid(), signal.SIGKILL)
                    yield p
            store.store_queued(source, "doomed", dying(), timestamp(now), batch=2)
    """)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    later = Clock(datetime.datetime.now(datetime.UTC))
    with Archive.open(location, clock=later) as archive:
        store = archive.store
        with store._read():
            left = store._query("SELECT COUNT(*) FROM search_passages")[0][0]
        assert left == 4  # two batches of two went in before the kill
        (row,) = archive.queued_indexes()
        assert row[4] == 1  # one attempt
        assert archive.pending_index() == 1
        assert archive.index_queued().indexed == 0  # still leased to the dead worker
        later.now += datetime.timedelta(seconds=search.LEASE_SECONDS + 1)
        run = archive.index_queued()
        assert (run.indexed, run.failed) == (1, ())
        with store._read():
            made = store._query("SELECT COUNT(*), COUNT(DISTINCT start) FROM search_passages")[0]
        assert made[0] == made[1] == run.passages  # each passage once
        (hit,) = archive.search("quokka").hits
        assert str(hit.name).startswith(str(name))
        assert archive.get(str(hit.name)).data == b"quokka"
        assert archive.pending_index() == 0


def test_a_worker_that_lost_its_lease_writes_nothing_more(archive: Archive) -> None:
    archive.add(S, long_text("dingo").encode("utf-8"), format="text")
    store = archive.store
    source = store.claim_index("first", "2026-11-22T14:30:00.000000Z", "2026-11-22T14:31:00.000000Z")
    assert source is not None
    assert store.claim_index("second", "2026-11-22T14:30:30.000000Z", "2026-11-22T14:40:00.000000Z") is None
    assert store.claim_index("second", "2026-11-22T14:32:00.000000Z", "2026-11-22T14:40:00.000000Z") == source
    with search.index_blob(store, source[0], source[1], source[2] or None) as passages:
        assert store.store_queued(source, "first", passages, "2026-11-22T14:33:00.000000Z") is False
    assert archive.pending_index() == 1 and archive.search("dingo").hits == ()


def test_the_command_line_says_pending_and_pdi_index_drains(tmp_path: Path) -> None:
    runner = CliRunner()
    where = str(tmp_path / "archive")
    big = tmp_path / "big.txt"
    big.write_bytes(long_text("wombat").encode("utf-8"))
    assert runner.invoke(cli, ["init", where]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", where]).exit_code == 0
    added = runner.invoke(cli, ["add", str(big), "-s", S, "--archive", where, "--no-progress"])
    assert added.exit_code == 0, added.output
    name = added.stdout.strip()
    info = runner.invoke(cli, ["get", name, "--info", "--archive", where])
    assert info.exit_code == 0 and "search-index\tpending\n" in info.stdout
    found = runner.invoke(cli, ["search", "wombat", "--archive", where])
    assert found.exit_code == 0 and found.stdout == ""
    assert "index pending: the text of 1 name is not searched yet (pdi index)" in found.stderr
    # the word is in the queued text: the note on the miss says that texts not searched yet may hold it, never
    # that no passage holds it
    assert "no passage holds" not in found.stderr
    assert "note: no passage searched holds every one of these words, but the texts not searched yet may" \
        " (pdi index searches them)" in found.stderr
    as_json = json.loads(runner.invoke(cli, ["search", "wombat", "--json", "--archive", where]).stdout)
    assert as_json["pending"] == 1 and as_json["hits"] == []
    listed = runner.invoke(cli, ["index", "--pending", "--archive", where])
    assert "text/plain; charset=utf-8" in listed.stdout and f"{big.stat().st_size} octets" in listed.stdout
    drained = runner.invoke(cli, ["index", "--archive", where])
    assert drained.exit_code == 0 and "of 1 queued octet stream\n" in drained.stdout
    found = runner.invoke(cli, ["search", "wombat", "--archive", where])
    assert found.stdout.startswith(f"{name}#char=") and "pending" not in found.stderr
    assert "search-index" not in runner.invoke(cli, ["get", name, "--info", "--archive", where]).stdout


def test_two_workers_at_once_index_each_queued_source_once(location: str, clock: Clock) -> None:
    """Two workers (each its own catalog connection, as two processes would have) drain one queue together."""
    import threading

    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        for word in ("kudu", "eland", "nyala"):
            archive.add(S, long_text(word, lines=3000).encode("utf-8"), format="text")
        assert archive.pending_index() == 3
    runs: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with Archive.open(location, clock=clock) as mine:
                runs.append(mine.index_queued().indexed)
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert not errors, errors
    assert sum(runs) == 3
    with Archive.open(location, clock=clock) as archive:
        assert archive.pending_index() == 0
        store = archive.store
        with store._read():
            made = store._query("SELECT COUNT(*) FROM (SELECT DISTINCT sha256, start FROM search_passages) s")[0][0]
            total = store._query("SELECT COUNT(*) FROM search_passages")[0][0]
        assert made == total  # no passage twice
        for word in ("kudu", "eland", "nyala"):
            (hit,) = archive.search(word).hits
            assert archive.get(str(hit.name)).data == word.encode()


def test_index_watch_says_it_is_watching_and_each_batch_it_indexes(tmp_path: Path) -> None:
    """Found by a new user: ``pdi index --watch`` printed nothing until Ctrl-C, so one could not tell it was
    working. On standard error it says at once which archive it watches and how often it looks, then one line for
    each batch it indexes (how many, how long); Ctrl-C stops it (exit 130). Standard output stays empty."""
    import queue
    import re
    import threading
    import time

    where = tmp_path / "archive"
    with Archive.init(where) as archive:
        archive.add_series(S)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    watcher = subprocess.Popen([sys.executable, "-c", "from pdi.cli import main; main()", "index", "--watch",
                                "--interval", "0.25", "--archive", str(where)],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert watcher.stderr is not None
    threading.Thread(target=lambda: [lines.put(line) for line in watcher.stderr or ()], daemon=True).start()
    try:
        said = lines.get(timeout=60)
        assert said == f"pdi: watching {where} for texts queued to index, looking every 0.25 s (Ctrl-C stops)\n"
        time.sleep(1)  # several looks at an empty queue: no line for each
        assert lines.empty(), lines.get()
        with Archive.open(where) as archive:
            archive.add(S, long_text("okapi").encode("utf-8"), format="text")
            assert archive.pending_index() == 1
        said = lines.get(timeout=60)
        match = re.fullmatch(r"indexed (\d+) passages of 1 queued octet stream in (\d+\.\d) s\n", said)
        assert match and int(match[1]) > 0 and 0 <= float(match[2]) < 60, said
        with Archive.open(where) as archive:
            assert archive.pending_index() == 0 and len(archive.search("okapi").hits) == 1
    finally:
        watcher.send_signal(signal.SIGINT)
        out, _ = watcher.communicate(timeout=60)
    assert watcher.returncode == 130 and out == ""
