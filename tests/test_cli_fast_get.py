"""``pdi get`` read without click (:mod:`pdi.cli.fast_get`) does what click's reading does.

The oracle is click itself: for generated command lines, :func:`fast_get.parse`
either declines (click reads the line) or gives exactly the values click's
``get`` command gets (``make_context``), environment and output checks
included; a line click refuses is never taken. Whole processes then show the
same output and exit status through both doors: the fast one, and click's
(reached by giving ``--archive`` twice, a line the fast reader leaves to click
and click reads the same way).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.cli import fast_get
from pdi.cli.read_cmd import get_cmd

NAME = "urn:pdi://bench.example.us/2026/11/25/1.text.1"


def clicks_reading(args: list[str], environ: dict[str, str]) -> fast_get.GetArguments | None:
    """What click hands ``get_cmd`` for ``args`` under ``environ``, or ``None`` when click refuses the line."""
    with mock.patch.dict(os.environ, environ, clear=True):
        try:
            ctx = get_cmd.make_context("get", list(args))
        except click.exceptions.Exit:  # --help
            return None
        except click.ClickException:
            return None
    p = ctx.params
    return fast_get.GetArguments(p["pdi"], p["output"], p["latest"], p["info"], p["archive"])


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Outputs of every kind click's Path check meets: missing, an existing file, a directory."""
    root = tmp_path_factory.mktemp("fast-get")
    (root / "there.txt").write_text("x")
    (root / "folder").mkdir()
    return {"missing": str(root / "new.txt"), "file": str(root / "there.txt"), "dir": str(root / "folder")}


def words(places: dict[str, str]) -> st.SearchStrategy[str]:
    return st.sampled_from([
        NAME, NAME + "#char=1,5", "-", "", "x", "--archive", "--archive=a", "--archive=", "-o", "-o-",
        "-o=out", "--output", "--output=" + places["missing"], "--latest", "--info", "--latest=1", "--",
        "-h", "--help", "-x", "--arch", "-lo", "--info=", places["missing"], places["file"], places["dir"],
        "-o" + places["dir"], "--output=" + places["dir"],
    ])


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_fast_reading_is_clicks_or_declines(places: dict[str, str], data: st.DataObject) -> None:
    args = data.draw(st.lists(words(places), max_size=6))
    environ = data.draw(st.sampled_from([{}, {"PDI_ARCHIVE": ""}, {"PDI_ARCHIVE": "/srv/arch"}]))
    fast = fast_get.parse(args, environ)
    if fast is not None:
        assert fast == clicks_reading(args, environ), args


@pytest.mark.parametrize("args", [
    [NAME],
    [NAME, "--archive", "a"],
    ["--archive=a", NAME, "--info"],
    [NAME, "-o", "-"],
    [NAME, "-o-"],
    ["--latest", NAME, "--output", "new.txt", "--info"],
    [NAME + "#char=1,5", "--archive", "--info"],  # --info is --archive's value, as click reads it
    ["-"],
])
def test_the_usual_lines_are_read_fast_and_as_click_reads_them(args: list[str]) -> None:
    for environ in ({}, {"PDI_ARCHIVE": "/srv/arch"}):
        fast = fast_get.parse(args, environ)
        assert fast is not None
        assert fast == clicks_reading(args, environ)


@pytest.mark.parametrize("args", [
    [NAME, "--help"], [NAME, "-h"], [], [NAME, NAME], [NAME, "--archive"], [NAME, "--", "-x"],
    [NAME, "--archive", "a", "--archive", "b"], [NAME, "--info=1"], [NAME, "-x"],
])
def test_what_the_fast_reader_leaves_to_click(args: list[str]) -> None:
    assert fast_get.parse(args, {}) is None
    assert fast_get.parse(args, {"_PDI_COMPLETE": "bash_complete"}) is None


def pdi(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, cwd=cwd, check=False)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("fast-get-archive")
    text = root / "small.txt"
    text.write_bytes("Eine Zeile, ein Satz: Grüße.\n".encode() * 30)
    assert pdi(["init", "a"], root).returncode == 0
    assert pdi(["series", "add", "bench.example.us", "--archive", "a"], root).returncode == 0
    added = pdi(["add", "-s", "bench.example.us", str(text), "--archive", "a"], root)
    return root, added.stdout.decode().strip()


@pytest.mark.parametrize("tail", [
    [], ["--info"], ["#char=3,12"], ["#char=3,12", "--info"], ["#char=5000,6000"], ["#line=2,4", "-o", "out.txt"],
    ["x"],  # not a name: one line, exit 1
    ["#nope=1"],  # a fragment this text has no scheme for
])
def test_both_doors_answer_alike(archive: tuple[Path, str], tail: list[str]) -> None:
    root, name = archive
    extra = [t for t in tail if not t.startswith("#") and t != "x"]
    target = name + "".join(t for t in tail if t.startswith("#")) + ("x" if "x" in tail else "")
    fast = pdi(["get", target, "--archive", "a", *extra], root)
    written_fast = (root / "out.txt").read_bytes() if "out.txt" in extra else None
    slow = pdi(["get", target, "--archive", "b", "--archive", "a", *extra], root)  # click's door
    written_slow = (root / "out.txt").read_bytes() if "out.txt" in extra else None
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert written_fast == written_slow
    if tail == []:
        assert fast.stdout == (root / "small.txt").read_bytes()


def test_a_read_does_not_wait_for_a_writer(archive: tuple[Path, str]) -> None:
    """Opening an archive at its schema version only reads it: `pdi get` answers while a deposit holds the lock."""
    import sqlite3

    root, name = archive
    writer = sqlite3.connect(root / "a" / "catalog.sqlite", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # SQLite's write lock, as a deposit's transaction holds it
        writer.execute("INSERT INTO audit_log (at, who, action, subject, detail) VALUES ('x', 'x', 'x', 'x', 'x')")
        got = subprocess.run([sys.executable, "-m", "pdi", "get", name, "--archive", "a"],
                             capture_output=True, cwd=root, timeout=60, check=False)
        assert got.returncode == 0, got.stderr
        assert got.stdout == (root / "small.txt").read_bytes()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_name_with_another_day_says_the_day_held_through_both_doors(archive: tuple[Path, str]) -> None:
    """A name copied with another day (PDI-GRAMMAR.md §2.4: the day it was minted) names the document of that id on
    the series' nearest day, exit 4 (not found), through the fast door and click's alike."""
    import datetime

    root, name = archive
    held_on = datetime.date(*map(int, name.split("/")[3:6]))
    wrong = name.replace(held_on.strftime("/%Y/%m/%d/"), "/1999/01/01/")
    fast = pdi(["get", wrong, "--archive", "a"], root)
    slow = pdi(["get", wrong, "--archive", "b", "--archive", "a"], root)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    apart = (held_on - datetime.date(1999, 1, 1)).days
    assert fast.returncode == 4
    assert fast.stderr.decode() == (
        f"pdi: not found: {wrong} is not in this archive; a name carries the GMT day it was minted, and"
        f" bench.example.us has nothing minted on 1999-01-01, so no document {name.rsplit('/', 1)[1].split('.')[0]!r};"
        f" the nearest days with documents are {held_on.isoformat()} ({apart:,} days after)\n")
