"""Each script of scripts/ prints, for --help, the whole comment at its head and nothing else.

The scripts print their help by reading their own first lines; a fixed range
of line numbers drifted as the comments grew (scripts/demo --help printed
its ``set -euo pipefail``; scripts/lock and scripts/vendor-pdfjs cut their
last sentences). The head comment is every line after the ``#!`` line up to
the first line that is not a comment, each without its ``# ``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WITH_HELP = sorted(
    path.name for path in (ROOT / "scripts").iterdir()
    if path.is_file() and "--help)" in path.read_text(encoding="utf-8")
)


def head_comment(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    said: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            break
        said.append(re.sub(r"^# ?", "", line))
    return "\n".join(said) + "\n"


def test_the_scripts_with_help_are_found() -> None:
    assert {"bootstrap", "demo", "lock", "midnight", "test", "vendor-pdfjs"} <= set(WITH_HELP)


@pytest.mark.parametrize("name", WITH_HELP)
def test_help_prints_the_whole_head_comment(name: str) -> None:
    script = ROOT / "scripts" / name
    done = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == head_comment(script), name
    assert done.stderr == ""


@pytest.mark.parametrize("args, said", [
    (["--port"], "demo: --port needs a number, the resolver's port (1 to 65535)\n"),
    (["--port", "80x"], "demo: --port needs a number, the resolver's port (1 to 65535), not '80x'\n"),
    (["--port", "65536"], "demo: --port needs a number, the resolver's port (1 to 65535), not '65536'\n"),
    (["--port", "0"], "demo: --port needs a number, the resolver's port (1 to 65535), not '0'\n"),
    (["--archive"], "demo: --archive needs a directory, the archive to make\n"),
    (["--bogus"], "demo: unknown argument --bogus (see scripts/demo --help)\n"),
])
def test_demo_refuses_a_bad_argument_before_setting_anything_up(args: list[str], said: str) -> None:
    # bash's own ${2:?} said "scripts/demo: line 26: 2: --port needs a number" (exit 1), and a port that is no
    # number was found only by pdi serve, after the whole demo had run; each is a usage error (exit 2) at once
    done = subprocess.run(["bash", str(ROOT / "scripts" / "demo"), *args], capture_output=True, text=True,
                          timeout=60, check=False, env={"PATH": "/usr/bin:/bin", "PDI_SKIP_BOOTSTRAP": "1"})
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said)
