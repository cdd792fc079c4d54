"""Export: the archive (or one series and its subseries) written as a BagIt bag (RFC 8493).

The catalog is read in one snapshot, a page at a time; ``data/catalog.json``
(:mod:`pdi.archive.bagit.catalog` reads it back) is written a line a
representation as the names are read, then each object once, named by its
SHA-256, with a line of ``manifest-sha256.txt`` as it is written. Each
folder of the bag is its owner's alone (0700) and each file 0600, whatever
the umask (:data:`pdi.archive.modes.EXPORT`): a bag may hold a private
series' documents. The parse
kept of each SGML document (its element index) is written beside them,
``data/element-indexes/<sha256>``, named in its representation's
``element_index``, so that the archive the bag is imported into answers its
``#elt=`` as this one does (:func:`pdi.archive.bagit.imports.keep_parses`).
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from pdi._wording import plural
from pdi.archive.bagit.catalog import EXPORT_FORMAT, EXPORT_VERSION, PARSES
from pdi.archive.base import purged_meanwhile
from pdi.archive.modes import EXPORT, make_folder, make_own_folder, open_private
from pdi.archive.naming import Namer, canonical_series, key_of, parse_pdi
from pdi.archive.store import ListQuery, RepresentationRecord, SeriesRecord
from pdi.errors import ImmutabilityError, IntegrityError, NotFoundError, StoreError

if TYPE_CHECKING:
    from pdi.archive.catalog import SQLStore


class Exporting(Protocol):
    """What an export reads of the archive (an :class:`~pdi.archive.Archive` is one): its catalog and where it is.

    Named here, not imported, so that the archive's own ``export_bag`` and
    this module do not import each other.
    """

    @property
    def store(self) -> SQLStore: ...

    @property
    def location(self) -> str: ...


def _in_selection(name: str, series: str | None) -> bool:
    return series is None or name == series or name.endswith("." + series)


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_bag(
    archive: Exporting,
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
    made = False  # whether the staging folder is the one made here: only it is removed
    try:
        _clear_staging(staging, directory)
        directory.parent.mkdir(parents=True, exist_ok=True)  # as mkdir -p: the umask's
        make_own_folder(staging, EXPORT.folder)  # none there, its owner's alone: no one else's, nor opened before
        made = True
        for folder in (staging / "data", staging / "data" / "objects"):
            make_folder(folder, EXPORT.folder)
        copying: str | None = None  # the blob being copied
        with _purged_meanwhile(archive, lambda: copying), archive.store.snapshot():
            all_series = {s.name: s for s in archive.store.list_series()}
            selected = sorted(n for n in all_series if _in_selection(n, series))
            chosen = set(selected)
            for name in selected:  # ancestors, so the bag imports on its own
                parent = all_series[name].parent
                while parent is not None and parent not in chosen:
                    chosen.add(parent)
                    parent = all_series[parent].parent
            with io.TextIOWrapper(open_private(staging / "manifest-sha256.txt", EXPORT.file),
                                  encoding="utf-8") as manifest:
                parses: dict[str, int] = {}
                catalog_sha, catalog_octets, count = _write_catalog(
                    archive, staging / "data" / "catalog.json",
                    [all_series[n] for n in sorted(chosen)], None if series is None else selected,
                    _ParseWriter(archive, staging, parses),
                )
                manifest.write(f"{catalog_sha}  data/catalog.json\n")
                octets, files = catalog_octets, 1
                for sha256, size in sorted(parses.items()):
                    manifest.write(f"{sha256}  {PARSES}/{sha256}\n")
                    octets, files = octets + size, files + 1
                scope = None if series is None else selected
                total = archive.store.count_blobs_used(scope)
                for done, use in enumerate(archive.store.iter_blob_uses(scope), start=1):
                    if use.purged == use.representations:  # a takedown: catalog.json says so, no object
                        continue
                    path = f"data/objects/{use.sha256}"
                    copying = use.sha256
                    octets += _copy_blob(archive, use.sha256, staging / path)
                    copying = None
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
        if made and os.path.lexists(staging):
            shutil.rmtree(staging, ignore_errors=True)
    return count


def _clear_staging(staging: Path, directory: Path) -> None:
    """Remove the staging folder ``staging`` a killed export of this process's id left, if it is this user's own
    folder (not a link); anything else of its name is refused, named: another user may have made it, to read
    the bag written into it (found in review, 2026-12-02)."""
    try:
        found = os.lstat(staging)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
        what = "a link" if stat.S_ISLNK(found.st_mode) else "not a folder" if not stat.S_ISDIR(
            found.st_mode) else f"another user's folder (uid {found.st_uid})"
        raise StoreError(f"cannot write bag {directory}: {staging} is there and is {what}, not a partial bag this"
                         " user left; remove it, or write elsewhere")
    shutil.rmtree(staging)


@contextmanager
def _purged_meanwhile(archive: Exporting, copying: Callable[[], str | None]) -> Iterator[None]:
    """Around the export's snapshot: a blob it found missing or altered (``copying()``, when the error came) that a
    purge committed since the snapshot began took, said so (:func:`~pdi.archive.base.purged_meanwhile`)."""
    try:
        yield
    except (IntegrityError, StoreError) as exc:
        sha256 = copying()
        purged = None if sha256 is None else purged_meanwhile(archive.store, sha256, f"blob {sha256}")
        if purged is None:
            raise
        raise purged from exc


def _copy_blob(archive: Exporting, sha256: str, path: Path) -> int:
    """Write the blob ``sha256`` to ``path`` a verified chunk at a time, checking its SHA-256; its size."""
    reader = archive.store.open_blob(sha256, name=f"blob {sha256}")
    if reader is None:
        raise IntegrityError(f"blob {sha256} is missing; run pdi verify before exporting")
    digest = hashlib.sha256()
    size = 0
    with reader, open_private(path, EXPORT.file) as out:
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


class _ParseWriter:
    """Writes the kept parse of each SGML representation (its element index, this pdi's reading) to
    ``data/element-indexes/``, named by its SHA-256, once: what a representation's ``element_index`` names, so
    that the archive it is imported into answers its ``#elt=`` as this one does (:mod:`pdi.archive.bagit`)."""

    def __init__(self, archive: Exporting, staging: Path, written: dict[str, int]) -> None:
        self.archive = archive
        self.folder = staging / PARSES
        self.written = written  # each index's SHA-256 and size
        self.of: dict[tuple[str, str, str], str | None] = {}  # each SGML source's, looked up once

    def __call__(self, record: RepresentationRecord) -> str | None:
        """The SHA-256 of the kept parse of ``record``'s octets, written, or ``None``: not SGML, or none kept
        (none made, or one an earlier reading made, which an import does not take)."""
        from pdi.fragments.markup import markup_kind
        from pdi.fragments.markup.index import MAGIC, made_by_an_earlier_reading

        if record.purged is not None or markup_kind(record.media_type) != "sgml":
            return None
        source = (record.sha256, record.media_type, record.charset or "")
        if source in self.of:
            return self.of[source]
        index = self.archive.store.fragment_index(record.sha256, record.media_type, record.charset)
        sha256 = None
        if index is not None and index[:4] == MAGIC and not made_by_an_earlier_reading(index):
            sha256 = hashlib.sha256(index).hexdigest()
            if sha256 not in self.written:
                make_folder(self.folder, EXPORT.folder)
                with open_private(self.folder / sha256, EXPORT.file) as out:
                    out.write(index)
                self.written[sha256] = len(index)
        self.of[source] = sha256
        return sha256


def _write_catalog(
    archive: Exporting, path: Path, series: list[SeriesRecord], selected: list[str] | None,
    parse_of: Callable[[RepresentationRecord], str | None] = lambda _: None,
) -> tuple[str, int, int]:
    """Write ``catalog.json`` as the catalog is read; its SHA-256, its size and how many representations it lists.

    One JSON object, as :func:`json.load` reads it: the series (each with ``rules``, how many times its access
    rules changed here), then each representation on a line of its own (in listing order; an SGML one with
    the SHA-256 of its kept parse, ``element_index``, that ``parse_of``
    wrote), then each statement about a document of the selection (oldest first).
    """

    def line(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    scope = None if selected is None else set(selected)
    query = ListQuery(series=selected[0]) if selected is not None and len(selected) == 1 else ListQuery()
    namer = Namer()
    with open_private(path, EXPORT.file) as handle:
        out = _HashingWriter(handle)
        out.write(f'{{"format": {line(EXPORT_FORMAT)}, "version": {EXPORT_VERSION},'
                  f' "source": {line(archive.location)},\n"series": [')
        rules = archive.store.rules_changes_of_each()
        out.write(",".join(
            "\n" + line({"name": s.name, "parent": s.parent, "authority": s.authority, "created_at": s.created_at,
                         "access": s.access, "rules": rules.get(s.name, 0)})
            for s in series
        ))
        out.write('\n],\n"representations": [')
        count = _write_items(out, (
            {"pdi": str(namer(r)), "series": r.series, "day": r.day.isoformat(),
             "unique_id": r.unique_id, "serial": r.serial, "version": r.version,
             "format": r.format, "media_type": r.media_type, "charset": r.charset,
             "line_ending": r.line_ending, "sha256": r.sha256, "size": r.size,
             "created_at": r.created_at, "stored": r.stored, "purged": r.purged,
             **({} if (parse := parse_of(r)) is None else {"element_index": parse})}
            for r in archive.store.iter_representations(query) if scope is None or r.series in scope
        ))
        out.write('\n],\n"assertions": [')
        _write_items(out, (
            {"series": key.series, "day": key.day.isoformat(), "unique_id": key.unique_id,
             "subject": a.subject, "key": a.key, "value": a.value, "who": a.who, "at": a.at}
            for a in archive.store.iter_assertions()
            for key in (key_of(parse_pdi(a.subject)),) if scope is None or key.series in scope
        ))
        out.write('\n],\n"withdrawals": [')
        _write_items(out, (
            {"series": w.key.series, "day": w.key.day.isoformat(), "unique_id": w.key.unique_id,
             "version": w.version, "reason": w.reason, "who": w.who, "at": w.at, "purged": w.purged}
            for w in archive.store.iter_withdrawals() if scope is None or w.key.series in scope
        ))
        out.write('\n],\n"embargoes": [')
        _write_items(out, (
            {"series": key.series, "day": key.day.isoformat(), "unique_id": key.unique_id,
             "version": version, "until": until}
            for key, version, until in archive.store.iter_embargoes() if scope is None or key.series in scope
        ))
        out.write('\n],\n"access_changes": [')
        _write_items(out, (
            {"series": key.series, "day": key.day.isoformat(), "unique_id": key.unique_id, "at": at}
            for key, at in archive.store.iter_access_changes() if scope is None or key.series in scope
        ))
        out.write("\n]}\n")
    return out.digest.hexdigest(), out.octets, count


def _write_items(out: _HashingWriter, items: Iterable[object]) -> int:
    """Each of ``items`` as JSON on a line of its own, after a list's ``[`` (a comma before all but the first); how many."""
    count = 0
    for item in items:
        out.write(("\n" if count == 0 else ",\n") + json.dumps(item, ensure_ascii=False))
        count += 1
    return count


def _write_tag(bag: Path, name: str, text: str) -> None:
    with open_private(bag / name, EXPORT.file) as out:
        out.write(text.encode("utf-8"))
