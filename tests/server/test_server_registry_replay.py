"""A signed registry issued before the newest a resolver loaded from the same source is refused after a restart
too, by another resolver on the same archive, and by another worker (schema step 26).

Before it, the newest ``issued`` was kept in the process alone: ``pdi serve`` restarted (or another worker, or
another resolver sharing the archive) took an older registry again, signed and all, and pointed a series back at a
resolver it had left. Each test here signs its registries with times it chooses, so the times expected in the
messages and the catalog are those the test signed, and runs real ``pdi serve`` processes on SQLite and
PostgreSQL archives (the ``location`` fixture).
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import serving, start_serve, stop

from pdi.archive import Archive
from pdi.archive.registries import issued_order
from pdi.federation.authorities import RegistrySource, registry_source
from pdi.federation.registry import Registry, sign_registry
from pdi.signing import SigningKey, jwk_set_text

SERIES = "a.example.us"
OLDER = "2026-11-20T10:00:00Z"
NEWER = "2026-11-25T10:00:00.5Z"  # a fraction of a second: as text it sorts before "2026-11-25T10:00:00Z"
BETWEEN = "2026-11-22T10:00:00Z"


class Signed:
    """A key, its key set in ``key.json``, and registries it signs (each pointing the series elsewhere)."""

    def __init__(self, folder: Path) -> None:
        self.key = SigningKey.generate()
        self.key_file = folder / "key.json"
        self.key_file.write_text(jwk_set_text([self.key.public]))
        self.file = folder / "registry.jws"

    def registry(self, issued: str) -> str:
        return sign_registry(self.key, Registry({SERIES: (f"https://{issued[:10]}.example/",)}), issued)

    def write(self, issued: str) -> None:
        self.file.write_text(self.registry(issued) + "\n" * (issued == OLDER))  # sizes differ: seen as changed

    def serve_options(self) -> tuple[str, ...]:
        return "--registry", str(self.file), "--registry-key", str(self.key_file)


def pdi(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def serve_refused(location: str, signed: Signed) -> subprocess.CompletedProcess[str]:
    """``pdi serve`` of ``location`` with ``signed``'s registry, expected to refuse it and stop."""
    return pdi("serve", "--port", "0", "--replay-port", "0", "--archive", location, *signed.serve_options())


def recorded(location: str) -> list[tuple[str, str]]:
    with Archive.open(location) as archive:
        return [(source, issued) for source, issued, _ in archive.registries_seen()]


def refused_saying(process: subprocess.CompletedProcess[str], signed: Signed) -> None:
    assert process.returncode == 3, process.stderr  # an integrity error (docs/reference/exit-codes.md)
    assert "pdi: serving" not in process.stderr
    said = process.stderr
    assert f"the registry {signed.file} was issued {OLDER}, before the one issued {NEWER}" in said, said
    assert f"pdi registry forget {signed.file}" in said, said


def test_a_restarted_resolver_refuses_an_older_registry_and_forget_accepts_it(location: str, tmp_path: Path) -> None:
    Archive.init(location).close()
    signed = Signed(tmp_path)
    signed.write(NEWER)
    with serving(location, *signed.serve_options()):
        pass  # loaded, recorded: stopped
    assert recorded(location) == [(str(signed.file), NEWER)]
    signed.write(OLDER)  # the same file, an older registry in it (a backup of it restored, or replayed)
    refused_saying(serve_refused(location, signed), signed)
    assert recorded(location) == [(str(signed.file), NEWER)]  # nothing of the older written

    # the operator who went back on purpose: named as pdi serve was given it, from another folder too
    forgot = subprocess.run([sys.executable, "-m", "pdi", "registry", "forget", "registry.jws", "--archive", location],
                            capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout == f"forgot\tregistry.jws\t{NEWER}\n"
    assert recorded(location) == []
    with Archive.open(location) as archive:
        audit = [entry for entry in archive.audit() if entry.action == "forget registry"]
    assert [entry.subject for entry in audit] == [str(signed.file)]
    with serving(location, *signed.serve_options()):
        pass
    assert recorded(location) == [(str(signed.file), OLDER)]  # taken, and now the newest recorded

    again = pdi("registry", "forget", str(tmp_path / "other.jws"), "--archive", location)
    assert again.returncode == 4, again.stderr  # not found, naming what is recorded
    assert str(tmp_path / "other.jws") in again.stderr and str(signed.file) in again.stderr


def test_another_resolver_on_the_same_archive_refuses_an_older_registry(location: str, tmp_path: Path) -> None:
    Archive.init(location).close()
    signed = Signed(tmp_path)
    signed.write(NEWER)
    with serving(location, *signed.serve_options()):
        signed.write(OLDER)  # while the first still serves the newer one it loaded
        refused_saying(serve_refused(location, signed), signed)


def test_a_worker_refuses_a_registry_older_than_one_another_worker_loaded(
        location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Two workers of one ``pdi serve`` hold the registry loaded at start; one of them loads a newer one; the other,
    sent one issued between the two, refuses it, though it is newer than the one it holds: the catalog says a newer
    one was loaded. Each worker is a :class:`RegistrySource` with an archive opened of its own, as in ``pdi serve``
    (:func:`pdi.server.create_app`)."""
    from pdi.federation import authorities

    monkeypatch.setattr(authorities, "MIN_RELOAD", 0.0)  # each current() looks at the file again
    Archive.init(location).close()
    signed = Signed(tmp_path)
    signed.write(OLDER)
    with Archive.open(location) as one_archive, Archive.open(location) as other_archive:
        one = RegistrySource(str(signed.file), [signed.key.public], one_archive)
        other = RegistrySource(str(signed.file), [signed.key.public], other_archive)
        signed.write(NEWER)
        assert one.current().issued == NEWER
        signed.file.write_text(signed.registry(BETWEEN) + "\n\n")
        with caplog.at_level("WARNING", logger="pdi.federation"):
            assert other.current().issued == OLDER  # the one it held, kept: BETWEEN refused
        said = " ".join(caplog.text.split())  # the log line, however the handler wraps it
        assert f"the registry {signed.file} was not reloaded (the one held is kept)" in said, said
        assert f"was issued {BETWEEN}, before the one issued {NEWER} that was loaded from it before" in said, said
        assert one.current().issued == NEWER
    assert recorded(location) == [(str(signed.file), NEWER)]


def test_workers_loading_at_once_never_record_an_older_time(location: str) -> None:
    """Eight workers (each an archive opened of its own) record the times of registries loaded in shuffled orders,
    all at once: the newest of them all is what stays recorded."""
    import random

    Archive.init(location).close()
    times = [f"2026-11-{day:02d}T10:00:{second:02d}Z" for day in range(1, 29) for second in (0, 30)]
    errors: list[BaseException] = []

    def load(seed: int) -> None:
        mine = list(times)
        random.Random(seed).shuffle(mine)
        try:
            with Archive.open(location) as archive:
                for issued in mine:
                    archive.see_registry("https://registry.example/r.jws", issued, ahead=86_400)
        except BaseException as exc:  # said by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=load, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    assert recorded(location) == [("https://registry.example/r.jws", "2026-11-28T10:00:30Z")]


def test_a_time_recorded_far_ahead_of_the_clock_holds_nothing_back(location: str) -> None:
    Archive.init(location).close()
    with Archive.open(location) as archive:
        assert archive.see_registry("s", "2099-01-01T00:00:00Z", ahead=86_400).newer is None
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert archive.see_registry("s", now, ahead=86_400).newer is None  # taken, and in its place
        assert archive.see_registry("s", OLDER, ahead=86_400).newer == now
    assert recorded(location) == [("s", now)]


def test_a_source_is_recorded_without_its_userinfo_in_its_normal_form(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry_source("HTTPS://user:secret@Registry.Example:443/a/../r.jws") == "https://registry.example/r.jws"
    assert registry_source("http://registry.example:80/r.jws?v=1") == "http://registry.example/r.jws?v=1"
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "registry.jws").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "link")
    assert registry_source("registry.jws") == str(tmp_path / "real" / "registry.jws")


_MOMENTS = st.datetimes(min_value=datetime.datetime(1970, 1, 1), max_value=datetime.datetime(9999, 12, 31))


def _issued(moment: datetime.datetime, digits: int) -> str:
    fraction = f"{moment.microsecond:06d}000"[:digits].rstrip("0") if digits else ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"


@given(_MOMENTS, st.integers(0, 9), _MOMENTS, st.integers(0, 9))
def test_issued_times_are_ordered_as_the_moments_they_name(one: datetime.datetime, one_digits: int,
                                                            other: datetime.datetime, other_digits: int) -> None:
    a, b = _issued(one, one_digits), _issued(other, other_digits)
    moment_a = datetime.datetime.fromisoformat(a[:-1])  # the stdlib's reading of the same text
    moment_b = datetime.datetime.fromisoformat(b[:-1])
    assert (issued_order(a) < issued_order(b)) == (moment_a < moment_b)
    assert (issued_order(a) == issued_order(b)) == (moment_a == moment_b)


def test_a_resolver_that_may_only_read_its_archive_compares_records_nothing_and_says_so(tmp_path: Path) -> None:
    """On read-only media (a read-only bind mount in a mount namespace of its own, as
    tests/archive/test_archive_read_only_media.py makes): an older registry than the one recorded is refused still;
    a newer one is served, recorded nowhere, and the first line says the newest is kept by each worker alone."""
    root = tmp_path / "archive"
    Archive.init(str(root)).close()
    signed = Signed(tmp_path)
    signed.write(NEWER)
    with serving(str(root), *signed.serve_options()):
        pass
    signed.write(OLDER)
    # util-linux, Essential in Debian: never skipped for want of it (as test_archive_read_only_media.py asks it)
    assert shutil.which("unshare") is not None, "util-linux's unshare is not installed"
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    as_root = [] if os.geteuid() == 0 else ["--map-root-user"]
    refused = subprocess.run(
        ["unshare", "--mount", *as_root, "sh", "-c", script, "sh", str(root), sys.executable, "-m", "pdi", "serve",
         "--port", "0", "--replay-port", "0", "--workers", "1", "--archive", str(root), *signed.serve_options()],
        capture_output=True, text=True, timeout=60, check=False)
    refused_saying(refused, signed)
    newest = "2026-11-30T10:00:00Z"
    signed.file.write_text(signed.registry(newest))
    server = subprocess.Popen(
        ["unshare", "--mount", *as_root, "sh", "-c", script, "sh", str(root), sys.executable, "-m", "pdi", "serve",
         "--port", "0", "--replay-port", "0", "--workers", "1", "--archive", str(root), *signed.serve_options()],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
    finally:
        server.terminate()
        server.communicate(timeout=60)
    assert line.startswith(f"pdi: serving {root} at "), line
    assert "; read-only: this user may read" in line
    assert line.endswith("; the newest registry each --registry was issued is kept by each worker alone, not in the"
                         " archive, which it may only read: an older one is refused until the worker stops, not after"
                         " a restart\n"), line
    assert recorded(str(root)) == [(str(signed.file), NEWER)]


def test_a_postgresql_resolver_that_may_not_write_compares_and_records_nothing(pg_cluster: object,
                                                                              tmp_path: Path) -> None:
    """A PostgreSQL archive this resolver reads in read-only transactions (a hot standby answers each write so:
    SQLSTATE 25006, here made by ``default_transaction_read_only``): an older registry is refused still, a newer
    one served, recorded nowhere, and the first line says so."""
    from support.pgcluster import TemporaryCluster

    assert isinstance(pg_cluster, TemporaryCluster)
    location = pg_cluster.create_schema("pdi_registry_read_only")
    Archive.init(location).close()
    signed = Signed(tmp_path)
    signed.write(NEWER)
    with serving(location, *signed.serve_options()):
        pass
    read_only = location + "%20-cdefault_transaction_read_only%3Don"
    signed.write(OLDER)
    refused_saying(serve_refused(read_only, signed), signed)
    newest = "2026-11-30T10:00:00Z"
    signed.file.write_text(signed.registry(newest))
    server, _, line = start_serve(read_only, "--replay-port", "0", *signed.serve_options())
    stop(server)
    assert line.endswith("; the newest registry each --registry was issued is kept by each worker alone, not in the"
                         " archive, which it may only read: an older one is refused until the worker stops, not after"
                         " a restart\n"), line
    assert recorded(location) == [(str(signed.file), NEWER)]
