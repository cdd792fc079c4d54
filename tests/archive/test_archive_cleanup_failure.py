"""A write's clean-up that fails too: the write's failure is said, and the clean-up's is a note of it.

:func:`pdi.archive.blobs.seam.cleaning_up_after_failure` keeps the failure of the write (a commit of unknown
outcome, a refusal) as the error raised, and the failure of the clean-up after it (the discard of a staged blob)
as a note on that error, not lost; outside an ``except`` it has no write's failure to keep, and the clean-up's
own failure is raised.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pdi.archive import Archive
from pdi.archive.blobs import files
from pdi.archive.blobs.seam import cleaning_up_after_failure, stage_each
from pdi.errors import IntegrityError, StoreError

S = "courts.gov.us"


def test_the_clean_ups_failure_is_a_note_of_the_writes() -> None:
    with pytest.raises(ValueError, match="the write failed") as raised:
        try:
            raise ValueError("the write failed")
        except ValueError:
            with cleaning_up_after_failure():
                raise OSError("the discard failed")  # noqa: B904 - a clean-up failing as it may
            raise
    assert raised.value.__notes__ == ["cleaning up after it failed also failed: the discard failed"]


def test_a_clean_up_that_fails_outside_an_except_is_raised() -> None:
    # no write's failure to keep: the clean-up's own is what is said, never nothing
    with pytest.raises(OSError, match="the discard failed"), cleaning_up_after_failure():
        raise OSError("the discard failed")


def test_a_clean_up_that_succeeds_leaves_the_writes_failure_as_it_was() -> None:
    with pytest.raises(ValueError, match="the write failed") as raised:
        try:
            raise ValueError("the write failed")
        except ValueError:
            with cleaning_up_after_failure():
                pass
            raise
    assert not hasattr(raised.value, "__notes__")


class _Staged:
    """A staged blob whose discard fails."""

    def __init__(self, sha256: str) -> None:
        self.info = type("Info", (), {"sha256": sha256})()

    def discard(self) -> None:
        raise OSError("the staged object could not be removed")


def test_a_staged_import_that_fails_says_its_own_failure_and_notes_the_discards() -> None:
    # the second blob is not what its record names: an IntegrityError; the discard of the first then fails
    sources = [("a" * 64, b"one"), ("b" * 64, b"two")]
    found = iter(["a" * 64, "c" * 64])
    with pytest.raises(IntegrityError, match="in the import has the SHA-256 c") as raised:
        stage_each(None, sources, stage=lambda _octets: _Staged(next(found)))  # type: ignore[arg-type]
    assert raised.value.__notes__ == [
        "cleaning up after it failed also failed: the staged object could not be removed"]


def test_a_deposit_whose_catalog_write_and_clean_up_fail_says_both(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        name = archive.add(S, b"first\n", format="text")

        def failing_write(*_: object, **__: object) -> None:
            raise StoreError("the catalog's transaction failed")

        def failing_discard(_: object) -> None:
            raise OSError("the staged file could not be removed")

        monkeypatch.setattr(archive.store, "add_formats", failing_write)
        monkeypatch.setattr(files._FilePin, "discard", failing_discard)
        with pytest.raises(StoreError, match="the catalog's transaction failed") as raised:
            archive.add_format(name, b"<p>first</p>\n" * 20_000, format="html")  # a blob file: staged, pinned
        assert raised.value.__notes__ == [
            "cleaning up after it failed also failed: the staged file could not be removed"]
