"""An import brings any number of blobs, and a remover running beside it can make it fail but never lose a name's bytes.

Issue 13: the embedded store held every blob of an import open (a file
descriptor and an ``flock`` each) until the catalog transaction, so a bag of
more blobs than the process may open files failed with "Too many open
files". The import now holds none open; inside its catalog transaction it
checks that each blob is still at its name.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from archive_helpers import snapshot

from pdi.archive import Archive
from pdi.errors import StoreError

S = "records.example.us"
BLOBS = 600
OPEN_FILES = 256


def _bag(tmp_path: Path, count: int) -> tuple[Path, dict[str, str]]:
    """A bag of ``count`` documents with distinct bytes; their names and the SHA-256 of each."""
    source = tmp_path / "source"
    expected: dict[str, str] = {}
    with Archive.init(source) as archive:
        archive.add_series(S)
        for i in range(count):
            data = f"document {i}\n".encode()
            name = archive.add(S, data, format="text")
            expected[str(name)] = hashlib.sha256(data).hexdigest()
        bag = tmp_path / "bag"
        assert archive.export_bag(bag) == count
    return bag, expected


def test_an_import_of_more_blobs_than_the_process_may_open_files_succeeds(tmp_path: Path) -> None:
    bag, expected = _bag(tmp_path, BLOBS)
    target = tmp_path / "target"
    script = textwrap.dedent(f"""
        import json, resource, sys
        resource.setrlimit(resource.RLIMIT_NOFILE, ({OPEN_FILES}, {OPEN_FILES}))
        from pdi.archive import Archive
        with Archive.init({str(target)!r}) as archive:
            print(json.dumps(archive.import_bag({str(bag)!r})))
    """)
    src = Path(__file__).resolve().parents[2] / "src"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          # the test's own environment (its clock too, when a run fakes one), this tree first
                          env={**os.environ, "PYTHONPATH": str(src)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == BLOBS
    with Archive.open(target) as archive:
        report = archive.verify()
        assert report.ok and report.checked_blobs == BLOBS
        for name, sha in expected.items():
            resolved = archive.get(name)
            assert hashlib.sha256(resolved.data).hexdigest() == sha


def test_a_remover_taking_an_imports_blobs_fails_the_import_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bag, expected = _bag(tmp_path, 5)
    target = tmp_path / "target"
    with Archive.init(target) as archive:
        archive.add_series("other.example.us")
        archive.add("other.example.us", b"already here\n", format="text")
        before = snapshot(archive)
        store = archive.store
        real = store._import_staged  # type: ignore[attr-defined]

        def remover_first(*args: object, **kwargs: object) -> int:
            # The fault a real race produces only by chance: between placing the
            # import's blobs and taking the catalog's write lock, a remover with
            # no grace period runs and takes every blob no name holds yet.
            with Archive.open(target) as remover:
                assert len(remover.remove_unreferenced(older_than=0)) == 5
            return int(real(*args, **kwargs))

        monkeypatch.setattr(store, "_import_staged", remover_first)
        with pytest.raises(StoreError, match=r"of the import was removed while the import ran .*; nothing was imported"):
            archive.import_bag(bag)
        assert snapshot(archive) == before
        monkeypatch.undo()
        # Run again without the remover, it imports every name with its bytes.
        assert archive.import_bag(bag) == 5
        assert archive.verify().ok
        for name, sha in expected.items():
            assert hashlib.sha256(archive.get(name).data).hexdigest() == sha
