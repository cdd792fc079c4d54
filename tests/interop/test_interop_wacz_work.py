"""Where ``pdi export --wacz OUT`` keeps its work files (its WARC, CDXJ index and spill runs, pages, revisit dates).

Beside ``OUT`` (a hidden folder ``.OUT.pdi-work-…`` in OUT's own folder: the file system the WACZ is written to,
so a tmpfs ``/tmp`` holds nothing of it and the space that runs out is the space that matters); in ``$TMPDIR`` when
``OUT`` is no regular file's path (``-``, ``/dev/stdout``, a named pipe); in ``--work-dir DIR`` when given. The
work folder is removed whatever ends the export (done, refused, an error, Ctrl-C), and a disk that fills
(``ENOSPC``, on a real 2 MiB tmpfs mounted here) is a clear error naming the folder and about how much room the
export needs, with no partial WACZ left. Where the work files are is seen from the export itself, while it runs
(its ``progress`` callback, told after each record).
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.archive.content import Content
from pdi.cli import archive_cmd, cli
from pdi.errors import NotFoundError, StoreError
from pdi.interop import wacz, wacz_index
from pdi.interop.wacz import export_wacz

S = "web.example.us"
BIN = Path(sys.executable).parent


def _fill(archive: Archive, count: int, size: int = 100) -> None:
    """``count`` documents whose ids are URLs, each ``size`` random octets (nothing to deflate away)."""
    archive.add_series(S)
    archive.deposit_batch(S, [([Content(os.urandom(size), "octet-stream")], f"https://example.org/d{i}")
                              for i in range(count)])


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    opened = Archive.init(tmp_path / "archive")
    _fill(opened, 5)
    yield opened
    opened.close()


@pytest.fixture
def tmpdir_(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``$TMPDIR`` of the test's own (what :mod:`tempfile` uses)."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _work_folders(folder: Path) -> list[Path]:
    """The export's work folders in ``folder``: those holding the WARC being written."""
    return [p for p in folder.iterdir() if p.is_dir() and (p / "data.warc.gz").exists()]


class _Seen:
    """A progress callback noting, at each record, which of ``folders`` hold a work folder."""

    def __init__(self, *folders: Path) -> None:
        self.folders = folders
        self.seen: list[tuple[str, ...]] = []

    def __call__(self, done: int, total: int) -> None:
        self.seen.append(tuple(sorted(str(w) for f in self.folders for w in _work_folders(f))))


def _valid(path: Path) -> None:
    checked = subprocess.run([str(BIN / "wacz"), "validate", "-f", str(path)], capture_output=True, text=True,
                             timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_work_files_of_a_file_out_are_beside_it_and_gone_after(
    archive: Archive, tmp_path: Path, tmpdir_: Path
) -> None:
    outdir = tmp_path / "out"
    outdir.mkdir()
    seen = _Seen(outdir, tmpdir_)
    export_wacz(archive, outdir / "x.wacz", progress=seen)
    assert seen.seen and all(len(s) == 1 for s in seen.seen), seen.seen
    (work,) = {s[0] for s in seen.seen}
    assert Path(work).parent == outdir and Path(work).name.startswith(".x.wacz.pdi-work-")
    assert sorted(os.listdir(outdir)) == ["x.wacz"] and os.listdir(tmpdir_) == []
    _valid(outdir / "x.wacz")


def test_a_symbolic_link_out_works_beside_the_file_it_names(archive: Archive, tmp_path: Path, tmpdir_: Path) -> None:
    real, links = tmp_path / "real", tmp_path / "links"
    real.mkdir()
    links.mkdir()
    (links / "x.wacz").symlink_to(real / "x.wacz")  # dangling: the file to make
    seen = _Seen(real, links, tmpdir_)
    export_wacz(archive, links / "x.wacz", progress=seen)
    assert {Path(w).parent for s in seen.seen for w in s} == {real}
    assert os.listdir(real) == ["x.wacz"] and os.listdir(tmpdir_) == []


#: Every ``open`` of this process while a test listens (``sys.addaudithook``: an audit hook cannot be removed).
_OPENS: list[tuple[str, str | None, int]] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _OPENS is not None and isinstance(args[0], (str, Path)):
        _OPENS.append((os.fspath(args[0]), args[1], int(args[2])))  # type: ignore[call-overload]


sys.addaudithook(_audit)


def test_the_work_files_of_a_named_pipe_are_in_tmpdir_and_its_reader_gets_the_whole_wacz(
    archive: Archive, tmp_path: Path, tmpdir_: Path
) -> None:
    """A named pipe is opened once, for writing only, as a shell's ``>`` opens it. zipfile, given its name, opened
    it for reading and writing first (and, seeing it cannot seek, closed it and opened it again write-only): a reader
    already waiting (``cat pipe > x &``) was let in by the first open and could read the end of the file when it
    was closed, and the export then waited for another reader for ever."""
    global _OPENS
    outdir = tmp_path / "out"
    outdir.mkdir()
    fifo = outdir / "pipe.wacz"
    os.mkfifo(fifo)
    seen = _Seen(outdir, tmpdir_)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()  # waits for the export's open
    _OPENS = []
    try:
        export_wacz(archive, fifo, progress=seen)
        opens = [(mode, flags) for path, mode, flags in _OPENS if os.path.abspath(path) == str(fifo)]
    finally:
        _OPENS = None
        reader.join(30)
        if reader.is_alive():  # the export failed before opening the pipe: let the reader go
            with open(fifo, "wb"):
                pass
            reader.join(30)
    assert len(opens) == 1 and opens[0][1] & os.O_ACCMODE == os.O_WRONLY, opens
    assert seen.seen and {Path(w).parent for s in seen.seen for w in s} == {tmpdir_}
    assert os.listdir(outdir) == ["pipe.wacz"] and os.listdir(tmpdir_) == []
    (tmp_path / "read.wacz").write_bytes(got[0])
    _valid(tmp_path / "read.wacz")


def test_a_stream_out_works_in_tmpdir(archive: Archive, tmp_path: Path, tmpdir_: Path) -> None:
    seen = _Seen(tmpdir_, Path.cwd())
    with (tmp_path / "streamed.wacz").open("wb") as out:
        export_wacz(archive, out, progress=seen)
    assert seen.seen and {Path(w).parent for s in seen.seen for w in s} == {tmpdir_}
    assert os.listdir(tmpdir_) == []
    _valid(tmp_path / "streamed.wacz")


def test_the_library_work_dir_is_used(archive: Archive, tmp_path: Path, tmpdir_: Path) -> None:
    outdir, work = tmp_path / "out", tmp_path / "work"
    outdir.mkdir()
    work.mkdir()
    seen = _Seen(outdir, work, tmpdir_)
    export_wacz(archive, outdir / "x.wacz", progress=seen, work_dir=work)
    assert seen.seen and {Path(w).parent for s in seen.seen for w in s} == {work}
    assert os.listdir(work) == [] and os.listdir(outdir) == ["x.wacz"]


def test_a_work_dir_that_is_no_folder_is_refused_before_anything_is_written(archive: Archive, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=re.escape(f"the work folder {tmp_path / 'none'} does not exist")):
        export_wacz(archive, tmp_path / "x.wacz", work_dir=tmp_path / "none")
    assert not (tmp_path / "x.wacz").exists()
    with pytest.raises(StoreError, match=re.escape(f"cannot write {tmp_path / 'no' / 'x.wacz'}: the folder")):
        export_wacz(archive, tmp_path / "no" / "x.wacz")


def _cli_seen(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> _Seen:
    """The command's progress bar replaced by a :class:`_Seen` of ``folders``."""
    seen = _Seen(*folders)

    class _Bar:
        def __enter__(self) -> Callable[[int, int], None]:
            return seen

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(archive_cmd, "progress_bar", lambda description: _Bar())
    return seen


def test_cli_work_dir(archive: Archive, tmp_path: Path, tmpdir_: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    seen = _cli_seen(monkeypatch, tmp_path, work, tmpdir_)
    out = tmp_path / "x.wacz"
    done = CliRunner().invoke(cli, ["export", "--wacz", str(out), "--work-dir", str(work),
                                    "--archive", archive.location])
    assert done.exit_code == 0, done.output
    assert seen.seen and {Path(w).parent for s in seen.seen for w in s} == {work}
    assert os.listdir(work) == [] and out.exists()
    refused = CliRunner().invoke(cli, ["export", "--wacz", str(tmp_path / "y.wacz"), "--work-dir",
                                       str(tmp_path / "none"), "--archive", archive.location])
    assert refused.exit_code == 2 and "--work-dir" in refused.output and "does not exist" in refused.output
    assert not (tmp_path / "y.wacz").exists()


def test_cli_dash_writes_the_wacz_to_stdout_working_in_tmpdir(
    archive: Archive, tmp_path: Path, tmpdir_: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    seen = _cli_seen(monkeypatch, tmp_path, tmpdir_)
    done = CliRunner().invoke(cli, ["export", "--wacz", "-", "--archive", archive.location])
    assert done.exit_code == 0, done.stderr
    assert seen.seen and {Path(w).parent for s in seen.seen for w in s} == {tmpdir_}
    assert not (tmp_path / "-").exists() and os.listdir(tmpdir_) == []
    assert "exported 0 pages and 5 other documents" in done.stderr
    assert done.stderr.rstrip().endswith(") to standard output"), done.stderr  # where it said "to -"
    (tmp_path / "o.wacz").write_bytes(done.stdout_bytes)
    _valid(tmp_path / "o.wacz")


def test_cli_dash_through_a_pipe_and_dev_stdout(archive: Archive, tmp_path: Path, tmpdir_: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmpdir_), "PYTHONPATH": os.pathsep.join(sys.path)}
    for out in ("-", "/dev/stdout"):
        with subprocess.Popen([str(BIN / "pdi"), "export", "--wacz", out, "--archive", archive.location],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env) as child:
            data, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert b"exported 0 pages and 5 other documents" in err and not (tmp_path / "-").exists()
        assert os.listdir(tmpdir_) == []
        (tmp_path / "p.wacz").write_bytes(data)
        _valid(tmp_path / "p.wacz")


@pytest.mark.parametrize("fault", [RuntimeError("injected"), KeyboardInterrupt()])
def test_a_fault_mid_export_leaves_no_work_file(
    archive: Archive, tmp_path: Path, tmpdir_: Path, fault: BaseException
) -> None:
    outdir = tmp_path / "out"
    outdir.mkdir()
    seen = _Seen(outdir)

    def fail(done: int, total: int) -> None:
        seen(done, total)
        if done == 3:
            raise fault

    with pytest.raises(type(fault)):
        export_wacz(archive, outdir / "x.wacz", progress=fail)
    assert seen.seen[-1] and Path(seen.seen[-1][0]).parent == outdir  # it was there when the fault came
    assert os.listdir(outdir) == [] and os.listdir(tmpdir_) == []


def test_a_fault_while_zipping_leaves_no_work_file_nor_partial(
    archive: Archive, tmp_path: Path, tmpdir_: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outdir = tmp_path / "out"
    outdir.mkdir()
    real = wacz._write_zip
    left: list[list[str]] = []

    def half(path: Path, *args: object) -> None:
        real(path, *args)  # type: ignore[arg-type]
        left.append(sorted(os.listdir(outdir)))
        raise KeyboardInterrupt

    monkeypatch.setattr(wacz, "_write_zip", half)
    with pytest.raises(KeyboardInterrupt):
        export_wacz(archive, outdir / "x.wacz")
    assert len(left[0]) == 2 and ".x.wacz.pdi-partial" in left[0]  # the work folder and the partial WACZ
    assert os.listdir(outdir) == [] and os.listdir(tmpdir_) == []


def test_a_refusal_leaves_no_work_file(tmp_path: Path, tmpdir_: Path) -> None:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    outdir = tmp_path / "out"
    outdir.mkdir()
    try:
        with pytest.raises(NotFoundError, match="nothing to export"):
            export_wacz(opened, outdir / "x.wacz")
    finally:
        opened.close()
    assert os.listdir(outdir) == [] and os.listdir(tmpdir_) == []


def _used(point: Path) -> int:
    return sum(f.stat().st_size for f in point.rglob("*") if f.is_file())


def test_a_disk_filled_by_the_work_files_is_a_clear_error(tmp_path: Path, small_disk: Path, tmpdir_: Path) -> None:
    opened = Archive.init(tmp_path / "archive")
    _fill(opened, 30, 100_000)  # 3 MB of octets that do not deflate: more than the disk
    try:
        with pytest.raises(StoreError) as refused:
            export_wacz(opened, small_disk / "x.wacz")
    finally:
        opened.close()
    said = str(refused.value)
    assert f"no space left in {small_disk}" in said, said
    needed = re.search(r"about (\d+(?:\.\d)?) MB", said)
    assert needed is not None and 3.0 <= float(needed.group(1)) <= 8.0, said  # the WARC's 3 MB, and the WACZ's
    assert "--work-dir" in said, said
    assert os.listdir(small_disk) == [] and os.listdir(tmpdir_) == []


def test_a_disk_filled_by_the_wacz_is_a_clear_error_and_leaves_no_partial(
    tmp_path: Path, small_disk: Path, tmpdir_: Path
) -> None:
    opened = Archive.init(tmp_path / "archive")
    _fill(opened, 12, 100_000)  # 1.2 MB: the work files fit, the WACZ beside them does not
    try:
        with pytest.raises(StoreError) as refused:
            export_wacz(opened, small_disk / "x.wacz")
    finally:
        opened.close()
    said = str(refused.value)
    assert f"no space left in {small_disk}" in said and "x.wacz" in said, said
    needed = re.search(r"about (\d+(?:\.\d)?) MB", said)
    assert needed is not None and 2.4 <= float(needed.group(1)) <= 4.0, said
    assert os.listdir(small_disk) == [] and _used(small_disk) == 0 and os.listdir(tmpdir_) == []


def test_the_same_export_with_work_dir_elsewhere_fits(tmp_path: Path, small_disk: Path, tmpdir_: Path) -> None:
    opened = Archive.init(tmp_path / "archive")
    _fill(opened, 12, 100_000)
    work = tmp_path / "work"
    work.mkdir()
    try:
        export_wacz(opened, small_disk / "x.wacz", work_dir=work)
    finally:
        opened.close()
    assert os.listdir(small_disk) == ["x.wacz"] and os.listdir(work) == []
    with zipfile.ZipFile(small_disk / "x.wacz") as zf:
        assert zf.testzip() is None


def test_a_full_sqlite_file_of_revisit_dates_is_the_same_clear_error(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite says a full disk its own way (``SQLITE_FULL``), not by an OSError: injected here."""
    monkeypatch.setattr(wacz_index, "_WRITTEN_HELD", 1)

    def full(self: wacz_index.Written, url: str, digest: str, date: str) -> str | None:
        if len(self.dates) >= 1:  # the second record: what SQLite says when its file cannot grow
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
            raise error
        self.dates[(digest, url)] = date
        return None

    monkeypatch.setattr(wacz_index.Written, "first", full)
    outdir = tmp_path / "out"
    outdir.mkdir()
    with pytest.raises(StoreError, match=re.escape(f"no space left in {outdir}")):
        export_wacz(archive, outdir / "x.wacz")
    assert os.listdir(outdir) == []


def test_enospc_from_any_write_names_the_folder(archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk full reported by the spill of the index (injected: the index of 5 records is never spilled)."""

    def spill(self: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(wacz_index.SortedLines, "flush", spill)
    outdir = tmp_path / "out"
    outdir.mkdir()
    with pytest.raises(StoreError, match=re.escape(f"no space left in {outdir}")):
        export_wacz(archive, outdir / "x.wacz")
    assert os.listdir(outdir) == []


def test_cli_dash_to_a_terminal_is_refused(archive: Archive, tmp_path: Path, tmpdir_: Path) -> None:
    """A WACZ's octets are not shown on a terminal: ``-`` there is a usage error, and nothing is made."""
    main, child_end = os.openpty()
    env = {**os.environ, "TMPDIR": str(tmpdir_), "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run([str(BIN / "pdi"), "export", "--wacz", "-", "--archive", archive.location],
                              stdout=child_end, stderr=subprocess.PIPE, cwd=tmp_path, env=env, timeout=120, text=True)
    finally:
        os.close(child_end)
        os.close(main)
    assert done.returncode == 2 and "standard output is a terminal" in done.stderr, done.stderr
    assert os.listdir(tmpdir_) == [] and not (tmp_path / "-").exists()


def test_a_read_only_folder_of_out_is_a_clear_error(archive: Archive, small_disk: Path, tmpdir_: Path) -> None:
    """The work folder cannot be made beside ``OUT``: the error names the folder (an ``OSError`` before)."""
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True, timeout=30)
    with pytest.raises(StoreError, match=re.escape(f"cannot make the work folder of {small_disk / 'x.wacz'} in"
                                                   f" {small_disk}: Read-only file system")):
        export_wacz(archive, small_disk / "x.wacz")
    assert os.listdir(tmpdir_) == []
