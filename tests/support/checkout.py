"""Which pdi the tests run: this checkout's ``src/``, or the installed wheel (``PDI_TEST_INSTALLED=1``).

``scripts/test`` in CI builds the wheel, installs it (not editable) in
``.venv``, sets ``PDI_TEST_INSTALLED=1`` and drops ``src`` from pytest's
``pythonpath``: the suite then imports the installed package, and so do the
processes it starts. Elsewhere the checkout is what runs: pytest puts
``src/`` on ``sys.path`` (``pythonpath`` in ``pyproject.toml``) and
``tests/conftest.py`` first on ``PYTHONPATH``, whatever pdi the interpreter
has installed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
SRC: Final = ROOT / "src"
#: The suite runs against the installed wheel (scripts/test in CI), not src/.
INSTALLED: Final = os.environ.get("PDI_TEST_INSTALLED") == "1"
