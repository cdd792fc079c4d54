"""``pdi._deferred``: a deferred standard-library module loads at its first use, then is the real module.

Each check runs in a fresh interpreter, where the module (``colorsys``, which
nothing at start-up imports) has not been imported yet.
"""

from __future__ import annotations

import subprocess
import sys

_CHECK = """
import sys
from pdi._deferred import defer, loaded

defer("colorsys", "os")
os_before = sys.modules["os"]
import colorsys
assert not loaded("colorsys"), "imported before any use"
assert "colorsys" in sys.modules and colorsys.__spec__ is None  # the stand-in: nothing loaded yet
from colorsys import rgb_to_hsv  # the first attribute asked for loads the real module
assert loaded("colorsys")
real = sys.modules["colorsys"]
assert real is not colorsys and real.rgb_to_hsv is rgb_to_hsv is colorsys.rgb_to_hsv
assert real.__spec__ is not None and colorsys.__file__ == real.__file__
assert rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
import colorsys as again
assert again is real
assert sys.modules["os"] is os_before and loaded("os")  # a module imported already is left as it was
assert not loaded("not_a_module_anywhere")
print("ok")
"""


def test_a_deferred_module_loads_at_its_first_use_and_is_the_real_one_after() -> None:
    result = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
