"""The how-tos a new operator follows to build and install pdi name the release that a checkout of this manual
builds: its wheel is ``dist/pdi-VERSION-…`` and ``pdi --version`` says ``pdi, version VERSION``, VERSION being
``pyproject.toml``'s (not an older release's, whose schema and output this manual no longer shows)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
PAGES = ["docs/how-to/install.md", "docs/how-to/operator-guide.md"]


def _code(page: str) -> str:
    """The page's code blocks and its inline code, where the reader copies from."""
    text = (ROOT / page).read_text("utf-8")
    blocks = re.findall(r"^```\w*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return "\n".join(blocks + re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)))


@pytest.mark.parametrize("page", PAGES)
def test_the_wheel_and_version_the_page_names_are_what_a_checkout_builds(page: str) -> None:
    code = _code(page)
    wheels = re.findall(r"dist/pdi-(\d+\.\d+\.\d+(?:\.dev\d+)?)", code)
    versions = re.findall(r"pdi, version (\S+)", code)
    assert wheels and versions, page
    assert {*wheels, *versions} <= {VERSION}, (page, wheels, versions)
    assert "checkout v0.2.0" not in code and "checkout v0.1.0" not in code, page


def test_the_version_is_a_pep_440_development_or_release_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", VERSION), VERSION
