"""``-o FILE`` writes a regular file whole (beside its name, renamed into place) and anything else in place.

Found 2026-11-27: ``pdi get NAME -o /dev/null``, run as root, renamed its partial file over ``/dev/null``: the
device became a regular file, and every later ``> /dev/null`` on the machine failed ("cannot create /dev/null:
Permission denied", 438 errors in the next test run). A device or a named pipe is written in place (a shell's
``>(…)`` and ``/dev/stdout`` on a pipe are named pipes); a symbolic link is followed, the link kept.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pdi.archive import Archive

S = "example.us"
TEXT = b"the minutes of the board\n"


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, str]:
    location = tmp_path / "archive"
    with Archive.init(location) as opened:
        opened.add_series(S)
        return location, str(opened.add(S, TEXT, format="text"))


def _get(location: Path, name: str, output: str, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} | kwargs
    return subprocess.run([sys.executable, "-m", "pdi", "get", name, "-o", output, "--archive", str(location)],
                          timeout=120, check=False, **streams)  # type: ignore[call-overload]


def test_a_named_pipe_is_written_in_place_not_replaced(archive: tuple[Path, str], tmp_path: Path) -> None:
    location, name = archive
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()))
    reader.start()
    done = _get(location, name, str(pipe))
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert read == [TEXT]
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)  # still the pipe
    assert not list(tmp_path.glob(".pipe.pdi-partial"))


def test_dev_stdout_on_a_pipe_is_the_pipe(archive: tuple[Path, str]) -> None:
    location, name = archive
    done = _get(location, name, "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert done.stdout == TEXT


def test_dev_null_stays_the_null_device(archive: tuple[Path, str]) -> None:
    """Run only where ``/dev/null`` is the character device 1,3 (as on every Linux): after ``-o /dev/null`` it
    still is (were it not, this test would leave the machine without it, so it checks the kind before asking)."""
    location, name = archive
    before = os.stat("/dev/null")
    assert stat.S_ISCHR(before.st_mode) and os.major(before.st_rdev) == 1 and os.minor(before.st_rdev) == 3
    done = _get(location, name, "/dev/null")
    after = os.stat("/dev/null")
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_a_symbolic_link_is_followed_and_kept(archive: tuple[Path, str], tmp_path: Path) -> None:
    location, name = archive
    real = tmp_path / "real.txt"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    done = _get(location, name, str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and real.read_bytes() == TEXT


def test_a_regular_file_is_replaced_whole(archive: tuple[Path, str], tmp_path: Path) -> None:
    location, name = archive
    out = tmp_path / "out.txt"
    out.write_bytes(b"old and longer than the new text, so that a write in place would leave a tail\n")
    done = _get(location, name, str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == TEXT


@pytest.mark.parametrize("output", ["/dev/fd/1", "/dev/stdout", "/proc/self/fd/1"])
def test_a_name_of_an_open_descriptor_is_written_through_it(archive: tuple[Path, str], tmp_path: Path,
                                                            output: str) -> None:
    """Found in review (2026-11-27): followed to the file the shell had open, ``-o /dev/fd/1`` with ``>> log``
    replaced that file: what the log held was lost, and what the shell wrote after went to the unlinked file.
    Written through the descriptor, the log holds what it held, then the text, then what comes after."""
    location, name = archive
    log = tmp_path / "log"
    log.write_bytes(b"earlier line\n")
    with log.open("ab") as appending:
        done = _get(location, name, output, stdout=appending)
        appending.write(b"after\n")
    assert done.returncode == 0, done.stderr
    assert log.read_bytes() == b"earlier line\n" + TEXT + b"after\n"


def test_a_whole_file_is_never_a_descriptor(tmp_path: Path) -> None:
    """What must be written whole (a manifest stamped from its file, a WACZ) is refused onto a descriptor."""
    from pdi._files import descriptor_of, written_whole
    from pdi.errors import StoreError

    assert descriptor_of("/dev/stdout") == 1 and descriptor_of("/dev/fd/7") == 7
    assert descriptor_of(tmp_path / "out") is None and descriptor_of("/dev/null") is None
    with pytest.raises(StoreError, match="names an open descriptor of this process"), \
            written_whole(Path("/dev/stdout"), "/dev/stdout"):
        pass


def test_an_output_that_names_no_file_is_said_so_not_a_traceback(archive: tuple[Path, str], tmp_path: Path) -> None:
    """``-o ''`` (pathlib reads it ``.``, a name with no file's name) was a ``ValueError`` from ``Path.with_name``."""
    from pdi._files import written_whole
    from pdi.errors import StoreError

    location, name = archive
    for given in (["-o", ""], ["--output="]):
        done = subprocess.run([sys.executable, "-m", "pdi", "get", name, *given, "--archive", str(location)],
                              capture_output=True, timeout=120, check=False)
        assert done.returncode == 2 and done.stderr == b"pdi: -o names no file: give a file name, or - for standard output\n"
    done = _get(location, name + "#char=1,4", "")
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    for nameless in ("", "/", str(tmp_path / "..")):
        with pytest.raises(StoreError, match="names no file"), written_whole(Path(nameless), nameless):
            pass


def test_a_partial_file_whose_mode_cannot_be_set_is_an_error_and_removed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review, 2026-12-02: a failed ``fchmod`` of the partial file was ignored, leaving it the umask's (or,
    made first by another user, theirs at 0666). Now it is an error, and the file made is removed."""
    from pdi._files import written_whole
    from pdi.errors import StoreError

    def refused(fd: int, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchmod", refused)
    target = tmp_path / "out"
    with pytest.raises(StoreError, match="cannot write out: Operation not permitted"), \
            written_whole(target, "out", 0o600) as partial:
        partial.write_bytes(b"never")
    assert list(tmp_path.iterdir()) == []


def test_a_partial_file_is_made_new_and_an_own_leftover_replaced(tmp_path: Path) -> None:
    """The partial file is made by ``written_whole`` itself (O_EXCL), of the mode asked whatever the umask; one this
    user left (a killed run's, of another mode, with octets in it) is removed first, not reused."""
    from pdi._files import written_whole

    target = tmp_path / "out"
    left = tmp_path / ".out.pdi-partial"
    left.write_bytes(b"a killed run's octets")
    left.chmod(0o666)
    before = os.umask(0o022)
    try:
        with written_whole(target, "out", 0o600) as partial:
            assert partial.samefile(left) and partial.read_bytes() == b""
            assert stat.S_IMODE(partial.stat().st_mode) == 0o600
            with partial.open("ab") as out:
                out.write(TEXT)
    finally:
        os.umask(before)
    assert target.read_bytes() == TEXT and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_link_put_in_the_partial_file_s_place_is_not_written_through(tmp_path: Path) -> None:
    """Found in review, 2026-12-02: the partial file was made safely (O_EXCL, O_NOFOLLOW) but its callers then
    opened it again by its name, so another user who could write to the folder and put a link there in between had
    the octets written through it (here into the writer's own file, truncated). Now what ``written_whole`` hands
    back opens the file it made; the swap is found at the end, and nothing is renamed into place."""
    from pdi._files import written_whole
    from pdi.errors import StoreError

    victim = tmp_path / "victim"
    victim.write_bytes(b"the writer's own file\n")
    target = tmp_path / "out"
    made = tmp_path / ".out.pdi-partial"
    with pytest.raises(StoreError, match="was replaced by another file while it was written"), \
            written_whole(target, "out") as partial:
        made.unlink()
        made.symlink_to(victim)  # another user's swap, between the making and the writing
        with partial.open("wb") as out:
            out.write(TEXT)
    assert victim.read_bytes() == b"the writer's own file\n"
    assert not target.exists()
    assert made.is_symlink()  # the other user's link is not ours to remove
