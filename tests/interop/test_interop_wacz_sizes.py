"""A WACZ whose ``datapackage.json`` says another size (``bytes``) of a file than the file has (docs/reference/
web-archives.md, "What an import checks").

WACZ 1.1.1 (§ datapackage.json): ``resources`` lists "file names, paths, sizes and fixity for all files contained
in the WACZ"; a Frictionless Data Resource's ``bytes`` is the file's size in bytes. Only the ``hash`` was checked:
a package stating another size was imported. It is damaged (a file cut short, or another in its place), so
``pdi import`` refuses it (exit 3), naming the file, the size said and the size it holds, and the archive is left
as it was. py-wacz's ``site.wacz`` (tests/data/warc) is copied with its ``datapackage.json`` edited, every other
member as it was, and its unsigned ``datapackage-digest.json`` made again for the edited package (as a tool that
edits a WACZ would), or left out. The sizes expected are read from the ZIP by :mod:`zipfile`, not from pdi."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from warc_builder import DATA

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import IntegrityError, LimitError, ParseError
from pdi.interop.warc import ReadLimits, import_warc

S = "web.example.us"
SITE = DATA / "site.wacz"
MEMBERS = ("archive/site.warc.gz", "indexes/index.cdx.gz", "indexes/index.idx")


def snapshot(archive: Archive) -> object:
    """Everything observable in an archive: series, representations, statements, blobs (as archive_helpers')."""
    store = archive.store
    return (store.list_series(), list(store.iter_representations()), store.assertions(),
            {name: store.read_blob(name) for name in sorted(store.blob_names())}, store.schema_version())


def _actual_size(member: str) -> int:
    with zipfile.ZipFile(SITE) as zf:
        return len(zf.read(member))


def _edited(target: Path, edit: Any, *, digest: bool = True, listing: Any = None) -> Path:
    """``site.wacz`` with its package's resources passed through ``edit`` (each a dict, edited in place), then their
    list through ``listing`` (edited in place), each other member copied as it was (its compression kept); its
    datapackage-digest.json made again for the new package (``digest``), or left out."""
    with zipfile.ZipFile(SITE) as zin, zipfile.ZipFile(target, "w") as zout:
        package = json.loads(zin.read("datapackage.json"))
        for resource in package["resources"]:
            edit(resource)
        if listing is not None:
            listing(package["resources"])
        written = json.dumps(package, indent=2).encode()
        for info in zin.infolist():
            if info.filename == "datapackage.json":
                data = written
            elif info.filename == "datapackage-digest.json":
                if not digest:
                    continue
                data = json.dumps({"path": "datapackage.json",
                                   "hash": "sha256:" + hashlib.sha256(written).hexdigest()}).encode()
            else:
                data = zin.read(info.filename)
            zout.writestr(info, data, compress_type=info.compress_type)
    return target


def _resized(member: str, by: int) -> Any:
    def edit(resource: dict[str, Any]) -> None:
        if resource["path"] == member:
            resource["bytes"] += by
    return edit


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    return opened


def test_the_untouched_wacz_and_one_made_again_as_it_was_import(archive: Archive, tmp_path: Path) -> None:
    with zipfile.ZipFile(SITE) as zf:  # it states every size, and each is the file's
        stated = {r["path"]: r["bytes"] for r in json.loads(zf.read("datapackage.json"))["resources"]}
    assert stated == {member: _actual_size(member) for member in MEMBERS}
    done, _ = import_warc(archive, _edited(tmp_path / "same.wacz", lambda resource: None), S)
    assert any(d.page for d in done)
    again = Archive.init(tmp_path / "other")
    again.add_series(S)
    done, _ = import_warc(again, SITE, S)
    assert any(d.page for d in done)


@pytest.mark.parametrize("member", MEMBERS)
@pytest.mark.parametrize("by", [1, -1, 1 << 40])
@pytest.mark.parametrize("digest", [True, False], ids=["digest-made-again", "no-digest"])
def test_a_resource_of_another_size_than_its_bytes_is_refused_and_nothing_imported(
        archive: Archive, tmp_path: Path, member: str, by: int, digest: bool) -> None:
    wacz = _edited(tmp_path / "lies.wacz", _resized(member, by), digest=digest)
    before = snapshot(archive)
    actual = _actual_size(member)
    with pytest.raises(IntegrityError) as refused:
        import_warc(archive, wacz, S)
    assert str(refused.value) == (
        f"{wacz}: {member} holds {actual:,} bytes, datapackage.json says {actual + by:,} (its \"bytes\"): the"
        " package is damaged (a file cut short, or another in its place), and is refused")
    assert snapshot(archive) == before


def test_pdi_import_says_so_and_exits_3(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    wacz = _edited(tmp_path / "lies.wacz", _resized("archive/site.warc.gz", 100))
    said = runner.invoke(cli, ["import", str(wacz), "--series", S, "--archive", location])
    assert said.exit_code == 3, said.output
    actual = _actual_size("archive/site.warc.gz")
    assert said.stderr == (f"pdi: integrity check failed: {wacz}: archive/site.warc.gz holds {actual:,} bytes,"
                           f" datapackage.json says {actual + 100:,} (its \"bytes\"): the package is damaged (a"
                           " file cut short, or another in its place), and is refused\n")
    assert said.stdout == ""
    assert runner.invoke(cli, ["ls", S, "--archive", location]).stdout == ""


@pytest.mark.parametrize("size", ["4706", -1, True, 4706.0, None, [1]])
def test_a_size_that_is_no_count_of_bytes_is_refused_and_one_not_given_is_held_to_the_hash(
        archive: Archive, tmp_path: Path, size: Any) -> None:
    def edit(resource: dict[str, Any]) -> None:
        if resource["path"] == "archive/site.warc.gz":
            if size is None:
                del resource["bytes"]  # optional in a Frictionless resource
            else:
                resource["bytes"] = size

    wacz = _edited(tmp_path / "odd.wacz", edit)
    if size is None:
        done, _ = import_warc(archive, wacz, S)
        assert any(d.page for d in done)
        return
    before = snapshot(archive)
    with pytest.raises(ParseError, match=r"datapackage.json gives 'archive/site.warc.gz' the size \(bytes\) "
                                         + f"{size!r}".replace("[", r"\[").replace("]", r"\]")
                                         + ", not a count of bytes"):
        import_warc(archive, wacz, S)
    assert snapshot(archive) == before


def _validates(wacz: Path) -> bool:
    """Whether py-wacz's ``wacz validate`` judges ``wacz`` valid (its exit status)."""
    # (``python -m wacz`` exits 0 whatever it judged: its ``main``'s status is given to sys.exit here)
    return subprocess.run([sys.executable, "-c", "import sys; from wacz.main import main; sys.exit(main(sys.argv[1:]))",
                           "validate", "-f", str(wacz)], capture_output=True, timeout=300).returncode == 0


def _refused_as_py_wacz_refuses(archive: Archive, wacz: Path, error: type[Exception], match: str) -> None:
    """py-wacz's ``wacz validate`` judges ``wacz`` invalid, pdi's import refuses it (``error``, ``match``), and the
    archive is left as it was."""
    assert not _validates(wacz)
    before = snapshot(archive)
    with pytest.raises(error, match=match):
        import_warc(archive, wacz, S)
    assert snapshot(archive) == before


@pytest.mark.parametrize("first_wrong", [True, False, None])
def test_a_file_listed_twice_is_refused(archive: Archive, tmp_path: Path, first_wrong: bool | None) -> None:
    """A package that lists the WARC twice vouches for two hashes of one file (or one file twice): only the last
    listing was checked, so one whose first listing gave a wrong hash was imported. py-wacz's ``wacz validate``
    judges each invalid (a Frictionless package's resources are each named once); pdi refuses each, naming the
    file, and the archive is left as it was. (``None``: the same listing twice.)"""
    def listing(resources: list[dict[str, Any]]) -> None:
        (warc,) = [r for r in resources if r["path"] == "archive/site.warc.gz"]
        again = dict(warc)
        if first_wrong is not None:
            again["hash"] = "sha256:" + "0" * 64
        resources.insert(0 if first_wrong else len(resources), again)

    wacz = _edited(tmp_path / "twice.wacz", lambda resource: None, listing=listing)
    assert _validates(_edited(tmp_path / "as-is.wacz", lambda resource: None))
    _refused_as_py_wacz_refuses(archive, wacz, ParseError, r"datapackage\.json lists 'archive/site\.warc\.gz' twice")


@pytest.mark.parametrize("listing", [
    lambda resources: resources.clear() or resources.append([]),
    lambda resources: resources.append({"path": "indexes/more.cdx", "hash": "md5:" + "0" * 32}),
    lambda resources: resources.append({"path": "indexes/more.cdx", "hash": "sha256:0", "bytes": "7"}),
], ids=["no-object", "md5", "size-a-string"])
def test_a_package_s_refusal_is_said_once(archive: Archive, tmp_path: Path, listing: Any) -> None:
    """A refusal of ``datapackage.json``'s listing (a ParseError, which is a ValueError) was caught again as the
    package's files being unreadable: ``PATH: its datapackage files cannot be read: PATH: … (rule WACZ) (rule
    WACZ)``. Each is said once, as it is."""
    wacz = _edited(tmp_path / "odd.wacz", lambda resource: None, listing=listing)
    before = snapshot(archive)
    with pytest.raises(ParseError) as caught:
        import_warc(archive, wacz, S)
    said = str(caught.value)
    assert said.count(str(wacz)) == 1 and said.count("(rule WACZ)") == 1, said
    assert "cannot be read" not in said, said
    assert snapshot(archive) == before


@pytest.mark.parametrize(("resource", "error"), [
    ({"path": "archive/site.warc.gz", "hash": "sha256:" + "a" * 1_000_000}, IntegrityError),
    ({"path": "indexes/" + "x" * 1_000_000, "hash": "sha256:" + "0" * 64}, IntegrityError),
    ({"path": "indexes/" + "x" * 1_000_000, "hash": "md5:0"}, ParseError),
    ({"path": "archive/" + "x" * 1_000_000, "hash": "sha256:0", "bytes": -1}, ParseError),
], ids=["a-hash-of-a-MB", "a-path-of-a-MB", "a-path-of-a-MB-with-md5", "a-path-of-a-MB-of-no-size"])
def test_a_stranger_s_long_values_are_not_echoed_whole(
        archive: Archive, tmp_path: Path, resource: dict[str, Any], error: type[Exception]) -> None:
    """A hash or a path of a MB in ``datapackage.json`` was echoed whole in the refusal (a MB of message on the
    terminal): each is cut short, the refusal still naming what is wrong."""
    def listing(resources: list[dict[str, Any]]) -> None:
        resources[:] = [r for r in resources if r["path"] != resource["path"]] + [resource]

    wacz = _edited(tmp_path / "long.wacz", lambda r: None, listing=listing)
    before = snapshot(archive)
    with pytest.raises(error) as caught:
        import_warc(archive, wacz, S)
    said = str(caught.value)
    assert len(said) < 1000, said[:2000]
    assert resource["path"][:100] in said and str(wacz) in said, said
    assert snapshot(archive) == before


@pytest.mark.parametrize("member", ["indexes/index.cdx.gz", "indexes/index.idx"])
def test_a_listed_file_that_cannot_be_read_is_refused_naming_it(archive: Archive, tmp_path: Path, member: str) -> None:
    """An unsigned package's listed file that could not be read (its octets damaged: a CRC-32 or a deflate stream
    that fails) was left to the WARC reader, which names the record it fails at; but no reader reads an index or the
    pages, so the damaged package was imported as if whole. py-wacz's ``wacz validate`` fails on it; pdi refuses it,
    naming the file, and the archive is left as it was. (``index.cdx.gz`` is stored in site.wacz, ``index.idx``
    deflated: a byte of each is changed where the ZIP keeps it.)"""
    data = bytearray(SITE.read_bytes())
    with zipfile.ZipFile(SITE) as zf:
        info = zf.getinfo(member)
        assert zf.read(member)  # whole as it is
    assert data[info.header_offset:info.header_offset + 4] == b"PK\x03\x04"  # its local header (APPNOTE.TXT §4.3.7)
    start = info.header_offset + 30 + sum(struct.unpack_from("<HH", data, info.header_offset + 26))
    data[start + info.compress_size // 2] ^= 0x55
    wacz = tmp_path / "damaged.wacz"
    wacz.write_bytes(bytes(data))
    _refused_as_py_wacz_refuses(archive, wacz, ParseError, rf"damaged\.wacz: {re.escape(member)}, listed in"
                                                          r" datapackage\.json, cannot be read \(the entry is damaged\)")


def test_a_digest_of_a_package_that_is_gone_is_refused(archive: Archive, tmp_path: Path) -> None:
    """A WACZ holding ``datapackage-digest.json`` but no ``datapackage.json`` (the file the digest, signed or not,
    vouches for, and which lists the others) was read as a WACZ with no package at all: its WARCs imported unchecked.
    py-wacz's ``wacz validate`` fails on it; pdi refuses it, naming both files, and the archive is left as it was.
    (With neither file, the WARCs are read as they are: there is nothing to check them against.)"""
    gone = tmp_path / "gone.wacz"
    with zipfile.ZipFile(SITE) as zin, zipfile.ZipFile(gone, "w") as zout:
        for info in zin.infolist():
            if info.filename != "datapackage.json":
                zout.writestr(info, zin.read(info.filename), compress_type=info.compress_type)
    _refused_as_py_wacz_refuses(archive, gone, IntegrityError, r"gone\.wacz: datapackage-digest\.json gives the hash"
                                                               r" of datapackage\.json, which the package does not hold")


def test_a_size_of_five_thousand_digits_is_refused_in_pdi_s_words(archive: Archive, tmp_path: Path) -> None:
    """A ``bytes`` of 5,000 digits (more than the 4,300 Python converts to an integer) was refused in the
    interpreter's words ("Exceeds the limit (4300 digits) for integer string conversion …; use
    sys.set_int_max_str_digits() to increase the limit"), which a user of ``pdi import`` can do nothing with. It is
    refused in pdi's, naming the file and how long the number is, and nothing is deposited."""
    def edit(resource: dict[str, Any]) -> None:
        if resource["path"] == "archive/site.warc.gz":
            resource["bytes"] = 0  # written as a number, then given its 5,000 digits below

    wacz = tmp_path / "long.wacz"
    with zipfile.ZipFile(_edited(tmp_path / "zero.wacz", edit, digest=False)) as zin, zipfile.ZipFile(wacz, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "datapackage.json":
                data = data.replace(b'"bytes": 0', b'"bytes": ' + b"7" * 5_000, 1)
                assert b"7" * 5_000 in data
            zout.writestr(info, data, compress_type=info.compress_type)
    before = snapshot(archive)
    with pytest.raises(ParseError) as refused:
        import_warc(archive, wacz, S)
    assert str(refused.value) == (f"{wacz}: datapackage.json is not JSON pdi reads: it holds an integer of 5,000"
                                  " digits, more than the 4,300 pdi reads (RFC 8259 §6 lets a reader limit the"
                                  " numbers it takes) (rule WACZ)")
    assert snapshot(archive) == before


#: A ZIP entry's name of 60,000 characters (APPNOTE.TXT §4.4.10 allows 65,535 octets), its two ends told apart.
LONG_START, LONG_END = "archive/start-", "-end.warc.gz"
LONG = LONG_START + "x" * 60_000 + LONG_END


def _long_named(target: Path, *, listed: bool = True, hash_: str | None = None, size: int | None = None,
                data: bytes | None = None, deflated: bool = False) -> Path:
    """``site.wacz`` with its WARC under :data:`LONG` (``data`` in its place, deflated when ``deflated``), listed in
    an unsigned ``datapackage.json`` with its own hash and size, or ``hash_`` and ``size``, or not at all."""
    with zipfile.ZipFile(SITE) as zin, zipfile.ZipFile(target, "w") as zout:
        package = json.loads(zin.read("datapackage.json"))
        warc = zin.read("archive/site.warc.gz") if data is None else data
        package["resources"] = [r for r in package["resources"] if r["path"] != "archive/site.warc.gz"]
        if listed:
            package["resources"].append({"name": "long.warc.gz", "path": LONG, "bytes": len(warc) if size is None else size,
                                         "hash": hash_ or "sha256:" + hashlib.sha256(warc).hexdigest()})
        for info in zin.infolist():
            if info.filename == "archive/site.warc.gz":
                zout.writestr(LONG, warc, compress_type=zipfile.ZIP_DEFLATED if deflated else zipfile.ZIP_STORED)
            elif info.filename == "datapackage.json":
                zout.writestr(info, json.dumps(package), compress_type=info.compress_type)
            elif info.filename != "datapackage-digest.json":
                zout.writestr(info, zin.read(info.filename), compress_type=info.compress_type)
    return target


@pytest.mark.parametrize(("made", "error", "said"), [
    (lambda t: _long_named(t, listed=False), IntegrityError, "is not listed in datapackage.json"),
    (lambda t: _long_named(t, hash_="sha256:" + "0" * 64), IntegrityError, "was changed: its SHA-256 is"),
    (lambda t: _long_named(t, size=7), IntegrityError, "holds 4,706 bytes, datapackage.json says 7"),
    (lambda t: _long_named(t, data=b"\0" * (4 << 20), deflated=True), LimitError, "more than 100 times"),
    (lambda t: _long_named(t, data=b"Dear all,\r\n\r\n"), ParseError, "is not a WARC file"),
], ids=["not-listed", "changed", "another-size", "expanding", "no-warc"])
def test_a_long_entry_name_is_quoted_by_its_ends(
        archive: Archive, tmp_path: Path, made: Any, error: type[Exception], said: str) -> None:
    """A ZIP entry's name of 60,000 characters was echoed whole in most refusals (a terminal's screens of ``x``), and
    cut after its first 200 in others, losing its end (``.warc.gz``, what tells two such names apart). Each refusal
    now quotes it by its ends, as pdi quotes other strangers' long input (``start…[59,826 characters left out]…end``),
    and still says what is wrong."""
    wacz = made(tmp_path / "long.wacz")
    before = snapshot(archive)
    with pytest.raises(error) as refused:
        import_warc(archive, wacz, S)
    message = str(refused.value)
    assert said in message and len(message) < 1_000, message[:3_000]
    assert LONG_START in message and LONG_END in message and "characters left out]" in message, message
    assert snapshot(archive) == before


def _with_pages(target: Path, pages: bytes, listed_as: bytes) -> Path:
    """``site.wacz`` with ``pages/pages.jsonl`` holding ``pages`` (deflated), listed in an unsigned
    ``datapackage.json`` with the SHA-256 and size of ``listed_as``."""
    def listing(resources: list[dict[str, Any]]) -> None:
        resources.append({"name": "pages.jsonl", "path": "pages/pages.jsonl", "bytes": len(listed_as),
                          "hash": "sha256:" + hashlib.sha256(listed_as).hexdigest()})

    made = _edited(tmp := target.with_suffix(".tmp"), lambda resource: None, digest=False, listing=listing)
    with zipfile.ZipFile(made) as zin, zipfile.ZipFile(target, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, zin.read(info.filename), compress_type=info.compress_type)
        zout.writestr("pages/pages.jsonl", pages, compress_type=zipfile.ZIP_DEFLATED)
    tmp.unlink()
    return target


#: A pages file of 4 MiB that deflates about a thousand times (a page's text of spaces), and one of its bytes changed.
PAGES = (b'{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n{"id": "1", "url": "http://web.example.us/",'
         b' "ts": "2026-11-23T12:16:45Z", "text": "' + b" " * (4 << 20) + b'"}\n')
CHANGED = PAGES.replace(b'  "}', b' x"}')


@pytest.mark.parametrize("listed_as", [PAGES, CHANGED], ids=["whole", "changed"])
def test_a_listed_file_expanding_past_the_limit_is_refused_in_an_unsigned_package_too(
        archive: Archive, tmp_path: Path, listed_as: bytes) -> None:
    """An unsigned package's index or pages file that decompresses to more than ``--max-expansion`` times its size
    (past its first MiB) was left unread, so its hash was never checked: a package whose pages file was changed
    (py-wacz's ``wacz validate`` fails on it) was imported as if whole. Such a file is refused before it is read,
    as in a signed package (pdi import's --max-expansion: "refuse a ... ZIP entry that decompresses to more than this
    many times its size"), saying that the package cannot be checked whole; with the limit raised, it is read and
    checked as any other."""
    wacz = _with_pages(tmp_path / "pages.wacz", PAGES, listed_as)
    with zipfile.ZipFile(wacz) as zf:
        info = zf.getinfo("pages/pages.jsonl")
    assert info.file_size > 100 * info.compress_size and info.file_size > 1 << 20
    assert _validates(wacz) == (listed_as == PAGES)
    before = snapshot(archive)
    with pytest.raises(LimitError) as refused:
        import_warc(archive, wacz, S)
    assert str(refused.value) == (
        f"pages.wacz!pages/pages.jsonl (the ZIP entry at offset {info.header_offset}) is refused: it decompresses to"
        f" {info.file_size} bytes from {info.compress_size} bytes, more than 100 times (the limit of pdi import"
        " --max-expansion), so its hash in datapackage.json is not checked: a package whose listed file cannot be"
        " checked is not known to be whole, and is refused")
    assert snapshot(archive) == before
    wide = ReadLimits(max_expansion=10_000)
    if listed_as == PAGES:
        done, _ = import_warc(archive, wacz, S, bounds=wide)
        assert any(d.page for d in done)
        return
    with pytest.raises(IntegrityError, match=r"pages\.wacz: pages/pages\.jsonl was changed: its SHA-256 is sha256:"
                                             + hashlib.sha256(PAGES).hexdigest()):
        import_warc(archive, wacz, S, bounds=wide)
    assert snapshot(archive) == before
