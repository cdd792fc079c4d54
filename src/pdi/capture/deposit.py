"""Depositing a capture: one document per URL and GMT day, a new version only when the page changed.

A capture is deposited as ``multipart/related`` (format token ``related``)
under a name whose unique id encapsulates the URL, on today's (GMT) date, as
in the draft's line 399. Whether the page changed is decided by its parts'
content (:func:`pdi.mhtml.compare.same_content`), not by the file's bytes,
since Chromium writes an unchanged page with a new date, boundary and
Content-IDs each time.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from pdi import formats
from pdi._wording import plural
from pdi.archive import Archive, Content, Deposit
from pdi.archive.deposits import WITHDRAWN_COMPARED
from pdi.archive.results import NotCompared
from pdi.errors import ImmutabilityError, NotFoundError, WithdrawnError
from pdi.identifier import PDI
from pdi.mhtml.compare import same_content

__all__ = ["deposit_capture"]

#: What a withdrawn version holds when a capture is refused as its page in other octets (RFC 2557 files compared
#: by their parts, :func:`pdi.mhtml.compare.same_content`).
_SAME_PAGE = "this page (the same parts, whatever the file's date, boundary and Content-IDs)"


def deposit_capture(
    archive: Archive,
    series: str,
    url: str,
    data: bytes,
    *,
    force: bool = False,
    day: datetime.date | None = None,
    index_later: bool = False,
    warn: Callable[[str], None] | None = None,
) -> Deposit:
    """Deposit a capture of ``url``; the answer says whether it was stored.

    The first capture of a day mints ``…/YYYY/MM/DD/<url>.related.1``. A later
    capture of the same URL on the same day is the same document: when its
    parts differ from the newest version's it becomes the next version, and
    when they hold the same content, nothing is stored and the answer is the
    newest version, ``unchanged``. ``force`` deposits a new version all the same.
    A withdrawn newest version holds its page for no one: another page is
    the next version; the same page, its very octets or other ones holding
    the same content, is refused naming the withdrawal
    (:class:`~pdi.errors.ImmutabilityError`; the archive compares it with the
    octets it keeps, :meth:`~pdi.archive.Archive.withdrawn_alike`), and a
    document withdrawn whole takes no capture (:class:`~pdi.errors.WithdrawnError`).
    So is the page an earlier withdrawn version holds, with versions in
    service after it (its very octets, by the catalog, whatever its history;
    in other octets, compared with the last
    :data:`~pdi.archive.deposits.WITHDRAWN_COMPARED` withdrawn versions whose
    octets are kept: :meth:`~pdi.archive.Archive.withdrawn_earlier_alike`).
    When the withdrawn version's octets were purged there is nothing to
    compare with: the capture is the next version (unless it is those very
    octets, whose SHA-256 the catalog keeps), and ``warn`` is told so.
    ``day`` is the GMT day the page was captured on when that was not today
    (a page from a web archive, :mod:`pdi.interop.warc`). ``index_later`` leaves
    its text to the background indexer's queue (:attr:`pdi.archive.Content.index_later`).
    """
    token = formats.token_for("multipart/related")
    dated = day or archive.now().date()  # the GMT day the archive will date the deposit
    name = PDI.build(series=series, date=dated, foreign_id=url, format=token, version=1)
    versions = archive.versions(name)  # empty when the URL was not captured that day
    if not versions:
        try:
            return archive.deposit(
                series, [Content(data, token, index_later=index_later)], foreign_id=url, force=force, day=day
            )
        except ImmutabilityError:
            # Another capture of the URL minted the day's name since we looked (two `pdi capture`s at once):
            # this one is compared with it, as if it had come second.
            versions = archive.versions(name)
            if not versions:
                raise
    newest = name.with_version(versions[-1])
    tombstone = None  # the newest version's, when it was withdrawn
    try:
        held = None if force else archive.get(newest).data
    except NotFoundError:  # the newest version has no aggregate (the page's root alone, .html): not this capture
        held = None
    except WithdrawnError:
        # A withdrawn version holds its page for no one, so it is never answered `unchanged`; and the same page
        # is refused naming the withdrawal (its very octets by the catalog; in another file, compared as above,
        # by the archive, which reads the octets it keeps), or it would serve again as the next version. Another
        # page is the next version (as `pdi version` deposits it). A document withdrawn whole takes no version.
        held = None
        tombstone = archive.withdrawn_alike(
            newest, lambda kept: same_content(kept, data), held=_SAME_PAGE, them="this page"
        )
    if held is not None and same_content(held, data):
        return Deposit((newest,), unchanged=True)
    uncompared = NotCompared()
    if not force:  # an earlier version withdrawn, the same page again: refused as the newest's is (kept octets)
        uncompared = archive.withdrawn_earlier_alike(
            newest, lambda kept: same_content(kept, data), held=_SAME_PAGE, them="this page"
        )
    deposit = archive.add_version(name, [Content(data, token, index_later=index_later)], force=force)
    if warn is None:
        return deposit
    # (their very octets: the catalog refused them) a purge keeps a file's SHA-256 and size alone, and the same page
    # in another file has others: whether it is the same page cannot be known
    purged = ([tombstone] if tombstone is not None and tombstone.purged else []) + list(uncompared.purged)
    for gone in purged:
        withdrawn = name.with_version(gone.version) if gone.version is not None else newest
        warn(f"{withdrawn} was withdrawn at {gone.at} and its octets purged, so this capture of {url} could not be"
             f" compared with the page it held: it is deposited as {deposit[0]}, even if it is the same page")
    if uncompared.more_purged:
        warn(f"{plural(uncompared.more_purged, 'earlier withdrawn version')} of {url}, older than the"
             f" {WITHDRAWN_COMPARED} named, had {'its' if uncompared.more_purged == 1 else 'their'} octets purged"
             f" too and {'was' if uncompared.more_purged == 1 else 'were'} not looked at: {deposit[0]} may hold"
             " the page of one of them")
    if uncompared.beyond:
        count = len(uncompared.beyond)
        warn(f"{plural(count, 'earlier withdrawn version')} ({name.with_version(uncompared.beyond[0])}"
             f"{', the newest of them' if count > 1 else ''}) {'was' if count == 1 else 'were'} not compared with"
             f" this capture of {url}: a capture is compared with the last {WITHDRAWN_COMPARED} withdrawn versions"
             f" whose octets are kept; it is deposited as {deposit[0]}, even if it is the page of one of them")
    return deposit

