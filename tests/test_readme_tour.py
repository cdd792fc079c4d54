"""The README's five-minute tour, run as written: each `pdi` line of its first screen, and what it says each prints.

A newcomer reads no further than the first screen, so what it shows must be
what the commands do: the names `pdi add` mints (on today's GMT day, where
the README shows 2026/11/25), the passage `pdi get` prints (with its CR LF),
the first hit of `pdi search` and its passage line, whole (where the citation's position comes from), and
every line `pdi cite` prints. `pdi serve` is left to the server's tests.
The tutorial (docs/tutorial.md), which walks through the same steps with
every output, is run the same way: each `$ pdi` line of its console blocks.
"""

from __future__ import annotations

import datetime
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SHOWN_DAY = "2026/11/25"


def _tour() -> list[tuple[str, str | None, list[str]]]:
    """The tour's `pdi` lines: (command, the name its `# →` comment says it prints, the `#   ` lines under it)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    head = "\n".join(text.splitlines()[:40])
    block = head.split("```sh\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[str, str | None, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("#   "):
            steps[-1][2].append(line.removeprefix("#   "))
        elif line.startswith("pdi "):
            arrow = re.search(r"# → (\S+)", line)
            steps.append((re.sub(r"\s+# .*", "", line), arrow.group(1) if arrow else None, []))
    return steps


def test_the_readme_tour_prints_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    today = one_gmt_day.strftime("%Y/%m/%d")
    steps = _tour()
    assert [shlex.split(command)[1] for command, _, _ in steps] == [
        "init", "series", "add", "add", "get", "search", "cite", "serve"]
    for command, prints, shown in steps:
        words = shlex.split(command.replace(SHOWN_DAY, today))
        if words[1] == "serve":
            continue
        result = CliRunner().invoke(cli, words[1:])
        assert result.exit_code == 0, (command, result.output, result.stderr)
        out = result.stdout_bytes.decode("utf-8")
        if prints is not None:
            assert out == prints.replace(SHOWN_DAY, today) + "\n", command
        expected = [line.replace(SHOWN_DAY, today) for line in shown]
        if words[1] == "get":  # the passage as printed, its line ending CR LF (the README says so)
            assert out == expected[0] + "\r\n"
        elif words[1] == "search":  # its first hit, and where the snippet shown comes from
            got = out.splitlines()
            assert got[0] == expected[0]
            # the passage line as printed, whole (it was once shown shortened, and a reader's terminal disagreed)
            assert got[1] == expected[1]
            assert "#char=388," in got[0], "the citation's position is where the page's hit starts"
            then = re.search(r"…(/\S+#char=\d+,\d+)\)", expected[2])
            assert then is not None and got[2].endswith(then.group(1)), (expected[2], got[2])
        elif words[1] == "cite":  # every line, as printed
            assert out.splitlines() == expected
        else:
            assert not expected, command


def _tutorial_steps() -> list[tuple[str, list[str]]]:
    """Each `$ pdi` line of docs/tutorial.md's console blocks, with the lines it shows printed under it."""
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    steps: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        shown: list[str] | None = None
        for line in block.splitlines():
            if line.startswith("$ "):
                shown = None
                if line.startswith("$ pdi "):
                    shown = []
                    steps.append((line.removeprefix("$ "), shown))
            elif shown is not None:
                shown.append(line)
    return steps


def test_the_tutorials_commands_print_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    """The tutorial is followed step by step: each `$ pdi` line of its console blocks, run in a directory
    holding the two files its set-up step copies, prints the lines it shows (stdout; CR LF read as a line end;
    the deposit time of a version listing is today's)."""
    shutil.copy(ROOT / "examples" / "declaration.txt", tmp_path)
    shutil.copy(ROOT / "examples" / "site" / "index.html", tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    today = one_gmt_day.strftime("%Y/%m/%d")
    steps = _tutorial_steps()
    assert [shlex.split(command)[1] for command, _ in steps] == [
        "init", "series", "add", "add", "get", "get", "get", "search", "cite", "serve"]
    shown_time = re.compile(r"deposited \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
    for command, shown in steps:
        words = shlex.split(command.replace(SHOWN_DAY, today))
        if words[1] == "serve":
            continue
        result = CliRunner().invoke(cli, words[1:])
        assert result.exit_code == 0, (command, result.output, result.stderr)
        got = result.stdout_bytes.decode("utf-8").replace("\r\n", "\n").splitlines()
        expected = [line.replace(SHOWN_DAY, today) for line in shown]
        got = [shown_time.sub("deposited TIME", line) for line in got]
        expected = [shown_time.sub("deposited TIME", line) for line in expected]
        assert got == expected, command


def _locked(lock: str) -> set[str]:
    """The names of the packages a lock file of requirements/ pins (``name==version \\``)."""
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    return {m.lower() for m in re.findall(r"^([A-Za-z0-9_.-]+)==", text, re.MULTILINE)}


def test_the_readmes_build_line_says_where_the_build_front_end_comes_from() -> None:
    """The README's install line runs ``python -m build`` after the tour, whose plain ``scripts/bootstrap``
    installs requirements/run.lock, which has no ``build`` (only requirements/dev.lock, ``--dev``, has it):
    typed as shown it would fail with "No module named build", so the line says how to get the front end."""
    assert "build" not in _locked("run.lock") and "build" in _locked("dev.lock")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = next(p for p in readme.split("\n\n") if "python -m build" in p)
    assert "scripts/bootstrap --dev" in paragraph or "pipx run build" in paragraph, paragraph


def test_the_benchmark_lines_say_they_need_the_dev_set_up() -> None:
    """The benchmarks import peers that only requirements/dev.lock installs (``rfc3986``, ``lxml``…), so the
    README's ``.venv/bin/python bench/run_all.py`` after the tour's plain ``scripts/bootstrap`` fails with
    "No module named …": the README's line and the benchmarks page's commands say ``scripts/bootstrap --dev``."""
    imported = set()
    for script in (ROOT / "bench").glob("bench_*.py"):
        imported |= set(re.findall(r"^(?:import|from) (\w+)", script.read_text(encoding="utf-8"), re.MULTILINE))
    dev_only = {name for name in imported if name.lower() in _locked("dev.lock") - _locked("run.lock")}
    assert {"rfc3986", "lxml"} <= dev_only, dev_only
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = next(p for p in readme.split("\n\n") if "bench/run_all.py" in p)
    assert "scripts/bootstrap --dev" in paragraph, paragraph
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    first_block = page.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.startswith("scripts/bootstrap --dev "), first_block
