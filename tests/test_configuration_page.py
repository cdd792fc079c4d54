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
