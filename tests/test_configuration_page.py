"""The configuration page names every environment variable pdi reads (docs/reference/configuration.md).

The variables are found in the code itself: every ``PDI_…`` name a string of
``src/pdi`` holds (an option's ``envvar``, an ``os.environ`` key, a help text
naming ``$PDI_…``), so that a new one cannot be read without its row.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"(?<![A-Za-z0-9_])PDI_[A-Z][A-Z0-9_]*")


def variables_in_code() -> set[str]:
    """Every ``PDI_…`` name a string literal of the package holds (click's own ``_PDI_COMPLETE`` is not one)."""
    names: set[str] = set()
    for path in (ROOT / "src" / "pdi").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update(VARIABLE.findall(node.value))
    return names


def test_every_variable_the_code_reads_has_its_row_on_the_configuration_page() -> None:
    page = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("## Environment variables pdi reads", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `(PDI_[A-Z0-9_]+)`", section, re.MULTILINE))
    found = variables_in_code()
    assert {"PDI_ARCHIVE", "PDI_USER", "PDI_SIGNING_KEY"} <= found  # the search itself finds what it looks for
    assert sorted(found - rows) == []


def variables_the_scripts_and_tests_take() -> set[str]:
    """Every ``PDI_…`` variable a person may set for the scripts, tests or benchmarks: what a script reads as
    ``${PDI_…}`` and a test or benchmark as ``os.environ.get("PDI_…")`` (a variable a test sets for its own
    child, read as ``os.environ["PDI_…"]``, is not one)."""
    names: set[str] = set()
    for path in (ROOT / "scripts").iterdir():
        if path.is_file():
            names.update(re.findall(r"\$\{(PDI_[A-Z0-9_]+)", path.read_text(encoding="utf-8")))
    for folder in ("tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            names.update(re.findall(r"environ\.get\(\s*\"(PDI_[A-Z0-9_]+)\"", path.read_text(encoding="utf-8")))
    return names


def test_every_variable_of_the_scripts_and_tests_has_its_row() -> None:
    page = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    section = page.split("## Variables of the scripts, tests and benchmarks", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `PDI_")]
    named = set(re.findall(r"`(PDI_[A-Z0-9_]+)`", " ".join(rows)))
    prefixes = tuple(re.findall(r"`(PDI_[A-Z0-9_]+_)\*`", " ".join(rows)))  # `PDI_BENCH_*`
    found = variables_the_scripts_and_tests_take()
    assert {"PDI_PYTHON", "PDI_TEST_WORKERS", "PDI_FUZZ_SECONDS"} <= found  # the search finds what it looks for
    assert sorted(name for name in found - named if not name.startswith(prefixes)) == []
