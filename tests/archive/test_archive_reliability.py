"""Reliability: SIGKILL mid-deposit, eight concurrent minters, bad input. Both stores.

Each test starts real processes (``python -m`` scripts with this worktree's
``src`` on the path), so the locks and transactions under test are the ones
between separate processes, as in production.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from archive_helpers import SRC, snapshot
from click.testing import CliRunner

from pdi.archive import Archive
from pdi.cli import cli

S = "oma.eop.gov.us"

# A depositor that never stops: each round mints a document with three formats
# and deposits a second version of all three. Every byte carries a tag naming
# its deposit and version, so a half-made deposit would be visible.
DEPOSITOR = r"""
import sys
from pdi.archive import Archive, Content

def contents(tag, size):
    return [
        Content((f"<p>{tag}</p>\n" * size).encode(), "html"),
        Content((f"{tag}\n" * size).encode(), "text"),
        Content(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + tag.encode() * size, "png"),
    ]

archive = Archive.open(sys.argv[1])
run, size = sys.argv[2], int(sys.argv[3])
from pdi.fragments.text import to_crlf  # import everything a deposit needs before "ready"
to_crlf("warm up\n")
print("ready", flush=True)
n = 0
while True:
    n += 1
    first = archive.deposit("oma.eop.gov.us", contents(f"{run}-{n}-v1", size))
    archive.add_version(first[0], contents(f"{run}-{n}-v2", size))
    print("done", first[0].serial, flush=True)
"""

MINTER = r"""
import os, sys, time
from pdi.archive import Archive
archive = Archive.open(sys.argv[1])
go, count = sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.005)
for i in range(count):
    pdi = archive.add("oma.eop.gov.us", f"GIF89a{os.getpid()}-{i}".encode(), format="gif")
    print(pdi.serial, flush=True)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC)
    return env


def _tag_of(resolved_data: bytes, fmt: str) -> str:
    if fmt == "html":
        return resolved_data.split(b"</p>", 1)[0].removeprefix(b"<p>").decode()
    if fmt == "text":
        return resolved_data.splitlines()[0].decode()
    raise AssertionError(fmt)


def _check_all_or_nothing(archive: Archive, completed: set[int]) -> int:
    report = archive.verify()
    assert report.ok, report.problems
    names = archive.ls(series=S)
    by_day: dict[object, set[int]] = {}
    for p in names:
        assert p.serial is not None
        by_day.setdefault(p.date, set()).add(p.serial)
    for day_serials in by_day.values():
        assert sorted(day_serials) == list(range(1, len(day_serials) + 1)), "gap-free serials"
    serials = [s for day_serials in by_day.values() for s in day_serials]
    if len(by_day) == 1:  # the usual case: the test did not run across GMT midnight
        assert completed <= set(serials), "every deposit the child saw commit is there"
    generics = {str(p.without_fragment()).rsplit(".", 2)[0] for p in names}
    assert len(generics) == len(serials)
    for generic in sorted(generics):
        versions = archive.versions(generic)
        assert versions in ([1], [1, 2])
        for version in versions:
            formats = sorted(p.format or "" for p in archive.formats(f"{generic}.html.{version}"))
            assert formats == ["html", "png", "text"], "a version holds all its formats or none"
            tags = set()
            for fmt in ("html", "text"):
                tags.add(_tag_of(archive.get(f"{generic}.{fmt}.{version}").data, fmt))
            png = archive.get(f"{generic}.png.{version}").data
            (tag,) = tags
            assert png.startswith(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + tag.encode())
            assert tag.endswith(f"-v{version}")
    return len(serials)


@pytest.mark.slow  # SIGKILL under load, a minute and more; out of scripts/test --quick
def test_sigkill_during_deposits_leaves_whole_deposits_only(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
    rng = random.Random(20261122)
    completed: set[int] = set()
    rounds = 24 if "postgresql" not in location else 16
    for run in range(rounds):
        child = subprocess.Popen(
            [sys.executable, "-c", DEPOSITOR, location, str(run), str(rng.choice([200, 4000, 20000]))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr else ""
        seen = ""
        if run % 2 == 0:
            # Every other round lets one deposit finish first, so that the test
            # checks surviving deposits even when a loaded machine is slow.
            seen = child.stdout.readline()
            assert seen.startswith("done"), child.stderr.read() if child.stderr else ""
        time.sleep(rng.uniform(0.0, 0.4))
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate()
        assert child.returncode == -signal.SIGKILL
        lines = [seen, *out.splitlines()]
        completed |= {int(line.split()[1]) for line in lines if line.startswith("done")}
    with Archive.open(location) as archive:
        total = _check_all_or_nothing(archive, completed)
    assert total >= len(completed) > 0


def test_eight_processes_mint_gap_free(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
    go = Path(f"/tmp/pdi-go-{os.getpid()}-{time.monotonic_ns()}")
    per_process = 10
    children = [
        subprocess.Popen(
            [sys.executable, "-c", MINTER, location, str(go), str(per_process)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
            text=True,
        )
        for _ in range(8)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        go.touch()
        serials: list[int] = []
        for child in children:
            out, err = child.communicate(timeout=120)
            assert child.returncode == 0, err
            serials += [int(line) for line in out.split()]
    finally:
        go.unlink(missing_ok=True)
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    assert sorted(serials) == list(range(1, 8 * per_process + 1))
    with Archive.open(location) as archive:
        listed = [p.serial for p in archive.ls(series=S)]
        assert listed == list(range(1, 8 * per_process + 1))
        assert archive.verify().ok


# --- bad input through the command line: one clear error, nothing changed ----------------


def test_bad_input_leaves_archive_unchanged(location: str, tmp_path: Path) -> None:
    runner = CliRunner()
    with Archive.init(location) as archive:
        archive.add_series(S)
        existing = archive.add(S, b"first\n", format="text")
        before = snapshot(archive)
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9\n")
    changed = tmp_path / "changed.txt"
    changed.write_bytes(b"other\n")
    cases = [
        (["add", str(changed), "--series", "nobody.fr"], 4),  # unknown series
        (["get", "pdi://oma.eop.gov/1997/09/01.html.1"], 1),  # malformed PDI
        (["add", str(tmp_path / "missing.txt"), "--series", S], 4),  # unreadable file
        (["add", str(tmp_path), "--series", S, "--format", "text"], 2),  # a directory: bad usage (pdi add FILE)
        (["add", str(latin), "--series", S], 1),  # not UTF-8, undeclared
        (["add", str(latin), "--series", S, "--charset", "utf-8"], 1),  # wrong charset
        (["add", str(latin), "--series", S, "--charset", "klingon"], 6),  # unknown charset
        (["version", str(existing), str(changed), "--add-format", "--format", "text"], 5),
    ]
    for argv, code in cases:
        result = runner.invoke(cli, [*argv, "--archive", location])
        assert result.exit_code == code, (argv, result.output, result.exception)
        lines = [line for line in result.stderr.splitlines() if line]
        if code == 2:  # bad usage: click's usage lines, then one line saying what is wrong
            assert lines[0].startswith("Usage: ") and lines[-1].startswith("Error: "), (argv, result.stderr)
        else:
            assert len(lines) == 1 and lines[0].startswith("pdi: "), (argv, result.stderr)
        with Archive.open(location) as archive:
            assert snapshot(archive) == before, argv


pytestmark = pytest.mark.timeout(300)
