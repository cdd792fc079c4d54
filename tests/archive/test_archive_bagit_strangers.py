"""Bags strangers made by hand or with other tools, read as RFC 8493 says and as bagit-python (the Library of
Congress's reference implementation, the judge here) reads them: what it calls valid imports, what it refuses is
refused with an error naming the file and what is wrong, never a traceback, and never by reading outside the bag.

Each bag starts as one bagit-python made (``bagit.make_bag``); a change a test makes to a tag file is followed by
a tag manifest made again here with hashlib, so that only the change is judged.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import bagit
import pytest

from pdi.archive import Archive
from pdi.errors import IntegrityError, ParseError, UnsupportedError

S = "library.example.us"


def _bag(folder: Path, files: dict[str, bytes] | None = None) -> Path:
    folder.mkdir()
    for name, data in (files or {"a.txt": b"hello\n"}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    bagit.make_bag(str(folder), {"Source-Organization": "Example Library"}, checksums=["sha256"])
    return folder


def _tags_again(bag: Path, extra: str = "") -> None:
    """tagmanifest-sha256.txt made again for the tag files as they are now (and ``extra`` lines after)."""
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(bag.iterdir())
             if p.is_file() and not p.is_symlink() and not p.name.startswith("tagmanifest-")]
    (bag / "tagmanifest-sha256.txt").write_text("".join(lines) + extra)


def _bagit_python_says_valid(bag: Path) -> bool:
    try:
        bagit.Bag(str(bag)).validate()
    except Exception:  # bagit-python's refusals are of several classes (BagError, and others it does not catch)
        return False
    return True


def _snapshot(archive: Archive) -> object:
    store = archive.store
    return list(store.iter_representations()), store.assertions(), sorted(store.blob_names())


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    return opened


@pytest.mark.parametrize("encoding", ["rot13", "zlib_codec", "base64", "hex", "UTF-16", "utf-32-le"])
def test_a_tag_file_encoding_that_does_not_spell_ascii_as_ascii_is_refused(archive: Archive, tmp_path: Path,
                                                                           encoding: str) -> None:
    """Found by an attack (2026-11-27): ``Tag-File-Character-Encoding: rot13`` (a codec Python knows, of text to
    text) was a LookupError traceback. RFC 8493 §2.1.1's tag files are lines of ``Label: value`` ended by CR or
    LF: an encoding that does not spell those as ASCII does cannot be read a line at a time."""
    bag = _bag(tmp_path / "bag")
    (bag / "bagit.txt").write_text(f"BagIt-Version: 1.0\nTag-File-Character-Encoding: {encoding}\n")
    _tags_again(bag)
    assert not _bagit_python_says_valid(bag)
    before = _snapshot(archive)
    with pytest.raises(UnsupportedError, match=f"bagit.txt: Tag-File-Character-Encoding '{encoding}' is not"):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "cp1252", "UTF-8"])
def test_a_bag_whose_tag_files_are_in_an_ascii_encoding_imports(archive: Archive, tmp_path: Path,
                                                                 encoding: str) -> None:
    """A bag whose bagit.txt names an encoding that keeps ASCII (RFC 8493 §2.1.1: any, UTF-8 recommended) is
    read in it: its bag-info.txt's labels become the statements they say (bagit-python cannot read back one it
    wrote in ISO-8859-1, so the bag is made so by hand here)."""
    bag = _bag(tmp_path / "bag")
    (bag / "bagit.txt").write_text(f"BagIt-Version: 1.0\nTag-File-Character-Encoding: {encoding}\n")
    with (bag / "bag-info.txt").open("ab") as info:
        info.write("Contact-Name: Ren\u00e9e\n".encode(encoding))
    _tags_again(bag)
    assert archive.import_bag(bag, series=S) == 1
    assert ("bag-info:Contact-Name", "Ren\u00e9e") in {(a.key, a.value) for a in archive.store.assertions()}


def test_a_tag_manifest_naming_a_file_through_a_linked_folder_reads_nothing_outside_the_bag(
        archive: Archive, tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a tag manifest line ``<sha256> outside/secret.txt``, ``outside`` a link to a
    folder out of the bag, had that file read and hashed (only a link at the file's own name was looked for), and
    the bag imported: whoever sent it learnt whether a file they guessed was there. bagit-python refuses such a
    path as unsafe."""
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"not the bag's\n")
    bag = _bag(tmp_path / "bag")
    os.symlink(secret.parent, bag / "outside")
    _tags_again(bag, f"{hashlib.sha256(secret.read_bytes()).hexdigest()}  outside/secret.txt\n")
    assert not _bagit_python_says_valid(bag)
    before = _snapshot(archive)
    with pytest.raises(IntegrityError, match=r"tag file outside/secret\.txt in .* is not a file of the bag"):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before
    os.mkfifo(secret.parent / "pipe")
    _tags_again(bag, f"{'0' * 64}  outside/pipe\n")
    with pytest.raises(IntegrityError, match=r"tag file outside/pipe in .* is not a file of the bag"):
        archive.import_bag(bag, series=S)


@pytest.mark.parametrize("tag", ["manifest-sha256.txt", "bag-info.txt", "tagmanifest-sha256.txt"])
def test_a_tag_file_beginning_with_a_byte_order_mark_is_read_past_it(archive: Archive, tmp_path: Path,
                                                                     tag: str) -> None:
    """A manifest written by Windows PowerShell 5 (``Out-File -Encoding utf8``) or Notepad begins with the UTF-8
    byte-order mark: bagit-python reads past it (with a warning), pdi said "manifest-sha256.txt line 1 is not
    '<sha256> <path>'" of a line that looks right, and took bag-info.txt's first label as ``\\ufeffSource-...``."""
    bag = _bag(tmp_path / "bag")
    (bag / tag).write_bytes(b"\xef\xbb\xbf" + (bag / tag).read_bytes())
    if tag != "tagmanifest-sha256.txt":
        _tags_again(bag)
    assert _bagit_python_says_valid(bag)
    assert archive.import_bag(bag, series=S) == 1
    assert ("bag-info:Source-Organization", "Example Library") in {
        (a.key, a.value) for a in archive.store.assertions()}


def test_a_bag_declaration_beginning_with_a_byte_order_mark_is_refused_as_one(archive: Archive,
                                                                               tmp_path: Path) -> None:
    """RFC 8493 §2.1.1: bagit.txt MUST NOT begin with a byte-order mark (bagit-python refuses it so). pdi said it
    "does not declare a BagIt-Version", of a file whose first line does."""
    bag = _bag(tmp_path / "bag")
    (bag / "bagit.txt").write_bytes(b"\xef\xbb\xbf" + (bag / "bagit.txt").read_bytes())
    _tags_again(bag)
    assert not _bagit_python_says_valid(bag)
    with pytest.raises(ParseError, match=r"bagit\.txt begins with a byte-order mark, which RFC 8493 §2\.1\.1"):
        archive.import_bag(bag, series=S)


@pytest.mark.parametrize("version", ["2.0", "10.1", "0.5"])
def test_a_bag_of_a_bagit_version_no_spec_describes_is_refused(archive: Archive, tmp_path: Path,
                                                                version: str) -> None:
    """RFC 8493 is BagIt 1.0; its drafts were 0.93 to 0.97. A bag declaring 2.0 was read as a 1.0 one (as if a
    later version could change nothing): bagit-python refuses a version before 0.93 or from 2.0 on as
    unsupported, and so does pdi, naming it."""
    bag = _bag(tmp_path / "bag")
    (bag / "bagit.txt").write_text(f"BagIt-Version: {version}\nTag-File-Character-Encoding: UTF-8\n")
    _tags_again(bag)
    assert not _bagit_python_says_valid(bag)
    before = _snapshot(archive)
    with pytest.raises(UnsupportedError, match=f"bagit.txt: BagIt-Version {version} is not one this pdi reads"):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before


@pytest.mark.parametrize("version", ["0.97", "1.0", "1.1"])
def test_a_bag_of_a_version_bagit_python_reads_imports(archive: Archive, tmp_path: Path, version: str) -> None:
    bag = _bag(tmp_path / "bag")
    (bag / "bagit.txt").write_text(f"BagIt-Version: {version}\nTag-File-Character-Encoding: UTF-8\n")
    _tags_again(bag)
    assert _bagit_python_says_valid(bag)
    assert archive.import_bag(bag, series=S) == 1


@pytest.mark.parametrize("where", ["data", "tags"])
def test_a_bag_of_folders_nested_past_pythons_recursion_limit_is_read(archive: Archive, tmp_path: Path,
                                                                       where: str) -> None:
    """Found by an attack (2026-11-27): 1,200 folders one in another under ``data/`` (or beside it, where tag files
    may be) were a RecursionError traceback: Python 3.11's ``os.walk`` recurses a level a call. The folders hold
    no file, and RFC 8493 §2 asks nothing of empty folders, so the bag's one payload file imports (bagit-python,
    on Python 3.11's ``os.walk`` too, cannot judge it: it meets the same RecursionError)."""
    bag = _bag(tmp_path / "bag")
    top = bag / ("data" if where == "data" else ".")
    folder = os.open(top, os.O_RDONLY)
    try:
        for _ in range(1200):  # made a level at a time from the one above: no path is ever spelled whole
            os.mkdir("d", dir_fd=folder)
            deeper = os.open("d", os.O_RDONLY, dir_fd=folder)
            os.close(folder)
            folder = deeper
    finally:
        os.close(folder)
    try:
        assert archive.import_bag(bag, series=S) == 1
    finally:  # taken away a level at a time: pytest's own removal of old temporary folders recurses too
        while (top / "d" / "d").exists():
            (top / "d" / "d").rename(top / "up")
            (top / "d").rmdir()
            (top / "up").rename(top / "d")
        (top / "d").rmdir()


@pytest.mark.parametrize("value", ["a\x00b", "\x00"])
def test_a_bag_info_value_no_statement_keeps_is_refused_before_anything_is_deposited(
        archive: Archive, tmp_path: Path, value: str) -> None:
    """A NUL in a bag-info.txt value (bagit-python validates the bag) cannot be a statement: the payload was
    deposited, then the statement refused, and the archive kept half an import. Now refused before, naming it."""
    bag = _bag(tmp_path / "bag")
    with (bag / "bag-info.txt").open("a", encoding="utf-8") as info:
        info.write(f"External-Description: {value}\n")
    _tags_again(bag)
    assert _bagit_python_says_valid(bag)
    before = _snapshot(archive)
    with pytest.raises(ParseError, match=r"bag-info\.txt: External-Description holds U\+0000"):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before
