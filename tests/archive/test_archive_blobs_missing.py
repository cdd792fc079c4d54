"""An archive whose ``blobs/`` folder is gone is refused, not quietly given an empty one.

An operator who moves ``blobs/`` away (to another disk, by mistake, for a backup) and then runs any command
must be told that the folder is missing: a new empty folder would let ``/readyz`` report ready, answer every
read of a file blob as damaged, and make ``mv blobs.away blobs`` put the old folder inside the new one.
Only a new archive (``pdi init`` where no catalog is) makes the folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pdi.cli import cli

S = "oma.eop.gov.us"


def _archive(tmp_path: Path) -> Path:
    root = tmp_path / "a"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--archive", str(root)]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "--archive", str(root), S]).exit_code == 0
    big = tmp_path / "big.txt"
    big.write_bytes(b"a line of a text large enough to be a file of its own\n" * 2000)
    got = runner.invoke(cli, ["add", "--archive", str(root), str(big), "--series", S])
    assert got.exit_code == 0, got.output
    return root


def test_a_command_on_an_archive_without_its_blob_folder_is_refused_and_makes_none(tmp_path: Path) -> None:
    root = _archive(tmp_path)
    (root / "blobs").rename(tmp_path / "blobs.away")
    for args in (["ls"], ["verify"], ["get", f"urn:pdi://{S}/x"]):
        got = CliRunner().invoke(cli, [*args, "--archive", str(root)])
        assert got.exit_code == 8, (args, got.output)  # a storage error (docs/reference/exit-codes.md)
        assert "blobs" in got.output and "missing" in got.output, got.output
        assert str(root) in got.output
        assert not (root / "blobs").exists()
    (tmp_path / "blobs.away").rename(root / "blobs")
    got = CliRunner().invoke(cli, ["verify", "--archive", str(root)])
    assert got.exit_code == 0, got.output


def test_init_makes_the_blob_folder_of_a_new_archive(tmp_path: Path) -> None:
    root = tmp_path / "new"
    assert CliRunner().invoke(cli, ["init", "--archive", str(root)]).exit_code == 0
    assert (root / "blobs").is_dir() and (root / "tmp").is_dir()


def test_a_missing_staging_folder_is_made_again(tmp_path: Path) -> None:
    """``tmp/`` holds only what is being written: an archive without it loses nothing, and it is made again."""
    root = _archive(tmp_path)
    (root / "tmp").rmdir()
    got = CliRunner().invoke(cli, ["verify", "--archive", str(root)])
    assert got.exit_code == 0, got.output
    assert (root / "tmp").is_dir()


def test_an_archive_keeping_its_blobs_in_s3_opens_without_a_blob_folder(tmp_path: Path, s3_blobs: str) -> None:
    """A SQLite catalog whose blobs are in an S3-compatible store (``pdi init DIR --blobs s3://…``,
    docs/how-to/s3.md) keeps none in ``blobs/``, and ``pdi init`` makes no such folder. It opens, and reads them,
    not refused as if its blobs had been moved away (nor given an empty folder)."""
    from pdi.archive import Archive

    root = tmp_path / "a"
    with Archive.init(root, blobs=s3_blobs) as archive:
        archive.add_series(S)
        name = archive.add(S, b"kept in the bucket\r\n", format="text")
    assert not (root / "blobs").exists()  # nothing of this archive's is kept there
    with Archive.open(root) as archive:
        assert archive.get(name).data == b"kept in the bucket\r\n"
    got = CliRunner().invoke(cli, ["verify", "--archive", str(root)])
    assert got.exit_code == 0, got.output
    assert not (root / "blobs").exists() and not (root / "tmp").exists()


def test_an_init_stopped_after_its_catalog_was_made_can_be_run_again(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``pdi init`` stopped (Ctrl-C, a kill) between making the catalog and the blob store: the folder is made
    before the catalog, so the archive is not refused as one whose blobs were moved away, and init again works."""
    from pdi.archive.blobs import files

    root = tmp_path / "a"
    real = files.FileBlobs.__init__

    def stopped(self: files.FileBlobs, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files.FileBlobs, "__init__", stopped)
    assert CliRunner().invoke(cli, ["init", "--archive", str(root)]).exit_code != 0  # click's Abort
    assert (root / "catalog.sqlite").exists()
    monkeypatch.setattr(files.FileBlobs, "__init__", real)
    got = CliRunner().invoke(cli, ["init", "--archive", str(root)])
    assert got.exit_code == 0, got.output
    assert CliRunner().invoke(cli, ["series", "add", "--archive", str(root), S]).exit_code == 0
