"""Moving an archive: export to a BagIt bag (RFC 8493) and import from one.

A bag written by :func:`export_bag`::

    bagit.txt                 BagIt-Version: 1.0
    bag-info.txt              Bagging-Date, Payload-Oxum, Bag-Count …
    manifest-sha256.txt       a SHA-256 line for every payload file
    tagmanifest-sha256.txt    a SHA-256 line for every tag file
    data/catalog.json         series (with who may read each), every representation under its PDI,
                              assertions, withdrawals, embargoes
    data/objects/<sha256>     the bytes of each representation, named by their SHA-256

A representation whose octets were purged (a legal takedown,
:meth:`pdi.archive.Archive.withdraw` with ``purge``) is listed with
``"purged": "<when>"`` and has no object (unless another name keeps the
same bytes); its tombstone says ``"purged": true``. Importing such a bag
brings the name and its tombstone in without octets.

A bag another tool made (RFC 8493, any version and checksum algorithm it
allows) is checked the same way by :func:`validate_bag` and imported by
:func:`import_payload`: its payload files become new documents of a series,
with bag-info.txt's labels as statements on each. A stranger's tag files are
read within bounds (:data:`MAX_TAG_LINE_BYTES` a line, :data:`MAX_BAG_INFO_BYTES`
for bagit.txt and bag-info.txt), a line at a time.

Every name and every byte survives the move: :func:`import_bag` checks the
bag is complete and valid (every payload file listed, every checksum right,
the Payload-Oxum right) before the target store sees anything, then imports
everything in one transaction of the target store, reading the objects one at
a time as the store writes them (so an import holds one object in memory, not
the bag) and hashing each again as it is read. ``catalog.json`` is streamed
(``ijson``), never read whole, and its records are never held in a list: the
store iterates them again for each of its passes (checks, staging, rows), so
an import of millions of names holds what grows with its distinct objects
and days only (RFC 8493 §3 for the bag's validity, §2.1.3 and §2.2.2 for the
manifests and the Payload-Oxum).
"""

from __future__ import annotations

import codecs
import datetime
import hashlib
import json
import mimetypes
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pdi._wording import plural
from pdi.archive.access import PUBLIC, check_access, parse_until
from pdi.archive.naming import (
    MAX_ASSERTION_VALUE,
    STATEMENT_KEY,
    Namer,
    canonical_series,
    checked_foreign_id,
    key_of,
    parse_pdi,
    record_name,
    timestamp,
)
from pdi.archive.store import (
    STORED_CANONICAL,
    STORED_EXACT,
    AssertionRecord,
    AuditRecord,
    BlobSource,
    DocumentKey,
    ListQuery,
    RepresentationRecord,
    SeriesRecord,
    WithdrawalRecord,
)
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    StoreError,
    UnsupportedError,
)
from pdi.identifier import PDI, spells_serial

if TYPE_CHECKING:
    from pdi.archive import Archive

EXPORT_FORMAT = "pdi-archive-export"
EXPORT_VERSION = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _in_selection(name: str, series: str | None) -> bool:
    return series is None or name == series or name.endswith("." + series)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_bag(
    archive: Archive,
    directory: Path,
    *,
    series: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write the archive (or ``series`` and its subseries) as a bag at ``directory``.

    The catalog is read in one snapshot, a page at a time: ``catalog.json``
    is written a representation a line as the names are read, then the
    objects one at a time in SHA-256 order, each line of the manifest as its
    file is written, so memory does not grow with the archive.
    """

    if series is not None:
        series = canonical_series(series)
        if archive.store.get_series(series) is None:
            raise NotFoundError(f"series {series} is not registered")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ImmutabilityError(f"export never overwrites: {directory} exists and is not empty")
    staging = directory.parent / f".{directory.name}.partial-{os.getpid()}"
    try:
        if staging.exists():
            shutil.rmtree(staging)
        (staging / "data" / "objects").mkdir(parents=True)
        with archive.store.snapshot():
            all_series = {s.name: s for s in archive.store.list_series()}
            selected = sorted(n for n in all_series if _in_selection(n, series))
            chosen = set(selected)
            for name in selected:  # ancestors, so the bag imports on its own
                parent = all_series[name].parent
                while parent is not None and parent not in chosen:
                    chosen.add(parent)
                    parent = all_series[parent].parent
            with (staging / "manifest-sha256.txt").open("w", encoding="utf-8") as manifest:
                catalog_sha, catalog_octets, count = _write_catalog(
                    archive, staging / "data" / "catalog.json",
                    [all_series[n] for n in sorted(chosen)], None if series is None else selected,
                )
                manifest.write(f"{catalog_sha}  data/catalog.json\n")
                octets, files = catalog_octets, 1
                scope = None if series is None else selected
                total = archive.store.count_blobs_used(scope)
                for done, use in enumerate(archive.store.iter_blob_uses(scope), start=1):
                    if use.purged == use.representations:  # a takedown: catalog.json says so, no object
                        continue
                    path = f"data/objects/{use.sha256}"
                    octets += _copy_blob(archive, use.sha256, staging / path)
                    manifest.write(f"{use.sha256}  {path}\n")
                    files += 1
                    if progress is not None:
                        progress(done, max(total, done))
        _write_tag(staging, "bagit.txt", "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
        _write_tag(
            staging,
            "bag-info.txt",
            f"Bagging-Date: {datetime.datetime.now(datetime.UTC).date().isoformat()}\n"
            f"Payload-Oxum: {octets}.{files}\n"
            f"External-Description: pdi archive export ({plural(count, 'representation')}"
            f"{'' if series is None else ', series ' + series})\n"
            "Bag-Software-Agent: pdi\n",
        )
        tags = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt"]
        _write_tag(
            staging,
            "tagmanifest-sha256.txt",
            "".join(f"{_hash_file(staging / t)}  {t}\n" for t in tags),
        )
        if directory.exists():
            directory.rmdir()
        os.replace(staging, directory)
    except OSError as exc:
        raise StoreError(f"cannot write bag {directory}: {exc}") from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return count


def _copy_blob(archive: Archive, sha256: str, path: Path) -> int:
    """Write the blob ``sha256`` to ``path`` a verified chunk at a time, checking its SHA-256; its size."""
    reader = archive.store.open_blob(sha256, name=f"blob {sha256}")
    if reader is None:
        raise IntegrityError(f"blob {sha256} is missing; run pdi verify before exporting")
    digest = hashlib.sha256()
    size = 0
    with reader, path.open("wb") as out:
        for piece in reader.chunks():
            digest.update(piece)
            out.write(piece)
            size += len(piece)
    if digest.hexdigest() != sha256:
        raise IntegrityError(f"blob {sha256} is altered; run pdi verify before exporting")
    return size


class _HashingWriter:
    """A binary file that hashes and counts what is written to it."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()
        self.octets = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.handle.write(data)
        self.digest.update(data)
        self.octets += len(data)


def _write_catalog(
    archive: Archive, path: Path, series: list[SeriesRecord], selected: list[str] | None
) -> tuple[str, int, int]:
    """Write ``catalog.json`` as the catalog is read; its SHA-256, its size and how many representations it lists.

    One JSON object, as :func:`json.load` reads it: the series, then each
    representation on a line of its own (in listing order), then each
    statement about a document of the selection (oldest first).
    """

    def line(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    count = 0
    namer = Namer()
    with path.open("wb") as handle:
        out = _HashingWriter(handle)
        out.write(f'{{"format": {line(EXPORT_FORMAT)}, "version": {EXPORT_VERSION},'
                  f' "source": {line(archive.location)},\n"series": [')
        out.write(",".join(
            "\n" + line({"name": s.name, "parent": s.parent, "authority": s.authority, "created_at": s.created_at,
                         "access": s.access})
            for s in series
        ))
        out.write('\n],\n"representations": [')
        scope = None if selected is None else set(selected)
        query = ListQuery(series=selected[0]) if selected is not None and len(selected) == 1 else ListQuery()
        for r in archive.store.iter_representations(query):
            if scope is not None and r.series not in scope:
                continue
            out.write(("\n" if count == 0 else ",\n") + line(
                {"pdi": str(namer(r)), "series": r.series, "day": r.day.isoformat(),
                 "unique_id": r.unique_id, "serial": r.serial, "version": r.version,
                 "format": r.format, "media_type": r.media_type, "charset": r.charset,
                 "line_ending": r.line_ending, "sha256": r.sha256, "size": r.size,
                 "created_at": r.created_at, "stored": r.stored, "purged": r.purged}
            ))
            count += 1
        out.write('\n],\n"assertions": [')
        first = True
        for a in archive.store.iter_assertions():
            key = key_of(parse_pdi(a.subject))
            if scope is not None and key.series not in scope:
                continue
            out.write(("\n" if first else ",\n") + line(
                {"series": key.series, "day": key.day.isoformat(), "unique_id": key.unique_id,
                 "subject": a.subject, "key": a.key, "value": a.value, "who": a.who, "at": a.at}
            ))
            first = False
        out.write('\n],\n"withdrawals": [')
        first = True
        for w in archive.store.iter_withdrawals():
            if scope is not None and w.key.series not in scope:
                continue
            out.write(("\n" if first else ",\n") + line(
                {"series": w.key.series, "day": w.key.day.isoformat(), "unique_id": w.key.unique_id,
                 "version": w.version, "reason": w.reason, "who": w.who, "at": w.at, "purged": w.purged}
            ))
            first = False
        out.write('\n],\n"embargoes": [')
        first = True
        for key, version, until in archive.store.iter_embargoes():
            if scope is not None and key.series not in scope:
                continue
            out.write(("\n" if first else ",\n") + line(
                {"series": key.series, "day": key.day.isoformat(), "unique_id": key.unique_id,
                 "version": version, "until": until}
            ))
            first = False
        out.write("\n]}\n")
    return out.digest.hexdigest(), out.octets, count


def _write_tag(bag: Path, name: str, text: str) -> None:
    (bag / name).write_text(text, encoding="utf-8")


#: RFC 8493 §2.4: the checksum algorithms a manifest may name (``manifest-<algorithm>.txt``), as hashlib spells them
ALGORITHMS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")
#: bounds on the tag files of a stranger's bag: a manifest or fetch.txt line (a path is at most a few KiB;
#: a 100 MB line of zeros is not a bag), and the whole of bagit.txt and bag-info.txt (a few hundred bytes
#: in real bags; bag-info.txt becomes statements, each at most 64 KiB)
MAX_TAG_LINE_BYTES = 64 * 1024
MAX_BAG_INFO_BYTES = 1 << 20
_LINE_END = re.compile(rb"\r\n|\r|\n")
_MANIFEST = re.compile(r"(tag)?manifest-([a-z0-9]+)\.txt")


def _tag_lines(bag: Path, name: str, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """The lines of the tag file ``name`` (RFC 8493 §2: ended by LF, CR or CRLF), numbered from 1, decoded.

    A line longer than :data:`MAX_TAG_LINE_BYTES` is a :class:`LimitError`
    naming the file, the line and its byte offset, found once that many bytes
    are read: a stranger's tag file is never held whole.
    """
    number, offset, buffer = 0, 0, b""
    try:
        with (bag / name).open("rb") as handle:
            while True:
                chunk = handle.read(1 << 16)
                buffer += chunk
                while (end := _LINE_END.search(buffer)) is not None:
                    if end.group() == b"\r" and end.end() == len(buffer) and chunk:
                        break  # a CR the next chunk may follow with its LF
                    number += 1
                    yield number, _decode(buffer[: end.start()], bag, name, number, encoding)
                    offset += end.end()
                    buffer = buffer[end.end():]
                if len(buffer) > MAX_TAG_LINE_BYTES:
                    raise LimitError(
                        f"{bag / name}: line {number + 1} (at byte {offset}) is longer than"
                        f" {plural(MAX_TAG_LINE_BYTES, 'byte')}"
                    )
                if not chunk:
                    if buffer:
                        yield number + 1, _decode(buffer, bag, name, number + 1, encoding)
                    return
    except FileNotFoundError as exc:
        raise IntegrityError(f"{bag} is not a complete bag: {name} is missing") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read {bag / name}: {exc}") from exc


def _decode(line: bytes, bag: Path, name: str, number: int, encoding: str) -> str:
    try:
        return line.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(f"{bag / name} line {number} is not {encoding}: {exc.reason}", rule=name) from None


def _small_tag_file(bag: Path, name: str) -> None:
    """bagit.txt and bag-info.txt are read whole (their lines are labels): refuse one past :data:`MAX_BAG_INFO_BYTES`."""
    size = (bag / name).stat().st_size
    if size > MAX_BAG_INFO_BYTES:
        raise LimitError(f"{bag / name} is {plural(size, 'byte')}, more than {plural(MAX_BAG_INFO_BYTES, 'byte')}")


def _labels(bag: Path, name: str, encoding: str) -> list[tuple[str, str]]:
    """The ``Label: value`` lines of a tag file (RFC 8493 §2.1.1, §2.2.2), continuation lines joined."""
    _small_tag_file(bag, name)
    found: list[tuple[str, str]] = []
    for number, line in _tag_lines(bag, name, encoding):
        if line[:1] in (" ", "\t") and found:  # a continuation of the value above (§2.2.2)
            label, value = found[-1]
            found[-1] = (label, f"{value} {line.strip()}")
            continue
        if not line.strip():
            continue
        label, sep, value = line.partition(":")
        if not sep or not label.strip():
            raise ParseError(f"{bag / name} line {number} is not 'Label: value'", text=line, rule=name)
        found.append((label.strip(), value.strip()))
    return found


def _manifest_path(raw: str, bag: Path, name: str, number: int, *, percent: bool) -> str:
    """A manifest's file path, checked to stay in the bag; CR and LF un-escaped, and % with ``percent`` (RFC 8493 §2.1.3)."""
    # CR and LF are escaped by every version bagit-python writes (0.97 too), % only since 1.0
    path = re.sub(r"%(0[dDaA]|25)" if percent else r"%(0[dDaA])", lambda m: chr(int(m.group(1), 16)), raw)
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ParseError(f"{bag / name} line {number} names a path outside the bag", text=raw, rule="manifest")
    return path


def _read_manifest(bag: Path, name: str, algorithm: str, *, percent: bool, encoding: str) -> dict[str, str]:
    """``path -> checksum`` of one manifest (RFC 8493 §2.1.3: ``checksum 1*WSP filepath``)."""
    width = hashlib.new(algorithm).digest_size * 2
    entries: dict[str, str] = {}
    for number, line in _tag_lines(bag, name, encoding):
        if not line.strip():
            continue
        checksum, sep, rest = line.partition(" ")
        if not sep:
            checksum, sep, rest = line.partition("\t")
        path = rest.lstrip(" \t")
        if not sep or len(checksum) != width or not all(c in "0123456789abcdefABCDEF" for c in checksum) or not path:
            raise ParseError(f"{name} line {number} is not '<{algorithm}> <path>'", text=line, rule="manifest")
        path = _manifest_path(path, bag, name, number, percent=percent)
        if path in entries:
            raise ParseError(f"{name} line {number} lists {path} a second time", text=line, rule="manifest")
        entries[path] = checksum.lower()
    return entries


def _payload_files(bag: Path) -> set[str]:
    """Every file under ``data/``, as a manifest names it; a symbolic link or anything but a file is refused."""
    found: set[str] = set()
    data = bag / "data"
    if data.is_symlink():
        raise IntegrityError(f"{bag}: data is a symbolic link; a bag's payload is in the bag")
    if not data.is_dir():
        return found
    for folder, dirs, files in os.walk(data, followlinks=False):
        for entry in [*dirs, *files]:
            path = Path(folder) / entry
            if path.is_symlink():
                raise IntegrityError(f"{path.relative_to(bag).as_posix()} in {bag} is a symbolic link;"
                                     " a bag's payload is in the bag")
        for entry in files:
            path = Path(folder) / entry
            if not path.is_file():
                raise IntegrityError(f"{path.relative_to(bag).as_posix()} in {bag} is not a regular file")
            found.add(path.relative_to(bag).as_posix())
    return found


def _spelled(algorithm: str) -> str:
    """An algorithm as its standard spells it: ``MD5``, ``SHA-1``, ``SHA-256``."""
    return "MD5" if algorithm == "md5" else algorithm.upper().replace("SHA", "SHA-")


def _hash_all(path: Path, algorithms: set[str]) -> dict[str, str]:
    """Each of ``algorithms``' checksum of the file at ``path`` (and its SHA-256), in one read."""
    digests = {algorithm: hashlib.new(algorithm) for algorithm in algorithms | {"sha256"}}
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            for digest in digests.values():
                digest.update(chunk)
    return {algorithm: digest.hexdigest() for algorithm, digest in digests.items()}


@dataclass(frozen=True)
class BagInfo:
    """What :func:`validate_bag` found: each payload file's SHA-256 (computed), and bag-info.txt's labels in order."""

    payload: dict[str, str]
    labels: list[tuple[str, str]]
    version: str


def _declaration(bag: Path) -> tuple[str, str]:
    """bagit.txt (RFC 8493 §2.1.1): the BagIt version and the tag files' character encoding."""
    if not (bag / "bagit.txt").is_file():
        raise NotFoundError(f"{bag} is not a bag (no bagit.txt)")
    found = dict(_labels(bag, "bagit.txt", "utf-8"))
    version = found.get("BagIt-Version")
    if version is None:
        raise IntegrityError(f"{bag / 'bagit.txt'} does not declare a BagIt-Version")
    if not re.fullmatch(r"\d+\.\d+", version):
        raise ParseError(f"{bag / 'bagit.txt'}: BagIt-Version {version!r} is not M.N", rule="bagit.txt")
    encoding = found.get("Tag-File-Character-Encoding", "UTF-8")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UnsupportedError(f"{bag / 'bagit.txt'}: Tag-File-Character-Encoding {encoding!r} is not known") from None
    return version, encoding


def validate_bag(bag: Path) -> BagInfo:
    """Check a bag is complete and valid (RFC 8493 §3), whichever tool made it.

    bagit.txt declares the version and the tag files' encoding (§2.1.1);
    every payload manifest (``manifest-<algorithm>.txt``, any algorithm of
    :data:`ALGORITHMS`, §2.1.3) lists every file under ``data/`` and nothing
    else, each with its checksum; every tag manifest's files (§2.2.1) match
    theirs; a ``fetch.txt`` (§2.2.3) that lists a file is refused (pdi
    imports complete bags only); the Payload-Oxum of bag-info.txt (§2.2.2),
    when given, is the payload's. Each file is read once, hashed with every
    algorithm its manifests name and with SHA-256. Tag files are read within
    :data:`MAX_TAG_LINE_BYTES` a line; a payload file that is a symbolic
    link is refused (a bag's payload is in the bag).
    """
    version, encoding = _declaration(bag)
    percent = tuple(int(n) for n in version.split(".")) >= (1, 0)
    names = sorted(p.name for p in bag.iterdir() if p.is_file() and _MANIFEST.fullmatch(p.name))
    payload_manifests: dict[str, dict[str, str]] = {}
    tag_manifests: dict[str, dict[str, str]] = {}
    for name in names:
        match = _MANIFEST.fullmatch(name)
        assert match is not None
        algorithm = match.group(2)
        if algorithm not in ALGORITHMS:
            raise UnsupportedError(f"{bag / name}: checksum algorithm {algorithm} is not one of {', '.join(ALGORITHMS)}")
        entries = _read_manifest(bag, name, algorithm, percent=percent, encoding=encoding)
        (tag_manifests if match.group(1) else payload_manifests)[algorithm] = entries
    if not payload_manifests:
        raise IntegrityError(f"{bag} is not a complete bag: it has no payload manifest (manifest-<algorithm>.txt)")
    if (bag / "fetch.txt").is_file():
        for number, line in _tag_lines(bag, "fetch.txt", encoding):
            if line.strip():
                raise UnsupportedError(
                    f"{bag / 'fetch.txt'} line {number} lists a file to fetch ({line.strip()[:200]}): pdi imports"
                    " only complete bags (RFC 8493 §2.2.3); fetch its files and remove fetch.txt"
                )
    on_disk = _payload_files(bag)
    listed: set[str] = set()
    for algorithm, entries in payload_manifests.items():
        outside = sorted(p for p in entries if not p.startswith("data/"))
        if outside:
            raise ParseError(f"manifest-{algorithm}.txt lists {outside[0]}, which is not under data/", rule="manifest")
        unlisted = on_disk - set(entries)
        if unlisted:
            raise IntegrityError(
                f"payload files not in manifest-{algorithm}.txt: {', '.join(sorted(unlisted)[:20])}"
            )
        listed |= set(entries)
    payload: dict[str, str] = {}
    octets = 0
    for path in sorted(listed):
        file = bag / path
        if path not in on_disk:
            raise IntegrityError(f"{bag} is incomplete: {path} is missing")
        wanted = {algorithm for algorithm, entries in payload_manifests.items() if path in entries}
        if len(wanted) != len(payload_manifests):
            missing = sorted(set(payload_manifests) - wanted)
            raise IntegrityError(f"{path} in {bag} is not in manifest-{missing[0]}.txt")
        found = _hash_all(file, wanted)
        for algorithm in sorted(wanted):
            if found[algorithm] != payload_manifests[algorithm][path]:
                raise IntegrityError(f"{path} in {bag} does not match its {_spelled(algorithm)} in the manifest")
        payload[path] = found["sha256"]
        octets += file.stat().st_size
    for algorithm, entries in tag_manifests.items():
        for path, checksum in entries.items():
            if path.startswith("data/"):
                raise ParseError(f"tagmanifest-{algorithm}.txt lists the payload file {path}", rule="manifest")
            file = bag / path
            if file.is_symlink() or not file.is_file() or _hash_all(file, {algorithm})[algorithm] != checksum:
                raise IntegrityError(f"tag file {path} in {bag} does not match its {_spelled(algorithm)}")
    labels: list[tuple[str, str]] = []
    if (bag / "bag-info.txt").is_file():
        labels = _labels(bag, "bag-info.txt", encoding)
        for label, value in labels:
            if label == "Payload-Oxum" and value != f"{octets}.{len(payload)}":
                raise IntegrityError(f"Payload-Oxum says {value}, the payload is {octets}.{len(payload)}")
    return BagInfo(payload, labels, version)


class _CatalogBytes:
    """catalog.json opened for one pass, hashed as it is read: :meth:`check` says whether it is the file validated."""

    def __init__(self, path: Path, sha256: str) -> None:
        self.path = path
        self.sha256 = sha256
        self.handle = path.open("rb")
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.digest.update(data)
        return data

    def check(self) -> None:
        """At the end of a pass: the octets read are still the ones the manifest names."""
        while self.read(1 << 20):
            pass
        if self.digest.hexdigest() != self.sha256:
            raise IntegrityError(f"{self.path} changed during the import; nothing was imported")

    def close(self) -> None:
        self.handle.close()


class _Section:
    """One top-level list of catalog.json, streamed afresh at each iteration (one object at a time).

    Each pass hashes the octets it parses and ends with an
    :class:`IntegrityError` if they are no longer those the bag's manifest
    names (a catalog changed between two passes of an import).
    """

    def __init__(self, path: Path, sha256: str, name: str) -> None:
        self.path = path
        self.sha256 = sha256
        self.name = name

    def __iter__(self) -> Iterator[dict[str, Any]]:
        import ijson

        try:
            source = _CatalogBytes(self.path, self.sha256)
        except OSError as exc:
            raise IntegrityError(f"cannot read {self.path}: {exc}") from exc
        try:
            for item in ijson.items(source, f"{self.name}.item", use_float=True):
                if not isinstance(item, dict):
                    raise ParseError(f"catalog.json: {self.name} must be a list of objects", rule="catalog")
                yield item
            source.check()
        except ijson.JSONError as exc:
            raise ParseError(f"catalog.json is not JSON: {exc}", rule="catalog") from exc
        except OSError as exc:
            raise IntegrityError(f"cannot read {self.path}: {exc}") from exc
        finally:
            source.close()


@dataclass(frozen=True)
class _Header:
    """What catalog.json says about itself: its top-level values other than lists, and which lists it has."""

    values: dict[str, Any]
    lists: dict[str, int]  # each top-level list and how many items it holds


def _catalog_header(path: Path) -> _Header:
    """One streamed pass over catalog.json: its top-level scalars, and its lists with their lengths."""
    import ijson

    values: dict[str, Any] = {}
    lists: dict[str, int] = {}
    top = True
    key = ""
    depth = 0
    try:
        with path.open("rb") as handle:
            for prefix, event, value in ijson.parse(handle, use_float=True):
                if depth == 0 and event != "start_map":
                    raise ParseError("this bag is not a pdi archive export", rule="catalog")
                if event in ("start_map", "start_array"):
                    depth += 1
                    if depth == 2 and event == "start_array":
                        lists[key] = 0
                    elif depth == 3 and prefix == f"{key}.item":
                        lists[key] += 1
                    elif depth == 2:
                        values[key] = {}  # an object where a list or a value belongs
                elif event in ("end_map", "end_array"):
                    depth -= 1
                elif depth == 1 and event == "map_key":
                    key = str(value)
                elif depth == 1:
                    values[key] = value
                elif depth == 2 and prefix == f"{key}.item" and key in lists:
                    lists[key] += 1  # a scalar item (refused later: items are objects)
                top = False
    except ijson.JSONError as exc:
        raise ParseError(f"catalog.json is not JSON: {exc}", rule="catalog") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read bag catalog {path}: {exc}") from exc
    if top:
        raise ParseError("catalog.json is empty", rule="catalog")
    return _Header(values, lists)


def _field(entry: dict[str, Any], name: str, kind: type) -> Any:
    value = entry.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ParseError(f"catalog.json: {name} must be {kind.__name__}", rule="catalog")
    return value


def _optional(entry: dict[str, Any], name: str, kind: type) -> Any:
    return None if entry.get(name) is None else _field(entry, name, kind)


def _object_reader(bag: Path, sha256: str) -> Callable[[], bytes]:
    """A function that reads one object of the bag when the store writes it, checking it again.

    The store reads objects one at a time, so an import never holds more
    than one in memory; the second hash catches a file changed since
    :func:`validate_bag` hashed it (the import then stops, all or nothing).
    """

    def read() -> bytes:
        path = bag / "data" / "objects" / sha256
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise IntegrityError(f"cannot read bag object {path}: {exc}") from exc
        if hashlib.sha256(data).hexdigest() != sha256:
            raise IntegrityError(f"bag object {path} changed during the import: its SHA-256 is no longer its name")
        return data

    return read


def _moment(text: str, what: str) -> datetime.datetime:
    """A timestamp of the catalog (``…Z``, GMT) as a value; a ParseError naming ``what`` if it is not one."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ParseError(f"catalog.json: {what}: {text!r} is not a timestamp", rule="catalog") from exc
    if moment.tzinfo is None:
        raise ParseError(f"catalog.json: {what}: {text!r} has no time zone", rule="catalog")
    return moment.astimezone(datetime.UTC)


def _check_as_deposited(record: RepresentationRecord, pdi: str, now: datetime.datetime) -> None:
    """What minting and depositing would have refused, refused on import too.

    A name is minted on the GMT day of its deposit (a later version, or a
    name with a foreign id dated by its source, may be deposited later),
    never in the future; its
    format is a canonical token whose media type is the registry's; a charset
    is a registered one on a text format; the line-ending convention is one
    pdi records; the size is within the deposit limit.
    """
    from pdi import formats
    from pdi.archive import is_text_format
    from pdi.archive.fixity import LINE_ENDINGS

    created = _moment(record.created_at, f"{pdi} created_at")
    if created > now:
        raise ParseError(f"catalog.json: {pdi} was deposited in the future ({record.created_at})", rule="catalog")
    # Version 1 of a serial name is minted on the day of its deposit. A later version
    # is deposited on a later day, and a name with a foreign id may be dated by where
    # it came from (a web archive's capture date: Archive.deposit(day=)); none is
    # deposited before the day it names.
    later = record.day < created.date() and (record.serial is None or record.version > 1)
    if record.day != created.date() and not later:
        raise ParseError(
            f"catalog.json: {pdi} names the day {record.day}, but was deposited on {created.date()} (GMT)",
            rule="catalog",
        )
    if formats.canonical_token(record.format) != record.format:
        raise ParseError(f"catalog.json: {pdi}: format {record.format!r} is not a canonical token", rule="catalog")
    if record.media_type != formats.media_type_for(record.format):
        raise ParseError(
            f"catalog.json: {pdi}: media type {record.media_type!r} is not that of format"
            f" {record.format} ({formats.media_type_for(record.format)})",
            rule="catalog",
        )
    if record.charset is not None:
        if not is_text_format(record.format):
            raise ParseError(f"catalog.json: {pdi}: a charset on a format that is not text", rule="catalog")
        if formats.registered_charset(record.charset) != record.charset:
            raise ParseError(f"catalog.json: {pdi}: charset {record.charset!r} is not a registered name", rule="catalog")
    if record.line_ending is not None and record.line_ending not in LINE_ENDINGS:
        raise ParseError(f"catalog.json: {pdi}: line-ending convention {record.line_ending!r}", rule="catalog")
    if not 0 <= record.size < 1 << 63:
        raise ParseError(f"catalog.json: {pdi}: size {record.size}", rule="catalog")
    if record.stored not in (STORED_EXACT, STORED_CANONICAL):
        raise ParseError(f"catalog.json: {pdi}: stored {record.stored!r} is neither exact nor canonical", rule="catalog")


def _check_text_decodes(path: Path, record: RepresentationRecord, pdi: str) -> None:
    """A text's octets decode in its charset, as a deposit requires even with ``--force``.

    Read a piece at a time through the deposit's own check
    (:class:`pdi.archive.content.TextCheck`), so a large text costs one piece
    of memory. The UTF-8-declared-as-Latin-1 refusal is left out: a deposit
    may have been forced past it.
    """
    from pdi.archive.blobs import BlobInfo
    from pdi.archive.content import TextCheck

    assert record.charset is not None
    check = TextCheck(record.charset, detected=False, source=f"catalog.json: {pdi}")
    try:
        with path.open("rb") as stream:
            while piece := stream.read(1 << 20):
                check.update(piece)
    except OSError as exc:
        raise IntegrityError(f"cannot read bag object {path}: {exc}") from exc
    check.finish(BlobInfo(record.sha256, record.size))


def _check_statement(a: AssertionRecord, minted_at: str | None, now: datetime.datetime) -> None:
    """A statement is made by someone, after its document was minted and not in the future."""

    at = _moment(a.at, f"the statement {a.key!r} about {a.subject}")
    if at > now:
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} is dated in the future ({a.at})", rule="catalog")
    if minted_at is not None and at < _moment(minted_at, a.subject):
        raise ParseError(
            f"catalog.json: the statement {a.key!r} about {a.subject} is dated {a.at},"
            f" before its document was minted ({minted_at})",
            rule="catalog",
        )
    if not STATEMENT_KEY.match(a.key) or len(a.value) > MAX_ASSERTION_VALUE or not a.who.strip():
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} is malformed", rule="catalog")
    if any(ch in a.who for ch in "\r\n\x00"):
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject}: who holds a control character", rule="catalog")


def _record(r: dict[str, Any], now: datetime.datetime, *, check: bool = True) -> RepresentationRecord:
    """A representation of catalog.json as a record, refused (a ParseError naming it) unless a deposit could have made it.

    ``check=False`` builds the record only: for the passes after the one
    that checked it, which end by making sure catalog.json is still the file
    that was checked (:class:`_CatalogBytes`).
    """

    try:
        record = RepresentationRecord(
            series=_field(r, "series", str),
            day=datetime.date.fromisoformat(_field(r, "day", str)),
            unique_id=_field(r, "unique_id", str),
            serial=_optional(r, "serial", int),
            version=_field(r, "version", int),
            format=_field(r, "format", str),
            media_type=_field(r, "media_type", str),
            charset=_optional(r, "charset", str),
            line_ending=_optional(r, "line_ending", str),
            sha256=_field(r, "sha256", str),
            size=_field(r, "size", int),
            created_at=_field(r, "created_at", str),
            # a bag made before schema 4 does not say: its texts were kept CRLF-canonical
            stored=_optional(r, "stored", str)
            or (STORED_CANONICAL if r.get("line_ending") is not None else STORED_EXACT),
            purged=_optional(r, "purged", str),
        )
        pdi = _field(r, "pdi", str)
        if not check:
            return record
        if pdi != str(record_name(record)):
            raise ParseError(f"catalog.json: {pdi} does not match its own parts", rule="catalog")
    except PDIError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc
    if not _SHA256.fullmatch(record.sha256) or record.version < 1:
        raise ParseError(f"catalog.json: bad entry for {pdi}", rule="catalog")
    spelled = int(record.unique_id) if spells_serial(record.unique_id) else None
    if record.serial != spelled:
        raise ParseError(f"catalog.json: bad serial for {pdi}", rule="catalog")
    _check_as_deposited(record, pdi, now)
    if record.purged is not None:  # purged where it came from: no object, and none wanted
        _moment(record.purged, f"{pdi} purged")
    return record


def _document_key(entry: dict[str, Any]) -> DocumentKey:
    try:
        return DocumentKey(
            _field(entry, "series", str), datetime.date.fromisoformat(_field(entry, "day", str)),
            _field(entry, "unique_id", str),
        )
    except ValueError as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc


class _Representations:
    """The representations of catalog.json with a reader of each one's object, streamed afresh at each iteration."""

    def __init__(self, section: _Section, bag: Path, now: datetime.datetime) -> None:
        self.section = section
        self.bag = bag
        self.now = now
        #: Set once a whole pass has checked every record (the later passes only build them).
        self.checked = False

    def __iter__(self) -> Iterator[tuple[RepresentationRecord, BlobSource]]:
        check = not self.checked
        for entry in self.section:
            record = _record(entry, self.now, check=check)
            yield record, (b"" if record.purged is not None else _object_reader(self.bag, record.sha256))
        self.checked = True


class _Statements:
    """The statements of catalog.json, each under the document it is about, streamed."""

    def __init__(self, section: _Section) -> None:
        self.section = section

    def __iter__(self) -> Iterator[tuple[DocumentKey, AssertionRecord]]:
        for a in self.section:
            yield _document_key(a), AssertionRecord(
                0, _field(a, "subject", str), _field(a, "key", str), _field(a, "value", str),
                _field(a, "who", str), _field(a, "at", str),
            )


class _Withdrawals:
    """The withdrawals of catalog.json, streamed (none in a bag made before withdrawal existed)."""

    def __init__(self, section: _Section | None) -> None:
        self.section = section

    def __iter__(self) -> Iterator[WithdrawalRecord]:
        for w in self.section or ():
            yield WithdrawalRecord(
                _document_key(w), _optional(w, "version", int), _field(w, "reason", str), _field(w, "who", str),
                _field(w, "at", str), purged=w.get("purged") is True,
            )


class _Minted:
    """When each document of the bag was minted (its version 1 deposited), kept on disk, not in memory.

    A scratch SQLite database (SQLite's private temporary database on disk,
    gone when closed): an import of millions of names looks a statement's
    document up here without holding them all.
    """

    def __init__(self) -> None:
        import sqlite3

        self._db = sqlite3.connect("")
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE minted (series TEXT, day TEXT, unique_id TEXT, at TEXT,"
                         " PRIMARY KEY (series, day, unique_id)) WITHOUT ROWID")
        self._pending: list[tuple[str, str, str, str]] = []

    def add(self, record: RepresentationRecord) -> None:
        self._pending.append((record.series, record.day.isoformat(), record.unique_id, record.created_at))
        if len(self._pending) >= 5000:
            self._flush()

    def _flush(self) -> None:
        self._db.executemany("INSERT OR IGNORE INTO minted VALUES (?, ?, ?, ?)", self._pending)
        self._pending = []

    def at(self, key: DocumentKey) -> str | None:
        if self._pending:
            self._flush()
        row = self._db.execute("SELECT at FROM minted WHERE series = ? AND day = ? AND unique_id = ?",
                               (key.series, key.day.isoformat(), key.unique_id)).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._db.close()


def import_bag(
    archive: Archive,
    bag: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    series: str | None = None,
    deposited: Callable[[PDI, str], None] | None = None,
) -> int:
    """Validate the bag, then import all of it into the archive in one transaction.

    With ``series``, the bag is one another tool made (:func:`import_payload`):
    its payload files become new documents of ``series``. Without, it is one
    :func:`export_bag` wrote, and every name in it moves as it was.

    ``catalog.json`` is never read whole: one streamed pass finds its
    sections and counts them, a second checks every representation (and
    each object beside it) and statement, and the store then reads the
    representations again as it stages the objects and as it writes the
    rows (each pass checking that the file is still the one the manifest
    names). Memory grows with the distinct objects and the days, not with
    the names.
    """

    now = archive.now()
    try:
        info = validate_bag(bag)
    except OSError as exc:
        raise IntegrityError(f"cannot read bag {bag}: {exc}") from exc
    if series is not None:
        if is_pdi_export(bag):
            raise UnsupportedError(f"{bag} is a bag pdi exported: it carries its own series (import it without one)")
        return import_payload(archive, bag, info, series, progress=progress, deposited=deposited)
    manifest = info.payload
    path = bag / "data" / "catalog.json"
    catalog_sha = manifest.get("data/catalog.json")
    if catalog_sha is None:
        raise IntegrityError(
            f"{bag} holds no data/catalog.json in its manifest: it is not a bag pdi exported"
            " (to import its payload files as new documents, give a series: pdi import --series S)"
        )
    header = _catalog_header(path)
    if header.values.get("format") != EXPORT_FORMAT:
        raise ParseError(
            "this bag is not a pdi archive export (to import its payload files as new documents,"
            " give a series: pdi import --series S)", rule="catalog",
        )
    if header.values.get("version") != EXPORT_VERSION:
        raise ParseError(f"unknown export version {header.values.get('version')!r}", rule="catalog")
    for name in ("series", "representations", "assertions"):
        if name not in header.lists:
            raise ParseError(f"catalog.json: {name} must be a list of objects", rule="catalog")
    sections = {name: _Section(path, catalog_sha, name) for name in header.lists}
    minted = _Minted()
    try:
        series_records = [
            SeriesRecord(
                _field(s, "name", str), _optional(s, "parent", str),
                _field(s, "authority", str), _field(s, "created_at", str),
                check_access(_optional(s, "access", str) or PUBLIC),  # bags made before: public
            )
            for s in sections["series"]
        ]
        for one in series_records:
            if canonical_series(one.name) != one.name:
                raise ParseError(f"catalog.json: series {one.name!r} is not canonical",
                                 rule="catalog")
        reps = _Representations(sections["representations"], bag, now)
        sizes: dict[str, int] = {}  # each object looked at once, however many names share it
        decoded: set[tuple[str, str]] = set()  # and each text decoded once in each charset
        total = header.lists["representations"]
        for done, (record, _) in enumerate(reps, start=1):
            if record.version == 1:
                minted.add(record)
            if record.purged is not None:  # no object to look at
                if progress is not None:
                    progress(done, max(total, done))
                continue
            size = sizes.get(record.sha256)
            if size is None:
                # validate_bag hashed every payload file against the manifest: the
                # object is right when its manifest checksum is its own name.
                object_path = f"data/objects/{record.sha256}"
                if manifest.get(object_path) != record.sha256:
                    raise IntegrityError(f"object {record.sha256} is not in the bag's manifest")
                size = sizes[record.sha256] = (bag / object_path).stat().st_size
            if size != record.size:
                raise IntegrityError(f"object {record.sha256} does not match its catalog entry")
            if record.charset is not None and (record.sha256, record.charset) not in decoded:
                _check_text_decodes(bag / "data" / "objects" / record.sha256, record, str(record_name(record)))
                decoded.add((record.sha256, record.charset))
            if progress is not None:
                progress(done, max(total, done))
        statements = _Statements(sections["assertions"])
        for about, a in statements:
            if key_of(parse_pdi(a.subject)) != about:
                raise ParseError(
                    f"catalog.json: the statement about {a.subject} is filed under another"
                    " document",
                    rule="catalog",
                )
            _check_statement(a, minted.at(about), now)
        withdrawals = _Withdrawals(sections.get("withdrawals"))
        for _ in withdrawals:
            pass  # each one well formed before anything is staged
        embargoes = [  # few: a list (bags made before embargoes existed have none)
            (_document_key(e), _optional(e, "version", int), parse_until(_field(e, "until", str)))
            for e in sections.get("embargoes") or ()
        ]
    except PDIError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc
    except FileNotFoundError as exc:
        raise IntegrityError(f"bag object missing: {exc.filename}") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read bag {bag}: {exc}") from exc
    finally:
        minted.close()
    source = header.values.get("source")

    def new_document(first: RepresentationRecord) -> AuditRecord:
        # Who brought these names in, and from which bag, goes to the audit log.
        return AuditRecord(
            timestamp(now), archive.who, "import", str(record_name(first, generic=True)),
            f"from the bag {bag} (catalog.json source {source!r})",
        )

    return archive.store.import_all(series_records, reps, statements, (), withdrawals, embargoes, new_document=new_document)


# --- bags other tools made ----------------------------------------------------------------


def is_pdi_export(bag: Path) -> bool:
    """Whether ``bag`` is one :func:`export_bag` wrote: its ``data/catalog.json`` opens with pdi's ``format``.

    Reads the first few JSON events only; any other catalog.json (or none) is a bag another tool made.
    """
    import ijson

    path = bag / "data" / "catalog.json"
    if not path.is_file() or path.is_symlink():
        return False
    try:
        with path.open("rb") as handle:
            for count, (prefix, event, value) in enumerate(ijson.parse(handle)):
                if prefix == "format" and event == "string":
                    return bool(value == EXPORT_FORMAT)
                if count > 16:
                    return False
    except (ijson.JSONError, OSError, UnicodeDecodeError):
        return False
    return False


def _payload_format(path: Path) -> str:
    """The format a payload file is deposited in: its name's media type, unless its bytes say otherwise.

    The type ``mimetypes`` gives the name, when pdi knows it and the first
    octets do not contradict it (:func:`pdi.archive.content.check_format`)
    and, for a text, every octet decodes in the charset a deposit would
    detect; otherwise ``application/octet-stream``, which claims nothing: a
    bag's files are kept whatever their names say.
    """
    from pdi import formats
    from pdi.archive.blobs import BlobInfo
    from pdi.archive.content import SNIFF_BYTES, TextCheck, charset_from_head, check_format, is_text

    unknown = formats.token_for("application/octet-stream")
    media_type, encoding = mimetypes.guess_type(path.name, strict=False)
    if media_type is None or encoding is not None:
        return unknown
    try:
        token = formats.token_for(media_type)
        media_type = formats.media_type_for(token)
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
        check_format(head, token, media_type)
        if is_text(token, media_type):
            check = TextCheck(formats.charset_for(token) or charset_from_head(head), detected=True)
            size = 0
            with path.open("rb") as handle:
                while piece := handle.read(1 << 20):
                    check.update(piece)
                    size += len(piece)
            check.finish(BlobInfo("", size))
    except PDIError:
        return unknown
    return token


def _payload_reader(path: Path, sha256: str, name: str) -> Iterator[bytes]:
    """The octets of a payload file, opened when first read, hashed again: a file changed since validation is refused."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while piece := handle.read(1 << 20):
                digest.update(piece)
                yield piece
    except OSError as exc:
        raise IntegrityError(f"cannot read bag file {name}: {exc}") from exc
    if digest.hexdigest() != sha256:
        raise IntegrityError(f"{name} changed during the import; nothing was imported")


def _statement_key(label: str) -> str:
    """The statement key a bag-info.txt label is kept under: ``bag-info:`` and the label, other characters as ``-``."""
    return "bag-info:" + re.sub(r"[^A-Za-z0-9._:-]", "-", label)[:180]


def import_payload(
    archive: Archive,
    bag: Path,
    info: BagInfo,
    series: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    deposited: Callable[[PDI, str], None] | None = None,
) -> int:
    """The payload files of a valid bag another tool made, as new documents of ``series`` (the documents all or none, their statements after); how many.

    Each file under ``data/`` is a document minted today, its foreign id its
    path under ``data/`` (a daily serial when that path cannot be an id: all
    digits, say), in the format :func:`_payload_format` finds, its octets
    exactly as they are. They are deposited in one batch
    (:meth:`pdi.archive.Archive.deposit_batch`): a refusal deposits none, and
    importing the same bag again on the same day is refused (a name is
    minted once). Then each gets the statements ``bagit:path`` (its path in
    the bag) and, for each label of bag-info.txt, ``bag-info:<label>`` (the
    label's values, a line each), each statement in a transaction of its own
    as the import of a WARC makes them (RFC 8493 §2.2.2 for the labels).
    """
    from pdi.archive.content import Content

    series = canonical_series(series)
    if archive.store.get_series(series) is None:
        raise NotFoundError(f"series {series} is not registered (pdi series add {series})")
    statements: dict[str, list[str]] = {}
    for label, value in info.labels:
        statements.setdefault(_statement_key(label), []).append(value)
    joined = {key: "\n".join(values) for key, values in statements.items()}
    for key, value in joined.items():
        if len(value) > MAX_ASSERTION_VALUE:
            raise LimitError(
                f"{bag / 'bag-info.txt'}: {key.removeprefix('bag-info:')} is longer than"
                f" {plural(MAX_ASSERTION_VALUE, 'character')}, the longest statement"
            )
    paths = sorted(info.payload)
    if not paths:
        return 0
    day = archive.now().date()
    items: list[tuple[list[Content], str | None]] = []
    for done, path in enumerate(paths, start=1):
        token = _payload_format(bag / path)
        foreign_id: str | None = path.removeprefix("data/")
        try:
            assert foreign_id is not None
            checked_foreign_id(series, foreign_id, token, day)
        except PDIError:
            foreign_id = None
        items.append(([Content(_payload_reader(bag / path, info.payload[path], path), token, source=path)], foreign_id))
        if progress is not None:
            progress(done, 2 * len(paths))
    try:
        deposits = archive.deposit_batch(series, items)
    except PDIError as exc:
        found = re.match(r"item (\d+): ", str(exc))
        if found is None:
            raise
        where = f"{paths[int(found.group(1))]} in {bag}: "
        if isinstance(exc, ParseError):
            raise ParseError(where + exc.reason[found.end():], text=exc.text, offset=exc.offset, rule=exc.rule) from None
        raise type(exc)(where + str(exc)[found.end():]) from None  # the other errors a deposit raises take a message alone
    for done, (path, deposit) in enumerate(zip(paths, deposits, strict=True), start=1):
        name = deposit[0]
        archive.annotate(name, "bagit:path", path)
        for key, value in joined.items():
            archive.annotate(name, key, value)
        if deposited is not None:
            deposited(name, path)
        if progress is not None:
            progress(len(paths) + done, 2 * len(paths))
    return len(deposits)
