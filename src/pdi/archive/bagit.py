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

Every name and every byte survives the move: :func:`import_bag` checks the
bag is complete and valid (every payload file listed, every checksum right,
the Payload-Oxum right) before the target store sees anything, then imports
everything in one transaction of the target store, reading the objects one at
a time as the store writes them (so an import holds one object in memory, not
the bag) and hashing each again as it is read.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pdi._wording import plural
from pdi.archive.access import PUBLIC, check_access, parse_until
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
    NotFoundError,
    ParseError,
    PDIError,
    StoreError,
)
from pdi.identifier import spells_serial

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
    from pdi.archive import canonical_series

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
    from pdi.archive import _key_of, _Namer, parse_pdi

    def line(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    count = 0
    namer = _Namer()
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
            key = _key_of(parse_pdi(a.subject))
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


def _read_manifest(bag: Path, name: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    try:
        lines = (bag / name).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise IntegrityError(f"{bag} is not a complete bag: {name} is missing") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise IntegrityError(f"cannot read {bag / name}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        checksum, sep, path = line.partition(" ")
        path = path.lstrip(" ")
        if not sep or len(checksum) != 64 or not path:
            raise ParseError(
                f"{name} line {number} is not '<sha256> <path>'", text=line, rule="manifest"
            )
        parts = Path(path).parts
        if Path(path).is_absolute() or ".." in parts:
            raise ParseError(
                f"{name} line {number} names a path outside the bag", text=line, rule="manifest"
            )
        entries[path] = checksum.lower()
    return entries


def validate_bag(bag: Path) -> dict[str, str]:
    """Check a bag is complete and valid (RFC 8493 §3); returns its payload manifest."""
    if not (bag / "bagit.txt").is_file():
        raise NotFoundError(f"{bag} is not a bag (no bagit.txt)")
    declaration = (bag / "bagit.txt").read_text(encoding="utf-8", errors="replace")
    if "BagIt-Version:" not in declaration:
        raise IntegrityError(f"{bag / 'bagit.txt'} does not declare a BagIt-Version")
    manifest = _read_manifest(bag, "manifest-sha256.txt")
    on_disk = {
        p.relative_to(bag).as_posix() for p in (bag / "data").rglob("*") if p.is_file()
    } if (bag / "data").is_dir() else set()
    unlisted = on_disk - set(manifest)
    if unlisted:
        raise IntegrityError(f"payload files not in the manifest: {', '.join(sorted(unlisted))}")
    octets = 0
    for path, checksum in manifest.items():
        file = bag / path
        if not file.is_file():
            raise IntegrityError(f"{bag} is incomplete: {path} is missing")
        if _hash_file(file) != checksum:
            raise IntegrityError(f"{path} in {bag} does not match its SHA-256 in the manifest")
        octets += file.stat().st_size
    if (bag / "tagmanifest-sha256.txt").is_file():
        for path, checksum in _read_manifest(bag, "tagmanifest-sha256.txt").items():
            if not (bag / path).is_file() or _hash_file(bag / path) != checksum:
                raise IntegrityError(f"tag file {path} in {bag} does not match its SHA-256")
    info = (bag / "bag-info.txt")
    if info.is_file():
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Payload-Oxum:"):
                expected = line.split(":", 1)[1].strip()
                if expected != f"{octets}.{len(manifest)}":
                    raise IntegrityError(
                        f"Payload-Oxum says {expected}, the payload is {octets}.{len(manifest)}"
                    )
    return manifest


def _entries(catalog: dict[str, Any], name: str) -> list[dict[str, Any]]:
    entries = catalog.get(name)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ParseError(f"catalog.json: {name} must be a list of objects", rule="catalog")
    return entries


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


def _timestamp(moment: datetime.datetime) -> str:
    from pdi.archive import _timestamp as stamp

    return stamp(moment)


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

    A name is minted on the GMT day of its deposit, never in the future; its
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
    if record.day != created.date():
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


def _check_statement(a: AssertionRecord, minted_at: str | None, now: datetime.datetime) -> None:
    """A statement is made by someone, after its document was minted and not in the future."""
    from pdi.archive import _KEY, MAX_ASSERTION_VALUE

    at = _moment(a.at, f"the statement {a.key!r} about {a.subject}")
    if at > now:
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} is dated in the future ({a.at})", rule="catalog")
    if minted_at is not None and at < _moment(minted_at, a.subject):
        raise ParseError(
            f"catalog.json: the statement {a.key!r} about {a.subject} is dated {a.at},"
            f" before its document was minted ({minted_at})",
            rule="catalog",
        )
    if not _KEY.match(a.key) or len(a.value) > MAX_ASSERTION_VALUE or not a.who.strip():
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject} is malformed", rule="catalog")
    if any(ch in a.who for ch in "\r\n\x00"):
        raise ParseError(f"catalog.json: the statement {a.key!r} about {a.subject}: who holds a control character", rule="catalog")


def import_bag(
    archive: Archive,
    bag: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Validate the bag, then import all of it into the archive in one transaction."""
    from pdi.archive import _key_of, _name, canonical_series, parse_pdi

    now = archive._now()
    try:
        manifest = validate_bag(bag)
        raw = (bag / "data" / "catalog.json").read_bytes()
    except OSError as exc:
        raise IntegrityError(f"cannot read bag {bag}: {exc}") from exc
    try:
        catalog = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParseError(f"catalog.json is not JSON: {exc}", rule="catalog") from exc
    if not isinstance(catalog, dict) or catalog.get("format") != EXPORT_FORMAT:
        raise ParseError("this bag is not a pdi archive export", rule="catalog")
    if catalog.get("version") != EXPORT_VERSION:
        raise ParseError(f"unknown export version {catalog.get('version')!r}", rule="catalog")
    try:
        series = [
            SeriesRecord(
                _field(s, "name", str), _optional(s, "parent", str),
                _field(s, "authority", str), _field(s, "created_at", str),
                check_access(_optional(s, "access", str) or PUBLIC),  # bags made before: public
            )
            for s in _entries(catalog, "series")
        ]
        for one in series:
            if canonical_series(one.name) != one.name:
                raise ParseError(f"catalog.json: series {one.name!r} is not canonical",
                                 rule="catalog")
        reps: list[tuple[RepresentationRecord, BlobSource]] = []
        sizes: dict[str, int] = {}  # each object looked at once, however many names share it
        entries = _entries(catalog, "representations")
        for done, r in enumerate(entries, start=1):
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
            if _field(r, "pdi", str) != str(_name(record)):
                raise ParseError(
                    f"catalog.json: {r['pdi']} does not match its own parts", rule="catalog"
                )
            if not _SHA256.fullmatch(record.sha256) or record.version < 1:
                raise ParseError(f"catalog.json: bad entry for {r['pdi']}", rule="catalog")
            spelled = int(record.unique_id) if spells_serial(record.unique_id) else None
            if record.serial != spelled:
                raise ParseError(f"catalog.json: bad serial for {r['pdi']}", rule="catalog")
            _check_as_deposited(record, str(r["pdi"]), now)
            if record.purged is not None:  # purged where it came from: no object, and none wanted
                _moment(record.purged, f"{r['pdi']} purged")
                reps.append((record, b""))
                continue
            size = sizes.get(record.sha256)
            if size is None:
                # validate_bag hashed every payload file against the manifest: the
                # object is right when its manifest checksum is its own name.
                path = f"data/objects/{record.sha256}"
                if manifest.get(path) != record.sha256:
                    raise IntegrityError(f"object {record.sha256} is not in the bag's manifest")
                size = sizes[record.sha256] = (bag / path).stat().st_size
            if size != record.size:
                raise IntegrityError(f"object {record.sha256} does not match its catalog entry")
            reps.append((record, _object_reader(bag, record.sha256)))
            if progress is not None:
                progress(done, len(entries))
        assertions = [
            (
                DocumentKey(
                    _field(a, "series", str),
                    datetime.date.fromisoformat(_field(a, "day", str)),
                    _field(a, "unique_id", str),
                ),
                AssertionRecord(
                    0, _field(a, "subject", str), _field(a, "key", str), _field(a, "value", str),
                    _field(a, "who", str), _field(a, "at", str),
                ),
            )
            for a in _entries(catalog, "assertions")
        ]
        withdrawals = [
            WithdrawalRecord(
                DocumentKey(
                    _field(w, "series", str),
                    datetime.date.fromisoformat(_field(w, "day", str)),
                    _field(w, "unique_id", str),
                ),
                _optional(w, "version", int), _field(w, "reason", str), _field(w, "who", str), _field(w, "at", str),
                purged=w.get("purged") is True,
            )
            # bags made before withdrawal existed have none
            for w in (_entries(catalog, "withdrawals") if "withdrawals" in catalog else [])
        ]
        documents: dict[DocumentKey, RepresentationRecord] = {}
        for rec, _ in reps:
            documents.setdefault(DocumentKey(rec.series, rec.day, rec.unique_id), rec)
        minted = {key: rec.created_at for key, rec in documents.items() if rec.version == 1}
        for about, a in assertions:
            if _key_of(parse_pdi(a.subject)) != about:
                raise ParseError(
                    f"catalog.json: the statement about {a.subject} is filed under another"
                    " document",
                    rule="catalog",
                )
            _check_statement(a, minted.get(about), now)
        # Who brought these names in, and from which bag, goes to the audit log.
        audit = [
            AuditRecord(
                _timestamp(now), archive.who, "import", str(_name(first, generic=True)),
                f"from the bag {bag} (catalog.json source {catalog.get('source')!r})",
            )
            for about, first in sorted(documents.items(), key=lambda item: str(_name(item[1])))
            if not archive.store.document_exists(about)  # only documents this import brings in
        ]
    except PDIError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc
    except FileNotFoundError as exc:
        raise IntegrityError(f"bag object missing: {exc.filename}") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read bag {bag}: {exc}") from exc
    try:
        embargoes = [
            (DocumentKey(_field(e, "series", str), datetime.date.fromisoformat(_field(e, "day", str)),
                         _field(e, "unique_id", str)),
             _optional(e, "version", int), parse_until(_field(e, "until", str)))
            for e in (_entries(catalog, "embargoes") if "embargoes" in catalog else [])
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"catalog.json is malformed: {exc!r}", rule="catalog") from exc
    return archive.store.import_all(series, reps, assertions, audit, withdrawals, embargoes)
