"""The fuzzing worker, shared by every fuzz test of the session (see ``fuzz_harness``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_harness import Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    try:
        yield box
    finally:
        box.close()
