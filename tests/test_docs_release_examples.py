"""The how-tos a new operator follows to build and install pdi name the release that a checkout of this manual
builds: its wheel is ``dist/pdi-VERSION-…`` and ``pdi --version`` says ``pdi, version VERSION``, VERSION being
``pyproject.toml``'s (not an older release's, whose schema and output this manual no longer shows); the upgrade
pages upgrade from the latest tagged release to it."""

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


#: The pages whose example upgrades an archive the latest tagged release wrote to the pdi of this manual.
UPGRADE_PAGES = ["docs/how-to/upgrade.md", "docs/reference/upgrade.md"]


def _latest_release() -> tuple[str, int]:
    """The newest release whose archives the tests hold (tests/data/releases/X.Y.Z, made from the tag vX.Y.Z), and
    the catalog schema version its README says that release wrote."""
    releases = ROOT / "tests/data/releases"
    latest = max((p.name for p in releases.iterdir() if p.is_dir()), key=lambda v: tuple(map(int, v.split("."))))
    [schema] = re.findall(r"catalog schema version (\d+)", (releases / latest / "README.md").read_text("utf-8"))
    return latest, int(schema)


@pytest.mark.parametrize("page", UPGRADE_PAGES)
def test_the_upgrade_example_goes_from_the_latest_release_to_what_a_checkout_builds(page: str) -> None:
    """An operator following the page installs the wheel a checkout builds (``pyproject.toml``'s version, at this
    code's schema version), over the latest tagged release (at the schema version its archives hold)."""
    from pdi.archive.store import SCHEMA_VERSION

    latest, schema = _latest_release()
    assert tuple(map(int, latest.split("."))) < tuple(map(int, VERSION.split(".")[:3])), (latest, VERSION)
    code = _code(page)
    assert set(re.findall(r"dist/pdi-(\d+\.\d+\.\d+(?:\.dev\d+)?)", code)) == {VERSION}, page
    assert re.findall(r"pdi, version (\S+)", code) == [latest, VERSION], page  # before and after
    assert f"(schema version {SCHEMA_VERSION})" in code, page
    assert f"checkout v{latest}" not in code, page  # the way to the new pdi, not back to the old one
    text = (ROOT / page).read_text("utf-8")
    assert "0.1.0" not in text.replace("Release 0.1.0 has no", ""), page
    if page.startswith("docs/how-to"):
        assert f"release {latest} wrote (schema version {schema})" in text
        assert f"version {VERSION} (schema version {SCHEMA_VERSION})" in " ".join(text.split())
        assert f"backed up the archive at schema version {schema} to" in code
    else:
        assert f"has schema version {SCHEMA_VERSION}, newer than this pdi understands ({schema})" in code


def test_the_version_is_a_pep_440_development_or_release_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", VERSION), VERSION
