"""Fuzzing every parser that takes a stranger's input: the seed corpus replayed, then new inputs.

Each target (``fuzz_targets/``) runs in the sandbox worker (``fuzz_harness``):
an input passes when the target returns or raises a :class:`pdi.errors.PDIError`
within 1 s of CPU time and 512 MiB of memory. ``test_seed`` replays every
file of ``tests/data/fuzz/<target>/`` (the crashers found so far among them);
``test_fuzz`` runs ``PDI_FUZZ_EXAMPLES`` hypothesis inputs per target (mutated
seeds, random bytes, the target's own generator), or ``PDI_FUZZ_SECONDS`` of
them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_harness import CORPUS, Sandbox, fuzz, seed_files, targets

TARGETS = targets()
SEEDS = [(name, path) for name in TARGETS for path in seed_files(name)]

pytestmark = pytest.mark.fuzz


@pytest.mark.parametrize(("name", "path"), SEEDS, ids=[f"{n}/{p.name}" for n, p in SEEDS])
def test_seed(sandbox: Sandbox, name: str, path: Path) -> None:
    sandbox.check(name, path.read_bytes())


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz(sandbox: Sandbox, name: str) -> None:
    fuzz(sandbox, TARGETS[name])


def test_every_target_has_seeds_and_every_seed_folder_a_target() -> None:
    assert all(seed_files(name) for name in TARGETS), [n for n in TARGETS if not seed_files(n)]
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert folders == set(TARGETS)
