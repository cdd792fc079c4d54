"""N2R, N2L and ``304`` answers to anyone for a serial name spelled canonically, made from the catalog's row alone.

The name a resolver is asked for most is one exactly as ``pdi add`` printed
it: ``urn:pdi://SERIES/YYYY/MM/DD/SERIAL.FORMAT.VERSION``. When the
catalog says that anyone may read it now (:meth:`~pdi.archive.Archive.public_serial_named`,
what :meth:`~pdi.archive.Archive.read_public` would find: for a version of one
format whose octets the catalog's row holds, a tuple of the columns its answer
needs, no record made; for N2L and a
``304``, which serve no octet, :meth:`~pdi.archive.Archive.public_digest`:
on SQLite each is one row of ``serial_names``, keyed by the name as
spelled, :mod:`pdi.archive.catalog.serial_names`, with a small blob's octets,
or a blob file's chunk digests after it), :class:`PlainAnswers` makes the answer that
:meth:`~pdi.server.protocol.resolver.Resolver.public_answer` makes for it by
its general path (:func:`~pdi.server.protocol.entity_answers.whole_entity` with
the memento's headers, N2L's ``302``, the validator of a ``304``), byte for
byte, from the row's fields: no :class:`~pdi.identifier.PDI` is parsed or
built, and no :class:`~pdi.archive.Resolved`, version, memento or dict of
fields is made on the way; its ``200``'s header lines are made with it. Every
octet is still checked against its chunk digests before it is served
(:func:`pdi.archive.blobs.checked`, :func:`~pdi.archive.blobs.read_cached`; a
small blob kept in the catalog's row is one chunk, whose digest is the SHA-256
of the name's row).

Anything else is ``None``, and the general path answers it and says what it
is: another spelling of the name (upper case, an alias of the format, a
foreign id), a capture of a URL, a series mirrored from another archive
(whose answers link their origin), a multipart file (its ``Content-Type``
comes from its octets), a base URL that a ``Link`` would quote, octets too
large to keep, not in memory or not matching their digests.
A name spelled so that the catalog does not let anyone read it now (not
there, private, embargoed, withdrawn; or a catalog that cannot tell so in
one step, which the general public path could not either: PostgreSQL, a
blob store of objects) is :data:`NOT_PUBLIC`: the general public path is
not asked, and the resolver's endpoint says what it is (one catalog read
fewer for a stranger's ``404``).
A first asking of N2L or a ``304`` does not even need those objects made:
:meth:`PlainAnswers.digest` tells the name's digest alone, from which
:meth:`~pdi.server.protocol.resolver.Resolver.public_told` learns the name's
fact and writes the answer as a second asking does
(``tests/server/test_server_told_answers.py``).
``tests/server/test_server_plain_answers.py`` checks these answers against
the general path's for names of every shape, and that each case above
goes on to it.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Callable
from typing import Final

from pdi._later import filled
from pdi.archive import Archive
from pdi.archive.blobs import BlobInfo, checked, read_cached
from pdi.interop.memento import LINK_FORMAT, http_datetime, parse_timestamp, quotes_to_itself
from pdi.server.process.cache import (
    IMMUTABLE,
    SHARED_VALIDATOR_FIELDS,
    Entity,
    Fixed,
    Validator,
    entity_size,
    located,
)

#: A serial name as :meth:`PDI.build` spells it, and nothing else: lower-case series, a four-digit year, two-digit
#: month and day, a serial and a version without leading zeros, a format token of lower-case letters, digits,
#: ``-``, ``_`` and ``+`` (``image+jpeg``, ``utf-8``, ``octet-stream``, ``shift_jis``; one with an escape,
#: ``xhtml%2Bxml``, goes to the general path).
_SERIAL_NAME: Final = re.compile(
    rb"urn:pdi://([a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?)/([0-9]{4})/([0-9]{2})/([0-9]{2})/([1-9][0-9]{0,18})"
    rb"\.([a-z0-9](?:[a-z0-9+_-]{0,30}[a-z0-9])?)\.([1-9][0-9]{0,8})")


def serial_fields(name: bytes) -> tuple[str, datetime.date, str, int, str] | None:
    """The series, day, serial (as spelled), version and format token of a serial name spelled as
    :meth:`PDI.build` spells it, and nothing else (``None``: another spelling, or no such day; the general path
    reads it and says what it is)."""
    spelled = _SERIAL_NAME.fullmatch(name)
    if spelled is None:
        return None
    series, year, month, dom, serial, token, version = spelled.groups()
    try:
        day = datetime.date(int(year), int(month), int(dom))
    except ValueError:
        return None
    return series.decode("ascii"), day, serial.decode("ascii"), int(version), token.decode("ascii")


class NotPublic:
    """What :meth:`PlainAnswers.answer` says of a name spelled canonically that the catalog does not let anyone read
    now (not there, private, embargoed, withdrawn), or cannot tell so in one step: the general public path, which
    would find no more, need not be asked; the resolver's endpoint says what it is."""


#: The one :class:`NotPublic`.
NOT_PUBLIC: Final = NotPublic()


class PlainAnswers:
    """The answers of the module's docstring, for one archive; ``content_policy`` is what every N2R answer of an
    archived representation says in ``Content-Security-Policy``, ``origin(series)`` the base URL a mirrored series
    is copied from (``None``: this archive's own), told as the event loop may ask it
    (:meth:`~pdi.server.protocol.mirrored.Locations.origin_at_once`); ``site`` the base URL's path N2L's ``Location``
    is under (empty at a host's root: :mod:`pdi.server.http.site`)."""

    def __init__(
        self, archive: Archive, content_policy: str, origin: Callable[[str], str | None], site: bytes = b"",
    ) -> None:
        self.archive = archive
        self._n2r = site + b"/uri-res/N2R?"
        self._policy = content_policy.encode("latin-1")
        self._policy_field = (b"content-security-policy", self._policy)
        self._origin = origin
        #: Whether a base URL (without its last ``/``) quotes to itself in a ``Link``.
        self._bases: dict[str, bool] = {}

    def digest(self, query: bytes) -> str | NotPublic | None:
        """The SHA-256 (hex) of what the name ``query`` spells names, when N2L's ``302`` and a ``304`` of it are the
        plain case (what :meth:`answer` makes them of, read by the name as spelled: nothing else is made);
        :data:`NOT_PUBLIC` if it is spelled so but not there for anyone now; ``None`` for any other spelling and for
        a mirrored series (asked before the catalog: :meth:`answer` and the general path say what its answers
        are)."""
        spelled = _SERIAL_NAME.fullmatch(query)
        if spelled is None:
            return None
        series = spelled.group(1).decode("ascii")
        if self._origin(series) is not None:
            return None  # mirrored: its answers link the origin (pdi.server.protocol.mirrored)
        sha256 = self.archive.public_digest(query.decode("ascii"), series)
        return NOT_PUBLIC if sha256 is None else sha256

    def answer(
        self, query: bytes, n2l: bool, revalidating: bool, most: int, base: str | None,
    ) -> Entity | Validator | Fixed | NotPublic | None:
        """N2L's ``302`` (``n2l``), N2R's validator (``revalidating``) or else N2R's whole answer (at most ``most``
        octets; ``base``, the request's base URL) of the name ``query`` spells, if it is the plain case;
        :data:`NOT_PUBLIC` if it is spelled so but not there for anyone now."""
        if n2l or revalidating:  # no octets: the name's digest alone, the name as spelled its key
            spelled = _SERIAL_NAME.fullmatch(query)
            if spelled is None:
                return None
            series = spelled.group(1).decode("ascii")
            name = query.decode("ascii")
            sha256 = self.archive.public_digest(name, series)
            if sha256 is None:
                return NOT_PUBLIC
            if self._origin(series) is not None:
                return None  # mirrored: its answers link the origin (pdi.server.protocol.mirrored)
            etag = f'"{sha256}"'
            names = (name, name.rsplit(".", 2)[0])
            if n2l:
                return located(self._n2r + query, names, True, etag)
            return Validator(etag, SHARED_VALIDATOR_FIELDS, names, True)
        spelled = _SERIAL_NAME.fullmatch(query)
        if spelled is None:
            return None
        series = spelled.group(1).decode("ascii")
        name = query.decode("ascii")
        found = self.archive.public_serial_named(name, series)
        if found is None:
            return NOT_PUBLIC
        if self._origin(series) is not None:
            return None  # mirrored: its answers link the origin (pdi.server.protocol.mirrored)
        if base is None:
            return None
        document = name.rsplit(".", 2)[0]
        if isinstance(found, tuple):  # one format, a small blob's octets in the catalog's row: no record made
            media_type, charset, sha256, created, data = found
            if len(data) > most or media_type.startswith("multipart/"):
                return None
            if hashlib.sha256(data).hexdigest() != sha256:  # one chunk: its digest is the name's SHA-256 (as pdi
                return None  # writes it: lower-case hex); damaged, or another spelling: the general path says
            first, stamp = name, deposit_stamp(created)
            modified = stamp
        else:
            record = found.record
            sha256, media_type, charset = record.sha256, record.media_type, record.charset
            if record.size > most or media_type.startswith("multipart/"):
                return None
            # BlobInfo(...), made without its frozen __init__ (pdi._later.filled): the same value
            info = filled(BlobInfo, {"sha256": sha256, "size": found.size, "chunk_size": found.chunk_size,
                                     "chunks": found.chunks})
            if found.data is not None:
                octets = checked(info, found.data)
            elif found.size == record.size:
                octets = read_cached(info, found.path, self.archive.fixity_memo)
            else:
                octets = None
            if octets is None or len(octets) != record.size:
                return None  # damaged, missing, or not in memory: the general path reads it, or says what is wrong
            data = octets
            records = found.records
            if len(records) == 1:
                first, created = name, record.created_at
            else:  # the version's first format names its memento; its first deposit dates it
                first = f"{document}.{min(r.format for r in records)}.{name.rsplit('.', 1)[1]}"
                created = min(r.created_at for r in records)
            stamp = deposit_stamp(created)
            modified = stamp if created == record.created_at else deposit_stamp(record.created_at)  # Last-Modified
        etag = f'"{sha256}"'
        names = (name, document)
        at = base.rstrip("/")
        plain = self._bases.get(at)
        if plain is None:
            if len(self._bases) >= 64:
                self._bases.clear()
            self._bases[at] = plain = quotes_to_itself(at)  # else a Link quotes it: the general path
        if not plain:
            return None
        link = (f'<{name}>; rel="canonical", <{at}/uri-res/N2R?{document}>; rel="original",'
                f' <{at}/timegate/{document}>; rel="timegate",'
                f' <{at}/timemap/link/{document}>; rel="timemap"; type="{LINK_FORMAT}",'
                f' <{at}/uri-res/N2R?{first}>; rel="memento"; datetime="{stamp}"')
        content_type = labelled_type(media_type, charset).encode("latin-1")
        linked, tagged, digest = link.encode("latin-1"), etag.encode("latin-1"), sha256.encode("latin-1")
        dated_field = stamp_fields(modified)
        stamped_field = dated_field if modified == stamp else stamp_fields(stamp)
        stamped, dated = stamped_field[0][1], dated_field[1][1]
        headers = (
            stamped_field[0],
            (b"link", linked),
            (b"vary", b"Accept"),
            (b"x-pdi-sha256", digest),
            self._policy_field,
            (b"x-content-type-options", b"nosniff"),
            dated_field[1],
            (b"etag", tagged),
            _CACHE_CONTROL,
            (b"accept-ranges", b"bytes"),
        )
        # its 200's header lines as pdi.server.process.cache.wire would make them from these, made at once
        lines = (b"memento-datetime: %s\r\nlink: %s\r\nvary: Accept\r\nx-pdi-sha256: %s\r\n"
                 b"content-security-policy: %s\r\nx-content-type-options: nosniff\r\nlast-modified: %s\r\n"
                 b"etag: %s\r\ncache-control: %s\r\naccept-ranges: bytes\r\ncontent-length: %d\r\n"
                 b"content-type: %s\r\n\r\n"
                 % (stamped, linked, digest, self._policy, dated, tagged, _IMMUTABLE, len(data), content_type))
        # every value made of checked parts: the name and its document (the pattern above), a base URL that quotes
        # to itself, the catalog's format tokens and digest, the configured policy, the stamp made here
        field_octets = (_FIELD_OCTETS + len(stamped) + len(linked) + len(digest) + len(self._policy) + len(dated)
                        + len(tagged))
        held = entity_size(len(data), len(content_type), field_octets, len(headers), names)
        return made_entity(data, content_type, etag, headers, names, [lines], held)


#: The slots of :class:`Entity`, each set as its frozen ``__init__`` sets it (``object.__setattr__``), without the
#: attribute look-ups and calls of ``object.__setattr__`` a field (an ``__init__`` of nine fields was a twentieth of a
#: first-asking N2R's instructions).
_BODY, _TYPE, _ETAG, _HEADERS, _NAMES, _SHARED, _LINES, _SENDABLE, _HELD = (
    Entity.__dict__[name].__set__ for name in (
        "body", "content_type", "etag", "headers", "names", "shared", "lines", "sendable", "held"))
_new = object.__new__


def made_entity(body: bytes, content_type: bytes, etag: str, headers: tuple[tuple[bytes, bytes], ...],
                names: tuple[str, ...], lines: list[bytes], held: int) -> Entity:
    """``Entity(body, content_type, etag, headers, names, True, lines, sendable=True, held=held)``: an answer anyone
    may be given whose header values are known to be sendable, made without its frozen ``__init__`` (each slot set
    by its descriptor, as ``object.__setattr__`` sets it): the same value, every field (those left out of its
    comparison too; ``tests/server/test_server_plain_entity.py``)."""
    made: Entity = _new(Entity)
    _BODY(made, body)
    _TYPE(made, content_type)
    _ETAG(made, etag)
    _HEADERS(made, headers)
    _NAMES(made, names)
    _SHARED(made, True)
    _LINES(made, lines)
    _SENDABLE(made, True)
    _HELD(made, held)
    return made


#: HTTP-dates of deposit times, by their first 19 characters (the second): one a second of deposits.
_STAMPS: dict[str, str] = {}


def deposit_stamp(created: str) -> str:
    """A deposit time as the catalog keeps it (``2026-11-22T14:30:00.000000Z``) as an HTTP-date, to the second: the
    ``Memento-Datetime`` of a deposit, and the ``Last-Modified`` of its stored bytes. Made once a second of deposits
    (at most 4,096 kept)."""
    second = created[:19]
    stamp = _STAMPS.get(second) if created.endswith("Z") else None
    if stamp is None:
        stamp = http_datetime(parse_timestamp(created))
        if created.endswith("Z") and len(created) > 19 and created[19] == ".":  # only the second is told
            if len(_STAMPS) >= 4096:
                _STAMPS.clear()
            _STAMPS[second] = stamp
    return stamp


def labelled_type(media_type: str, charset: str | None) -> str:
    """The ``Content-Type`` of an N2R answer of octets of this media type and charset (not a whole multipart file,
    whose own parameters its octets say): the charset named, else ``utf-8`` for a text, as Starlette's ``Response``
    labels a text it is given without one."""
    if charset:
        return f"{media_type}; charset={charset}"
    return f"{media_type}; charset=utf-8" if media_type.startswith("text/") else media_type


_IMMUTABLE: Final = IMMUTABLE.encode("latin-1")
#: The ``Cache-Control`` field of every N2R answer made here (one pair for all of them).
_CACHE_CONTROL: Final = (b"cache-control", _IMMUTABLE)
#: The ``Memento-Datetime`` and ``Last-Modified`` fields of an HTTP-date, by the date (at most 4,096 kept).
_STAMP_FIELDS: dict[str, tuple[tuple[bytes, bytes], tuple[bytes, bytes]]] = {}


def stamp_fields(stamp: str) -> tuple[tuple[bytes, bytes], tuple[bytes, bytes]]:
    """The ``Memento-Datetime`` and ``Last-Modified`` fields of an HTTP-date (:func:`deposit_stamp`), made once a
    second of deposits: pairs kept, not made anew for each answer (each a tuple the collector would count)."""
    fields = _STAMP_FIELDS.get(stamp)
    if fields is None:
        stamped = stamp.encode("latin-1")
        fields = (b"memento-datetime", stamped), (b"last-modified", stamped)
        if len(_STAMP_FIELDS) >= 4096:
            _STAMP_FIELDS.clear()
        _STAMP_FIELDS[stamp] = fields
    return fields


#: Octets of the names and fixed values of an N2R answer's header fields made above (its entity's size counts them).
_FIELD_OCTETS: Final = sum(map(len, (
    b"memento-datetime", b"link", b"vary", b"Accept", b"x-pdi-sha256", b"content-security-policy",
    b"x-content-type-options", b"nosniff", b"last-modified", b"etag", b"cache-control", _IMMUTABLE,
    b"accept-ranges", b"bytes")))
