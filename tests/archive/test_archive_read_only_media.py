"""An archive on read-only media (a file-system snapshot, a read-only bind mount, a disc) is read by pdi and never
written: docs/reference/backup.md, "Who can read an archive".

SQLite cannot open a WAL database it may not write unless its ``-wal`` and ``-shm`` are there
(https://sqlite.org/wal.html#readonly), and pdi's last connection takes them away as it closes, so a copy of an
archive at rest has neither. On a file system mounted read-only nothing can change the catalog, which SQLite then
reads as ``immutable`` (https://sqlite.org/uri.html#uriimmutable). A snapshot of a live archive keeps its ``-wal``
and ``-shm``, and what its log holds is read too; a log with changes and no ``-shm`` cannot be read, and pdi says so.

Each pdi runs in a mount namespace of its own (``unshare --mount``, as root in CI; with ``--map-root-user``
otherwise) where a read-only bind mount of the archive's folder is made, so nothing is left mounted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pdi.archive import Archive, Content
from support.read_only_resolver import read_only_resolver

S = "media.example.us"
ENV = {**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": "", "PDI_SGML_CATALOG": "", "PDI_REGISTRY": "",
       "PDI_ARCHIVE": ""}


def _on_read_only_mount(place: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``pdi ARGS`` with ``place`` bind-mounted read-only over itself, in a mount namespace of its own."""
    unshare = shutil.which("unshare")
    assert unshare is not None, "util-linux's unshare is not installed"
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    as_root = [] if os.geteuid() == 0 else ["--map-root-user"]
    return subprocess.run([unshare, "--mount", *as_root, "sh", "-c", script, "sh", str(place), sys.executable,
                           "-m", "pdi", *args], capture_output=True, timeout=120, check=False, env=ENV, input=input)


def _made(root: Path, texts: list[bytes]) -> list[str]:
    archive = Archive.init(root)
    try:
        archive.add_series(S)
        return [str(archive.deposit(S, [Content(text, "text")]).names[0]) for text in texts]
    finally:
        archive.close()


def _files(place: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``place``: its mode, its modification time and its octets."""
    return {str(p.relative_to(place)): (p.stat().st_mode, p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(place.rglob("*")) if p.is_file()}


def test_a_mount_made_in_the_namespace_is_read_only(tmp_path: Path) -> None:
    """The test's own premise: inside the namespace the folder may not be written."""
    place = tmp_path / "media"
    place.mkdir()
    done = subprocess.run(["unshare", "--mount", *([] if os.geteuid() == 0 else ["--map-root-user"]), "sh", "-c",
                           'mount --bind -o ro "$1" "$1" && touch "$1/x"', "sh", str(place)],
                          capture_output=True, timeout=60, check=False)
    assert done.returncode != 0 and b"Read-only file system" in done.stderr, done
    assert not (place / "x").exists()


def test_an_archive_at_rest_on_read_only_media_is_read_and_never_written(tmp_path: Path) -> None:
    place = tmp_path / "media"
    root = place / "archive"
    texts = [b"the first memo\r\n", b"the second memo, " + b"x" * 70_000 + b"\r\n"]  # a row, and a blob file
    names = _made(root, texts)
    assert not (root / "catalog.sqlite-wal").exists() and not (root / "catalog.sqlite-shm").exists()
    before = _files(place)

    for name, text in zip(names, texts, strict=True):
        got = _on_read_only_mount(place, "get", name, "--archive", str(root))
        assert got.returncode == 0, got.stderr.decode()
        assert got.stdout == text
    listed = _on_read_only_mount(place, "ls", "--archive", str(root))
    assert listed.returncode == 0, listed.stderr.decode()
    assert listed.stdout.decode().split() == names
    checked = _on_read_only_mount(place, "verify", "--archive", str(root))
    assert checked.returncode == 0, checked.stderr.decode()
    assert "0 problems" in checked.stdout.decode()

    added = _on_read_only_mount(place, "add", "--series", S, "--format", "text", "-", "--archive", str(root),
                                input=b"a third memo\r\n")
    assert added.returncode == 8, added  # exit 8: the archive's storage (docs/reference/exit-codes.md)
    assert added.stderr.decode() == (f"pdi: storage error: cannot write the archive at {root}: it is on a read-only"
                                     " file system\n")
    assert _files(place) == before


def test_pdi_serve_indexer_on_read_only_media_is_refused_before_it_serves(tmp_path: Path) -> None:
    """Its indexer would write the full text of the catalog's queue: refused at once, exit 8, saying so and to
    serve without it (docs/reference/backup.md); before, the resolver served, its indexer never draining it."""
    place = tmp_path / "media"
    root = place / "archive"
    _made(root, [b"a memo\r\n"])
    before = _files(place)
    refused = _on_read_only_mount(place, "serve", "--port", "0", "--replay-port", "0", "--workers", "1",
                                  "--indexer", "--archive", str(root))
    assert refused.returncode == 8, refused
    assert refused.stderr.decode() == (
        f"pdi: storage error: cannot write the archive at {root}: it is on a read-only file system; --indexer writes"
        " the full text of the texts queued in its catalog, so this user cannot run it: serve without --indexer"
        " (each read is served, each write refused), and let the archive's owner drain the queue (pdi index"
        " --watch, or pdi serve --indexer)\n")
    assert _files(place) == before


def test_a_snapshot_of_a_live_archive_reads_what_its_log_holds(tmp_path: Path) -> None:
    """Copied while a pdi holds the archive open after a deposit: the deposit is in the ``-wal`` alone."""
    live, place = tmp_path / "live", tmp_path / "media"
    _made(live, [b"before\r\n"])
    archive = Archive.open(live)
    try:
        name = str(archive.deposit(S, [Content(b"only in the log\r\n", "text")]).names[0])
        assert (live / "catalog.sqlite-wal").stat().st_size > 0
        shutil.copytree(live, place / "archive")
    finally:
        archive.close()
    root = place / "archive"

    got = _on_read_only_mount(place, "get", name, "--archive", str(root))
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == b"only in the log\r\n"

    (root / "catalog.sqlite-shm").unlink()  # a log with changes and nothing to read it by: said, not passed over
    got = _on_read_only_mount(place, "get", name, "--archive", str(root))
    assert got.returncode == 8, got
    said = got.stderr.decode()
    assert said.startswith(f"pdi: storage error: cannot read the archive at {root}: it is on a read-only file"
                           f" system, and its catalog's write-ahead log {root}/catalog.sqlite-wal holds changes"), said


@pytest.mark.parametrize("wal", [False, True], ids=["at-rest", "empty-log"])
def test_pdi_serve_of_read_only_media_serves_reads_and_refuses_writes(tmp_path: Path, wal: bool) -> None:
    place = tmp_path / "media"
    root = place / "archive"
    text = b"served from a disc\r\n"
    name = _made(root, [text])[0]
    done = subprocess.run([sys.executable, "-m", "pdi", "token", "add", "clerk", "--role", "deposit", "--series", S,
                           "--archive", str(root)], capture_output=True, timeout=120, check=True, env=ENV)
    token = done.stdout.decode().split()[-1]
    if wal:  # as SQLite leaves a log with nothing in it, and its index
        (root / "catalog.sqlite-wal").write_bytes(b"")
    before = _files(place)
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    with read_only_resolver(
            ["unshare", "--mount", *([] if os.geteuid() == 0 else ["--map-root-user"]), "sh", "-c", script, "sh",
             str(place), sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0", "--workers", "1",
             "--archive", str(root)], ENV, root) as base:
        answer = httpx.get(f"{base}/uri-res/N2R?{name}", timeout=30)
        assert (answer.status_code, answer.content) == (200, text)
        refused = httpx.post(f"{base}/api/deposit", params={"series": S, "format": "text"}, content=b"a third",
                             headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}, timeout=30)
        assert refused.status_code == 503 and "retry-after" not in refused.headers, refused.text
        assert refused.json()["detail"].startswith("this resolver may read the archive, not write it"), refused.json()
    assert _files(place) == before
