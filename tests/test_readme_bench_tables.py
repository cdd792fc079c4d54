"""The manual's benchmark tables (docs/benchmarks.md) are regenerated, and each names the commit it was measured on.

``python bench/run_all.py --write-docs NAME`` (or ``--write-readme``) replaces what stands between
``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME end -->`` with a fresh
table and a line naming the commit (``git rev-parse --short HEAD``), the
date, the load average and the cores; nothing there is kept by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
# a marker is a line of its own (the page's own account of them quotes them inside a line)
BEGIN = re.compile(r"^<!-- bench:([\w-]+) begin -->$", re.M)
END = re.compile(r"^<!-- bench:([\w-]+) end -->$", re.M)
MARKED = re.compile(r"^<!-- bench:(?P<name>[\w-]+) begin -->\n(?P<body>.*?)^<!-- bench:(?P=name) end -->$",
                    re.S | re.M)
STAMP = re.compile(r"^Measured on commit `[0-9a-f]{7,40}( \+ uncommitted changes)?`, \d{4}-\d\d-\d\d,"
                   r" load average \d+\.\d before and \d+\.\d after, \d+ cores", re.M)


def test_every_marker_is_paired_once() -> None:
    begins, ends = BEGIN.findall(PAGE), END.findall(PAGE)
    assert begins, "docs/benchmarks.md has no regenerated benchmark table"
    assert len(begins) == len(set(begins)), begins
    assert sorted(begins) == sorted(ends)
    assert [m["name"] for m in MARKED.finditer(PAGE)] == begins


def test_every_marked_table_names_its_commit() -> None:
    for match in MARKED.finditer(PAGE):
        body = match["body"]
        assert "|---" in body, f"{match['name']}: no table"
        assert len(STAMP.findall(body)) == 1, f"{match['name']}: no line naming the commit measured"


def test_every_marked_table_has_a_benchmark() -> None:
    """NAME is a benchmark's script, or a script's name, ``_`` and a mode it takes (``serve_cold``: ``--cold``)."""
    for name in BEGIN.findall(PAGE):
        head, _, mode = name.rpartition("_")
        if (ROOT / "bench" / f"bench_{name}.py").exists():
            continue
        script = ROOT / "bench" / f"bench_{head}.py"
        assert script.exists(), name
        assert f'"--{mode}"' in script.read_text(encoding="utf-8"), f"{script.name} takes no --{mode}"


def test_no_other_page_holds_a_marked_table() -> None:
    """``run_all.py --write-docs`` writes docs/benchmarks.md only: a marker elsewhere would never be regenerated."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        if path.name == "benchmarks.md" and path.parent.name == "docs":
            continue
        assert not BEGIN.search(path.read_text(encoding="utf-8")), f"{path.relative_to(ROOT)} has a marked table"
