"""Test-wide settings.

Hypothesis: no per-example deadline and no "too slow" health check anywhere,
because the suite runs on a shared 2-core machine where a slow example says
nothing about the code (speed is measured in ``bench/``, never in tests).
Under CI (``CI=true``) the examples are derived from each test's name
(``derandomize``), so CI runs the same cases every time and a submission
cannot fail on a case no developer run ever saw; developers' runs stay
random and keep exploring.

Subprocesses: every ``python -m pdi`` or ``python -c`` a test starts runs the
checkout under test, not whatever copy of pdi is installed: this tree's
``src`` goes first on ``PYTHONPATH`` for the whole session.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile("pdi", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "pdi-ci",
    parent=settings.get_profile("pdi"),
    derandomize=True,
    print_blob=True,
)
settings.load_profile("pdi-ci" if os.environ.get("CI") == "true" else "pdi")

SRC = Path(__file__).resolve().parent.parent / "src"
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(SRC), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(SRC))]
)
