"""The 1 KB deposit rows of bench_archive.py and bench_deposit.py say what both time (issue 24).

Both tables take their 1 KB row from one function, ``bench_deposit.deposit_1kb``:
``Archive.deposit`` in the benchmark's process (what ``Archive.add``, ``pdi add`` and
the write API call), beside ``write`` + ``fsync`` of the same octets to a new file.
On SQLite the blob of a 1 KB text is a row of the catalog (at most
``INLINE_LIMIT`` octets), not a file, so its row must not say "blob files" (the
archive table's header did, from before schema 9, and its 1 MB resolve row's blob is
a file). Here the labels are read from the benchmarks' own table code and the claim
they make is checked against an archive the benchmark's own deposit function filled.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from pdi.archive import Archive
from pdi.archive.blobs.inline import INLINE_LIMIT

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_archive  # noqa: E402  (bench/ is not a package)
import bench_deposit  # noqa: E402

S = bench_deposit.S


def _rows(table: str) -> dict[str, list[str]]:
    """A markdown table's rows by their first cell."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in table.splitlines() if line.startswith("|")]
    return {row[0]: row for row in rows}


def test_the_1kb_deposit_the_benchmarks_time_keeps_its_blob_as_a_catalog_row(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(str(location)) as archive:
        archive.add_series(S)
        bench_deposit.deposit_1kb(archive, S, tmp_path, 3)
    assert len(bench_deposit.DOC.format(i=0).encode()) <= INLINE_LIMIT
    assert [p for p in (location / "blobs").rglob("*") if p.is_file()] == []
    with sqlite3.connect(location / "catalog.sqlite") as conn:
        kept = conn.execute("SELECT count(*), min(length(data)), max(length(data)) FROM blobs").fetchone()
    assert kept[0] == 3 + 5  # the three timed and deposit_1kb's five warm-up deposits, one row each
    assert kept[1] == kept[2] == len(bench_deposit.DOC.format(i=0).encode())  # 983 octets: "1 KB"


def test_archive_table_says_its_1kb_deposit_is_archive_deposit_with_a_catalog_row() -> None:
    figures = bench_archive.Figures()
    figures.deposit = (0.001, 0.0005)
    figures.resolve = {"p50": (0.002, 0.001), "p99": (0.003, 0.002)}
    figures.listing = (0.02, 0.001)
    rows = _rows(bench_archive.markdown(figures, figures))
    header = " | ".join(rows[""])
    assert "blob files" not in header  # the 1 KB blob is not a file; the 1 MB text's is, said on its own row
    deposit = next(row for label, row in rows.items() if label.startswith("deposit a 1 KB"))
    assert "`Archive.deposit`" in deposit[0]
    assert "catalog row" in deposit[0]
    assert "new file" in deposit[3]
    resolve = next(row for label, row in rows.items() if label.startswith("resolve"))
    assert "blob file" in resolve[0]


def test_deposit_table_says_the_same(tmp_path: Path) -> None:
    with Archive.init(str(tmp_path / "archive")) as archive:
        row = bench_deposit.bench_small("SQLite (the blob a catalog row)", archive, tmp_path, 3)
    assert "`Archive.deposit`" in row[0]
    assert "catalog row" in row[0]
    assert row[2].startswith("write + fsync of a new file")
