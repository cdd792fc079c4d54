"""A how-to whose steps run through ``sudo`` says which of them need root, and what to do without it.

Archivists often work on machines they do not administer: a page that types
``sudo`` (in a ``sh`` block or inline code) must say, in its prose, which steps
need root ("needs root"), and give the way without ``sudo`` where there is one
(another place, a database superuser, the service's own user) or say which
lines need none.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOWTOS = sorted((ROOT / "docs" / "how-to").glob("*.md"))
#: How a page says which steps need root.
NEEDS_ROOT = re.compile(r"\bneeds? root\b")
#: How it says what to do without it (or which lines need none).
WITHOUT = re.compile(r"without (?:`sudo`|root)|need none|runs? as (?:you|the archive.s owner)", re.IGNORECASE)


def _code_and_prose(page: Path) -> tuple[str, str]:
    text = page.read_text("utf-8")
    blocks = re.findall(r"^```\w*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return "\n".join(blocks + re.findall(r"`([^`]+)`", prose)), " ".join(prose.split())


def _sudo_pages() -> list[Path]:
    return [page for page in HOWTOS if re.search(r"(?:^|[\s(|&;])sudo(?:\s|$|edit)", _code_and_prose(page)[0], re.M)]


def test_the_pages_that_use_sudo_are_found() -> None:
    names = {page.name for page in _sudo_pages()}
    assert {"operator-guide.md", "deploy.md", "install.md", "postgresql.md", "operate.md", "upgrade.md",
            "set-up.md", "backup.md"} <= names, names


@pytest.mark.parametrize("page", _sudo_pages(), ids=lambda page: page.name)
def test_a_page_using_sudo_says_what_needs_root_and_the_way_without(page: Path) -> None:
    _, prose = _code_and_prose(page)
    assert NEEDS_ROOT.search(prose), f"{page.name}: which steps need root is not said"
    assert WITHOUT.search(prose), f"{page.name}: no way without sudo, nor which lines need none"
