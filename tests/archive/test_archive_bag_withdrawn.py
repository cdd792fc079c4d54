"""A bag import gives no version withdrawn in the receiving archive a format, and no document withdrawn whole there
a version (both stores, the command line).

docs/reference/backup.md (importing a bag) and the refusals of ``pdi version --add-format`` (tests/archive/test_archive_withdrawn_format.py):
a withdrawal covers every format of the version, one added after it too, and a whole document's covers every
version. A bag exported from another archive that held the same document, where the version (or the document)
was still in service and gained a format (or a version) meanwhile, must not bring it onto the tombstone here: the
import is refused whole (all or nothing, as a bag import is), :class:`~pdi.errors.WithdrawnError`, exit 11,
naming the format, the version, the withdrawal (when, why) and that nothing was imported; the archive is left as
it was. A bag that brings nothing new to the withdrawn version (the formats it holds already, its own tombstone
again) imports as before.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import Clock, snapshot
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import ImmutabilityError, WithdrawnError

S = "oma.eop.gov.us"
NOW = datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC)
WITHDRAWN_AT = "2026-11-22T16:30:00.000000Z"  # the target's clock, two hours on, as the catalog writes a moment
REASON = "filed under the wrong case"
DOC = f"urn:pdi://{S}/2026/11/22/1"


def _moved(root: Path, target: Archive, clock: Clock, *, whole: bool, purge: bool = False) -> Path:
    """A source archive's document brought into ``target`` by a first bag, then withdrawn there (``whole``: the
    document); meanwhile the source adds a format to version 1 (and, ``whole``, a version 2): its second bag."""
    with Archive.init(root / "source", clock=Clock(NOW)) as source:
        source.add_series(S)
        first = str(source.add(S, b"first\n", format="text"))
        source.export_bag(root / "bag0")
        assert target.import_bag(root / "bag0") == 1
        clock.now = NOW + datetime.timedelta(hours=2)
        target.withdraw(DOC if whole else first, REASON, purge=purge)
        source.add_format(first, b"first\n", format="utf-8")
        if whole:
            source.add_version(DOC, [Content(b"second\n", "text")])
        source.export_bag(root / "bag1")
    return root / "bag1"


@pytest.mark.parametrize("purge", [False, True], ids=["withdrawn", "purged"])
def test_a_bag_gives_no_format_to_a_version_withdrawn_here(location: str, tmp_path: Path, purge: bool) -> None:
    clock = Clock(NOW + datetime.timedelta(hours=1))
    with Archive.init(location, clock=clock) as target:
        bag = _moved(tmp_path, target, clock, whole=False, purge=purge)
        before = snapshot(target)
        with pytest.raises(WithdrawnError) as refused:
            target.import_bag(bag)
        message = str(refused.value)
        assert f"format utf-8 of version 1 of {DOC}" in message, message
        assert f"{DOC}.text.1 was withdrawn at {WITHDRAWN_AT}" in message, message
        assert REASON in message and "nothing was imported" in message, message
        assert ("its octets purged" in message) is purge, message
        assert (refused.value.reason, refused.value.at, refused.value.purged) == (REASON, WITHDRAWN_AT, purge)
        assert snapshot(target) == before
        with pytest.raises(WithdrawnError):
            target.get(f"{DOC}.text.1")


def test_a_bag_gives_no_version_nor_format_to_a_document_withdrawn_whole_here(location: str, tmp_path: Path) -> None:
    clock = Clock(NOW + datetime.timedelta(hours=1))
    with Archive.init(location, clock=clock) as target:
        bag = _moved(tmp_path, target, clock, whole=True)
        before = snapshot(target)
        with pytest.raises(WithdrawnError) as refused:
            target.import_bag(bag)
        message = str(refused.value)
        # the first record the bag lists that is new here: version 1's new format (names in their order)
        assert message.startswith(f"format utf-8 of version 1 of {DOC}, in the import: "), message
        assert f"{DOC} was withdrawn whole at {WITHDRAWN_AT}" in message, message
        assert REASON in message and "nothing was imported" in message, message
        assert snapshot(target) == before


def test_a_withdrawal_made_while_the_bag_is_staged_refuses_it(
        location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the import's first pass finds version 1 in service; another writer withdraws it while the bag's objects are
    # staged: the write transaction's own check refuses the import, and what was staged for it is gone
    clock = Clock(NOW + datetime.timedelta(hours=1))
    with Archive.init(location, clock=clock) as target:
        with Archive.init(tmp_path / "source", clock=Clock(NOW)) as source:
            source.add_series(S)
            first = str(source.add(S, b"first\n", format="text"))
            source.export_bag(tmp_path / "bag0")
            assert target.import_bag(tmp_path / "bag0") == 1
            source.add_format(first, "first\n".encode("utf-16"), format="utf-16")
            source.export_bag(tmp_path / "bag1")
        clock.now = NOW + datetime.timedelta(hours=2)
        store = target.store
        real = store._stage_import

        def staged_then_withdrawn(blobs: Any) -> Any:
            staged = real(blobs)
            with Archive.open(location, clock=clock) as other:
                other.withdraw(first, REASON)
            return staged

        monkeypatch.setattr(store, "_stage_import", staged_then_withdrawn)
        blobs = sorted(store.blob_names())
        with pytest.raises(WithdrawnError, match=f"withdrawn at {WITHDRAWN_AT}.*nothing was imported"):
            target.import_bag(tmp_path / "bag1")
        monkeypatch.undo()
        assert [r.format for r in target.document(DOC).records] == ["text"]
        assert sorted(store.blob_names()) == blobs


def test_a_bag_bringing_nothing_new_to_a_withdrawn_version_imports(location: str, tmp_path: Path) -> None:
    # the first bag again (the version's own format, held already): nothing to refuse, nothing new
    clock = Clock(NOW + datetime.timedelta(hours=1))
    with Archive.init(location, clock=clock) as target:
        _moved(tmp_path, target, clock, whole=False)
        before = snapshot(target)
        assert target.import_bag(tmp_path / "bag0") == 0
        assert snapshot(target) == before


def test_a_bag_bringing_a_withdrawn_version_with_its_tombstone_imports_whole(location: str, tmp_path: Path) -> None:
    # a version withdrawn in the bag, not yet held here: it moves with every format it had and its tombstone
    with Archive.init(tmp_path / "source", clock=Clock(NOW)) as source:
        source.add_series(S)
        first = str(source.add(S, b"first\n", format="text"))
        source.add_format(first, b"first\n", format="utf-8")
        source.withdraw(first, REASON)
        source.export_bag(tmp_path / "bag")
    with Archive.init(location, clock=Clock(NOW + datetime.timedelta(hours=1))) as target:
        assert target.import_bag(tmp_path / "bag") == 2
        with pytest.raises(WithdrawnError, match=REASON):
            target.get(f"{DOC}.utf-8.1")


def test_pdi_import_of_a_format_for_a_version_withdrawn_here_exits_11(tmp_path: Path) -> None:
    clock = Clock(NOW + datetime.timedelta(hours=1))
    archive_dir = str(tmp_path / "target")
    with Archive.init(archive_dir, clock=clock) as target:
        bag = _moved(tmp_path, target, clock, whole=False)
    done = CliRunner().invoke(cli, ["import", str(bag), "--archive", archive_dir])
    assert done.exit_code == 11 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert f"format utf-8 of version 1 of {DOC}" in done.stderr, done.stderr
    assert f"withdrawn at {WITHDRAWN_AT}" in done.stderr and "nothing was imported" in done.stderr, done.stderr
    listed = CliRunner().invoke(cli, ["ls", DOC, "--archive", archive_dir])
    assert listed.exit_code == 0 and ".utf-8." not in listed.stdout, listed.stdout


def _same_octets_again(root: Path, target: Archive, clock: Clock) -> Path:
    """A document brought into ``target`` by a first bag, its version 1 then withdrawn there; meanwhile the
    source deposits the same octets again as version 2 (forced, as it may): its second bag."""
    with Archive.init(root / "source", clock=Clock(NOW)) as source:
        source.add_series(S)
        first = str(source.add(S, b"first\n", format="text"))
        source.export_bag(root / "bag0")
        assert target.import_bag(root / "bag0") == 1
        clock.now = NOW + datetime.timedelta(hours=2)
        target.withdraw(first, REASON)
        assert str(source.add_version(DOC, [Content(b"first\n", "text")], force=True)[0]) == f"{DOC}.text.2"
        source.export_bag(root / "bag1")
    return root / "bag1"


def test_a_bag_version_holding_the_octets_of_a_version_withdrawn_here_is_refused_as_a_deposit_is(
        location: str, tmp_path: Path) -> None:
    """A version new here whose octets a withdrawn version of its document holds would serve them again under
    another name: refused as ``pdi version`` refuses them (forceable, exit 5), the archive left as it was;
    forced, it is imported."""
    clock = Clock(NOW + datetime.timedelta(hours=1))
    with Archive.init(location, clock=clock) as target:
        bag = _same_octets_again(tmp_path, target, clock)
        before = snapshot(target)
        with pytest.raises(ImmutabilityError) as deposited:  # the rule of a deposit of them, here
            target.add_version(DOC, [Content(b"first\n", "text")])
        with pytest.raises(ImmutabilityError) as refused:
            target.import_bag(bag)
        message = str(refused.value)
        assert message == (f"format text of version 2 of {DOC}, in the import: {DOC}.text.1 holds these"
                           f" octets but was withdrawn at {WITHDRAWN_AT}, reason: {REASON}; it answers with its"
                           " tombstone, not these octets, so nothing was imported"), message
        assert str(deposited.value).replace("deposited", "imported") in message
        assert refused.value.forceable and deposited.value.forceable
        assert snapshot(target) == before
        assert target.import_bag(bag, force=True) == 1
        assert target.get(f"{DOC}.text.2").data == b"first\n"
        with pytest.raises(WithdrawnError):
            target.get(f"{DOC}.text.1")


def test_pdi_import_of_a_version_holding_a_withdrawn_versions_octets_exits_5_and_force_imports_it(
        tmp_path: Path) -> None:
    clock = Clock(NOW + datetime.timedelta(hours=1))
    archive_dir = str(tmp_path / "target")
    with Archive.init(archive_dir, clock=clock) as target:
        bag = _same_octets_again(tmp_path, target, clock)
    done = CliRunner().invoke(cli, ["import", str(bag), "--archive", archive_dir])
    assert done.exit_code == 5 and done.stdout == "", (done.exit_code, done.stdout, done.stderr)
    assert done.stderr.startswith(f"pdi: immutability conflict: format text of version 2 of {DOC},"
                                  " in the import: "), done.stderr
    assert done.stderr.rstrip().endswith("so nothing was imported (pdi import --force imports them under the bag's"
                                         " names)"), done.stderr
    forced = CliRunner().invoke(cli, ["import", str(bag), "--force", "--archive", archive_dir])
    assert forced.exit_code == 0, (forced.output, forced.exception)
    assert "imported 1 new representation" in forced.stdout
