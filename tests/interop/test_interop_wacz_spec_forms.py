"""What WACZ 1.1.1 allows in a package that py-wacz's validator refuses, and what it forbids that pdi read.

WACZ 1.1.1 (https://specs.webrecorder.net/wacz/1.1.1/) defers to the Frictionless Data Package specification for
``datapackage.json`` and so to JSON (RFC 8259). Each form below is judged by the text of those specifications; py-wacz's
``wacz validate`` (its ``main``'s status: ``python -m wacz`` exits 0 whatever it judged) is asked too, and where it is
stricter than the text the difference is said (docs/reference/web-archives.md, "What an import checks"):

- A UTF-8 byte order mark before ``datapackage.json``: RFC 8259 §8.1 forbids a writer to add one, and lets a reader
  ignore it ("MAY ignore the presence of a byte order mark rather than treating it as an error"); pdi's reader of
  others' JSON ignores it everywhere. The package's digest vouches for its octets as they are, BOM and all.
  py-wacz refuses it (Frictionless reads the file as text and fails on the BOM). pdi reads it.
- A ``hash`` whose hexadecimal digits are capitals: the Frictionless Data Resource's ``hash`` names its algorithm in
  lower case ("prefixing the hash's value with the algorithm name in lower-case"), and its JSON Schema profile's
  pattern for it is ``^([^:]+:[a-fA-F0-9]+|[a-fA-F0-9]{32}|)$``: capitals allowed. The digits stand for the same
  digest. py-wacz (and Frictionless's own check) compare the strings, and refuse it. pdi reads it, and still refuses
  a hash of capitals that is another file's.
- A WARC in a folder within ``archive/``: WACZ 1.1.1, "Other files and directories": custom directories "MUST NOT be
  added to the existing WACZ directories, archive, indexes and pages". pdi imported ``archive/sub/site.warc.gz`` as
  a WARC of the package; py-wacz refuses the package. pdi refuses it too, naming the entry.
- A file in ``archive/`` not named ``.warc`` or ``.warc.gz``: the folder "MUST contain one or more files in the WARC
  format", whose names "SHOULD use the .warc file extension", and no other file may be added there. pdi left such a
  file unread (a WARC's captures missing, a stranger's file unchecked); py-wacz judges the package valid. pdi reads
  it as a WARC: its captures are imported, and one that is no WARC is refused, naming it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from warc_builder import DATA, WarcBuilder

from pdi.archive import Archive
from pdi.errors import IntegrityError, ParseError
from pdi.interop.warc import import_warc

S = "web.example.us"
SITE = DATA / "site.wacz"
BOM = b"\xef\xbb\xbf"


def snapshot(archive: Archive) -> object:
    store = archive.store
    return (store.list_series(), list(store.iter_representations()), store.assertions(),
            {name: store.read_blob(name) for name in sorted(store.blob_names())}, store.schema_version())


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    return opened


def _validates(wacz: Path) -> bool:
    return subprocess.run([sys.executable, "-c", "import sys; from wacz.main import main; sys.exit(main(sys.argv[1:]))",
                           "validate", "-f", str(wacz)], capture_output=True, timeout=300).returncode == 0


def _made(target: Path, *, bom: bool = False, capitals: bool = False, wrong: bool = False, folder: str = "",
          digest_of: bytes | None = None) -> Path:
    """``site.wacz`` made again: its ``datapackage.json`` after a byte order mark (``bom``), its hashes in capitals
    (``capitals``; the WARC's another file's too, ``wrong``), its WARC in the folder ``folder`` within archive/;
    ``datapackage-digest.json`` giving the SHA-256 of the package's octets as written, or of ``digest_of``."""
    warc = "archive/site.warc.gz"
    with zipfile.ZipFile(SITE) as zin, zipfile.ZipFile(target, "w") as zout:
        package = json.loads(zin.read("datapackage.json"))
        for resource in package["resources"]:
            if resource["path"] == warc:
                resource["path"] = f"archive/{folder}site.warc.gz"
                if wrong:
                    resource["hash"] = "sha256:" + hashlib.sha256(b"another file").hexdigest()
            if capitals:
                resource["hash"] = "sha256:" + resource["hash"].removeprefix("sha256:").upper()
        written = (BOM if bom else b"") + json.dumps(package, indent=2).encode()
        vouched = written if digest_of is None else digest_of
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "datapackage.json":
                data = written
            elif info.filename == "datapackage-digest.json":
                data = json.dumps({"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(vouched).hexdigest()}).encode()
            elif info.filename == warc:
                info.filename = f"archive/{folder}site.warc.gz"
            zout.writestr(info, data, compress_type=info.compress_type)
    return target


def test_a_byte_order_mark_before_datapackage_json_is_let_be(archive: Archive, tmp_path: Path) -> None:
    wacz = _made(tmp_path / "bom.wacz", bom=True)
    assert zipfile.ZipFile(wacz).read("datapackage.json").startswith(BOM)
    assert not _validates(wacz)  # py-wacz: stricter than RFC 8259 §8.1
    done, _ = import_warc(archive, wacz, S)
    assert any(d.page for d in done)


def test_the_digest_vouches_for_the_byte_order_mark_too(archive: Archive, tmp_path: Path) -> None:
    """The digest is of the octets: one made without the BOM is not the package's, which is refused as changed."""
    unmarked = json.dumps(json.loads(zipfile.ZipFile(SITE).read("datapackage.json")), indent=2).encode()
    wacz = _made(tmp_path / "bom.wacz", bom=True, digest_of=unmarked)
    before = snapshot(archive)
    with pytest.raises(IntegrityError, match=r"datapackage\.json was changed: its SHA-256 is sha256:"
                       + hashlib.sha256(BOM + unmarked).hexdigest()):
        import_warc(archive, wacz, S)
    assert snapshot(archive) == before


def test_hashes_in_capitals_are_the_same_hashes(archive: Archive, tmp_path: Path) -> None:
    wacz = _made(tmp_path / "capitals.wacz", capitals=True)
    listed = json.loads(zipfile.ZipFile(wacz).read("datapackage.json"))["resources"]
    assert all(r["hash"][7:].isupper() and r["hash"].startswith("sha256:") for r in listed)
    assert not _validates(wacz)  # py-wacz compares the strings: stricter than the Frictionless profile's pattern
    done, _ = import_warc(archive, wacz, S)
    assert any(d.page for d in done)


def test_a_hash_in_capitals_of_another_file_is_refused(archive: Archive, tmp_path: Path) -> None:
    wacz = _made(tmp_path / "capitals.wacz", capitals=True, wrong=True)
    before = snapshot(archive)
    with pytest.raises(IntegrityError, match=r"archive/site\.warc\.gz was changed: its SHA-256 is sha256:[0-9a-f]{64},"
                                             " datapackage.json says sha256:" + hashlib.sha256(b"another file").hexdigest().upper()):
        import_warc(archive, wacz, S)
    assert snapshot(archive) == before


@pytest.mark.parametrize("folder", ["sub/", "a/b/", "sub\\"])
def test_a_warc_in_a_folder_within_archive_is_refused_naming_it(archive: Archive, tmp_path: Path, folder: str) -> None:
    wacz = _made(tmp_path / "folder.wacz", folder=folder)
    entry = f"archive/{folder}site.warc.gz"
    assert entry in zipfile.ZipFile(wacz).namelist()
    if "\\" not in folder:  # (py-wacz, extracting the ZIP, reads a backslash as part of the name on POSIX)
        assert not _validates(wacz)
    before = snapshot(archive)
    with pytest.raises(ParseError) as refused:
        import_warc(archive, wacz, S)
    offset = zipfile.ZipFile(wacz).getinfo(entry).header_offset
    assert str(refused.value) == (
        f"{wacz}: the ZIP entry '{entry}' at offset {offset} is in a folder within archive/: WACZ 1.1.1 keeps its WARC"
        " files in archive/ itself, and no folder may be added there; the package is refused (rule WACZ)")
    assert snapshot(archive) == before


def test_the_folders_own_entries_are_let_be(archive: Archive, tmp_path: Path) -> None:
    """A ZIP made by ``zip -r`` holds an entry for each folder (``archive/``, ``indexes/``: its name ends in ``/``,
    APPNOTE.TXT §4.4.17.1), which is no file, and no folder added: ``datapackage.json`` lists files, and py-wacz's
    ``wacz validate`` judges such a package valid. pdi refused it as ``archive/ is not listed in datapackage.json``;
    it is read."""
    wacz = tmp_path / "folders.wacz"
    with zipfile.ZipFile(_made(tmp_path / "as-is.wacz")) as zin, zipfile.ZipFile(wacz, "w") as zout:
        for folder in ("archive/", "indexes/"):
            zout.writestr(zipfile.ZipInfo(folder), b"")
        for info in zin.infolist():
            zout.writestr(info, zin.read(info.filename), compress_type=info.compress_type)
    assert [n for n in zipfile.ZipFile(wacz).namelist() if n.endswith("/")] == ["archive/", "indexes/"]
    assert _validates(wacz)
    done, _ = import_warc(archive, wacz, S)
    assert any(d.page for d in done)


def _with_more(target: Path, more: dict[str, bytes]) -> Path:
    """``site.wacz`` with the files ``more`` added in ``archive/`` (stored), each listed with its hash and size."""
    with zipfile.ZipFile(SITE) as zin, zipfile.ZipFile(target, "w") as zout:
        package = json.loads(zin.read("datapackage.json"))
        package["resources"] += [{"name": name.rsplit("/", 1)[-1], "path": name, "bytes": len(data),
                                  "hash": "sha256:" + hashlib.sha256(data).hexdigest()} for name, data in more.items()]
        for info in zin.infolist():
            if info.filename == "datapackage.json":
                zout.writestr(info, json.dumps(package, indent=2), compress_type=info.compress_type)
            elif info.filename != "datapackage-digest.json":
                zout.writestr(info, zin.read(info.filename), compress_type=info.compress_type)
        for name, data in more.items():
            zout.writestr(name, data)
    return target


@pytest.mark.parametrize("name", ["archive/crawl-00001", "archive/crawl.warc.open", "archive/more.arc"])
def test_a_warc_in_archive_named_otherwise_is_read(archive: Archive, tmp_path: Path, name: str) -> None:
    """WACZ 1.1.1: ``archive/`` "MUST contain one or more files in the WARC format"; their names "SHOULD use the
    .warc file extension" (a SHOULD: not a condition), and no other file may be added there. A WARC named otherwise
    was left unread, so its captures were missing from the import, which said nothing of them. It is read as the
    WARC it is: its capture is deposited beside those of the package's other WARC."""
    builder = WarcBuilder(gzip=False)
    builder.response("http://other.example.org/note.txt", b"a note", "text/plain", "2024-05-06T10:00:00Z")
    wacz = _with_more(tmp_path / "named.wacz", {name: builder.out.getvalue()})
    assert _validates(wacz)
    done, _ = import_warc(archive, wacz, S)
    urls = {d.url for d in done}
    assert "http://other.example.org/note.txt" in urls and any(d.page for d in done), urls
    (note,) = [d for d in done if d.url == "http://other.example.org/note.txt"]
    assert archive.get(note.name).data == b"a note"


def test_a_file_in_archive_that_is_no_warc_is_refused_naming_it(archive: Archive, tmp_path: Path) -> None:
    """A file added to ``archive/`` that is no WARC (WACZ 1.1.1 lets no other file be added there) was left unread:
    the package imported as if whole. It is refused, naming it, and nothing is deposited."""
    wacz = _with_more(tmp_path / "notes.wacz", {"archive/notes.txt": b"Dear all,\r\nthe crawl of May.\r\n"})
    before = snapshot(archive)
    with pytest.raises(ParseError, match=r"^notes\.wacz!archive/notes\.txt is not a WARC file: its first line is"
                                         r" 'Dear all,'"):
        import_warc(archive, wacz, S)
    assert snapshot(archive) == before
