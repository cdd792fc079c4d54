"""The fixity memo: chunks of a blob file verified once are trusted while the file is unchanged (issue 13).

The policy (``pdi.archive.blobs.memo``): a chunk is remembered with the
file's identity (device, inode, size, mtime_ns, ctime_ns) taken by
``fstat`` before it was read; it is trusted only while ``fstat`` gives the
same identity, until the expiry, and never for a file changed less than the
racy window ago. A byte flipped with ``os.pwrite`` changes ``ctime`` even
when the modification time is put back, and the next read refuses it.
"""

from __future__ import annotations

import mmap
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.blobs import CHUNK_SIZE, FileReader
from pdi.archive.blobs.memo import FixityMemo, Identity, writeback_seconds
from pdi.errors import IntegrityError
from support.hashed import wait_changed_ago
from support.stored_blobs import flip_octet

S = "memo.example.us"
#: Three chunks and a bit: octet i is i mod 251 (a prime, so no chunk repeats another).
SIZE = 3 * CHUNK_SIZE + 1234
OCTETS = bytes(i % 251 for i in range(SIZE))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


#: An identity whose ctime is long past (the racy window never applies to it).
OLD: Identity = (1, 2, 3, 4, 5)


def test_a_remembered_chunk_is_trusted_only_for_the_same_identity_and_until_the_expiry() -> None:
    clock = Clock()
    memo = FixityMemo(600, clock=clock)
    memo.note("a", OLD, 1, 4, time.time_ns())
    assert memo.holds("a", OLD, 1, 1)
    assert not memo.holds("a", OLD, 0, 1)  # chunk 0 was never verified
    assert not memo.holds("b", OLD, 1, 1)
    changed: Identity = (1, 2, 3, 4, 6)  # only the ctime moved on
    assert not memo.holds("a", changed, 1, 1)
    assert not memo.holds("a", OLD, 1, 1), "a changed file's entry is gone, not merely skipped"
    memo.note("a", OLD, 2, 4, time.time_ns())
    clock.now += 599.9
    assert memo.holds("a", OLD, 2, 2)
    clock.now += 0.1
    assert not memo.holds("a", OLD, 2, 2)


def test_zero_seconds_remembers_nothing_and_a_racy_file_is_not_remembered() -> None:
    off = FixityMemo(0)
    off.note("a", OLD, 0, 1, time.time_ns())
    assert not off.holds("a", OLD, 0, 0)
    memo = FixityMemo(600, racy_seconds=2)
    fresh: Identity = (1, 2, 3, time.time_ns(), time.time_ns())  # changed just now
    memo.note("a", fresh, 0, 1, time.time_ns())
    assert not memo.holds("a", fresh, 0, 0)


def test_the_racy_window_is_measured_from_before_the_fstat_not_from_the_note() -> None:
    ctime = 5_000_000_000_000_000_000
    changed: Identity = (1, 2, 3, ctime, ctime)
    memo = FixityMemo(600, racy_seconds=2)
    memo.note("a", changed, 0, 1, ctime + 2_000_000_000 - 1)  # fstat'ed 1 ns less than 2 s after the change
    assert not memo.holds("a", changed, 0, 0)
    memo.note("a", changed, 0, 1, ctime + 2_000_000_000)
    assert memo.holds("a", changed, 0, 0)


def test_a_file_changed_within_the_racy_window_of_its_fstat_is_not_remembered_however_slow_the_read(
    deposited: tuple[Archive, str, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The file's ctime is 0.1 s old when the read begins and more than the window (1 s) old when the read and
    the hash end: what the read saw may be the racy change's, so nothing of it is remembered."""
    archive, name, path = deposited
    archive.fixity_memo = FixityMemo(600, racy_seconds=1)
    real = FileReader._pread

    def slow(self: FileReader, offset: int, length: int) -> bytes:
        time.sleep(1.2)
        return real(self, offset, length)

    monkeypatch.setattr(FileReader, "_pread", slow)
    wait_changed_ago(path, 0.1)
    began = time.time_ns()
    with archive.open_octets(name) as opened:
        assert opened.reader.read(0, 10) == OCTETS[:10]
    assert began - os.stat(path).st_ctime_ns < 1e9, "the read began within the window (a stalled machine)"
    assert time.time_ns() - os.stat(path).st_ctime_ns > 1e9
    assert not _trusted(archive, name, 0, 10)


def test_the_writeback_delay_is_read_from_proc_sys_vm_in_centiseconds(tmp_path: Path) -> None:
    vm = tmp_path / "vm"
    assert writeback_seconds(str(vm)) == 60  # unreadable: the safe constant
    vm.mkdir()
    (vm / "dirty_expire_centisecs").write_text("3000\n")
    assert writeback_seconds(str(vm)) == 60  # one of the two missing
    (vm / "dirty_writeback_centisecs").write_text("500\n")
    assert writeback_seconds(str(vm)) == 30 + 5 + 10  # the kernel's defaults and the margin
    (vm / "dirty_expire_centisecs").write_text("12345\n")
    assert writeback_seconds(str(vm)) == 123.45 + 5 + 10
    (vm / "dirty_writeback_centisecs").write_text("0\n")  # periodic writeback off: a page may stay dirty for good
    assert writeback_seconds(str(vm)) == float("inf")
    (vm / "dirty_writeback_centisecs").write_text("often\n")
    assert writeback_seconds(str(vm)) == 60
    memo = FixityMemo(600, racy_seconds=float("inf"))  # nothing is ever old enough
    memo.note("a", OLD, 0, 1, time.time_ns())
    assert not memo.holds("a", OLD, 0, 0)


def _system_window() -> float:
    """This system's racy window worked out here from /proc/sys/vm (the kernel's documented centiseconds)."""
    try:
        expire, every = (int(Path("/proc/sys/vm", name).read_text())
                         for name in ("dirty_expire_centisecs", "dirty_writeback_centisecs"))
    except OSError:
        return 60.0
    return float("inf") if every == 0 else max(2.0, (expire + every) / 100 + 10)


def test_a_file_changed_within_the_writeback_delay_is_never_remembered_by_default() -> None:
    window = _system_window()
    assert window >= 12  # never the 2 s of the times' step alone
    started = time.time_ns()
    within: Identity = (1, 2, 3, 4, started - int((window - 1) * 1e9))  # changed a second short of the window
    memo = FixityMemo(600)
    memo.note("a", within, 0, 1, started)
    assert not memo.holds("a", within, 0, 0)
    if window < float("inf"):
        past: Identity = (1, 2, 3, 4, started - int((window + 1) * 1e9))
        memo.note("a", past, 0, 1, started)
        assert memo.holds("a", past, 0, 0)


def test_a_write_through_a_dirty_mmap_page_moves_no_ctime_and_is_still_refused(
    deposited: tuple[Archive, str, Path],
) -> None:
    """The kernel moves ctime at the first write to a clean page of a shared mapping, not at the next ones while
    the page stays dirty (until writeback, 35 s by default): a file verified 2 s after such a write would be
    trusted, by a 2 s window, while the page is changed again. The default window outlasts the writeback."""
    archive, name, path = deposited
    archive.fixity_memo = FixityMemo(600)
    where = CHUNK_SIZE + 7
    os.chmod(path, 0o600)
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, 0) as mapped:
            mapped[where] = mapped[where]  # a write fault: the page dirty, the ctime moved, the octets the same
            wait_changed_ago(path, 2.1)
            assert _read_all(archive, name) == OCTETS
            assert not _trusted(archive, name)
            changed = os.stat(path).st_ctime_ns
            mapped[where] ^= 0x80
            if os.stat(path).st_ctime_ns == changed:  # the page was still dirty (no sync cleaned it meanwhile)
                with pytest.raises(IntegrityError, match="chunk 1"):
                    _read_all(archive, name)
    finally:
        os.close(fd)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=6, max_size=6), st.lists(st.integers(0, 5), max_size=60),
       st.integers(1, 100))
def test_the_memo_stays_within_its_bound_of_chunks(sizes: list[int], order: list[int], bound: int) -> None:
    memo = FixityMemo(600, max_chunks=bound)
    seen: list[int] = []
    for blob in order:
        memo.note(str(blob), OLD, sizes[blob] - 1, sizes[blob], time.time_ns())
        seen.append(blob)
        held = [b for b in set(seen) if memo.holds(str(b), OLD, sizes[b] - 1, sizes[b] - 1)]
        assert sum(sizes[b] for b in held) <= bound
        assert len(memo) == len(held)
        if sizes[blob] <= bound:
            assert blob in held, "the blob just noted is the last to go"
        else:
            assert blob not in held, "a blob larger than the bound is never remembered"


@pytest.fixture
def deposited(tmp_path: Path) -> tuple[Archive, str, Path]:
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    name = str(archive.add(S, OCTETS, format="octet-stream"))
    path = archive.store.blobs.blob_path(archive.resolve(name).sha256)  # type: ignore[attr-defined]
    return archive, name, Path(path)


def _read_all(archive: Archive, name: str) -> bytes:
    with archive.open_octets(name) as opened:
        return b"".join(opened.reader.chunks())


def _trusted(archive: Archive, name: str, start: int = 0, end: int = SIZE) -> bool:
    with archive.open_octets(name) as opened:
        assert isinstance(opened.reader, FileReader)
        return opened.reader.trusted(start, end) is not None


def test_a_read_remembers_the_chunks_it_verified_and_a_later_read_trusts_them(
    deposited: tuple[Archive, str, Path],
) -> None:
    archive, name, path = deposited
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    wait_changed_ago(path, 0.15)
    assert not _trusted(archive, name)
    with archive.open_octets(name) as opened:
        assert b"".join(opened.reader.chunks(CHUNK_SIZE + 5, CHUNK_SIZE + 10)) == OCTETS[CHUNK_SIZE + 5 : CHUNK_SIZE + 10]
    assert _trusted(archive, name, CHUNK_SIZE, 2 * CHUNK_SIZE)  # chunk 1 only
    assert not _trusted(archive, name, CHUNK_SIZE, 2 * CHUNK_SIZE + 1)
    assert _read_all(archive, name) == OCTETS
    assert _trusted(archive, name)
    assert _read_all(archive, name) == OCTETS  # from the memo: the same octets


def test_a_byte_flipped_with_the_mtime_put_back_is_refused_at_the_next_read(
    deposited: tuple[Archive, str, Path],
) -> None:
    archive, name, path = deposited
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    wait_changed_ago(path, 0.15)
    assert _read_all(archive, name) == OCTETS
    assert _trusted(archive, name)
    before = os.stat(path)
    where = 2 * CHUNK_SIZE + 77
    os.chmod(path, 0o600)  # the store keeps blobs read-only; a damaging hand would do the same
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, bytes([OCTETS[where] ^ 0x01]), where)
    finally:
        os.close(fd)
    os.chmod(path, before.st_mode)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert after.st_mtime_ns == before.st_mtime_ns and after.st_size == before.st_size
    assert after.st_ctime_ns != before.st_ctime_ns
    assert not _trusted(archive, name)
    with pytest.raises(IntegrityError, match=r"chunk 2 \(octets 2097152 to 3145727\)"):
        _read_all(archive, name)
    # the chunks before it are still the deposited octets
    with archive.open_octets(name) as opened:
        assert b"".join(opened.reader.chunks(0, 2 * CHUNK_SIZE)) == OCTETS[: 2 * CHUNK_SIZE]


def test_verify_hashes_every_chunk_whatever_the_memo_holds(deposited: tuple[Archive, str, Path]) -> None:
    archive, name, path = deposited
    where = 5
    mode = os.stat(path).st_mode
    os.chmod(path, 0o600)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, bytes([OCTETS[where] ^ 0x80]), where)
    finally:
        os.close(fd)
    os.chmod(path, mode)
    wait_changed_ago(path, 0.15)
    # a memo that wrongly holds every chunk of the damaged file as it is now
    memo = FixityMemo(600, racy_seconds=0.1)
    archive.fixity_memo = memo
    with archive.open_octets(name) as opened:
        reader = opened.reader
        assert isinstance(reader, FileReader)
        count = reader.info.chunk_count()
        for index in range(count):
            memo.note(reader.info.sha256, reader.identity(), index, count, time.time_ns())
        assert reader.read(0, 10)[where] == OCTETS[where] ^ 0x80  # trusted: what the memo is for
        with pytest.raises(IntegrityError, match="chunk 0"):
            reader.verify()
    assert archive.verify().problems, "pdi verify opens its own readers, without the memo"


def test_verify_range_reads_nothing_the_memo_holds_and_checks_a_changed_file(
    deposited: tuple[Archive, str, Path],
) -> None:
    """``verify_range`` (a PDF's and an aggregate's fragments check every chunk so) follows the memo's rules."""
    archive, name, path = deposited
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    wait_changed_ago(path, 0.15)
    with archive.open_octets(name) as opened:
        opened.reader.verify_range(0, SIZE)  # hashes every chunk, and remembers them
    assert _trusted(archive, name)
    flip_octet(archive.location, path.name, 3)
    wait_changed_ago(path, 0.15)
    with archive.open_octets(name) as opened, pytest.raises(IntegrityError, match="chunk 0"):
        opened.reader.verify_range(0, SIZE)


def test_a_pdf_passage_after_its_pdf_is_damaged_is_refused(tmp_path: Path) -> None:
    """A PDF's passage comes from its text layer, but every chunk of the PDF is checked (or remembered unchanged)."""
    pdf = (Path(__file__).parents[1] / "data" / "pdf" / "tracemonkey.pdf").read_bytes()
    archive = Archive.init(tmp_path / "archive")
    archive.add_series(S)
    name = str(archive.add(S, pdf, format="pdf"))
    path = Path(archive.store.blobs.blob_path(archive.resolve(name).sha256))  # type: ignore[attr-defined]
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1)
    wait_changed_ago(path, 0.15)
    first = archive.resolve(f"{name}#char=0,40")
    assert archive.resolve(f"{name}#char=0,40").data == first.data  # the second from the memo
    flip_octet(archive.location, path.name, len(pdf) - 100)  # in the last chunk, far from the passage's text
    with pytest.raises(IntegrityError, match="does not match its SHA-256"):
        archive.resolve(f"{name}#char=0,40")


def test_a_blob_file_cut_short_or_read_whole_and_found_damaged_is_forgotten_in_the_shared_table(
    deposited: tuple[Archive, str, Path],
) -> None:
    """Not only a damaged chunk: a file of another size than recorded (refused before a byte is read), and a blob
    read whole at once (read_cached) whose chunks do not match, write the blob's tombstone, as a damaged chunk
    does, so that no process trusts what it remembered of it."""
    from pdi.archive.blobs import read_cached
    from pdi.archive.blobs.memo import SharedFixity

    archive, name, path = deposited
    sha = archive.resolve(name).sha256
    shared = SharedFixity()
    archive.fixity_memo = memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
    with archive.open_octets(name) as opened:
        info = opened.reader.info
    flip_octet(archive.location, path.name, 3)
    for _ in range(100):  # read_cached reads only what is in the page cache (else None, nothing read): read it in
        assert path.read_bytes()[3] == OCTETS[3] ^ 1
        assert not shared.forgotten(sha, time.monotonic())
        assert read_cached(info, str(path), memo) is None
        if shared.forgotten(sha, time.monotonic()):
            break
    assert shared.forgotten(sha, time.monotonic())
    other = SharedFixity()
    archive.fixity_memo = FixityMemo(600, racy_seconds=0.1, shared=other)
    os.chmod(path, 0o600)
    os.truncate(path, SIZE - 1)
    with pytest.raises(IntegrityError, match="cut short"):
        archive.open_octets(name).close()
    assert other.forgotten(sha, time.monotonic())


def _mounted_as(path: Path) -> str | None:
    """The file system type /proc/self/mounts gives for the mount ``path`` is under (the longest mount point that
    holds it), or ``None`` without /proc."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return None
    best, kind = "", None
    resolved = str(path.resolve())
    for line in lines:
        point, fstype = line.split()[1].replace("\\040", " "), line.split()[2]
        if (resolved == point or resolved.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, kind = point, fstype
    return kind


@pytest.fixture
def on_tmpfs() -> Iterator[Path]:
    """A fresh directory on tmpfs (/dev/shm where it is one)."""
    import shutil
    import tempfile

    shm = Path("/dev/shm")
    # Linux mounts a tmpfs there for POSIX shared memory (glibc's shm_open): a machine without one is not what
    # this suite runs on, and is said, not skipped
    assert shm.is_dir() and _mounted_as(shm) == "tmpfs" and os.access(shm, os.W_OK), "no writable tmpfs at /dev/shm"
    made = Path(tempfile.mkdtemp(prefix="pdi-memo-", dir=shm))
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.mark.parametrize("where", ["tmpfs", "disk"])
def test_the_memo_remembers_nothing_of_a_blob_file_on_tmpfs(
    where: str, on_tmpfs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tmpfs never writes a page back, so a page written through a writable mmap stays dirty and later writes to it
    never move the ctime: no racy window can vouch for a file there. Each read of it is hashed; the same blob on
    the test's own file system (a disk's) is remembered as before."""
    import pdi.archive.blobs
    from pdi.archive.blobs.memo import SharedFixity
    from support.hashed import CountingHashlib

    root = on_tmpfs if where == "tmpfs" else tmp_path
    assert (_mounted_as(root) == "tmpfs") == (where == "tmpfs")
    archive = Archive.init(root / "archive")
    try:
        archive.add_series(S)
        name = str(archive.add(S, OCTETS, format="octet-stream"))
        path = Path(archive.store.blobs.blob_path(archive.resolve(name).sha256))  # type: ignore[attr-defined]
        shared = SharedFixity()
        archive.fixity_memo = memo = FixityMemo(600, racy_seconds=0.1, shared=shared)
        wait_changed_ago(path, 0.15)
        hashed = CountingHashlib()
        monkeypatch.setattr(pdi.archive.blobs, "hashlib", hashed)
        assert _read_all(archive, name) == OCTETS
        assert hashed.octets == SIZE
        assert _read_all(archive, name) == OCTETS
        with archive.open_octets(name) as opened:
            assert isinstance(opened.reader, FileReader)
            now = opened.reader.identity()
            sha = opened.reader.info.sha256
        last = (SIZE - 1) // CHUNK_SIZE
        if where == "tmpfs":
            assert hashed.octets == 2 * SIZE  # hashed again
            assert len(memo) == 0 and not _trusted(archive, name)
            assert not shared.holds(sha, now, time.monotonic())
        else:
            assert hashed.octets == SIZE  # from the memo
            assert len(memo) == 1 and _trusted(archive, name) and memo.holds(sha, now, 0, last)
            assert shared.holds(sha, now, time.monotonic())
    finally:
        archive.close()
