"""``pdi cite`` of a name copied with another day says what the archive holds near it, as ``pdi get`` does.

A new archivist who typed the tutorial's citation as printed (its names carry the day the page was written on,
PDI-GRAMMAR.md §2.4) was told by ``pdi get`` of the passage where its document is (``nearest, 2026-11-28 …``) but
by ``pdi cite`` only ``… is not in this archive``: the citing name, and a cited name of a series minted here, now
say the same as ``pdi get`` of that name (exit 4 still).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

S = "archives.gov.us"
WRONG_DAY = datetime.date(1999, 1, 1)


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         one_gmt_day: datetime.datetime) -> tuple[str, str, datetime.date]:
    """The tutorial's archive: the text as ``1.text.1``, the page quoting its sixth line as ``2.html.1``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "archive"))
    root = Path(__file__).resolve().parents[1] / "examples"
    assert _run(["init"])[0] == 0
    assert _run(["series", "add", S])[0] == 0
    names = []
    for path in (root / "declaration.txt", root / "site" / "index.html"):
        code, out, _ = _run(["add", str(path), "--series", S])
        assert code == 0
        names.append(out.strip())
    return names[0], names[1], one_gmt_day.date()


def _on(name: str, day: datetime.date) -> str:
    """``name`` as copied with the wrong day."""
    return name.replace(day.strftime("/%Y/%m/%d/"), WRONG_DAY.strftime("/%Y/%m/%d/"))


def _said(wrong: str, right: str, day: datetime.date) -> str:
    """What ``pdi get`` says of a name whose day is wrong and whose id is held on ``day`` (nearest.py)."""
    apart = (day - WRONG_DAY).days
    serial = right.rsplit("/", 1)[1].split(".")[0]  # another day's serial is another document: the day only
    return (f"pdi: not found: {wrong} is not in this archive; a name carries the GMT day it was minted, and {S} has"
            f" nothing minted on {WRONG_DAY.isoformat()}, so no document {serial!r}; the nearest days with documents"
            f" are {day.isoformat()} ({apart:,} days after)\n")


def test_a_citing_name_of_another_day_names_the_day_held(held: tuple[str, str, datetime.date]) -> None:
    text, page, day = held
    wrong = _on(page, day)
    code, out, err = _run(["cite", f"{wrong}@388={text}#line=5,6"])
    assert (code, out) == (4, "")
    assert err == _said(wrong, page, day)
    assert _run(["get", wrong])[2] == err  # the same words as pdi get's


def test_a_cited_name_of_another_day_names_the_day_held(held: tuple[str, str, datetime.date]) -> None:
    text, page, day = held
    wrong = _on(text, day)
    code, out, err = _run(["cite", f"{page}@388={wrong}#line=5,6"])
    assert (code, out) == (4, "")
    assert err == _said(wrong, text, day)


def test_a_cited_name_of_a_series_not_here_is_still_unchecked(held: tuple[str, str, datetime.date]) -> None:
    text, page, _ = held
    other = text.replace(S, "other.gov.us")
    code, out, _ = _run(["cite", f"{page}@388={other}#line=5,6"])
    assert code == 0
    assert out.endswith(f"check\tunchecked: the cited document is not here: {other} is not in this archive\n")


def test_a_citing_name_of_a_series_not_here_is_not_found(held: tuple[str, str, datetime.date]) -> None:
    """The position is checked in A, so an A not here is not found (exit 4) whatever its series, where a B of a
    series not minted here is unchecked (exit 0): `pdi cite --help` and the citations reference say both."""
    text, page, _ = held
    other = page.replace(S, "other.gov.us")
    code, out, err = _run(["cite", f"{other}@388={text}#line=5,6"])
    assert (code, out) == (4, "")
    assert err == f"pdi: not found: {other} is not in this archive; this archive holds no series other.gov.us\n"
