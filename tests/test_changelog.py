"""One version, said alike everywhere: pyproject.toml, ``pdi.__version__``, ``pdi --version`` and CHANGELOG.md."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pdi

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_the_same_in_pyproject_the_package_the_command_and_the_changelog() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    said = subprocess.run([sys.executable, "-m", "pdi", "--version"], capture_output=True, text=True, timeout=60,
                          check=True).stdout
    assert said == f"pdi, version {declared}\n"
    assert pdi.__version__ == declared
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.MULTILINE)
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, re.MULTILINE)
    assert headings[0] == "Unreleased" and headings[1:] == [v for v, _ in releases]
    unreleased = changelog.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    # a release is its own version; a build between releases, with changes not yet released, is the next
    # release's development version (PEP 440 ".devN"), never the last release's: they may differ in schema
    newest = tuple(int(n) for n in releases[0][0].split("."))
    if unreleased.strip():
        found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)\.dev\d+", declared)
        assert found is not None, f"{declared}: changes are listed as unreleased, so this is no release"
        assert tuple(int(n) for n in found.groups()) > newest
    else:
        assert releases[0][0] == declared  # the newest release listed is the one installed
