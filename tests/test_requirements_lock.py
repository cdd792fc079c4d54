"""The lock files scripts/bootstrap installs from (``requirements/*.lock``) agree with ``pyproject.toml``.

``scripts/lock`` writes them; this notices a dependency added to or moved in
``pyproject.toml`` without running it again (bootstrap would then install a
version the project no longer allows, or fail on a missing one under
``--require-hashes``). Requirements are read with ``packaging``, the library
pip itself reads them with, markers evaluated for the lock's target (CPython
3.11 on Linux).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
#: The environment scripts/lock resolves for (``--python-version 3.11 --python-platform x86_64-unknown-linux-gnu``).
TARGET = {"python_version": "3.11", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)")


def locked(name: str) -> dict[str, tuple[str, list[str]]]:
    """Each package of ``requirements/NAME.lock``: its pinned version and the sha256 hashes given for it."""
    entries: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in (ROOT / "requirements" / f"{name}.lock").read_text("utf-8").splitlines():
        pinned = PIN.match(line)
        if pinned:
            current = canonicalize_name(pinned.group(1))
            entries[current] = (pinned.group(2), [])
        for digest in re.findall(r"--hash=sha256:([0-9a-f]{64})", line):
            assert current is not None, f"a hash before any pin in {name}.lock: {line}"
            entries[current][1].append(digest)
    return entries


def wanted(extras: list[str]) -> list[Requirement]:
    """pdi's requirements with ``extras``, and those of the extras they name (``pdi[postgres,s3]`` in dev)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    texts = list(project["project"]["dependencies"]) + list(project["build-system"]["requires"])
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop()
        if extra not in seen:
            seen.add(extra)
            for text in project["project"]["optional-dependencies"][extra]:
                if canonicalize_name(Requirement(text).name) == "pdi":
                    todo += sorted(Requirement(text).extras)
                else:
                    texts.append(text)
    requirements = [Requirement(text) for text in texts]
    return [r for r in requirements if r.marker is None or r.marker.evaluate(TARGET)]


# the run lock holds the server extras too: bootstrap's .venv runs every store (scripts/lock)
@pytest.mark.parametrize(("lock", "extras"), [("run", ["postgres", "s3"]), ("dev", ["dev"])])
def test_every_dependency_of_pyproject_is_locked_at_a_version_it_allows(lock: str, extras: list[str]) -> None:
    pins = locked(lock)
    for requirement in wanted(extras):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in requirements/{lock}.lock: run scripts/lock"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"requirements/{lock}.lock pins {name}=={version}, which pyproject.toml's {requirement} refuses:"
            " run scripts/lock"
        )


@pytest.mark.parametrize("lock", ["run", "dev"])
def test_every_locked_package_has_hashes(lock: str) -> None:
    pins = locked(lock)
    assert pins
    assert [name for name, (_, hashes) in pins.items() if not hashes] == []


def test_the_run_lock_is_the_dev_lock_without_the_extras() -> None:
    dev = locked("dev")
    assert {name: version for name, (version, _) in locked("run").items() if dev.get(name, ("",))[0] != version} == {}
