"""The WARC files an import reads: a ``.warc``/``.warc.gz`` file itself, or those a WACZ package holds.

A WACZ (WACZ 1.1.1, webrecorder) keeps its WARC files under ``archive/``,
stored without compression, so one is read in place (reading at an offset
is a seek); one the ZIP deflates is decompressed once into a spool folder,
after its ratio is checked (APPNOTE.TXT §4.3.7 for the local header read).
This module sits below :mod:`~pdi.interop.warc.records` (pass 1) and
:mod:`pdi.interop.wacz` (export), so both import it and neither the other.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pdi import untrusted_json
from pdi._files import free_room
from pdi._wording import clipped, plural
from pdi.errors import (
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    StoreError,
    UnsupportedError,
)
from pdi.interop.wacz_room import disk_full
from pdi.interop.warc.bounded import EXPANSION_ALLOWANCE, ReadLimits

if TYPE_CHECKING:  # the type only: a WARC's import needs no signatures checked (cryptography: issue 24's start-up)
    from pdi.wacz_signing import Checked

__all__ = ["MAX_ZIP_DIRECTORY", "MAX_ZIP_FILES", "Source", "is_web_archive", "sources_for", "spool_error",
           "wacz_signature", "wacz_sources", "zip_directory"]

#: The largest ``datapackage.json`` read to check a WACZ's signature (it lists a few files).
_MAX_PACKAGE = 16 << 20

#: The most files a WACZ's ZIP may list (a WACZ holds a few: its WARCs, indexes, pages and datapackage files).
MAX_ZIP_FILES = 10_000
#: The largest ZIP directory read: zipfile reads it whole, then makes an object of some 500 octets of each entry
#: (a 54 MB directory of 1,000,000 entries took 535 MB); 10,000 entries of names and comments of 1.6 KiB each.
MAX_ZIP_DIRECTORY = 16 << 20


def spool_error(spool: Path, exc: OSError, what: str) -> StoreError:
    """The error of an import's work file (``what``, in the work folder ``spool``) that could not be written: a
    disk that filled (``ENOSPC``, a quota) said so, with the room left there, and where else to work."""
    folder = spool.parent
    if disk_full(exc):
        return StoreError(
            f"no space left in {folder} for the import's work files ({what}; {free_room(folder)} there): an import"
            " keeps there a"
            " WACZ's compressed WARCs, and its pages packed once more than it holds in memory, until it ends;"
            " nothing was deposited: free some, or set TMPDIR to a folder on a disk with room"
        )
    return StoreError(f"cannot write the import's work files in {folder} ({what}): {exc.strerror or exc};"
                      " nothing was deposited: set TMPDIR to a folder pdi may write")


@dataclass(frozen=True)
class Source:
    """One WARC file: its name in messages and a way to open it (seekable) afresh."""

    name: str
    open: Callable[[], AbstractContextManager[BinaryIO]]
    size: int = 0  # bytes, for progress


def sources_for(
    path: str | Path, *, max_expansion: float = ReadLimits.max_expansion, spool: Path | None = None
) -> list[Source]:
    """The WARC files of ``path``: itself (``.warc``, ``.warc.gz``), or those a WACZ holds
    (:func:`wacz_sources`: a deflated one decompressed into ``spool``)."""
    name = str(path)
    if name.lower().endswith(".wacz"):
        return wacz_sources(path, max_expansion=max_expansion, spool=spool)
    if not Path(path).is_file():
        raise NotFoundError(f"no file {name}")

    @contextlib.contextmanager
    def opener() -> Iterator[BinaryIO]:
        with open(path, "rb") as fh:
            yield fh

    return [Source(Path(path).name, opener, Path(path).stat().st_size)]


def is_web_archive(path: str | Path) -> bool:
    """Whether ``path`` is named as a WARC or WACZ file (what ``pdi import`` dispatches on)."""
    lower = str(path).lower()
    return lower.endswith((".warc", ".warc.gz", ".wacz"))


def wacz_sources(
    path: str | Path, *, max_expansion: float = ReadLimits.max_expansion, spool: Path | None = None
) -> list[Source]:
    """The WARC files in ``archive/`` of the WACZ at ``path``, in name order.

    A WARC stored uncompressed (as WACZ asks) is read in place, a window of
    the file (:class:`_Window`: reading at an offset is a seek; zipfile's own
    member reads forward to it, which made an import's second pass, reading
    each record again, take time in the square of the entry's size). One the
    ZIP deflates is, with ``spool`` (a folder), decompressed there once, for
    the same reason (else read through zipfile).

    A WARC entry that the ZIP directory says decompresses to more than
    ``max_expansion`` times its compressed size (past its first MiB) is a
    :class:`~pdi.errors.LimitError` naming it and its offset in the ZIP, before
    a byte of it is read (zipfile never gives more than the size the
    directory states, so the statement bounds what is read).
    """
    try:
        with _open_zip(path) as zf:
            infos = zf.infolist()
            directory = zf.start_dir
    except FileNotFoundError:
        raise NotFoundError(f"no file {path}") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ParseError(f"{path} is not a WACZ (not a ZIP file: {exc})", rule="WACZ") from None
    except NotImplementedError as exc:  # a ZIP feature zipfile lacks ("zip file version 12.7")
        raise UnsupportedError(f"{path} cannot be read: {exc}") from None
    _check_names(path, infos)
    _check_layout(path, infos, directory)
    members = {i.filename: i for i in infos if _is_warc(i.filename)}
    sizes = {name: info.file_size for name, info in members.items()}
    for info in infos:
        if info.filename in sizes and info.file_size > EXPANSION_ALLOWANCE \
                and info.file_size > max_expansion * info.compress_size:
            raise LimitError(
                f"{Path(path).name}!{clipped(info.filename)} (the ZIP entry at offset {info.header_offset}) is refused:"
                f" it decompresses to {plural(info.file_size, 'byte')} from {plural(info.compress_size, 'byte')},"
                f" more than {max_expansion:g} times (the limit of pdi import --max-expansion)"
            )
    names = sorted(sizes)
    if not names:
        raise ParseError(f"{path} holds no WARC file under archive/", rule="WACZ")
    wacz_signature(path, infos, resources=True, max_expansion=max_expansion)

    def opener(member: str) -> Callable[[], contextlib.AbstractContextManager[BinaryIO]]:
        @contextlib.contextmanager
        def open_member() -> Iterator[BinaryIO]:
            with contextlib.ExitStack() as stack:
                try:
                    zf = stack.enter_context(zipfile.ZipFile(path))
                    fh = stack.enter_context(zf.open(member))
                except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
                    # a damaged local header, a size or offset past the end
                    raise ParseError(f"{path}: {clipped(member)} cannot be opened: {exc}", rule="WACZ") from None
                except (NotImplementedError, RuntimeError) as exc:  # a compression method or encryption zipfile lacks
                    raise UnsupportedError(f"{path}: {clipped(member)} cannot be read: {exc}") from None
                yield fh  # type: ignore[misc]  # ZipExtFile is a seekable binary stream

        return open_member

    def stored(info: zipfile.ZipInfo) -> Callable[[], contextlib.AbstractContextManager[BinaryIO]]:
        @contextlib.contextmanager
        def open_window() -> Iterator[BinaryIO]:
            with open(path, "rb") as raw:
                window = _Window(raw, _data_start(raw, info, path), info.file_size, info.CRC,
                                 f"{Path(path).name}!{clipped(info.filename)}")
                yield window  # type: ignore[misc]  # a RawIOBase is a seekable binary stream, not typed as BinaryIO

        return open_window

    def spooled(member: str, number: int) -> Callable[[], contextlib.AbstractContextManager[BinaryIO]]:
        assert spool is not None
        # named by its number alone: the entry's name is a stranger's (a suffix of 300 octets is no file name)
        copy = spool / f"wacz-{number}{'.warc.gz' if member.lower().endswith('.gz') else '.warc'}"
        what = f"{Path(path).name}!{clipped(member)} decompressed"
        with opener(member)() as source:
            try:
                out = copy.open("wb")
            except OSError as exc:
                raise spool_error(spool, exc, what) from exc
            try:
                with out:  # (its last octets written as it closes: a disk that fills then is the folder's too)
                    while True:
                        try:
                            piece = source.read(1 << 20)
                        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:  # a CRC, a deflate stream
                            raise ParseError(f"{path}: {clipped(member)} cannot be read: {exc}", rule="WACZ") from None
                        if not piece:
                            break
                        out.write(piece)
            except OSError as exc:  # writing to the work folder's disk, not reading the WACZ (a ParseError): said so
                raise spool_error(spool, exc, what) from exc

        @contextlib.contextmanager
        def open_copy() -> Iterator[BinaryIO]:
            with copy.open("rb") as fh:
                yield fh

        return open_copy

    return [
        Source(
            f"{Path(path).name}!{clipped(name)}",
            stored(members[name]) if members[name].compress_type == zipfile.ZIP_STORED
            else spooled(name, number) if spool is not None else opener(name),
            sizes[name],
        )
        for number, name in enumerate(names)
    ]


def _is_warc(member: str) -> bool:
    """Whether the ZIP entry ``member`` is a WARC file an import reads: any file in ``archive/`` (WACZ 1.1.1: the
    folder "MUST contain one or more files in the WARC format", its files' names "SHOULD use the ``.warc`` file
    extension", and no other file may be added there). A file there named otherwise (``archive/crawl-00001``) was
    left unread, its captures missing from the import; one that is no WARC is refused by the WARC reader, naming
    it. (A folder's own entry, ``archive/``, is no file; one within it is refused first: :func:`_check_names`.)"""
    return member.startswith("archive/") and not member.endswith("/")


def wacz_signature(path: str | Path, infos: list[zipfile.ZipInfo] | None = None, *, resources: bool = False,
                   max_expansion: float = ReadLimits.max_expansion) -> Checked | None:
    """Check the WACZ's ``datapackage-digest.json`` (:func:`pdi.wacz_signing.check_digest`): ``None`` when it
    has none; :class:`IntegrityError` when ``datapackage.json`` was changed or the signature does not verify.

    With ``resources`` (a WACZ read to import it, or checked by ``pdi verify --signatures``), the files its
    ``datapackage.json`` lists are checked too, signed or not (one without it has nothing to check them
    against): each WARC under ``archive/`` must be listed and every file listed must have the SHA-256 it
    states (else the package vouches for nothing: a WARC put in another's place would import as if it were
    the one listed). One that decompresses to more than ``max_expansion`` times its size (past its first MiB) is a
    :class:`~pdi.errors.LimitError`, before it is read, signed or not: its hash cannot be checked, so the package
    is not known to be whole. One that cannot be read is an error, but for a WARC of an unsigned package, left to
    the WARC reader, which names the record it fails at.
    """
    from pdi.wacz_signing import DIGEST_FILE, MAX_DIGEST_FILE, check_digest

    try:
        zf = _open_zip(path)
    except FileNotFoundError:
        raise NotFoundError(f"no file {path}") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ParseError(f"{path} is not a WACZ (not a ZIP file: {exc})", rule="WACZ") from None
    except NotImplementedError as exc:
        raise UnsupportedError(f"{path} cannot be read: {exc}") from None
    with zf:
        if infos is None:  # (before the try below: the ZIP's own lies are not its datapackage files' damage)
            infos = zf.infolist()
            _check_names(path, infos)
            _check_layout(path, infos, zf.start_dir)
        try:
            listed = {i.filename: i for i in infos}
            if "datapackage.json" not in listed:
                if DIGEST_FILE in listed:  # what vouched for the files is gone (a signed package's too): damaged
                    raise IntegrityError(f"{path}: {DIGEST_FILE} gives the hash of datapackage.json, which the"
                                         " package does not hold: the package is damaged, and is refused")
                return None  # nothing to check the files against: the WARCs are read as they are
            for member, cap in ((DIGEST_FILE, MAX_DIGEST_FILE), ("datapackage.json", _MAX_PACKAGE)):
                if member in listed and listed[member].file_size > cap:
                    raise LimitError(f"{path}: {clipped(member)} is larger than the {plural(cap, 'byte')} pdi reads")
            with zf.open("datapackage.json") as fh:
                package = fh.read(_MAX_PACKAGE + 1)
            checked = None
            if DIGEST_FILE in listed:
                with zf.open(DIGEST_FILE) as fh:
                    digest = fh.read(MAX_DIGEST_FILE + 1)
                checked = check_digest(str(path), package, digest)
            if resources:
                signed = checked is not None and checked.signed
                _check_resources(path, zf, listed, package, max_expansion,
                                 "the signed datapackage.json" if signed else "datapackage.json", signed)
        except PDIError:  # the package's own refusal (a ParseError is a ValueError too): said once, as it is
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            raise ParseError(f"{path}: its datapackage files cannot be read: {exc}", rule="WACZ") from None
        except (NotImplementedError, RuntimeError) as exc:  # a compression method or encryption zipfile lacks
            raise UnsupportedError(f"{path}: its datapackage files cannot be read: {exc}") from None
        return checked


def _open_zip(path: str | Path) -> zipfile.ZipFile:
    """``path`` opened by zipfile, once :func:`zip_directory` has found its directory within bounds."""
    with open(path, "rb") as fh:
        zip_directory(fh, str(path))
    return zipfile.ZipFile(path)


#: APPNOTE.TXT's signatures and sizes: §4.3.16 the end of central directory record (22 octets and a comment),
#: §4.3.15 the ZIP64 locator (20), §4.3.14 the ZIP64 end record (56 and more), §4.3.12 a central directory header
#: (46, then its name, extra field and comment).
_END, _END64, _LOCATOR64, _HEADER = b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x01\x02"


def zip_directory(fh: BinaryIO, name: str) -> tuple[int, int] | None:
    """Where the ZIP ``fh``'s central directory starts and how many entries it holds, found as zipfile finds them
    (its end record: the last 22 octets, else the last signature in the file's last 64 KiB; the ZIP64 end record
    its locator points to; the entries walked by their lengths, however many the end record says), reading
    nothing but the end records and the directory's headers. A :class:`~pdi.errors.LimitError` naming ``name``
    for a directory larger than :data:`MAX_ZIP_DIRECTORY` octets (before it is read) or of more than
    :data:`MAX_ZIP_FILES` entries; ``None`` for what is no ZIP or a directory that does not walk, whose error is
    zipfile's to say."""
    size = fh.seek(0, os.SEEK_END)
    if size < 22:
        return None
    fh.seek(size - 22)
    tail = fh.read(22)
    if tail[:4] == _END and tail[-2:] == b"\0\0":
        location, record = size - 22, tail
    else:
        first = max(size - (1 << 16) - 22, 0)
        fh.seek(first)
        tail = fh.read()
        at = tail.rfind(_END)
        record = tail[at:at + 22]
        if at < 0 or len(record) != 22:
            return None
        location = first + at
    directory_size = struct.unpack_from("<I", record, 12)[0]
    start = location - directory_size
    if location >= 20:
        fh.seek(location - 20)
        locator = fh.read(20)
        if locator[:4] == _LOCATOR64 and location >= 76:
            fh.seek(location - 76)
            record64 = fh.read(56)
            if record64[:4] == _END64:
                directory_size = struct.unpack_from("<Q", record64, 40)[0]
                start = location - 76 - directory_size
    if start < 0:
        return None
    if directory_size > MAX_ZIP_DIRECTORY:
        raise LimitError(f"{name}: its ZIP directory at offset {start} is {plural(directory_size, 'octet')}, more"
                         f" than the {MAX_ZIP_DIRECTORY:,} octets read of a WACZ (a WACZ lists a few files)")
    fh.seek(start)
    entries, walked, most = 0, 0, MAX_ZIP_FILES
    while walked < directory_size:
        header = fh.read(46)
        if len(header) != 46 or header[:4] != _HEADER:
            return None
        entries += 1
        if entries > most:
            raise LimitError(f"{name}: its ZIP directory at offset {start} lists more than {most:,} files, more than"
                             " a WACZ is read with (a WACZ lists a few)")
        skip = sum(struct.unpack_from("<HHH", header, 28))
        fh.seek(skip, os.SEEK_CUR)
        walked += 46 + skip
    return start, entries


def _check_names(path: str | Path, infos: list[zipfile.ZipInfo]) -> None:
    """A :class:`~pdi.errors.ParseError` for a ZIP entry whose name says nothing sure of where it belongs: a name
    given to two entries (which one the package holds is not said, and readers differ: zipfile takes the last),
    or one that climbs out of the package (a ``..`` segment, or a leading ``/``: APPNOTE.TXT §4.4.17 names are
    relative, WACZ 1.1.1 puts each file in its folder), or one in a folder within ``archive/`` (WACZ 1.1.1, "Other
    files and directories": custom directories "MUST NOT be added to the existing WACZ directories, archive,
    indexes and pages"; pdi read ``archive/sub/a.warc`` as a WARC of the package, which py-wacz's validator
    refuses)."""
    seen: dict[str, int] = {}
    for info in infos:
        name = info.filename
        if name.startswith("/") or ".." in name.replace("\\", "/").split("/"):
            raise ParseError(f"{path}: the ZIP entry {_quoted(name)} at offset {info.header_offset} is named outside"
                             " the package (a '..' segment or a leading '/')", rule="WACZ")
        if name.startswith("archive/") and "/" in name[len("archive/"):].replace("\\", "/"):
            raise ParseError(f"{path}: the ZIP entry {_quoted(name)} at offset {info.header_offset} is in a folder within"
                             " archive/: WACZ 1.1.1 keeps its WARC files in archive/ itself, and no folder may be"
                             " added there; the package is refused", rule="WACZ")
        if name in seen:
            raise ParseError(f"{path}: two ZIP entries are named {_quoted(name)} (at offsets {seen[name]} and"
                             f" {info.header_offset}): which one the package holds is not said", rule="WACZ")
        seen[name] = info.header_offset


def _check_layout(path: str | Path, infos: list[zipfile.ZipInfo], directory: int) -> None:
    """A :class:`~pdi.errors.ParseError` for ZIP entries that lie about where their octets are: two whose octets
    overlap (from the local header to the end of the data and its data descriptor; two at one offset included),
    one running into the ZIP directory at offset ``directory``, or one whose local header (APPNOTE.TXT §4.3.7)
    gives another name than its directory entry. Entries made to share their octets are the zip bomb of
    overlapping files (D. Fifield, "A better zip bomb", 2019: one stored WARC listed 2,000 times was read 2,000
    times; zipfile refuses one as it opens it only from Python 3.12 and 3.11.8 on, CPython gh-109858, and a
    stored WARC is read in place, not through zipfile), and a name told two ways says nothing sure of what the
    package holds (zipfile checks it only as it opens a member, never for a WARC read in place).

    Checked from the local headers alone (30 octets and the name each), in order of offset: an entry whose local
    header is damaged or past the end is left to its reading, which names it. A data descriptor (flag bit 3) is
    counted as the least it can be, 12 octets, or 16 with its signature: its ZIP64 form's 8 more hold no data."""
    spans = []
    with open(path, "rb") as fh:
        end_of_file = fh.seek(0, os.SEEK_END)
        for info in sorted(infos, key=lambda i: i.header_offset):
            header = b""
            if 0 <= info.header_offset <= end_of_file - 30:
                fh.seek(info.header_offset)
                header = fh.read(30)
            if len(header) < 30 or header[:4] != b"PK\x03\x04":
                continue  # damaged: opening the entry says so
            name_length, extra_length = struct.unpack_from("<HH", header, 26)
            raw_name = fh.read(name_length)
            end = info.header_offset + 30 + name_length + extra_length + info.compress_size
            if info.flag_bits & 0x8:
                fh.seek(end)
                end += 16 if fh.read(4) == b"PK\x07\x08" else 12
            spans.append((info, end, raw_name))
    furthest: tuple[zipfile.ZipInfo, int] | None = None
    for info, end, raw_name in spans:
        if furthest is not None and info.header_offset < furthest[1]:
            held, held_end = furthest
            raise ParseError(
                f"{path}: the ZIP entries {_quoted(held.filename)} (at offset {held.header_offset}, its octets to"
                f" offset {held_end}) and {_quoted(info.filename)} (at offset {info.header_offset}) overlap: each"
                " entry's octets are its own, and entries made to share them are a zip bomb (one entry's octets"
                " read as many files); the package is refused", rule="WACZ")
        try:
            local_name = raw_name.decode("utf-8" if info.flag_bits & 0x800 else "cp437")  # as zipfile decodes it
        except UnicodeDecodeError:
            local_name = raw_name.decode("utf-8", "backslashreplace")
        if local_name != info.orig_filename:
            raise ParseError(
                f"{path}: the ZIP entry {_quoted(info.filename)} at offset {info.header_offset} is named"
                f" {_quoted(local_name)} in its local header: which file the package holds there is not said"
                " (readers differ: zipfile goes by the directory, a streaming unzip by the local header)",
                rule="WACZ")
        if furthest is None or end > furthest[1]:
            furthest = (info, end)
    if furthest is not None and furthest[1] > directory:
        held, held_end = furthest
        raise ParseError(
            f"{path}: the ZIP entry {_quoted(held.filename)} at offset {held.header_offset} runs to offset"
            f" {held_end}, into the ZIP directory at offset {directory}: an entry's octets end where the"
            " directory begins; the package is refused", rule="WACZ")


def _check_resources(path: str | Path, zf: zipfile.ZipFile, listed: dict[str, zipfile.ZipInfo], package: bytes,
                     max_expansion: float, which: str, signed: bool) -> None:
    """Every file ``datapackage.json`` (``which``, as the messages name it) lists has the size it gives it
    (``bytes``, when given) and hashes to what it says, and every WARC is listed. A file expanding past
    ``max_expansion`` is a :class:`~pdi.errors.LimitError` before it is read (its hash unchecked, the package is not
    known to be whole). Unless ``signed``, a WARC that cannot be read whole (damaged) is left to the WARC reader,
    which names the record it fails at (its size is checked still: the ZIP's directory says it); any other file
    that cannot be read (an index, the pages: read by no one after this) is a :class:`~pdi.errors.ParseError`
    naming it.

    WACZ 1.1.1 §"datapackage.json": ``resources`` lists "file names, paths, sizes and fixity for all files
    contained in the WACZ"; a Frictionless Data Resource's ``bytes`` is its size in bytes. A file of another size
    than its package says is damaged (cut short, or another file in its place), as one of another hash is: the
    package is refused, naming the file, the size said and the size it has. A resource that gives no ``bytes``
    (the Frictionless specification makes it optional) is held to its hash alone."""
    value = untrusted_json.loads(package, f"{path}: datapackage.json", rule="WACZ")
    resources = value.get("resources") if isinstance(value, dict) else None
    if not isinstance(resources, list):
        raise ParseError(f"{path}: datapackage.json lists no resources", rule="WACZ")
    stated: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for r in resources:
        member, hash_ = (r.get("path"), r.get("hash")) if isinstance(r, dict) else (None, None)
        if not isinstance(member, str) or not isinstance(hash_, str) or not hash_.startswith("sha256:"):
            raise ParseError(f"{path}: datapackage.json lists {_shown(member)} without a sha256: hash", rule="WACZ")
        if member in stated:  # which of its hashes (and sizes) the package vouches for is not said
            raise ParseError(f"{path}: datapackage.json lists {_quoted(member)} twice: a file is listed once",
                             rule="WACZ")
        stated[member] = hash_
        size = r.get("bytes")
        if size is not None:
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                shown = repr(size) if len(repr(size)) <= 40 else repr(size)[:40] + "…"
                raise ParseError(f"{path}: datapackage.json gives {_quoted(member)} the size (bytes) {shown}, not a"
                                 " count of bytes", rule="WACZ")
            sizes[member] = size
    for member in listed:
        if member.startswith("archive/") and member not in stated and not member.endswith("/"):  # a folder's entry:
            # (``zip -r`` writes one for each folder, APPNOTE.TXT §4.4.17.1) no file, listed by no datapackage.json
            raise IntegrityError(f"{path}: {clipped(member)} is not listed in {which}")
    for member, hash_ in stated.items():
        if member not in listed:
            raise IntegrityError(f"{path}: {clipped(member)}, listed in {which}, is missing")
        info = listed[member]
        if member in sizes and sizes[member] != info.file_size:  # before a byte of it is read
            raise _other_size(path, member, info.file_size, sizes[member], which)
        if info.file_size > EXPANSION_ALLOWANCE and info.file_size > max_expansion * info.compress_size:
            # not read: its hash unchecked, the package is not known to be whole (signed or not)
            raise LimitError(f"{Path(path).name}!{clipped(member)} (the ZIP entry at offset {info.header_offset}) is refused:"
                             f" it decompresses to {plural(info.file_size, 'byte')} from"
                             f" {plural(info.compress_size, 'byte')}, more than {max_expansion:g} times (the limit of"
                             f" pdi import --max-expansion), so its hash in {which} is not checked: a package whose"
                             " listed file cannot be checked is not known to be whole, and is refused")
        digest = hashlib.sha256()
        read = 0
        try:
            with zf.open(member) as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
                    read += len(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            if not signed and _is_warc(member):
                continue  # damaged: the WARC reader names where
            # any other file no reader reads after this: said here, naming it
            raise ParseError(f"{path}: {clipped(member)}, listed in {which}, cannot be read (the entry is damaged):"
                             f" {exc}", rule="WACZ") from None
        if member in sizes and sizes[member] != read:  # (zipfile gives what the directory says, or fails)
            raise _other_size(path, member, read, sizes[member], which)
        if "sha256:" + digest.hexdigest() != hash_.lower():
            raise IntegrityError(f"{path}: {clipped(member)} was changed: its SHA-256 is sha256:{digest.hexdigest()},"
                                 f" {which} says {hash_[:100]}{'…' if len(hash_) > 100 else ''}")


def _shown(value: object) -> str:
    """A stranger's value as a message shows it: a string quoted by :func:`_quoted`, any other value its ``repr``
    cut at 200 characters (a JSON string or a list may be MBs)."""
    if isinstance(value, str):
        return _quoted(value)
    text = repr(value)
    return text if len(text) <= 203 else text[:202] + "…"


def _quoted(name: str) -> str:
    """A stranger's name (a ZIP entry's, a path ``datapackage.json`` gives) quoted in a message: by its ends, as
    :func:`pdi._wording.clipped` shows it (a ZIP entry's name may be 65,535 octets, a JSON string MBs), its control
    characters escaped."""
    return f"'{clipped(name)}'"


def _other_size(path: str | Path, member: str, found: int, said: int, which: str) -> IntegrityError:
    """The refusal of a WACZ whose ``member`` holds ``found`` bytes where ``which`` says ``said``."""
    said_as = clipped(f"{said:,}", 40)  # a stranger's number: 4,300 digits are read
    return IntegrityError(f"{path}: {clipped(member)} holds {found:,} byte{'' if found == 1 else 's'}, {which} says {said_as}"
                          " (its \"bytes\"):"
                          " the package is damaged (a file cut short, or another in its place), and is refused")


def _data_start(raw: BinaryIO, info: zipfile.ZipInfo, path: str | Path) -> int:
    """Where a stored entry's octets begin: after its local file header (APPNOTE.TXT §4.3.7), which is checked."""
    if info.flag_bits & 0x1:
        raise UnsupportedError(f"{path}: {clipped(info.filename)} is encrypted")
    end = raw.seek(0, os.SEEK_END)
    header = b""
    if 0 <= info.header_offset <= end:  # a directory may say anything
        raw.seek(info.header_offset)
        header = raw.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise ParseError(f"{path}: {clipped(info.filename)} cannot be opened: its local header at offset"
                         f" {info.header_offset} is damaged", rule="WACZ")
    name_length, extra_length = int.from_bytes(header[26:28], "little"), int.from_bytes(header[28:30], "little")
    start = info.header_offset + 30 + name_length + extra_length
    if info.compress_size != info.file_size:  # (APPNOTE.TXT §4.4.8, §4.4.9: stored, the two sizes are one)
        raise ParseError(f"{path}: {clipped(info.filename)} cannot be opened: its ZIP directory entry says it is stored"
                         f" (not compressed) but gives it {plural(info.compress_size, 'byte')} stored and"
                         f" {plural(info.file_size, 'byte')} read out (the entry is damaged)", rule="WACZ")
    if start + info.file_size > end:
        raise ParseError(f"{path}: {clipped(info.filename)} cannot be opened: its {plural(info.file_size, 'byte')}"
                         f" at offset {start} run past the end of the file", rule="WACZ")
    return start


class _Window(io.RawIOBase):
    """``size`` octets of ``raw`` from ``start``, as a seekable binary file of their own.

    Read from its start to its end in order (as pass 1 reads), its CRC-32 is
    checked against the ZIP directory's ``crc`` at the end, as zipfile checks a
    member read whole: a :class:`~pdi.errors.ParseError` naming it when wrong.
    """

    def __init__(self, raw: BinaryIO, start: int, size: int, crc: int, name: str) -> None:
        super().__init__()
        self.raw, self.start, self.size, self.position = raw, start, size, 0
        self.expected, self.crc, self.checked, self.name = crc, 0, 0, name

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self.position, os.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer: Any) -> int:
        wanted = min(len(buffer), self.size - self.position)
        if wanted <= 0:
            return 0
        self.raw.seek(self.start + self.position)
        data = self.raw.read(wanted)
        buffer[: len(data)] = data
        if self.position == self.checked:
            self.crc = zlib.crc32(data, self.crc)
            self.checked += len(data)
            if self.checked == self.size and self.crc != self.expected:
                raise ParseError(f"{self.name}: its CRC-32 is not the one its ZIP directory entry gives"
                                 " (the entry is damaged)", rule="WACZ")
        self.position += len(data)
        return len(data)
