"""A document's page (``/view?pdi=`` of a generic name): its versions with their deposit times, its formats with size,
SHA-256 and last fixity check, and its statements with their history; and what pages about a representation take
from it (its document's name and title, the note to a reader with a token of what not everyone may read).
"""

from __future__ import annotations

import calendar
import dataclasses
import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

from pdi._wording import counted
from pdi.archive import Archive, DocumentDetail, Generic
from pdi.archive.access import HIDDEN, PUBLIC, current_reader
from pdi.archive.store import AssertionRecord, DocumentKey, FixityCheck, RepresentationRecord
from pdi.errors import PDIError, WithdrawnError
from pdi.identifier import PDI
from pdi.server.pages.catalogue import (
    breadcrumbs,
    catalogue_page,
    format_link,
    iso_day,
    series_path,
    utc_time,
    view_path,
)
from pdi.server.pages.layout import (
    breakable,
    capture_title,
    captured_url,
    day_in_words,
    esc,
    format_token,
    in_order,
    isolated,
    name_details,
    name_in_pieces,
    shown_media_type,
    shown_url,
    size_cell,
    statement_value,
)


# --- a document --------------------------------------------------------------------------------
def _fixity(check: FixityCheck | None) -> str:
    if check is None:
        return '<span class="never">not audited yet</span>'
    if check.ok:
        return f'<span class="ok">intact</span>, verified {utc_time(check.checked_at)}'
    return f'<span class="bad">{esc(check.problem or "failed")}</span> at the check of {utc_time(check.checked_at)}'


def _key(key: str) -> str:
    """A statement's key in its cell: escaped, breakable after each ``.``, ``:`` and ``_`` (``dc:title``,
    ``x.court_ref``) as after a ``-``, and never inside a word (``STYLE``'s ``#statements td.key code``): a narrow
    Key column beside a long value broke ``source`` into ``sourc`` and ``e``."""
    return re.sub(r"([.:_])(?=.)", r"\1<wbr>", esc(key))


def _statements(statements: Sequence[AssertionRecord], generic: str) -> str:
    """The statements, oldest first; each superseded by a later one of the same subject and key is marked so."""
    latest: dict[tuple[str, str], int] = {}
    for s in statements:
        latest[(s.subject, s.key)] = s.id
    rows = ""
    for s in statements:
        current = latest[(s.subject, s.key)] == s.id
        # another name of the document is shown from its last segment: 1.text.1#char=0,3
        shown = s.subject[generic.rindex("/") + 1:] if s.subject.startswith(generic) else s.subject
        subject = "the document" if s.subject == generic else f'<a href="{esc(view_path(s.subject))}"><code>{name_in_pieces(shown)}</code></a>'
        rows += (
            f'<tr class="{"current" if current else "superseded"}"><td class="about" data-label="About">{subject}</td>'
            f'<td class="key" data-label="Key"><code>{_key(s.key)}</code></td>'
            f'<td class="value" data-label="Value">{statement_value(s.value)}</td>'
            f'<td data-label="Stated by">{isolated(s.who)}</td><td data-label="When">{utc_time(s.at)}</td>'
            f"""<td data-label="Status">{'current' if current else 'superseded'}</td></tr>"""
        )
    return (
        '<table class="catalogue cards" id="statements" aria-label="Statements"><thead><tr><th scope="col">About</th><th scope="col">Key</th>'
        '<th scope="col">Value</th><th scope="col">Stated by</th><th scope="col">When</th><th scope="col">Status</th>'
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def access_note(archive: Archive, name: PDI) -> str:
    """What a reader with a token is told on the page of a name not everyone may read: under an embargo not yet over
    (until when, in words), or of a private or hidden series; that others are refused it, so a link to it opens only
    for those who may read it. Empty for a name anyone reads (the only ones a reader without a token is shown: for
    one, nothing is read of the catalog to say so)."""
    reader = current_reader.get()
    if reader is not None and reader.token is None:
        return ""
    series = name.series_name.lower()
    access = archive.series_access().get(series, PUBLIC)
    try:
        until = archive.embargo_in_force(name.without_fragment())
    except PDIError:
        until = None
    if until is None and access == PUBLIC:
        return ""
    why = [f"this {'document' if name.format is None else 'version'} is under embargo until"
           f" {esc(day_in_words(until))}"] if until is not None else []
    if access != PUBLIC:
        why.append(f"its series, <code>{esc(series)}</code>, is {access}")
    told = ("is answered that it is not in this archive" if access == HIDDEN
            else "is refused it (<q>Not open to you</q>)")
    return (
        f'<p class="version-banner access" role="note" id="access"><strong>Not open to everyone:</strong>'
        f" {', and '.join(why)}. You read it with your token; a reader without one {told}"
        f"{' until then' if until is not None and access == PUBLIC else ''}, so a link to it opens only for those"
        " who may read it.</p>"
    )


def render_document(archive: Archive, generic: Generic, name: str) -> str:
    """The document page (``/view?pdi=`` of a generic name): versions, formats with fixity, statements with history."""
    detail: DocumentDetail = archive.document(generic.pdi)
    pdi = detail.generic.pdi
    generic_text = str(pdi.canonical())
    series = pdi.series_name.lower()
    date = pdi.date
    assert date is not None  # a document's name always has its day
    url = captured_url(pdi)  # a capture's: its URL, not the name that encapsulates it, heads the page
    # its tombstones (one indexed read): a document withdrawn whole is its tombstone (410), a version says so
    tombs = archive.withdrawals_of([DocumentKey(series, date, pdi.unique_id)])
    whole = next((t for t in tombs if t.version is None), None)
    if whole is not None:
        raise WithdrawnError(f"{pdi}: its document was withdrawn {whole.at}: {whole.reason}",
                             reason=whole.reason, at=whole.at, who=whole.who, purged=whole.purged)
    gone = {t.version: t for t in tombs}
    titles = [s for s in detail.statements if s.key == "title"]
    own = [s for s in titles if s.subject == generic_text]
    title = (own or titles)[-1].value if titles else None
    reader = current_reader.get()
    # a version under an embargo of its own: listed only to a reader with a token (or the owner), who is told so
    sealed = {} if (reader is not None and reader.token is None) or archive.embargo_in_force(pdi) is not None else {
        v.number: until for v in detail.generic.versions if v.formats
        and (until := archive.embargo_in_force(v.formats[0])) is not None
    }
    versions = "".join(
        f'<tr><td class="number" data-label="Version">{v.number}</td>'
        f'<td data-label="Deposited">{utc_time(v.created_at)}'
        + (f'<br><span class="bad">withdrawn {utc_time(gone[v.number].at)}: {esc(gone[v.number].reason)}</span>'
           if v.number in gone else "")
        + (f'<br><span class="sealed">under embargo until {esc(day_in_words(sealed[v.number]))}: not open to'
           " a reader without a token until then</span>" if v.number in sealed else "")
        + '</td><td data-label="Formats"><ul>'
        + "".join(
            f"<li>{format_link(n)}"
            + (f" {name_details(n)}</li>" if url else f' <code class="name">{breakable(n)}</code></li>')
            for n in v.formats
        )
        + "</ul></td></tr>"
        for v in detail.generic.versions
    )
    formats = "".join(_format_row(r, detail.fixity.get(r.sha256)) for r in detail.records)
    checked = [c for c in detail.fixity.values()]
    unique = pdi.unique_id
    captures = (
        f'<p>This document\'s id is a URL: <a href="/captures?{esc(urlencode({"url": unique}))}">every capture of'
        f" <code>{in_order(shown_url(unique))}</code></a>.</p>"
        if pdi.serial is None and "://" in unique else ""
    )
    facts = (
        f"<dt>Name</dt><dd><code>{esc(pdi)}</code></dd>"
        f'<dt>Series</dt><dd><a href="{series_path(series)}"><code>{esc(series)}</code></a></dd>'
        f'<dt>Day</dt><dd><a href="{series_path(series, date.year, date.month, date.day)}">{iso_day(date)}</a> (GMT)</dd>'
        f"<dt>{'Serial' if pdi.serial is not None else 'Id'}</dt><dd><code>{in_order(shown_url(unique))}</code></dd>"
        f"<dt>Versions</dt><dd>{len(detail.generic.versions):,}</dd>"
        f"<dt>Fixity</dt><dd>{_fixity_summary(detail.records, checked)}</dd>"
    )
    body = (
        breadcrumbs(("Home", "/"), ("Series", "/series"), (series, series_path(series)),
                (str(date.year), series_path(series, date.year)),
                (calendar.month_name[date.month], series_path(series, date.year, date.month)),
                (f"{date.day:02d}", series_path(series, date.year, date.month, date.day)), (shown_url(unique), None))
        + f"<h1>{isolated(title) if title else capture_title(url, None) if url else f'<code>{breakable(pdi)}</code>'}</h1>"
        + f'{access_note(archive, pdi)}<dl class="facts">{facts}</dl>{captures}'
        + f"<h2>Versions</h2><p>{counted(len(detail.generic.versions), 'version')} of this document,"
        + " oldest first (deposit times in UTC):</p>"
        + '<table class="catalogue cards" id="versions"><thead><tr><th scope="col" class="number">Version</th>'
        + f'<th scope="col">Deposited</th><th scope="col">Formats</th></tr></thead><tbody>{versions}</tbody></table>'
        + "<h2>Formats</h2>"
        + '<table class="catalogue cards" id="formats"><thead><tr><th scope="col" class="number">Version</th><th scope="col">Format</th>'
        + '<th scope="col">Media type</th><th scope="col" class="number">Bytes</th><th scope="col">SHA-256</th>'
        + f'<th scope="col">Deposited</th><th scope="col">Fixity</th></tr></thead><tbody>{formats}</tbody></table>'
        + "<h2>Statements</h2>"
        + (
            "<p>Statements are never changed: a later one with the same key about the same name supersedes"
            " the earlier, which is kept as history.</p>" + _statements(detail.statements, generic_text)
            if detail.statements else "<p>Nothing has been stated about this document.</p>"
        )
    )
    return catalogue_page(title or str(pdi), body, name=name)


def _fixity_summary(records: Sequence[RepresentationRecord], checks: Sequence[FixityCheck]) -> str:
    blobs = {r.sha256 for r in records}
    if not checks:
        return ('<span class="never">not audited yet</span> (every read is checked against the octets\' SHA-256;'
                " the archive's audit, <code>pdi verify</code>, has not run since they were deposited)")
    bad = [c for c in checks if not c.ok]
    last = max(c.checked_at for c in checks)
    if bad:
        return f'<span class="bad">{counted(len(bad), "blob")} failed</span> the last check'
    unchecked = len(blobs) - len(checks)
    return (
        f'<span class="ok">intact</span> at the last check, {utc_time(last)}'
        + (f"; {counted(unchecked, 'blob')} not audited yet" if unchecked else "")
    )


def _record_name(record: RepresentationRecord) -> PDI:
    return PDI.build(
        series=record.series, date=record.day, serial=record.serial,
        foreign_id=None if record.serial is not None else record.unique_id,
        format=record.format, version=record.version,
    )


def record_generic(record: RepresentationRecord) -> PDI:
    """The generic name of the document a record belongs to: its document page is ``/view`` of it."""
    return dataclasses.replace(_record_name(record), format=None, version=None).canonical()


def document_title(archive: Archive, record: RepresentationRecord, version: str,
                   stated: Mapping[str, str] | None = None) -> str | None:
    """The title a page about a representation shows: its document's ``title`` statement, else that of the
    ``version`` it is of (``stated``: that version's statements, when the caller has them already)."""
    title = archive.meta(str(record_generic(record))).get("title")
    return title or (archive.meta(version) if stated is None else stated).get("title")


def tab_title(title: str | None, name: object) -> str:
    """A page's ``<title>`` (the browser's tab, history and bookmarks): the document's title first, when it has one."""
    return f"{title} — {name}" if title else str(name)


def _format_row(record: RepresentationRecord, check: FixityCheck | None) -> str:
    name = _record_name(record)
    # as shown_format writes it: a short one whole (text/html was cut text/ above html at 1100 px), a long one
    # breakable after its / and before each . (officedocument.wordprocessingml.document was wider than a phone)
    media = (shown_media_type(record.media_type)
             + (f'<br><small>charset <span class="charset">{esc(record.charset)}</span></small>' if record.charset else ""))
    return (
        f'<tr><td class="number" data-label="Version">{record.version}</td>'
        f'<td data-label="Format"><a href="{esc(view_path(name))}">{format_token(record.format)}</a></td>'
        f'<td data-label="Media type">{media}</td>{size_cell(record.size, label="Bytes")}'
        f'<td class="sha" data-label="SHA-256"><code class="sha">{esc(record.sha256)}</code></td>'
        f'<td data-label="Deposited">{utc_time(record.created_at)}</td><td data-label="Fixity">{_fixity(check)}</td></tr>'
    )
