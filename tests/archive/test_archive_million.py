"""Millions of names in bounded memory: `pdi ls`, `pdi verify` and `pdi export` walk the catalog by keyset.

Measured before: at a million names `pdi verify` and `pdi ls` held about 1 GiB
(every record in one list) and `pdi export` 4.4 GiB (catalog.json built
whole). The catalogs here are made by SQL (:mod:`big_catalog`): a million
representations on SQLite, 100,000 for the export and on PostgreSQL, all
pointing at three real blobs. The commands run as `python -m pdi` in child
processes whose peak resident memory the kernel reports (``os.wait4`` in a
small launcher, so the test process's own pages are not counted), and each
is compared with the same command over a catalog of a few names.

`pdi import` of 50,000 names (an export of such a catalog) is held to the
same ceiling: reading catalog.json whole, it peaked at 418 MiB for 100,000.

The ceiling: a page of the walk is 5,000 rows, a few MiB as rows and
records, and a few pages may be alive at once while the garbage collector
catches up; 64 MiB over the small catalog's peak leaves room for that and
none for anything that grows with the number of names (measured: 8 to 11
MiB; the code before grew by 950 MiB to 4.3 GiB).

What `pdi ls` prints is compared, name for name and in order, with the
names :func:`big_catalog.expected_names` spells from the grammar.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from archive_helpers import reseal
from big_catalog import FIRST, SERIES, BigCatalog, expected_names, fill

from support.pgcluster import TemporaryCluster
from support.stored_blobs import delete_blob, stored_blob_names

# out of scripts/test --quick: catalogs of a million and a hundred thousand names, minutes of work
pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"
#: How much more than over a catalog of a few names a command may use (MiB): see the module docstring.
GROWTH_MIB = 64

# Reaps the command and reports its peak, exit status, and the SHA-256, line count, start
# and end of what it printed (a million names are hashed here, not held).
_LAUNCHER = """
import hashlib, os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
digest, lines, head, tail = hashlib.sha256(), 0, b"", b""
while chunk := child.stdout.read(1 << 16):
    digest.update(chunk)
    lines += chunk.count(b"\\n")
    if len(head) < 4096:
        head += chunk[: 4096 - len(head)]
    tail = (tail + chunk)[-4096:]
err = child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, digest.hexdigest(), lines, len(head))
sys.stdout.flush()
sys.stdout.buffer.write(head + tail)
sys.stderr.buffer.write(err)
"""


class Ran:
    """What a command did: exit status, peak resident MiB, and what it printed (hashed, counted, its start and end)."""

    def __init__(self, stdout: bytes, stderr: bytes) -> None:
        first, _, rest = stdout.partition(b"\n")
        code, peak, sha256, lines, head = first.split()
        self.code, self.peak, self.lines, self.sha256 = int(code), int(peak) / 1024, int(lines), sha256.decode()
        self.head, self.tail = rest[: int(head)], rest[int(head) :]
        self.stderr = stderr.decode("utf-8", "replace")


def _pdi(location: str, *argv: str) -> Ran:
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-m", "pdi", *argv, "--archive", location],
        capture_output=True, check=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(SRC)),
    )
    return Ran(done.stdout, done.stderr)


def _lines_sha256(names: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\n")
    return digest.hexdigest()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A catalog of a few names, each command's baseline."""
    location = str(tmp_path_factory.mktemp("small") / "archive")
    fill(location, days=1, per_day=5)
    return location


@pytest.fixture(scope="module")
def million(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, BigCatalog]:
    location = str(tmp_path_factory.mktemp("million") / "archive")
    return location, fill(location, days=4, per_day=250_000, foreign_per_day=12)


def _within(ran: Ran, base: Ran, what: str) -> None:
    assert ran.code == 0, ran.stderr
    grown = ran.peak - base.peak
    print(f"{what}: {ran.peak:.0f} MiB (over a few names: {base.peak:.0f} MiB)")
    assert grown < GROWTH_MIB, f"{what} peaked at {ran.peak:.0f} MiB, {grown:.0f} MiB over a few names"


def test_a_million_names_list_in_order_in_bounded_memory(
    million: tuple[str, BigCatalog], small: str
) -> None:
    location, big = million
    assert big.representations == 1_000_051
    base = _pdi(small, "ls")
    ran = _pdi(location, "ls")
    _within(ran, base, "pdi ls of a million names")
    assert ran.lines == big.representations
    assert ran.sha256 == _lines_sha256(expected_names(big))
    # a keyset cursor starts deep in at once: the last ten names, after the one before them
    *_, cursor = itertools.islice(expected_names(big), big.representations - 11, big.representations - 10)
    deep = _pdi(location, "ls", "--after", cursor, "--json")
    _within(deep, base, "pdi ls --after --json")
    assert json.loads(deep.head) == list(itertools.islice(expected_names(big), big.representations - 10, None))


def test_a_million_names_verify_in_bounded_memory(million: tuple[str, BigCatalog], small: str) -> None:
    location, big = million
    base = _pdi(small, "verify")
    ran = _pdi(location, "verify")
    _within(ran, base, "pdi verify of a million names")
    assert ran.head == f"checked {big.representations} representations in 3 blobs: 0 problems\n".encode()


def test_an_export_of_100_000_names_in_bounded_memory_and_verify_finds_damage(tmp_path: Path, small: str) -> None:
    location = str(tmp_path / "archive")
    big = fill(location, days=2, per_day=50_000, foreign_per_day=24)
    base = _pdi(small, "export", str(tmp_path / "small-bag"))
    ran = _pdi(location, "export", str(tmp_path / "bag"))
    _within(ran, base, "pdi export of 100,000 names")
    assert ran.head == b"exported 100051 representations to " + str(tmp_path / "bag").encode() + b"\n"
    bag = tmp_path / "bag"
    catalog = json.loads((bag / "data" / "catalog.json").read_bytes())
    assert [r["pdi"] for r in catalog["representations"]] == list(expected_names(big))
    manifest = (bag / "manifest-sha256.txt").read_text().splitlines()
    objects = sorted(b.sha256 for b in big.blobs)
    assert manifest[1:] == [f"{sha}  data/objects/{sha}" for sha in objects]
    checksum, _, path = manifest[0].partition("  ")
    assert path == "data/catalog.json"
    assert checksum == hashlib.sha256((bag / "data" / "catalog.json").read_bytes()).hexdigest()
    # verify walks the blobs by SHA-256 beside the stored names: a stray blob and a missing one are found
    blobs = Path(location) / "blobs"
    stray = "00" + "f" * 62
    (blobs / "00").mkdir(exist_ok=True)
    (blobs / "00" / stray).write_bytes(b"left by a killed deposit")
    gone = big.blobs[1].sha256
    delete_blob(location, gone)  # a small blob: its catalog row
    ran = _pdi(location, "verify")
    assert ran.code == 3
    first = ran.head.decode().splitlines()[0]
    assert first.startswith("missing\turn:pdi://big.example.us/2026/01/0") and first.endswith("\tno stored bytes")
    assert ran.tail.decode().splitlines()[-2:] == [
        "note: 1 stored blob belongs to no name (left by interrupted deposits; harmless)",
        "checked 100051 representations in 3 blobs: 1 problem",
    ]
    # every name holding the missing blob is named: those whose serial gives its format
    holding = [n for n in expected_names(big) if f".{big.blobs[1].format}." in n]
    assert ran.lines == len(holding) + 2


def test_100_000_names_on_postgresql_list_and_verify_in_bounded_memory(pg_cluster: TemporaryCluster) -> None:
    small = pg_cluster.create_schema("pdi_small_catalog")
    fill(small, days=1, per_day=5)
    location = pg_cluster.create_schema("pdi_big_catalog")
    big = fill(location, days=2, per_day=50_000, foreign_per_day=24)
    base, ran = _pdi(small, "ls"), _pdi(location, "ls")
    _within(ran, base, "pdi ls of 100,000 names on PostgreSQL")
    assert ran.lines == big.representations == 100_051
    assert ran.sha256 == _lines_sha256(expected_names(big))
    base, ran = _pdi(small, "verify"), _pdi(location, "verify")
    _within(ran, base, "pdi verify of 100,000 names on PostgreSQL")
    assert ran.head == b"checked 100051 representations in 3 blobs: 0 problems\n"


def _import_at_scale(tmp_path: Path, small: str, targets: dict[str, str]) -> None:
    """Import 50,051 names into ``targets["target"]`` within the ceiling; a bag with a gap leaves ``targets["refused"]`` empty."""
    location = str(tmp_path / "archive")
    big = fill(location, days=2, per_day=25_000, foreign_per_day=24)
    assert _pdi(small, "export", str(tmp_path / "small-bag")).code == 0
    assert _pdi(location, "export", str(tmp_path / "bag")).code == 0
    for each in ("small-target", "target", "refused"):
        assert _pdi(targets[each], "init").code == 0
    base = _pdi(targets["small-target"], "import", str(tmp_path / "small-bag"))
    assert base.code == 0, base.stderr
    ran = _pdi(targets["target"], "import", str(tmp_path / "bag"))
    _within(ran, base, "pdi import of 50,000 names")
    assert ran.head.startswith(b"imported 50051 new representations into ")
    listed = _pdi(targets["target"], "ls")
    assert listed.lines == big.representations
    assert listed.sha256 == _lines_sha256(expected_names(big))
    # A bag whose catalog lacks serial 12345 of the second day: the gap is found once every row is
    # written, inside the transaction, and nothing of the import stays (no name, no blob).
    bag = tmp_path / "bag"
    catalog = (bag / "data" / "catalog.json").read_text(encoding="utf-8").split("\n")
    day = (FIRST + datetime.timedelta(days=2)).isoformat()
    gone = next(i for i, line in enumerate(catalog)
                if f'"day": "{day}"' in line and '"serial": 12345,' in line)
    del catalog[gone]
    (bag / "data" / "catalog.json").write_text("\n".join(catalog), encoding="utf-8")
    reseal(bag)
    refused = _pdi(targets["refused"], "import", str(bag))
    assert refused.code != 0
    assert f"gaps in the serials of {SERIES} on {day}: 24999 serials numbered 1 to 25000" in refused.stderr
    assert refused.peak - base.peak < GROWTH_MIB
    assert _pdi(targets["refused"], "ls").lines == 0
    verified = _pdi(targets["refused"], "verify")
    assert verified.code == 0 and verified.head == b"checked 0 representations in 0 blobs: 0 problems\n"


def test_an_import_of_50_000_names_in_bounded_memory_and_all_or_nothing(tmp_path: Path, small: str) -> None:
    """``pdi import`` streams catalog.json: its peak does not grow with the names, and a late refusal leaves nothing."""
    _import_at_scale(tmp_path, small, {each: str(tmp_path / each) for each in ("small-target", "target", "refused")})
    assert stored_blob_names(tmp_path / "refused") == set()  # no file, no row



def test_an_import_of_50_000_names_into_postgresql_in_bounded_memory_and_all_or_nothing(
    tmp_path: Path, small: str, pg_cluster: TemporaryCluster
) -> None:
    """The same into PostgreSQL, written a page of records a few statements (a few a record took over 10 minutes)."""
    _import_at_scale(tmp_path, small, {
        each: pg_cluster.create_schema(f"pdi_import_{each.replace('-', '_')}") for each in ("small-target", "target", "refused")
    })
