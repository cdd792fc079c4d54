"""Whole N2R answers kept in memory, for names whose bytes can never change (and N2L's and 304's facts about them).

A name with a format (``…/1.text.1``, with or without a fragment) always
resolves to the same bytes: a version, once deposited, is immutable, and a
fragment always selects the same part of it. Its answer — body, media type,
entity tag and the other headers — is an :class:`Entity`, which
:class:`ResponseCache` keeps, least recently used first out, within a bound
on the bytes held (``max_bytes``; an answer larger than ``max_entry_bytes``
is never kept): as a :data:`Whole`, its ``200``'s header lines as sent, its
body and the rest in a tuple of atoms, which the garbage collector stops
tracking once it has seen it (an answer kept is not walked by every
collection after), the :class:`Entity` made again only for an answer that
needs its header pairs (a ``Range``, the ASGI path; its ``200`` and ``304``
are made from its lines). A generic name (no format) is never kept: its
list of formats grows with each version. Two smaller facts about such a name never change
either, and are kept as well, so that asking again needs no catalog: N2L's
``302`` to the N2R of its canonical spelling, and the entity tag a ``304``
needs. Both are one :class:`Fact` of the name, kept apart under the query
string alone (:meth:`ResponseCache.learn`) and read again into an answer
each time (:meth:`ResponseCache.known_wire`), whatever the ``Host``; they
are not kept again among the whole answers (:meth:`ResponseCache.keep`).
Only the resolver's own answers (a request not the plain case below) keep
a ``302`` (:class:`Fixed`, under a key of its own, :func:`kept_key`) or a
``Validator`` there. The bytes cannot change, but a name can be taken
out of service (withdrawn, :meth:`pdi.archive.Archive.withdraw`) by any
resolver on the catalog: so the cache answers only while it is fresh, for
:data:`REVALIDATE_SECONDS` after it last asked the catalog whether anything
was withdrawn (:meth:`ResponseCache.revalidate`, one indexed query); a
stale cache answers nothing until the next request through the resolver has
asked (or the connection, when the catalog can answer it at once:
:meth:`ResponseCache.refresh`), and forgets everything if something was. A withdrawal therefore
reaches every resolver's cache within that time. (HTTP caches outside were
told the answer is ``immutable`` and may keep it: withdrawal takes a name out
of this resolver's service, not out of copies made before.)

:class:`CachedAnswers` is ASGI middleware that answers ``GET`` and ``HEAD``
of ``/uri-res/N2R``, ``/uri-res/I2R`` and ``/uri-res/N2L`` from the cache before any routing,
with ``If-None-Match`` (``304``) and one ``Range`` (``206``/``416``) read
as the resolver itself reads them (:func:`answer`); a miss goes on to the
resolver, which fills the cache (:meth:`pdi.server.protocol.resolver.Resolver.endpoint`).
The key is the request's scheme, and its ``Host`` and query string exactly as sent
(:func:`cache_key`: the name as the client spelled it; every spelling of a
name is its own entry). A request whose ``Accept`` names JSON is never
answered from the cache: N2R may answer it with the name's description
instead of its bytes (content negotiation, :mod:`pdi.server.protocol.resolver`), and
every answer says ``Vary: Accept``. A read with a browser's sign-in (the cookie of
:mod:`pdi.server.http.readers`, checked before this middleware) may be answered
from it — the cache holds only answers anyone may read — but is sent
``private, no-store``, and nothing read with it is ever kept.

:class:`~pdi.server.process.connection.CachedAnswerProtocol` does the same one step earlier, in ``pdi
serve``'s HTTP/1.1 connections: as soon as a request's head is parsed, an
answer the cache holds is written to the connection at once, without an
ASGI request cycle (a task, the middleware, Starlette), which is most of
what a small answer costs — twice the requests a second, half the latency;
and a read that is one plain request head of a strict shape, answered by a
fact or a whole answer kept here, is answered in C from :attr:`ResponseCache.tables`
without the parser's callbacks (:mod:`pdi.server.process._fasthead`).
It steps aside (the ASGI path answers, from the same cache) whenever the
request is not the plain case: another request still being answered on the
connection, the client not reading what was written (the connection's
write buffer full), a request body, an upgrade, ``Connection: close``,
HTTP/1.0, the connection limit reached, a token presented
(``Authorization``, or a browser's sign-in cookie, :mod:`pdi.server.http.readers`:
it is checked first, and what is read with the cookie is never answered
from here), or an ``If-Match``, whose ``412`` is the resolver's (the
middleware steps aside for it too).

For a name the cache does not hold, the protocol also makes the answer
itself when it is the plain case (an N2R, I2R or N2L anyone may read, told
by one catalog statement on a read-only connection of the event loop's own,
its octets in memory: :meth:`pdi.server.protocol.resolver.Resolver.public_answer`)
and keeps it here; everything else goes to the resolver as before.

Each ``pdi serve`` worker process has a cache of its own.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Final

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from pdi.server.http.byteranges import Byteranges, boundary
from pdi.server.http.conditional import (
    NOT_OF_416,
    NOT_REPEATED_TO_IF_RANGE,
    byte_ranges,
    dated_fields,
    if_range_holds,
    tag_matches,
    unsatisfiable,
)
from pdi.server.http.cors import CrossOrigin, ReadPaths
from pdi.server.http.metrics import cache_lookup
from pdi.server.http.readers import BY_READER, varying_also
from pdi.server.http.site import SITED

#: Bytes of whole answers a worker keeps by default (``pdi serve --cache-mib``).
DEFAULT_CACHE_BYTES = 32 << 20
#: The largest answer kept: a larger one is read from the store each time.
DEFAULT_ENTRY_BYTES = 1 << 20
#: Bytes counted for an entry beyond its body, headers and key (the objects that hold them).
_ENTRY_OVERHEAD = 400
#: The same for a :class:`Validator` or a :class:`Fixed` answer, which hold fewer objects.
_SMALL_OVERHEAD = 250

#: Bytes counted for a :class:`Fact` beyond its key and packed bytes (the two objects and their place in the LRU).
_FACT_OVERHEAD = 200

#: Up to this many answers kept, :meth:`ResponseCache.forget` looks through them for a name's (a few
#: milliseconds); past it, it empties the cache.
FORGET_SCAN = 20_000

#: How long a cache answers after it last checked that nothing was withdrawn (seconds).
REVALIDATE_SECONDS = 2.0

#: The paths whose answers are kept (RFC 2169's N2R, and I2R, which is N2R).
N2R_PATHS = frozenset({"/uri-res/N2R", "/uri-res/I2R"})
#: N2L's path: its ``302`` for a name with a format is kept too (:class:`Fixed`).
N2L_PATH = "/uri-res/N2L"

Headers = list[tuple[bytes, bytes]]


def _held(*parts: bytes | str, headers: tuple[tuple[bytes, bytes], ...], names: tuple[str, ...]) -> int:
    """Bytes a kept answer's parts, headers and names hold in memory (without the object's own overhead)."""
    return sum(map(len, parts)) + sum(map(len, chain.from_iterable(headers))) + sum(map(len, names))


@dataclass(frozen=True, slots=True)
class Entity:
    """A whole N2R answer that never changes: its body and the headers every answer from it carries.

    ``headers`` leave out ``Content-Type`` (``content_type``), ``Content-Length``
    and ``Content-Range``, which depend on the range asked for. ``names`` are
    the canonical versioned name of the stored representation and its
    document's generic name, by which :meth:`ResponseCache.forget` finds it.
    """

    body: bytes
    content_type: bytes
    etag: str
    headers: tuple[tuple[bytes, bytes], ...]
    names: tuple[str, ...]
    #: Whether anyone may be given it (never kept when not: pdi.archive.access).
    shared: bool = True
    #: Its ``200``'s header lines as sent, made at its first (:func:`wire`), or with it (:mod:`pdi.server.protocol.plain`).
    lines: list[bytes] = field(default_factory=list, compare=False, repr=False)
    #: Whether every header value is known to hold no control character (made from checked parts alone:
    #: :mod:`pdi.server.protocol.plain`), so that :meth:`ResponseCache.put` need not look.
    sendable: bool = field(default=False, compare=False, repr=False)
    #: :attr:`size`, when whoever made it counted it already (:func:`entity_size` of its parts); 0: counted here.
    held: int = field(default=0, compare=False, repr=False)

    @property
    def size(self) -> int:
        """Bytes this answer holds in memory, roughly: body, headers (twice: as sent too) and names."""
        if self.held:
            return self.held
        return entity_size(len(self.body), len(self.content_type), sum(map(len, chain.from_iterable(self.headers))),
                           len(self.headers), self.names)


def entity_size(body: int, content_type: int, fields: int, count: int, names: tuple[str, ...]) -> int:
    """:attr:`Entity.size` of an answer of ``body`` octets, a ``Content-Type`` of ``content_type`` octets, ``count``
    header fields of ``fields`` octets in all (names and values), and these names."""
    # the fields once as pairs, once as lines
    return body + content_type + 2 * fields + 4 * count + 80 + sum(map(len, names)) + _ENTRY_OVERHEAD


@dataclass(frozen=True, slots=True)
class Validator:
    """What a ``304`` of a name with a format needs: its entity tag and the fields a ``304`` repeats.

    Kept when a request's ``If-None-Match`` was answered from the catalog
    alone (its bytes not read), so that the next revalidation of the same
    name needs no catalog either. A request it does not answer ``304``
    (another tag, or none) goes on to the resolver, which reads the bytes
    and keeps the whole :class:`Entity` in its place.
    """

    etag: str
    #: ``Vary`` and ``Cache-Control`` (RFC 9110 §15.4.5), as the resolver's ``304`` sends them.
    headers: tuple[tuple[bytes, bytes], ...]
    names: tuple[str, ...]
    #: Whether anyone may be given it (never kept when not).
    shared: bool = True


@dataclass(frozen=True, slots=True)
class Fixed:
    """An answer that is the same whatever the request's other fields: ``N2L``'s ``302`` of a name with a format.

    A versioned name's location is the ``N2R`` of its canonical spelling,
    which never changes; the resolver answers it from the catalog (the name
    must be there, readable and not withdrawn) and keeps it here.
    """

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    names: tuple[str, ...]
    #: Whether anyone may be given it (never kept when not).
    shared: bool = True
    #: The entity tag of the name's bytes (for its :class:`Fact`), when the catalog told it.
    etag: str | None = None
    #: Its header lines as sent, made at its first (:func:`wire`).
    lines: list[bytes] = field(default_factory=list, compare=False, repr=False)


#: What a :class:`ResponseCache` keeps under a key.
Kept = Entity | Validator | Fixed

#: A whole answer anyone may be given (a shared :class:`Entity`) as :meth:`ResponseCache.put` keeps it: its ``200``'s
#: header lines as sent (:func:`wire`'s: its ``headers``, then ``Content-Length`` and ``Content-Type``, then the empty
#: line), its body, ``content_type``, ``etag``, ``names`` (one ``str``, a line each) and what it was counted as
#: (:meth:`ResponseCache.put`'s cost). Atoms only (``bytes``, ``str``, ``int``), so the garbage collector stops
#: tracking it at the first collection that sees it, where an :class:`Entity` (a slotted instance) and its list of
#: lines would stay tracked, and be walked, for as long as the answer is kept (a tuple of names inside would keep it
#: tracked until a collection saw that tuple untracked first); its header pairs are made again from its lines
#: (:func:`unpacked`) only when something asks for the :class:`Entity` (a ``Range``, the ASGI path).
Whole = tuple[bytes, bytes, bytes, str, str, int]
#: What a :class:`ResponseCache` holds under a key: a shared :class:`Entity` as a :data:`Whole`, any other answer
#: with what it was counted as. Either way its last item is that cost.
Held = tuple[Kept, int] | Whole


@dataclass(frozen=True, slots=True)
class Fact:
    """What never changes about a versioned name anyone may read, whatever the ``Host`` asked: enough for its
    ``304`` (:class:`Validator`) and its ``N2L`` (:class:`Fixed`) without the catalog.

    Kept apart from whole answers (:meth:`ResponseCache.fact`), under the
    query string alone, packed in one ``bytes`` (:meth:`pack`: about 350
    bytes of memory a name, so 32 MiB keeps some 95,000 names): a cold name
    asked once any way (``N2R``, ``N2L`` or revalidated) needs no catalog
    for the others, and an ``N2L`` or a ``304`` made from it is not kept
    again among the whole answers. ``location`` is the ``Location`` of
    N2L's ``302`` (:func:`located`), ``None`` until one was made.
    """

    names: tuple[str, ...]
    etag: str
    location: bytes | None = None

    def validator(self) -> Validator:
        """The :class:`Validator` of the name (shared: a fact is kept for names anyone may read only)."""
        return Validator(self.etag, SHARED_VALIDATOR_FIELDS, self.names)

    def fixed(self) -> Fixed | None:
        """N2L's ``302`` (:class:`Fixed`), when its ``Location`` is known."""
        return None if self.location is None else located(self.location, self.names, True, self.etag)

    def pack(self) -> bytes | None:
        """The fact in one ``bytes`` (:meth:`unpack` reads it): the digest, the canonical name (``names[0]``), then
        (when known) a NUL and the ``Location``, left out when it is the N2R of that name; ``None`` when it is not
        of the usual shape (a whole version's tag, its names the versioned and generic name, a ``Location``
        not empty)."""
        name = self.names[0]
        etag = self.etag
        if (len(etag) != 66 or etag[0] != '"' or etag[-1] != '"' or "\x00" in name
                or self.names != (name, name.rsplit(".", 2)[0])):
            return None
        try:
            digest = bytes.fromhex(etag[1:-1])
        except ValueError:
            return None
        spelled = name.encode()
        location = self.location
        if location is None:
            return digest + spelled
        if not location:
            return None
        return digest + spelled + (b"\x00" if location == _N2R + spelled else b"\x00" + location)

    @staticmethod
    def unpack(packed: bytes) -> Fact:
        """The fact :meth:`pack` packed."""
        spelled, known, location = packed[32:].partition(b"\x00")
        text = spelled.decode()
        return Fact((text, text.rsplit(".", 2)[0]), f'"{packed[:32].hex()}"',
                    (location or _N2R + spelled) if known else None)


_N2R = b"/uri-res/N2R?"
_VARY_BY_READER = (b"vary", BY_READER.encode("latin-1"))
_NO_LENGTH = (b"content-length", b"0")
#: What every answer of the resolver says (:class:`pdi.server.http.middleware.BrowserFields`), last: the answers
#: made here, which never pass that middleware, say it too, so that they are the octets the app's would be.
NOSNIFF = (b"x-content-type-options", b"nosniff")


def located(location: bytes, names: tuple[str, ...], shared: bool, etag: str | None) -> Fixed:
    """N2L's ``302`` to ``location`` of the name ``names`` tell: the fields Starlette's ``RedirectResponse`` has
    (made without it), and, as every answer that is not immutable, ``Vary`` by who reads
    (:mod:`pdi.server.http.readers`); its header lines made now."""
    return Fixed(302, (_NO_LENGTH, (b"location", location), NOSNIFF, _VARY_BY_READER), b"", names, shared, etag,
                 [_located_lines(location)])


def _located_lines(location: bytes) -> bytes:
    """The header lines of :func:`located`'s ``302`` as sent."""
    return b"content-length: 0\r\nlocation: " + location + _LINES_AFTER_LOCATION


_LINES_AFTER_LOCATION = b"\r\n%s: %s\r\nvary: " % NOSNIFF + _VARY_BY_READER[1] + b"\r\n\r\n"


#: ``Cache-Control`` of an answer that never changes (a name with a format), anyone may read.
IMMUTABLE = "public, max-age=31536000, immutable"
#: ``Vary`` and ``Cache-Control`` of a ``304`` of an answer anyone may read (:class:`Validator`).
SHARED_VALIDATOR_FIELDS: tuple[tuple[bytes, bytes], ...] = (
    (b"vary", b"Accept"), (b"cache-control", IMMUTABLE.encode()), NOSNIFF)
_VALIDATOR_LINES = b"\r\n" + b"".join(b"%s: %s\r\n" % pair for pair in SHARED_VALIDATOR_FIELDS) + b"\r\n"
#: What :meth:`ResponseCache.known_wire`'s lines are made of, for :mod:`pdi.server.process._fasthead`, which makes
#: the same octets: what follows a ``302``'s ``Location``, what follows a ``304``'s ``ETag`` and the N2R a
#: ``Location`` not kept names.
KNOWN_WIRE_PARTS = (_LINES_AFTER_LOCATION, _VALIDATOR_LINES, _N2R)


def fact_of(kept: Kept) -> Fact | None:
    """The :class:`Fact` a shared answer about a versioned name tells (``None``: not shared, or an N2L's
    ``302`` made without its tag)."""
    if not kept.shared:
        return None
    if isinstance(kept, Fixed):
        if kept.etag is None:
            return None
        headers = kept.headers  # N2L's 302 (located()): its Location
        plain = len(headers) == 4 and headers[0] == _NO_LENGTH and headers[2:] == (NOSNIFF, _VARY_BY_READER)
        return Fact(kept.names, kept.etag, headers[1][1] if plain and headers[1][0] == b"location" else None)
    return Fact(kept.names, kept.etag)


def packed(entity: Entity, cost: int) -> Whole:
    """A shared :class:`Entity` as the cache keeps it (:data:`Whole`), counted as ``cost``; its header lines made
    now when they were not yet (as :func:`wire` makes them). Its names are PDIs, canonical (no line feed)."""
    lines = entity.lines
    return (lines[0] if lines else _head(entity), entity.body, entity.content_type, entity.etag,
            "\n".join(entity.names), cost)


def unpacked(whole: Whole, key: bytes) -> Entity:
    """The :class:`Entity` kept under ``key`` as ``whole`` (:func:`packed`): equal to the one kept, every field (its
    header pairs read back from its lines: ``name: value`` each, its values sendable, so without a CR or LF), its
    :attr:`~Entity.size` what it was counted as."""
    head, body, content_type, etag, names, cost = whole
    pairs = []
    for line in head.split(b"\r\n")[:-4]:  # the last lines: Content-Length, Content-Type, then the empty line
        name, _, value = line.partition(b": ")
        pairs.append((name, value))
    return Entity(body, content_type, etag, tuple(pairs), tuple(names.split("\n")), True, [head],
                  sendable=True, held=cost - len(key))


def _head(entity: Entity) -> bytes:
    """The header lines of ``entity``'s ``200`` as sent (then the empty line)."""
    whole = [*entity.headers, *_length(len(entity.body)), (b"content-type", entity.content_type)]
    return b"".join(b"%s: %s\r\n" % pair for pair in whole) + b"\r\n"


def _size(kept: Kept) -> int:
    """Bytes a kept answer holds in memory, roughly (:attr:`Entity.size`; a tag or a redirect's body, headers and names)."""
    if isinstance(kept, Entity):
        return kept.size
    if isinstance(kept, Validator):
        return _held(kept.etag, headers=kept.headers, names=kept.names) + _SMALL_OVERHEAD
    return _held(kept.body, headers=kept.headers, names=kept.names) + _SMALL_OVERHEAD + _lines_size(kept.headers)


def _lines_size(headers: tuple[tuple[bytes, bytes], ...]) -> int:
    """Bytes of ``headers`` as header lines (``name: value``), with the object that holds them."""
    return sum(map(len, chain.from_iterable(headers))) + 4 * len(headers) + 80


def wire(kept: Kept, fields: tuple[str | None, str | None, str | None]) -> tuple[int, bytes, bytes] | None:
    """Status, header lines and body of the answer ``kept`` gives a ``GET`` without ``If-None-Match``, ``Range``
    or ``If-Range`` (``fields``), when it is an :class:`Entity` (``200``) or a :class:`Fixed` answer: the same
    octets as :func:`respond`'s, the header lines made once (``None``: any other, which :func:`respond` makes)."""
    if isinstance(kept, Entity):
        if fields != _NO_FIELDS:
            return None
        lines = kept.lines
        if not lines:
            lines.append(_head(kept))
        return 200, lines[0], kept.body
    if isinstance(kept, Fixed):
        lines = kept.lines
        if not lines:
            lines.append(b"".join(b"%s: %s\r\n" % pair for pair in kept.headers) + b"\r\n")
        return kept.status, lines[0], kept.body
    return None


_NO_FIELDS = (None, None, None)


def validated_wire(kept: Validator, if_none_match: str | None) -> tuple[int, bytes, bytes] | None:
    """:func:`respond`'s ``304`` of a :class:`Validator` as :func:`wire` gives an answer (status, header lines as
    sent, body), the lines of a shared validator's fields made once (:data:`SHARED_VALIDATOR_FIELDS`); ``None``
    when ``If-None-Match`` does not hold its tag."""
    if if_none_match is None or not tag_matches(if_none_match, kept.etag):
        return None
    tagged = b"etag: " + kept.etag.encode("latin-1")
    if kept.headers is SHARED_VALIDATOR_FIELDS:
        return 304, tagged + _VALIDATOR_LINES, b""
    return 304, tagged + b"\r\n" + b"".join(b"%s: %s\r\n" % pair for pair in kept.headers) + b"\r\n", b""


def respond(
    kept: Kept, if_none_match: str | None, range_field: str | None, if_range: str | None
) -> tuple[int, Headers, bytes] | None:
    """The answer ``kept`` gives a ``GET`` with these request fields, or ``None`` when only the resolver can give it.

    An :class:`Entity`: :func:`answer`. A :class:`Validator`: ``304`` when
    ``If-None-Match`` holds its tag (RFC 9110 §13.1.2), else ``None`` (the
    bytes are not here). A :class:`Fixed` answer: itself.
    """
    if isinstance(kept, Entity):
        return answer(kept, if_none_match, range_field, if_range)
    if isinstance(kept, Validator):
        if if_none_match is not None and tag_matches(if_none_match, kept.etag):
            return 304, [(b"etag", kept.etag.encode("latin-1")), *kept.headers], b""
        return None
    return kept.status, list(kept.headers), kept.body


def answer(
    entity: Entity, if_none_match: str | None, range_field: str | None, if_range: str | None
) -> tuple[int, Headers, bytes]:
    """Status, headers and body of the answer to a ``GET`` of ``entity`` with these request fields.

    ``304`` when ``If-None-Match`` holds its tag (RFC 9110 §13.1.2), ``206``
    for a satisfiable ``Range`` (if ``If-Range`` holds; several ranges, a
    ``multipart/byteranges`` body: :mod:`pdi.server.http.byteranges`),
    ``416`` for one that selects nothing, else ``200`` and the whole body.
    The caller drops the body for ``HEAD``.
    """
    if if_none_match is not None and tag_matches(if_none_match, entity.etag):
        return 304, [(b"etag", entity.etag.encode("latin-1")), *_cache_control(entity)], b""
    length = len(entity.body)
    holds = if_range is None or if_range_holds(if_range, entity.etag, modified_of(entity))
    wanted = byte_ranges(range_field, length) if holds else None
    if wanted is None:
        return 200, [*entity.headers, *_length(length), (b"content-type", entity.content_type)], entity.body
    if len(wanted) > 1:  # RFC 9110 §15.3.7.2: no Content-Range of its own; each part says its range
        parts = Byteranges.of(wanted, length, entity.content_type, boundary(entity.etag, entity.body))
        fields = [*_repeated(entity, if_range), *_length(parts.length), (b"content-type", parts.content_type)]
        return 206, fields, parts.join(entity.body)
    if not wanted:
        assert range_field is not None
        fields, body = unsatisfiable(range_field, length)
        # not immutable: it varies by who reads, as the resolver's readers say of every such answer
        kept = [(k, v) for k, v in entity.headers if k not in NOT_OF_416]
        return 416, varying_also([*kept, *fields], BY_READER), body
    first, last = wanted[0]
    headers = [*_repeated(entity, if_range), (b"content-range", b"bytes %d-%d/%d" % (first, last, length)),
               *_length(last - first + 1)]
    if if_range is None:
        headers.append((b"content-type", entity.content_type))
    return 206, headers, entity.body[first : last + 1]


def _repeated(entity: Entity, if_range: str | None) -> Headers:
    """The whole answer's fields a ``206`` repeats: all of them, but to a request with ``If-Range`` none of
    :data:`~pdi.server.http.conditional.NOT_REPEATED_TO_IF_RANGE` (RFC 9110 §15.3.7)."""
    if if_range is None:
        return list(entity.headers)
    return [(k, v) for k, v in entity.headers if k not in NOT_REPEATED_TO_IF_RANGE]


def modified_of(entity: Entity) -> str | None:
    """The ``Last-Modified`` an :class:`Entity` is answered with, or ``None``."""
    for key, value in entity.headers:
        if key == b"last-modified":
            return value.decode("latin-1")
    return None


def _length(n: int) -> Headers:
    return [(b"content-length", str(n).encode())]


#: The fields of an answer a ``304`` repeats (RFC 9110 §15.4.5), with :data:`NOSNIFF` (:func:`_cache_control`).
_REPEATED: Final = (b"cache-control", b"vary")
#: The same fields' lines in a whole answer's header lines, each but its last LF: each line follows an LF (the
#: first, one put before the lines), holds no CR nor LF of its own (values are sendable).
_REPEATED_BY_304 = re.compile(rb"\n((?:%s): [^\r\n]*\r)(?=\n)" % b"|".join(map(re.escape, _REPEATED)))


def _cache_control(entity: Entity) -> Headers:
    """The fields a ``304`` repeats (:data:`_REPEATED`: ``Cache-Control`` and ``Vary``); and :data:`NOSNIFF`."""
    return [*((k, v) for k, v in entity.headers if k in _REPEATED), NOSNIFF]


class ResponseCache:
    """Whole answers by key, least recently used out first, within ``max_bytes`` (see the module's docstring).

    Not thread-safe: it is used from the server's event loop only.
    """

    def __init__(
        self,
        max_bytes: int = DEFAULT_CACHE_BYTES,
        max_entry_bytes: int = DEFAULT_ENTRY_BYTES,
        *,
        generation: Callable[[], int] | None = None,
        revalidate_seconds: float = REVALIDATE_SECONDS,
        at_once: Callable[[], int | None] | None = None,
        max_fact_bytes: int | None = None,
        cross_origin: CrossOrigin | None = None,
    ) -> None:
        if max_bytes < 0 or max_entry_bytes < 0 or (max_fact_bytes or 0) < 0:
            raise ValueError("a cache's bounds are sizes: 0 or more bytes")
        self.max_bytes = max_bytes
        self.max_entry_bytes = min(max_entry_bytes, max_bytes)
        self.bytes = 0
        #: Each answer, with what it was counted as when kept (taken off as it was counted when it goes): a shared
        #: :class:`Entity` as a :data:`Whole`, any other as ``(answer, cost)``.
        self._entries: OrderedDict[bytes, Held] = OrderedDict()
        #: :class:`Fact` entries by query string, least recently used first, within ``max_fact_bytes``.
        self.max_fact_bytes = max_bytes if max_fact_bytes is None else max_fact_bytes
        self.fact_bytes = 0
        self._facts: OrderedDict[bytes, bytes] = OrderedDict()
        self.generation = generation
        #: ``generation`` read at once in the calling thread (the event loop's), or ``None`` when it cannot be.
        self.at_once = at_once
        self.revalidate_seconds = revalidate_seconds
        self._seen: int | None = None
        self._fresh_until = float("-inf")
        #: Which origins' scripts may read its answers (:mod:`pdi.server.http.cors`; none unless told): the connections
        #: that write them (:mod:`pdi.server.process.connection`) write its :attr:`~CrossOrigin.lines` in each, after
        #: uvicorn's default fields, as the app's :class:`~pdi.server.http.cors.CrossOriginReads` puts them first, and
        #: leave a request with an ``Origin`` to the app when the answer depends on it (a list of origins).
        self.cross_origin = cross_origin if cross_origin is not None else CrossOrigin(frozenset())
        #: The app's read paths (:class:`~pdi.server.http.cors.ReadPaths`, set by :func:`pdi.server.create_app`):
        #: a refusal the connection writes itself of one carries :attr:`cross_origin`'s fields too.
        self.read_paths: ReadPaths | None = None
        #: How many times what the cache holds was forgotten (a generation moved on, a name forgotten): an answer
        #: made from what the catalog said before then is not kept (:meth:`put`'s ``epoch``).
        self.epoch = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def fresh(self) -> bool:
        """Whether the cache may answer now (always, without a ``generation`` to watch)."""
        return self.generation is None or time.monotonic() < self._fresh_until

    def refresh(self) -> bool:
        """Whether the cache may answer now: :attr:`fresh`, or made so by asking ``at_once`` (in this thread)."""
        if self.fresh:
            return True
        now = None if self.at_once is None else self.at_once()
        if now is None:
            return False
        self.revalidate(now)
        return True

    def revalidate(self, now: int) -> None:
        """Take the catalog's withdrawal generation ``now`` (asked off the event loop): forget all if it moved on."""
        if now != self._seen:
            self._entries.clear()
            self.bytes = 0
            self._forget_facts()
            self._seen = now
            self.epoch += 1
        self._fresh_until = time.monotonic() + self.revalidate_seconds

    def get(self, key: bytes) -> Kept | None:
        """The answer kept under ``key`` (now the most recently used), or ``None`` (also while not :attr:`fresh`)."""
        if not self.fresh:
            return None
        found = self.held(key)
        if found is None:
            return None
        return found[0] if len(found) == 2 else unpacked(found, key)

    def held(self, key: bytes) -> Held | None:
        """What is kept under ``key`` as it is kept (:data:`Held`; now the most recently used), or ``None`` (also
        while not :attr:`fresh`): :meth:`get` without a :data:`Whole` made an :class:`Entity` again."""
        if not self.fresh:
            return None
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found

    def put(self, key: bytes, entity: Kept, *, epoch: int | None = None) -> bool:
        """Keep ``entity`` under ``key`` unless it is larger than one entry may be; whether it was kept.

        An answer with a header value that may not be sent (a control
        character) is not kept either: the server refuses it each time. A
        :class:`Validator` never takes the place of the whole :class:`Entity`.
        ``epoch``: :attr:`epoch` when the answer's making began (off the event loop); if the cache forgot since,
        the answer may say what the catalog said before a withdrawal, an embargo or a series made private, which
        that forgetting was for, and it is not kept (the next request makes it again).
        """
        if epoch is not None and epoch != self.epoch:
            return False
        cost = _size(entity) + len(key)
        if cost > self.max_entry_bytes or (
                not (isinstance(entity, Entity) and entity.sendable)
                and _UNSENDABLE.search(b"\t".join([v for _, v in entity.headers]))):
            return False
        entries = self._entries
        old = entries.get(key)
        if old is not None:
            if isinstance(entity, Validator) and (len(old) != 2 or isinstance(old[0], Entity)):
                return False
            self.bytes -= old[-1]
            del entries[key]
        entries[key] = packed(entity, cost) if isinstance(entity, Entity) and entity.shared else (entity, cost)
        self.bytes += cost
        while self.bytes > self.max_bytes:
            self.bytes -= entries.popitem(last=False)[1][-1]
        return True

    def forget(self, name: str) -> int:
        """Drop every answer about ``name`` (a versioned or generic PDI; its fragment ignored); how many.

        Every fragment of a versioned name goes with it, and every format and
        version with a generic name, whatever spelling the requests used.
        Every :class:`Fact` goes too (a withdrawal or an embargo is rare: they
        are learnt again). The answers are looked through one by one up to
        :data:`FORGET_SCAN` of them; a larger cache is emptied at once, as
        every worker's is within :attr:`revalidate_seconds` anyway (a
        withdrawal or an embargo moves the catalog's generation), so that the
        event loop never spends long on it.
        """
        canonical = canonical_name(name)
        entries = self._entries
        if len(entries) > FORGET_SCAN:
            dropped = len(entries)
            entries.clear()
            self.bytes = 0
        else:
            keys = [key for key, held in entries.items()
                    if canonical in (held[0].names if len(held) == 2 else held[4].split("\n"))]
            for key in keys:
                self.bytes -= entries.pop(key)[-1]
            dropped = len(keys)
        self._forget_facts()
        self.epoch += 1
        return dropped

    def fact(self, query: bytes) -> Fact | None:
        """The :class:`Fact` kept for a versioned name asked by ``query`` (now the most recently used), or
        ``None`` (also while not :attr:`fresh`)."""
        if not self.fresh:
            return None
        found = self._facts.get(query)
        if found is None:
            return None
        self._facts.move_to_end(query)
        return Fact.unpack(found)

    @property
    def tables(self) -> tuple[OrderedDict[bytes, bytes], OrderedDict[bytes, Held]]:
        """The facts by query string and the whole answers by key, for
        :func:`pdi.server.process._fasthead.answer` (the same two objects for the cache's life: what the cache
        forgets, it clears from them)."""
        return self._facts, self._entries

    def knows(self, query: bytes) -> bool:
        """Whether a :class:`Fact` is kept for the name asked by ``query`` (not made, nor now the most recently
        used)."""
        return query in self._facts

    def known_wire(self, query: bytes, n2l: bool, if_none_match: str | None) -> tuple[int, bytes, bytes] | None:
        """What the :class:`Fact` kept for ``query`` answers, as :func:`wire` gives it (status, header lines as sent,
        body), without making the fact: N2L's ``302`` (``n2l``) when its ``Location`` is known, else the ``304``
        of an ``If-None-Match`` that holds the name's tag; ``None`` for anything else (also while not
        :attr:`fresh`). The same octets as :func:`respond` gives of :meth:`Fact.fixed` and :meth:`Fact.validator`."""
        if not (n2l or if_none_match is not None) or not self.fresh:
            return None
        packed = self._facts.get(query)
        if packed is None:
            return None
        if n2l:
            spelled, known, location = packed[32:].partition(b"\x00")
            if not known:
                return None
            self._facts.move_to_end(query)
            return 302, _located_lines(location or _N2R + spelled), b""
        etag = f'"{packed[:32].hex()}"'
        if if_none_match is None or not tag_matches(if_none_match, etag):
            return None
        self._facts.move_to_end(query)
        return 304, b"etag: " + etag.encode("latin-1") + _VALIDATOR_LINES, b""

    def keep(self, key: bytes, kept: Kept, query: bytes) -> bool:
        """:meth:`put`, unless ``kept`` is N2L's ``302`` or a ``304``'s :class:`Validator` and a :class:`Fact` is
        kept for ``query``, which tells both (:meth:`known_wire`; a ``Location`` not known yet is made again from
        the name, :meth:`~pdi.server.protocol.resolver.Resolver.public_answer`): a name's fact is kept once, not
        again with each ``Host`` and path that asked."""
        if not isinstance(kept, Entity) and query in self._facts:
            return False
        return self.put(key, kept)

    def learn(self, query: bytes, fact: Fact) -> None:
        """Keep ``fact`` for the name asked by ``query``, the least recently used going beyond ``max_fact_bytes``."""
        packed = fact.pack()
        if packed is not None:
            self._keep_fact(query, packed)

    def learn_told(self, query: bytes, etag: str, located: bool, site: bytes = b"") -> None:
        """:meth:`learn` of the fact of a name asked by ``query`` spelled as :meth:`PDI.build` spells it (the caller
        matched it; no ``NUL``, ASCII), told by its entity tag ``etag`` (a SHA-256's, quoted), and, when ``located``,
        by N2L's ``302`` to the N2R of that spelling under ``site``, the base URL's path (:func:`located`; not
        empty: kept as a ``Location`` of its own, :meth:`Fact.pack`): what :meth:`Fact.pack` packs of that fact,
        made without the fact. A fact kept already for ``query`` with the same tag is kept as it is (now the most
        recently used) unless ``located`` tells more: what :meth:`learn` of ``fact_of(answer)`` keeps when the
        resolver learns from an answer (its ``Location`` carried over), without a :class:`Fact` made, looked up or
        packed (a first-asking N2R's whole answer, :mod:`pdi.server.protocol.plain`)."""
        try:
            digest = bytes.fromhex(etag[1:-1])
        except ValueError:
            return
        if len(digest) == 32 and etag[0] == etag[-1] == '"':
            if not located:
                old = self._facts.get(query)
                if old is not None and old[:32] == digest:
                    self._facts.move_to_end(query)
                    return
            if not located:
                self._keep_fact(query, digest + query)
            else:  # its Location the N2R of the name (left out), or that under the base URL's path
                self._keep_fact(query, digest + query + b"\x00" + (site + _N2R + query if site else b""))

    def _keep_fact(self, query: bytes, packed: bytes) -> None:
        cost = len(query) + len(packed) + _FACT_OVERHEAD
        if cost > self.max_fact_bytes:
            return
        old = self._facts.pop(query, None)
        if old is not None:
            self.fact_bytes -= len(query) + len(old) + _FACT_OVERHEAD
        self._facts[query] = packed
        self.fact_bytes += cost
        while self.fact_bytes > self.max_fact_bytes:
            gone, dropped = self._facts.popitem(last=False)
            self.fact_bytes -= len(gone) + len(dropped) + _FACT_OVERHEAD

    def _forget_facts(self) -> None:
        self._facts.clear()
        self.fact_bytes = 0


def canonical_name(name: str) -> str:
    """The canonical spelling of ``name`` without its fragment (how :class:`Entity` names are kept).

    A :class:`~pdi.errors.ParseError` if ``name`` is not a PDI.
    """
    from pdi.identifier import PDI

    return str(PDI.parse(name).without_fragment())


class CachedAnswers:
    """ASGI middleware: ``GET``/``HEAD`` of N2R, I2R and N2L answered from a :class:`ResponseCache` when it holds the name."""

    def __init__(self, app: ASGIApp, cache: ResponseCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in _KEPT_PATHS and scope["method"] in ("GET", "HEAD"):
            if not self.cache.refresh() and self.cache.generation is not None:
                self.cache.revalidate(await anyio.to_thread.run_sync(self.cache.generation))
            found = kept_answer(self.cache, scope["path"], scope["headers"], scope["query_string"], scope["scheme"])
            cache_lookup(found is not None)
            if found is not None:
                status, headers, body = found
                # its paths kept under the base URL's path (pdi.server.http.site), as the connection sends them
                await send({"type": "http.response.start", "status": status, "headers": headers, SITED: True})
                await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
                return
        await self.app(scope, receive, send)


def kept_key(path: str | bytes, host: str | bytes, query: bytes, scheme: str) -> bytes:
    """The key of the answer to ``path`` for this ``Host``, query string and scheme (:func:`cache_key`), or ``b""``
    for a path whose answers are not kept, and for a request with no ``Host`` (empty, or HTTP/1.0's none: its answer
    names the address its connection reached, which differs on a server listening on several). N2L's answers are
    kept apart from N2R's (their key begins ``N2L``)."""
    if not host:
        return b""
    path = path.decode("latin-1") if isinstance(path, bytes) else path
    if path in N2R_PATHS:
        return cache_key(host, query, scheme)
    if path == N2L_PATH:
        return b"N2L " + cache_key(host, query, scheme)
    return b""


def kept_answer(
    cache: ResponseCache, path: str | bytes, headers: Sequence[tuple[bytes, bytes]], query: bytes, scheme: str,
) -> tuple[int, Headers, bytes] | None:
    """Status, headers and body of the answer ``cache`` holds for a ``GET`` of ``path`` and these raw request fields
    (their ``Host``) over ``scheme``, or ``None`` (not kept; an N2R whose ``Accept`` names JSON: :func:`negotiates`)."""
    key = kept_key(path, request_field(headers, b"host"), query, scheme)
    n2l = key.startswith(b"N2L ")
    if not key or (not n2l and (negotiates(headers) or any(k == b"if-match" for k, _ in headers)
                                or dated_fields(headers))):
        return None  # JSON is the resolver's to give; so is If-Match's 412, and what a date asks
    fields = conditional_fields(headers)
    kept = cache.get(key)
    if kept is None and (n2l or fields[0] is not None):  # N2L's 302, or a 304, from the name's fact
        known = cache.fact(query)
        kept = None if known is None else known.fixed() if n2l else known.validator()
    return None if kept is None else respond(kept, *fields)


def asked_wire(
    cache: ResponseCache, query: bytes, key: bytes, fields: tuple[str | None, str | None, str | None], *,
    n2l: bool, negotiated: bool,
) -> tuple[int, bytes, bytes] | None:
    """:func:`kept_answer` of a request with the header lines as sent (``name: value`` and CRLF each, then an
    empty line), those of a whole ``200`` or an N2L's ``302`` made once (:func:`wire`), from what the connection
    read of the request once: the answer's key (:func:`kept_key`, not empty), its :func:`conditional_fields`,
    whether it is N2L's and whether its ``Accept`` :func:`negotiates`. N2L's ``302`` and a ``304`` may come from
    the name's :class:`Fact` (:meth:`ResponseCache.known_wire`), N2L's first."""
    if n2l and (known := cache.known_wire(query, True, None)) is not None:
        return known
    if negotiated:
        return None
    found = cache.held(key)
    if found is None:
        return None if n2l else cache.known_wire(query, False, fields[0])
    if len(found) == 2:
        kept: Kept = found[0]
    elif fields == _NO_FIELDS:  # a whole answer's 200: its lines as kept
        return 200, found[0], found[1]
    elif fields[0] is not None and tag_matches(fields[0], found[3]):  # its 304 (answer()'s), from its lines
        repeated = _REPEATED_BY_304.findall(b"\n" + found[0])  # each line ends with its CR; the LF after it
        return 304, b"etag: %s\r\n%s%s: %s\r\n\r\n" % (
            found[3].encode("latin-1"), b"\n".join(repeated) + b"\n" if repeated else b"", *NOSNIFF), b""
    else:
        kept = unpacked(found, key)
    made = wire(kept, fields)
    if made is not None:
        return made
    answered = respond(kept, *fields)
    if answered is None:
        return None
    status, lines, body = answered
    return status, b"".join(b"%s: %s\r\n" % pair for pair in lines) + b"\r\n", body


def conditional_fields(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str | None, str | None, str | None]:
    """``If-None-Match``, ``Range`` and ``If-Range`` of a request's raw headers, each sent on several lines read as
    the lines joined with commas (RFC 9110 §5.3), as :class:`~pdi.server.http.middleware.HostField` joins them for
    the app: a list of tags, or a ``Range`` or ``If-Range`` no longer valid, which is ignored or false."""
    found: dict[bytes, str] = {}
    for key, value in headers:
        if key in _CONDITIONAL:
            if key not in found:
                found[key] = value.decode("latin-1")
            else:
                found[key] += ", " + value.decode("latin-1")
    return found.get(b"if-none-match"), found.get(b"range"), found.get(b"if-range")


def cache_key(host: str | bytes, query: bytes, scheme: str) -> bytes:
    """The key of an answer: the request's scheme, ``Host`` and query string, the last two as sent.

    The scheme and host are part of it because a memento's ``Link`` (RFC 7089)
    names its TimeGate and TimeMap by absolute URLs built from them (behind a
    trusted proxy, the client's: :mod:`pdi.server.http.forwarded`).
    """
    return scheme.encode("latin-1") + b"://" + (host.encode("latin-1") if isinstance(host, str) else host) + b" " + query


def request_field(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes:
    """The first value of a request field in raw headers (b"" if absent)."""
    for key, value in headers:
        if key == name:
            return value
    return b""


def negotiates(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request's ``Accept`` may ask for another answer than the bytes: it names JSON, or a type a
    PDF's fragment may be answered as.

    N2R answers N2C's description to an ``Accept`` that prefers
    ``application/json`` (:func:`pdi.server.protocol.resolver.prefers_description`); such a
    request goes to the resolver, which decides. Every other request takes
    the bytes, which the cache holds.
    """
    # every line: several are one list (RFC 9110 §5.3), as HostField joins them for the resolver
    return any(key == b"accept" and accept_negotiates(value.lower()) for key, value in headers)


#: What in an ``Accept`` field may choose another answer than the default: JSON (N2C's description) and the
#: three types a PDF's fragment may be answered as (:mod:`pdi.server.protocol.pdf_answers`).
_NEGOTIATED = (b"json", b"application/*", b"text/plain", b"image/png", b"application/pdf")
#: Any of them, in one search.
_NEGOTIATED_ANY = re.compile(b"|".join(re.escape(kind) for kind in _NEGOTIATED))


def accept_negotiates(accept: bytes) -> bool:
    """Whether an ``Accept`` field (lower-cased) may choose another answer than the default (:func:`negotiates`)."""
    return bool(accept) and _NEGOTIATED_ANY.search(accept) is not None


_CONDITIONAL = frozenset({b"if-none-match", b"range", b"if-range"})
_KEPT_PATHS = N2R_PATHS | {N2L_PATH}
#: What a header value may not hold (as uvicorn checks each answer it sends).
_UNSENDABLE = re.compile(b"[\x00-\x08\x0a-\x1f\x7f]")

