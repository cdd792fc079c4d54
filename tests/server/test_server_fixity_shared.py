"""A blob file one worker of ``pdi serve`` verified whole is trusted by the other workers, and a file changed since is
checked again by each (:class:`pdi.archive.blobs.memo.SharedFixity`).

Two processes stand for two workers as ``pdi serve`` makes them: the table is made first, then a process forked
(the first worker) reads the blob by verified chunks through its own archive and memo and exits; this process (the
second worker, with an archive and a memo of its own) then serves the blob on ``pdi serve``'s own protocol. What
it hashes is counted (``support.hashed``: every SHA-256 the blob readers make) and what it sends by ``sendfile``
is counted by a spy that sends all the same. The octets expected are the ones deposited, never the server's. A
byte is flipped with ``os.pwrite`` and the modification time put back (the ctime moves on all the same).
"""

from __future__ import annotations

import mmap
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_helpers import exchange, on_own_protocol
from test_server_fixity_memo import TEXT, SendfileSpy, deposit, flip, n2r

import pdi.archive.blobs
from pdi.archive import Archive
from pdi.archive.blobs import CHUNK_SIZE, FileReader
from pdi.archive.blobs.memo import FixityMemo, Identity, SharedFixity, identity, racy_window
from pdi.errors import IntegrityError
from pdi.server import create_app
from pdi.server.process import zerocopy
from support.hashed import CountingHashlib, wait_changed_ago

#: An identity whose ctime is long past.
OLD: Identity = (1, 2, 3, 4, 5)
A = "a" * 64
B = "b" * 64


def in_child(work: Callable[[], None]) -> int:
    """``work()`` run in a process forked from this one (as ``pdi serve`` forks its workers): its exit status,
    0 when it returned."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not gathered
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def read_whole(location: Path, name: str, shared: SharedFixity) -> Callable[[], None]:
    """A worker's read of ``name``'s octets by verified chunks, through an archive and a memo of its own."""
    def work() -> None:
        with Archive.open(location) as archive:
            archive.fixity_memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
            with archive.open_octets(name) as opened:
                if b"".join(opened.reader.chunks(0, opened.size)) != TEXT:
                    raise AssertionError("other octets than deposited")
    return work


def test_what_one_process_verified_whole_is_trusted_by_another_for_that_identity_until_its_expiry() -> None:
    clock = [1000.0]
    shared = SharedFixity()
    assert in_child(lambda: FixityMemo(600, clock=lambda: clock[0], shared=shared).note(A, OLD, 0, 1, time.time_ns())) == 0
    here = FixityMemo(600, clock=lambda: clock[0], shared=shared)
    assert here.holds(A, OLD, 0, 0) and len(here) == 0  # nothing of its own: the other's
    assert not here.holds(A, (1, 2, 3, 4, 6), 0, 0)  # the ctime moved on
    assert not here.holds(B, OLD, 0, 0)
    assert not FixityMemo(0, shared=shared).holds(A, OLD, 0, 0)  # a memo of 0 seconds trusts nothing
    clock[0] += 600
    assert not here.holds(A, OLD, 0, 0)  # the expiry set where it was verified, 600 s after
    # a file verified in part is not shared: only "this file, whole"
    assert in_child(lambda: FixityMemo(600, clock=lambda: clock[0], shared=shared).note(B, OLD, 0, 2, time.time_ns())) == 0
    assert not here.holds(B, OLD, 0, 0)
    # damage one process found is forgotten by all
    FixityMemo(600, clock=lambda: clock[0], shared=shared).note(B, OLD, 0, 1, time.time_ns())
    assert in_child(lambda: None if FixityMemo(600, clock=lambda: clock[0], shared=shared).holds(B, OLD, 0, 0)
                    else os._exit(3)) == 0
    assert in_child(lambda: FixityMemo(600, clock=lambda: clock[0], shared=shared).forget(B)) == 0
    assert not here.holds(B, OLD, 0, 0)


def test_a_file_changed_within_the_writeback_delay_is_never_shared() -> None:
    """3 s past its change, more than the times' step (2 s) but less than the kernel's writeback delay (a page
    written through a shared mmap may still be dirty, its next writes moving no ctime): no worker vouches for it,
    not even to a memo that would itself trust it."""
    shared = SharedFixity()
    started = time.time_ns()
    recent: Identity = (1, 2, 3, 4, started - 3_000_000_000)
    assert in_child(lambda: FixityMemo(600, shared=shared).note(A, recent, 0, 1, started)) == 0
    assert not FixityMemo(600, racy_seconds=0.1, shared=shared).holds(A, recent, 0, 0)
    assert in_child(lambda: FixityMemo(600, racy_seconds=0.1, shared=shared).note(A, recent, 0, 1, started)) == 0
    assert FixityMemo(600, shared=shared).holds(A, recent, 0, 0)  # what the table holds when one is noted


def test_a_blob_one_memo_forgot_is_trusted_by_none_until_the_tombstone_expires() -> None:
    """Three workers' memos on one table: the first verified the blob whole (its own entry and the table's slot),
    the third trusts the table; the second finds damage and forgets it. Neither the first's own entry nor its next
    note, nor the third's, brings the blob back before the memo's time has passed."""
    clock = [1000.0]
    shared = SharedFixity()
    first, second, third = (FixityMemo(600, clock=lambda: clock[0], shared=shared) for _ in range(3))
    first.note(A, OLD, 0, 1, time.time_ns())
    assert first.holds(A, OLD, 0, 0) and len(first) == 1
    assert third.holds(A, OLD, 0, 0) and len(third) == 0
    second.forget(A)
    assert not first.holds(A, OLD, 0, 0) and len(first) == 0  # its own entry dropped
    assert not third.holds(A, OLD, 0, 0)
    first.note(A, OLD, 0, 1, time.time_ns())  # its read of the file went on, and ended after the damage was found
    third.note(A, OLD, 0, 1, time.time_ns())
    assert not first.holds(A, OLD, 0, 0) and not third.holds(A, OLD, 0, 0) and not second.holds(A, OLD, 0, 0)
    first.note(B, OLD, 0, 1, time.time_ns())
    assert second.holds(B, OLD, 0, 0)
    clock[0] += 600  # the tombstone's time, the memo's seconds, is over: the blob may be verified again
    first.note(A, OLD, 0, 1, time.time_ns())
    assert second.holds(A, OLD, 0, 0) and third.holds(A, OLD, 0, 0)


def test_a_blob_forgotten_in_another_process_is_trusted_by_no_memo_here_even_its_own_entry() -> None:
    clock = [1000.0]
    shared = SharedFixity()
    here = FixityMemo(600, clock=lambda: clock[0], shared=shared)
    here.note(A, OLD, 0, 1, time.time_ns())
    assert in_child(lambda: FixityMemo(600, clock=lambda: clock[0], shared=shared).forget(A)) == 0
    assert not here.holds(A, OLD, 0, 0) and len(here) == 0
    # a worker whose read ends after the damage was found notes the blob whole: the tombstone stays
    assert in_child(lambda: FixityMemo(600, clock=lambda: clock[0], shared=shared).note(A, OLD, 0, 1,
                                                                                        time.time_ns())) == 0
    assert not here.holds(A, OLD, 0, 0)
    assert in_child(lambda: None if not FixityMemo(600, clock=lambda: clock[0], shared=shared).holds(A, OLD, 0, 0)
                    else os._exit(3)) == 0


def test_a_set_full_of_live_tombstones_keeps_them_all() -> None:
    """Tombstones have a table of their own: a set full of them keeps them all, and a blob never forgotten is still
    noted (in the table of blobs verified, which its set's tombstones do not fill)."""
    clock = [0.0]
    shared = SharedFixity(SharedFixity.WAYS)  # one set
    memo = FixityMemo(600, clock=lambda: clock[0], shared=shared)
    forgotten = [f"{n:064x}" for n in range(SharedFixity.WAYS)]
    for digest in forgotten:
        memo.forget(digest)
    for digest in [*forgotten, "f" * 64]:
        memo.note(digest, OLD, 0, 1, time.time_ns())
    other = FixityMemo(600, clock=lambda: clock[0], shared=shared)
    assert not any(other.holds(digest, OLD, 0, 0) for digest in forgotten)
    assert other.holds("f" * 64, OLD, 0, 0)
    memo.forget("e" * 64)  # a ninth: in the place of the tombstone that expires first (all alike here: one of them)
    assert other.holds("f" * 64, OLD, 0, 0) and not other.holds("e" * 64, OLD, 0, 0)
    assert sum(shared.forgotten(digest, clock[0]) for digest in [*forgotten, "e" * 64]) == SharedFixity.WAYS


def test_a_full_table_takes_the_slot_that_expires_first_and_never_holds_another_blob() -> None:
    clock = [0.0]
    shared = SharedFixity(SharedFixity.WAYS)  # one set
    digests = [f"{n:064x}" for n in range(SharedFixity.WAYS + 1)]
    for n, digest in enumerate(digests):
        clock[0] = float(n)
        FixityMemo(600, clock=lambda: clock[0], shared=shared).note(digest, OLD, 0, 1, time.time_ns())
    memo = FixityMemo(600, clock=lambda: clock[0], shared=shared)
    held = [d for d in digests if memo.holds(d, OLD, 0, 0)]
    assert held == digests[1:]  # the first out, the one that expired first
    assert not memo.holds("f" * 64, OLD, 0, 0)


def one_set_holding_a() -> tuple[SharedFixity, FixityMemo]:
    """A table of one set (its map: its 8 slots) in which A was noted verified whole, and a memo reading it."""
    shared = SharedFixity(SharedFixity.WAYS)
    FixityMemo(600, clock=lambda: 0.0, shared=shared).note(A, OLD, 0, 1, time.time_ns())
    memo = FixityMemo(600, clock=lambda: 0.0, shared=shared)
    assert memo.holds(A, OLD, 0, 0)
    return shared, memo


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_slot_with_any_bit_flipped_holds_nothing(data: st.DataObject) -> None:
    shared, memo = one_set_holding_a()
    at = bytes(shared._map).find(bytes.fromhex(A))
    assert at >= 0 and at % SharedFixity._SLOT == 0
    where = at + data.draw(st.integers(0, SharedFixity._SLOT - 1))
    shared._map[where] ^= 1 << data.draw(st.integers(0, 7))
    assert not memo.holds(A, OLD, 0, 0)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=SharedFixity.WAYS * SharedFixity._SLOT, max_size=SharedFixity.WAYS * SharedFixity._SLOT),
       st.lists(st.integers(0, SharedFixity.WAYS - 1), max_size=SharedFixity.WAYS))
def test_random_bytes_in_the_map_hold_nothing(noise: bytes, with_digest: list[int]) -> None:
    """Whatever the memory holds, even A's SHA-256 where a slot starts, no slot holds without its keyed check."""
    shared = SharedFixity(SharedFixity.WAYS)
    shared._map[:] = noise
    for slot in with_digest:
        shared._map[slot * SharedFixity._SLOT : slot * SharedFixity._SLOT + 32] = bytes.fromhex(A)
    memo = FixityMemo(600, clock=lambda: 0.0, shared=shared)
    assert not memo.holds(A, OLD, 0, 0)
    assert not memo.holds(B, OLD, 0, 0)


def test_a_slot_made_with_another_key_holds_nothing() -> None:
    """Another table's slot, whole and checked by its own key (another pdi serve's), copied into every slot."""
    other, _ = one_set_holding_a()
    at = bytes(other._map).find(bytes.fromhex(A))
    made = bytes(other._map[at : at + SharedFixity._SLOT])
    shared = SharedFixity(SharedFixity.WAYS)
    for slot in range(SharedFixity.WAYS):
        shared._map[slot * SharedFixity._SLOT : (slot + 1) * SharedFixity._SLOT] = made
    assert not FixityMemo(600, clock=lambda: 0.0, shared=shared).holds(A, OLD, 0, 0)


def test_a_file_changed_just_now_is_not_trusted_by_another_process_that_read_it_whole(tmp_path: Path) -> None:
    """A worker with pdi serve's memo (the system's racy window) reads a fresh blob file whole: the memo of this
    process, which would trust an old one from the table, is not given this one."""
    location = tmp_path / "archive"
    name, path = deposit(location)

    def fresh_read() -> None:
        with Archive.open(location) as archive:
            archive.fixity_memo = FixityMemo(600, shared=shared)
            with archive.open_octets(name) as opened:
                if b"".join(opened.reader.chunks(0, opened.size)) != TEXT:
                    raise AssertionError("other octets than deposited")

    shared = SharedFixity()
    assert in_child(fresh_read) == 0
    with Archive.open(location) as archive:
        archive.fixity_memo = memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
        with archive.open_octets(name) as opened:
            assert isinstance(opened.reader, FileReader)
            now = opened.reader.identity()
            assert time.time_ns() - now[4] < racy_window() * 1e9  # still fresh: the premise holds
            assert opened.reader.trusted(0, opened.size) is None
        assert not memo.holds(opened.reader.info.sha256, now, 0, 0)
        # the same read, by a memo that (wrongly, here) takes the file as old, is what the table would vouch for
        wait_changed_ago(path, 0.2)
    assert in_child(read_whole(location, name, shared)) == 0
    with Archive.open(location) as archive:
        archive.fixity_memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
        with archive.open_octets(name) as opened:
            assert isinstance(opened.reader, FileReader)
            assert opened.reader.trusted(0, opened.size) is not None


@pytest.fixture
def verified_elsewhere(tmp_path: Path) -> Iterator[tuple[str, str, Path, SharedFixity, Archive]]:
    """The resolver of a fresh archive, on pdi serve's own protocol in a thread, whose memo shares a table with a
    process forked before it that verified the text whole: its URL, the name, the blob file, the table, the
    archive."""
    location = tmp_path / "archive"
    name, path = deposit(location)
    wait_changed_ago(path, 0.2)
    shared = SharedFixity()
    assert in_child(read_whole(location, name, shared)) == 0
    app = create_app(str(location), fixity_shared=shared)
    archive: Archive = app.state.archive
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1, shared=shared)  # not the system's 45 s: no one maps it writable
    try:
        with on_own_protocol(app) as base:
            yield base, name, path, shared, archive
    finally:
        archive.close()


def test_a_blob_another_worker_verified_is_sent_with_sendfile_and_hashed_by_none(
    verified_elsewhere: tuple[str, str, Path, SharedFixity, Archive], monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, name, _, _, archive = verified_elsewhere
    hashed = CountingHashlib()
    monkeypatch.setattr(pdi.archive.blobs, "hashlib", hashed)
    spy = SendfileSpy(monkeypatch)
    with httpx.Client(timeout=60) as client:
        got = client.get(n2r(base, name))
        assert got.status_code == 200 and got.content == TEXT
    assert spy.sent(len(TEXT)) == len(TEXT)
    assert hashed.octets == 0
    assert archive.fixity_memo is not None and len(archive.fixity_memo) == 0  # it verified nothing itself


def test_a_blob_changed_after_another_worker_verified_it_is_checked_again_and_refused_by_each(
    verified_elsewhere: tuple[str, str, Path, SharedFixity, Archive], tmp_path: Path,
) -> None:
    base, name, path, shared, _ = verified_elsewhere
    # a third worker (in this process, no fork beside the server's thread) that verifies the file itself: its own
    # memo holds it, as the shared table does
    with Archive.open(tmp_path / "archive") as third, httpx.Client(timeout=60) as client:
        memo = third.fixity_memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
        with third.open_octets(name) as opened:
            opened.reader.verify()  # every chunk hashed, whatever a memo holds, and remembered
        assert len(memo) == 1
        flip(path, 2 * CHUNK_SIZE + 100)  # past the first chunk: the answer starts, and is cut short before it
        with pytest.raises(httpx.RemoteProtocolError):
            client.get(n2r(base, name))
        with third.open_octets(name) as opened, pytest.raises(IntegrityError, match="chunk 2"):
            b"".join(opened.reader.chunks(0, opened.size))
        flip(path, 2 * CHUNK_SIZE + 100, mend=True)  # mended: the same octets, a new ctime; verified again whole
        wait_changed_ago(path, 0.2)
        assert client.get(n2r(base, name)).content == TEXT
        flip(path, 10)  # in the first chunk: a problem, not a cut
        damaged = client.get(n2r(base, name))
        assert damaged.status_code == 500 and "chunk 0" in damaged.json()["detail"]
        with third.open_octets(name) as opened, pytest.raises(IntegrityError, match="chunk 0"):
            b"".join(opened.reader.chunks(0, opened.size))


#: A text over a catalog row's 64 KiB (so a blob file) and under the 1 MiB of an answer the cache keeps (so read whole
#: by the connection's plain path: read_cached): one chunk.
SMALL = b"".join(b"%09d a text read whole, checked\n" % i for i in range(20_000))  # 740,000 octets


def read_small(location: Path, name: str, shared: SharedFixity) -> Callable[[], None]:
    """A worker's read of ``name``'s octets (SMALL) by verified chunks, through an archive and a memo of its own."""
    def work() -> None:
        with Archive.open(location) as archive:
            archive.fixity_memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
            with archive.open_octets(name) as opened:
                if b"".join(opened.reader.chunks(0, opened.size)) != SMALL:
                    raise AssertionError("other octets than deposited")
    return work


def test_a_blob_read_whole_and_found_damaged_is_trusted_by_no_worker_though_its_identity_is_the_same(
    tmp_path: Path,
) -> None:
    """A worker verified the file whole; then an octet is changed through a writable shared mmap whose page is
    still dirty, which moves no ctime: the file's identity is the one the table vouches for (what the racy window
    of pdi serve's memo, 45 s, keeps from being remembered; these memos' 0.1 s does not). The next N2R reads the
    small blob whole (read_cached, on the connection's own plain path, as pdi serve's connections do) and finds it
    damaged: it is forgotten there, so the reader that says what is wrong hashes it again rather than trusting the
    table, and every later read, of any worker, refuses it."""
    location = tmp_path / "archive"
    with Archive.init(location) as made:
        made.add_series("memo.example.us")
        name = str(made.add("memo.example.us", SMALL, format="text"))
        sha = made.locate(name).sha256
        path = Path(made.store.blobs.blob_path(sha))  # type: ignore[attr-defined]
    where, last = 5000, (len(SMALL) - 1) // CHUNK_SIZE
    os.chmod(path, 0o600)
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, 0) as mapped:
            for _ in range(5):  # a sync of this file system (any process's) may clean the page between the writes
                mapped[where] = SMALL[where]  # a write fault: the page dirty, the ctime moved, the octets the same
                wait_changed_ago(path, 0.2)
                shared = SharedFixity()
                assert in_child(read_small(location, name, shared)) == 0  # another worker verified it whole
                verified = identity(fd)
                mapped[where] = SMALL[where] ^ 0x20
                if identity(fd) == verified:
                    break
            else:
                pytest.fail("the page was written back between the two writes five times: no identity kept")
            app = create_app(str(location), fixity_shared=shared)
            archive: Archive = app.state.archive
            archive.fixity_memo = memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
            assert memo.holds(sha, identity(fd), 0, last)  # the premise: the table vouches for the damaged file
            try:
                with on_own_protocol(app, public=True) as base, httpx.Client(timeout=60) as client:
                    # a plain head, as a resolver is asked most: the connection's plain path reads the blob whole
                    port = int(base.rsplit(":", 1)[1])
                    damaged = exchange(port, [f"GET /uri-res/N2R?{name} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                              .encode()])[0]
                    assert damaged.startswith(b"HTTP/1.1 500 ") and b"chunk 0" in damaged
                    assert shared.forgotten(sha, time.monotonic())
                    assert not memo.holds(sha, identity(fd), 0, last)
                    assert client.get(n2r(base, name), headers={"Range": "bytes=0-99"}).status_code == 500
                    assert client.get(n2r(base, name)).status_code == 500
            finally:
                archive.close()
            assert identity(fd) == verified  # all the while the file as the table vouched for it
    finally:
        os.close(fd)
    assert in_child(read_small(location, name, shared)) != 0  # another worker hashes it again, and refuses it
    assert not FixityMemo(600, racy_seconds=0.1, shared=shared).holds(sha, verified, 0, last)


def test_a_blob_file_changed_while_sent_from_the_table_is_forgotten_by_every_worker(
    verified_elsewhere: tuple[str, str, Path, SharedFixity, Archive], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The file changes between two sendfile calls of an answer sent on another worker's word: the answer is cut
    short, and the blob is forgotten in the table (its tombstone), as a damaged chunk found is."""
    base, name, path, shared, archive = verified_elsewhere
    sha = archive.locate(name).sha256
    real = zerocopy.os.sendfile
    calls: list[int] = []

    def damaging(out: int, fd: int, offset: int | None, count: int) -> int:
        sent = real(out, fd, offset, count)
        if not calls:
            flip(path, 2 * CHUNK_SIZE + 100)  # after the first call: the file is no longer the one vouched for
        calls.append(sent)
        return sent

    monkeypatch.setattr(zerocopy.os, "sendfile", damaging)
    assert not shared.forgotten(sha, time.monotonic())
    with httpx.Client(timeout=60) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.get(n2r(base, name))
        assert calls and sum(calls) < len(TEXT)
        assert shared.forgotten(sha, time.monotonic())
        with pytest.raises(httpx.RemoteProtocolError):  # hashed again: cut short before the damaged chunk
            client.get(n2r(base, name))
        assert len(calls) == 1  # sent by no sendfile again
        ranged = client.get(n2r(base, name), headers={"Range": f"bytes={2 * CHUNK_SIZE}-{2 * CHUNK_SIZE + 200}"})
        assert ranged.status_code == 500


def test_no_tombstone_is_lost_to_notes_of_the_blob_written_at_the_same_instant() -> None:
    """One process (a worker whose reads end as the damage is found) notes the blobs of a set verified whole as fast
    as it can, while this one forgets them one by one: every tombstone is there when its forget returns and after,
    and no blob is held, whichever note chose its slot before a tombstone was written and wrote after it."""
    rounds = 40
    ways = SharedFixity.WAYS
    tables = [SharedFixity(ways) for _ in range(rounds)]  # one set each: all its blobs in the same slots
    digests = [[f"{r:032x}{n:032x}" for n in range(ways)] for r in range(rounds)]
    steps = mmap.mmap(-1, 16)  # shared with the child: the round this process is in, the round the child notes

    def hammer() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            at = int.from_bytes(steps[0:8], "little")
            if at >= rounds:
                return
            for digest in digests[at]:
                tables[at].note(digest, OLD, time.monotonic() + 600, time.monotonic())
            steps[8:16] = at.to_bytes(8, "little")

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not gathered
        try:
            hammer()
        finally:
            os._exit(0)
    try:
        for at in range(rounds):
            steps[0:8] = at.to_bytes(8, "little")
            deadline = time.monotonic() + 10
            while int.from_bytes(steps[8:16], "little") != at and time.monotonic() < deadline:
                pass  # until the child notes this round's blobs
            for digest in digests[at]:
                tables[at].forget(digest, time.monotonic() + 600, time.monotonic())
                assert tables[at].forgotten(digest, time.monotonic())
            time.sleep(0.002)  # the child's notes go on a while
    finally:
        steps[0:8] = rounds.to_bytes(8, "little")
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    now = time.monotonic()
    lost = [(at, digest) for at in range(rounds) for digest in digests[at] if not tables[at].forgotten(digest, now)]
    assert not lost, f"{len(lost)} tombstones of {rounds * ways} lost"
    held = [(at, digest) for at in range(rounds) for digest in digests[at] if tables[at].holds(digest, OLD, now)]
    assert not held
