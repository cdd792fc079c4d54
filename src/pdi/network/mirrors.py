"""Mirrors over HTTP: another archive as a :class:`Peer` (its keys, manifests and octets), and a series copied
from its origin, checked against the origin's signed manifests (``pdi mirror sync``). Copies compared with every
peer (``pdi mirror audit``) and a damaged blob fetched again (``pdi verify --repair``) are :mod:`pdi.network.polls`.

**What changed since the last sync** is read from the origin's signed
manifest of the whole series (``/api/manifest?series=S``, a page of 1000
names at a time, each page a JWS checked with the key pinned by
``pdi mirror add``), not from OAI-PMH: the manifest is what every blob must
be checked against anyway, so one walk gives both the list and the proof,
and a page costs one request. A name already held with the listed digest
costs no request; new ones are asked for together, up to :data:`GROUP_NAMES`
names or :data:`GROUP_OCTETS` octets a request (``POST /api/octets``,
:mod:`pdi.server.protocol.octets`: one ``multipart/mixed`` part a name; an
origin without it is asked ``N2R`` a name at a time), :data:`WORKERS`
requests at once over kept-alive connections (:class:`_Direct` says why
those of :mod:`http.client` for a plain ``http://`` origin), while the next
manifest page is fetched and checked. Each blob is written as it
arrives straight to where its import takes it
(:meth:`pdi.archive.Archive.write_ahead`), hashed on the way once (its
SHA-256 and chunk digests), and refused unless SHA-256 and size are the
manifest's. The
manifest's entry also says (signed) what the record needs besides: media
type, charset, line endings, when it was deposited, how it is stored; from
an origin whose manifests do not, they are read from the name's ``N2C``
description (a second request). New names are brought in a batch at a time (:data:`BATCH_NAMES`
names or :data:`BATCH_OCTETS` octets) through the archive's import, under
the origin's exact names (:meth:`pdi.archive.Archive.import_mirrored`), each
batch one transaction, its blobs made durable together before it commits
(:mod:`pdi.archive.blobs.files`): a sync killed mid-way keeps every batch
committed and the next one fetches only what is not held yet. A held name the
origin lists as withdrawn is withdrawn here too (and purged, if it was
purged there: a legal takedown reaches the copies); one never held is
recorded gone (:meth:`pdi.archive.Archive.withdrawn_at_origin`), so that this
resolver answers it ``410`` as the origin does, not ``404``.

**Private and embargoed names** are copied only by a mirror that reads with
a token of the origin (``pdi mirror add … --token-file``), and kept under
the origin's access rules, which its signed manifest says
(:mod:`pdi.network.mirror_access`); without a token, a mirror holds what
anyone may read there.

A manifest page that does not verify (changed, or signed by another key),
that is of another series, or that does not start where it was asked to,
stops the sync before anything it lists is fetched; a blob whose octets
differ from the manifest's digest or size is reported and not kept, the
others are; either way the sync ends with :class:`~pdi.errors.IntegrityError`
(exit 3). Limits: 30 s a request to connect and between reads,
:data:`pdi.signing.MAX_JWS` a manifest page, 1 MiB a description, a blob
no more octets than its manifest says.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import http.client
import json
import re
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import httpx

from pdi import formats, untrusted_json
from pdi._refusals import refusal, said, told
from pdi.archive.blobs import Octets
from pdi.archive.blobs.seam import Spooled
from pdi.archive.fixity import LINE_ENDINGS, Problem
from pdi.archive.mirroring import base_url
from pdi.archive.naming import key_of, parse_pdi, record_name, timestamp, timestamp_problem, utc_now
from pdi.archive.store import STORED_CANONICAL, STORED_EXACT, RepresentationRecord
from pdi.errors import (
    AccessError,
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    RemoteError,
)
from pdi.identifier import PDI
from pdi.network.mirror_access import Embargoes, follow_rules, read_token
from pdi.signing import MAX_JWS, Manifest, PublicKey, jwk_set_text, parse_jwks, verify_manifest

if TYPE_CHECKING:
    from pdi.archive import Archive
    from pdi.archive.mirroring import MirrorRecord

__all__ = [
    "Peer",
    "SyncReport",
    "announce",
    "base_url",
    "check_origin",
    "fetch_keys",
    "peer_of",
    "pinned_keys",
    "sync",
]

#: Seconds a request may wait to connect and between two reads.
HTTP_TIMEOUT = 30.0
#: Seconds a whole answer read as text (a manifest page, a key set, a description) may take.
TEXT_SECONDS = 120.0
#: The slowest a peer may send octets, past its first :data:`HTTP_TIMEOUT` seconds (octets a second): one that
#: sends a byte just inside each timeout would hold a sync for days.
MIN_RATE = 16 << 10
#: The longest manifest page read (a page of :data:`PAGE` names is some hundreds of kilobytes).
MAX_PAGE_JWS = 8 << 20
#: What every request asks to be sent in: octets as they are, never a content coding (a few kilobytes of brotli
#: undo to gigabytes before any size check sees them); an answer in another coding is refused.
IDENTITY = {"Accept-Encoding": "identity"}
#: The longest N2C description read (a JSON object).
MAX_DESCRIPTION = 1 << 20
#: Names a manifest page is asked for.
PAGE = 1000
#: Pages one series' manifest may have (10 million names).
MAX_PAGES = 10_000
#: A sync brings new names in by batches of at most this many names, or octets: one transaction each.
BATCH_NAMES = 1000
BATCH_OCTETS = 256 << 20
#: Requests for octets at once (each over a kept-alive connection).
WORKERS = 3
#: Names asked for in one ``POST /api/octets``, at most, and about as many octets.
GROUP_NAMES = 250
GROUP_OCTETS = 32 << 20
#: Requests answered ahead of the batch being kept (their blobs written ahead, waiting).
AHEAD = 3 * WORKERS
#: The longest header section of a part, and the longest problem a part may hold.
MAX_PART_HEAD = 8 << 10
MAX_PART_PROBLEM = 64 << 10
#: Octets asked of the connection at a time, at most, while an octets answer is read.
READ_AT_MOST = 1 << 20


def _client() -> httpx.Client:
    return httpx.Client(timeout=HTTP_TIMEOUT, follow_redirects=False, headers=IDENTITY,
                        limits=httpx.Limits(max_connections=WORKERS * 2, max_keepalive_connections=WORKERS * 2))


def uncoded(answer: httpx.Response, what: str) -> None:
    """Nothing, when ``answer`` is sent as it is; else a :class:`RemoteError`: :data:`IDENTITY` was asked."""
    coding = answer.headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):
        raise RemoteError(f"{what} is sent with Content-Encoding {coding[:40]!r}, though it was asked as it is"
                          " (identity): not read")


class Pace:
    """The octets of one answer as they come: a :class:`RemoteError` once they come slower than :data:`MIN_RATE`
    octets a second on average, past the first :data:`HTTP_TIMEOUT` seconds, or once ``seconds`` have passed."""

    def __init__(self, what: str, seconds: float | None = None) -> None:
        self.what = what
        self.started = time.monotonic()
        self.deadline = None if seconds is None else self.started + seconds
        self.count = 0

    def took(self, octets: int) -> None:
        self.count += octets
        now = time.monotonic()
        spent = now - self.started
        if self.deadline is not None and now > self.deadline:
            raise RemoteError(f"{self.what} took more than {self.deadline - self.started:g} s to read: given up")
        if spent > HTTP_TIMEOUT and self.count < MIN_RATE * spent:
            raise RemoteError(f"{self.what} comes at {self.count / spent:,.0f} octets a second, slower than the"
                              f" {MIN_RATE:,} a peer must send: given up")


def _get_text(client: httpx.Client, url: str, what: str, most: int, headers: Mapping[str, str] | None = None) -> str:
    """The body of a ``200`` answer to ``GET url``, at most ``most`` octets and :data:`TEXT_SECONDS` seconds; a
    clear error otherwise."""
    try:
        with client.stream("GET", url, headers=headers) as answer:
            if answer.status_code != 200:
                raise _refusal(answer.status_code, f"{what} {url}", headers,
                               said(answer, time.monotonic() + HTTP_TIMEOUT))
            uncoded(answer, f"{what} {url}")
            body = bytearray()
            pace = Pace(f"{what} {url}", TEXT_SECONDS)
            for piece in answer.iter_raw():
                body += piece
                pace.took(len(piece))
                if len(body) > most:
                    raise LimitError(f"{what} {url} is larger than {most} octets")
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot fetch {what} {url}: {exc}") from exc
    return body.decode("utf-8", errors="replace")


def _refusal(status: int, what: str, headers: Mapping[str, str] | None, told: str | None = None) -> PDIError:
    """:func:`pdi._refusals.refusal`, but a refusal (401, 403) says what would be let in."""
    if status in (401, 403):
        # without a token, a pdi origin says itself that one is needed: what to do, not the same again
        how = ("the token sent is refused, or may not read it" if headers else
               "read with a token of that archive: pdi mirror add BASE_URL --series S --token-file FILE")
        return AccessError(f"{what}: HTTP {status}" + (f": {told}" if told else "") + f" ({how})")
    return refusal(status, what, told)


def fetch_keys(url: str) -> list[PublicKey]:
    """The Ed25519 keys of the archive at ``url`` (its ``/api/keys``)."""
    with _client() as client:
        return parse_jwks(_get_text(client, base_url(url) + "/api/keys", "the key set", MAX_JWS), url + "/api/keys")


def check_origin(base: str, series: str, keys: Sequence[PublicKey], source: str | None = None) -> None:
    """That the archive at ``base`` answers the first page of ``series``' manifest, signed with one of ``keys``
    (asked with the token ``source`` names): before it is recorded as the series' origin, so that a series it
    does not hold, a key that is not its own or a token it refuses is said now, not at the first sync."""
    token = None if source is None else read_token(source)
    with _client() as client:
        peer = Peer(base, keys, client, token)
        try:
            next(peer.manifest(series), None)
        finally:
            peer.close()


def pinned_keys(record: MirrorRecord) -> list[PublicKey]:
    """The keys pinned for a mirror when it was added."""
    return parse_jwks(record.jwk, f"the key pinned for {record.base_url}")


def key_text(keys: Sequence[PublicKey]) -> str:
    """Keys as the JWK set pinned in the catalog (JSON text)."""
    return jwk_set_text(keys)


def peer_of(record: MirrorRecord, client: httpx.Client) -> Peer:
    """The archive ``record`` names, its manifests checked with the key pinned, asked with its token if it has
    one (:mod:`pdi.network.mirror_access`)."""
    token = None if record.token_source is None else read_token(record.token_source)
    return Peer(record.base_url, pinned_keys(record), client, token)


class Peer:
    """Another pdi resolver at ``base`` whose manifests are checked with ``keys``, asked with ``token`` (a bearer
    token of that archive, RFC 6750 §2.1; ``None``: as anyone)."""

    def __init__(self, base: str, keys: Sequence[PublicKey], client: httpx.Client, token: str | None = None) -> None:
        self.base = base_url(base)
        self.keys = list(keys)
        self.client = client
        self.headers: dict[str, str] = {} if token is None else {"Authorization": f"Bearer {token}"}
        self.direct = _Direct(self.base) if _Direct.reaches(self.base) else None

    def close(self) -> None:
        """Close the connections the octets were asked over (those of :attr:`client` are the client's)."""
        if self.direct is not None:
            self.direct.close()

    def __repr__(self) -> str:
        return f"Peer({self.base!r}, token={'yes' if self.headers else 'no'})"  # never the token

    def url(self, service: str, name: str) -> str:
        # imported here: a sync's bulk requests need none of it (importing pdi.server takes long)
        from pdi.server.protocol.rfc2169 import rfc2169_query, sturdy

        return f"{self.base}/uri-res/{service}?{sturdy(rfc2169_query(name))}"

    def manifest(self, series: str, *, day: str | None = None) -> Iterator[Manifest]:
        """The pages of ``series``' manifest (of ``day``, or every day), each verified with :attr:`keys`, of that
        series and day, and starting after the previous page's ``next``: :class:`IntegrityError` otherwise."""
        after: str | None = None
        for _ in range(MAX_PAGES):
            params: dict[str, str | int] = {"series": series, "limit": PAGE}
            if day is not None:
                params["day"] = day
            if after is not None:
                params["after"] = after
            url = str(httpx.URL(self.base + "/api/manifest", params=params))
            jws = _get_text(self.client, url, f"the manifest of {series} at", MAX_PAGE_JWS, self.headers).strip()
            try:
                page = verify_manifest(jws, self.keys)
            except PDIError as exc:
                raise IntegrityError(f"the manifest {url} is refused: {exc}") from exc
            if len(page.names) > PAGE:
                raise IntegrityError(f"the manifest {url} lists {len(page.names):,} names, more than the {PAGE} asked"
                                     " for: refused")
            if page.series != series or page.day != day or page.after != after:
                raise IntegrityError(
                    f"the manifest {url} is signed but answers another question (series {page.series!r}, day"
                    f" {page.day!r}, after {page.after!r}): refused")
            yield page
            if page.next is None:
                return
            if after is not None and page.next <= after:
                raise IntegrityError(f"the manifest {url}: its next page starts after {page.next}, not later")
            after = page.next
        raise LimitError(f"the manifest of {series} at {self.base} has more than {MAX_PAGES} pages")

    def description(self, name: str) -> dict[str, Any]:
        """The N2C description of ``name`` (JSON)."""
        url = self.url("N2C", name)
        value = untrusted_json.loads(_get_text(self.client, url, "the description", MAX_DESCRIPTION, self.headers),
                            f"the description {url}", rule="n2c")
        if not isinstance(value, dict) or not isinstance(value.get("stored"), dict):
            raise ParseError(f"the description {url} is not a pdi description (no \"stored\")", rule="n2c")
        return value

    def n2r_pieces(self, name: str, size: int) -> Iterator[bytes]:
        """The N2R octets of ``name`` as they arrive; :class:`IntegrityError` past ``size`` octets (never read)."""
        url = self.url("N2R", name)
        count = 0
        try:
            with self.client.stream("GET", url, headers=self.headers) as answer:
                if answer.status_code != 200:
                    raise _refusal(answer.status_code, f"the octets of {name} at {self.base}", self.headers,
                                   said(answer, time.monotonic() + HTTP_TIMEOUT))
                uncoded(answer, url)
                pace = Pace(url)
                for piece in answer.iter_raw():
                    count += len(piece)
                    pace.took(len(piece))
                    if count > size:
                        raise IntegrityError(
                            f"{name} at {self.base}: more than the {size} octets its signed manifest says")
                    yield piece
        except httpx.HTTPError as exc:
            raise RemoteError(f"cannot fetch {url}: {exc}") from exc

    def octets_of(self, entries: Sequence[Mapping[str, Any]], write: Callable[[Iterator[memoryview]], Spooled],
                  ) -> list[Spooled | PDIError] | None:
        """The octets of the manifest's ``entries`` in one ``POST /api/octets``, each written by ``write`` as it
        arrives and checked against its entry's SHA-256 and size; for each, what was written or what went wrong
        (once the answer goes wrong, every later name: why). ``None`` when the origin does not answer that
        request (an earlier pdi: ask N2R)."""
        url = self.base + "/api/octets"
        done: list[Spooled | PDIError] = []
        body = json.dumps({"names": [str(e["name"]) for e in entries]}).encode()
        try:
            with self._post(url, body) as (status, content_type, raw):
                if status in (404, 405):
                    return None
                if status != 200:
                    raise RemoteError(f"POST {url}: HTTP {status}")
                parts = _Parts(raw, _boundary(content_type, url), url)
                for entry in entries:
                    done.append(parts.take(entry, write, self.base))
                parts.close()
        except httpx.HTTPError as exc:
            failure: PDIError = RemoteError(f"cannot fetch {url}: {exc}")
        except PDIError as exc:  # the answer is cut or not as it should be: what is left is not trusted
            failure = exc
        else:
            return done
        return done + [failure] * (len(entries) - len(done))

    @contextlib.contextmanager
    def _post(self, url: str, body: bytes) -> Iterator[tuple[int, str, Callable[[memoryview], int]]]:
        """``POST url`` of a JSON ``body``: the answer's status, ``Content-Type`` and a function that reads its next
        octets into a buffer, how many (0: the end; over :attr:`direct` where it reaches the origin, else
        :attr:`client`). Failures to reach or read it are :class:`RemoteError` or :class:`httpx.HTTPError`."""
        if self.direct is None:
            headers = {**self.headers, "Content-Type": "application/json"}
            with self.client.stream("POST", url, content=body, headers=headers) as answer:
                if answer.status_code == 200:
                    uncoded(answer, url)
                yield answer.status_code, answer.headers.get("content-type", ""), _copier(answer.iter_raw(), url)
            return
        connection, got = self.direct.post(url, body, {**self.headers, **IDENTITY})
        try:
            coding = (got.getheader("content-encoding") or "").strip().lower()
            if got.status == 200 and coding not in ("", "identity"):
                raise RemoteError(f"{url} is sent with Content-Encoding {coding[:40]!r}, though it was asked as it is"
                                  " (identity): not read")
            yield got.status, got.getheader("content-type", ""), _reader(got, url)
            try:
                got.read(MAX_PART_HEAD)  # what follows the closing boundary (nothing, or a short epilogue)
            except (OSError, http.client.HTTPException) as exc:
                raise RemoteError(f"cannot fetch {url}: {exc}") from exc
        finally:
            # read to its end, the connection asks the next request; else (cut, refused, not read) it is closed
            self.direct.done(connection, kept=got.closed)

    def octets(self, name: str, sha256: str, size: int, into: IO[bytes]) -> None:
        """The N2R octets of ``name`` written to ``into``, refused (:class:`IntegrityError`) unless they are
        ``size`` octets hashing to ``sha256``; never more than ``size`` octets are read."""
        digest = hashlib.sha256()
        count = 0
        for piece in self.n2r_pieces(name, size):
            count += len(piece)
            digest.update(piece)
            into.write(piece)
        if count != size:
            raise IntegrityError(f"{name} at {self.base}: {count} octets, its signed manifest says {size}")
        if digest.hexdigest() != sha256:
            raise IntegrityError(
                f"{name} at {self.base}: its octets hash to {digest.hexdigest()}, its signed manifest says {sha256}")


def _reader(answer: http.client.HTTPResponse, url: str) -> Callable[[memoryview], int]:
    """A function reading ``answer``'s next octets into a buffer (straight from the connection), how many (0: the
    end); :class:`RemoteError` if they cannot be read (the connection breaks, or is silent for
    :data:`HTTP_TIMEOUT` seconds)."""

    pace = Pace(url)

    def read_into(view: memoryview) -> int:
        try:
            count = answer.readinto(view)
        except (OSError, http.client.HTTPException) as exc:
            raise RemoteError(f"cannot fetch {url}: {exc}") from exc
        pace.took(count)
        return count

    return read_into


def _copier(pieces: Iterator[bytes], url: str) -> Callable[[memoryview], int]:
    """A function copying the next octets of ``pieces`` (of ``url``) into a buffer, how many (0: the end); at
    :data:`MIN_RATE` at least (:class:`Pace`)."""
    left = memoryview(b"")
    pace = Pace(url)

    def read_into(view: memoryview) -> int:
        nonlocal left
        while not left:
            piece = next(pieces, None)
            if piece is None:
                return 0
            pace.took(len(piece))
            left = memoryview(piece)
        count = min(len(view), len(left))
        view[:count] = left[:count]
        left = left[count:]
        return count

    return read_into


class _Direct:
    """Kept-alive connections of the standard library's :mod:`http.client` to a plain ``http://`` origin, one a
    thread, that a sync asks for octets over (``POST /api/octets``).

    Why not :mod:`httpx`, as everywhere else: an octets answer is read
    here in pieces of up to :data:`READ_AT_MOST` octets, each one
    ``recv``, where httpx's HTTP/1.1 parser (h11) reads 64 KiB at a time and
    passes each through its event machinery; on a sync of 1 GB from a
    resolver on loopback httpx cost about three times the CPU a byte
    (``bench/bench_mirror.py``). Only where httpx would send the request
    as it is: a plain ``http://`` address and no proxy configured
    (:meth:`reaches`); an ``https://`` origin, or one behind a proxy, is
    asked through httpx. The same limit holds: :data:`HTTP_TIMEOUT` seconds
    to connect and between two reads.
    """

    def __init__(self, base: str) -> None:
        split = urllib.parse.urlsplit(base)
        self.host = split.hostname or ""
        self.port = split.port
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[http.client.HTTPConnection] = set()

    @staticmethod
    def reaches(base: str) -> bool:
        """Whether ``base`` is a plain ``http://`` address and no proxy is configured for such addresses (httpx's
        rule reads the same environment, :func:`urllib.request.getproxies`)."""
        if not base.startswith("http://"):
            return False
        from urllib.request import getproxies  # here: it is only asked once a sync

        proxies = getproxies()
        return not (proxies.get("http") or proxies.get("all"))

    def post(self, url: str, body: bytes, headers: Mapping[str, str],
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """``POST url`` over this thread's connection (made, or made again if the origin closed it while it was
        kept): the connection and its answer, whose head is read. :class:`RemoteError` if it cannot be had."""
        split = urllib.parse.urlsplit(url)
        target = split.path + (f"?{split.query}" if split.query else "")
        sent = {**headers, "Content-Type": "application/json"}
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        kept = connection is not None
        while True:
            if connection is None:
                connection = http.client.HTTPConnection(self.host, self.port, timeout=HTTP_TIMEOUT)
                with self._lock:
                    self._open.add(connection)
                self._local.connection = connection
            try:
                connection.request("POST", target, body, sent)
                return connection, connection.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self.done(connection, kept=False)
                if not kept:
                    raise RemoteError(f"cannot fetch {url}: {exc}") from exc
                connection, kept = None, False  # closed by the origin while it was kept: asked again, once
            except (OSError, http.client.HTTPException) as exc:
                self.done(connection, kept=False)
                raise RemoteError(f"cannot fetch {url}: {exc}") from exc

    def done(self, connection: http.client.HTTPConnection, *, kept: bool) -> None:
        """After an answer: the connection is kept for the thread's next request, or closed."""
        if kept:
            return
        connection.close()
        with self._lock:
            self._open.discard(connection)
        if getattr(self._local, "connection", None) is connection:
            self._local.connection = None

    def close(self) -> None:
        """Close every connection still open (the threads that asked over them are done)."""
        with self._lock:
            connections, self._open = self._open, set()
        for connection in connections:
            connection.close()


_BOUNDARY = re.compile(r"boundary=\"?([0-9A-Za-z'()+_,./:=?-]{1,70})\"?")


def _boundary(content_type: str, url: str) -> bytes:
    """The boundary of a ``multipart/mixed`` answer's ``Content-Type`` (RFC 2046 §5.1.1)."""
    found = _BOUNDARY.search(content_type)
    if not content_type.lower().startswith("multipart/mixed") or found is None:
        raise ParseError(f"POST {url} answered {content_type[:100]!r}, not multipart/mixed with a boundary",
                         rule="octets")
    return found[1].encode("ascii")


class _Parts:
    """The parts of a ``POST /api/octets`` answer (:mod:`pdi.server.protocol.octets`), read in order from its
    octets as they arrive (into one buffer, read again and again): each part's head, then exactly its
    ``Content-Length`` octets."""

    def __init__(self, read_into: Callable[[memoryview], int], boundary: bytes, url: str) -> None:
        self.read_into = read_into
        self.buffer = bytearray(READ_AT_MOST)
        self.view = memoryview(self.buffer)
        self.start = self.end = 0  # the octets read and not taken yet: buffer[start:end]
        self.delimiter = b"--" + boundary
        self.url = url

    def _fill(self) -> bool:
        """Read more octets after those not taken yet (moved to the buffer's start first); whether any came."""
        if self.start:
            left = self.end - self.start
            self.buffer[:left] = self.view[self.start:self.end]
            self.start, self.end = 0, left
        if self.end == len(self.buffer):
            return False  # a part's head longer than the buffer (refused by _line)
        count = self.read_into(self.view[self.end:])
        self.end += count
        return count > 0

    def _line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n", self.start, self.end)) < 0:
            if self.end - self.start > MAX_PART_HEAD or not self._fill():
                raise RemoteError(f"POST {self.url}: the answer ends (or runs on) inside a part's head")
        line = bytes(self.view[self.start:end])
        self.start = end + 2
        return line

    def _octets(self, count: int) -> Iterator[memoryview]:
        """The next ``count`` octets, as they come: views of the buffer, each to be used before the next is
        asked for (the buffer is read into again)."""
        while count:
            if self.start == self.end:
                self.start = self.end = 0
                if not self._fill():
                    raise RemoteError(f"POST {self.url}: the answer ends {count} octets before its part does")
            take = min(count, self.end - self.start)
            piece = self.view[self.start:self.start + take]
            self.start += take
            count -= take
            yield piece

    def _expect(self, line: bytes, what: str) -> None:
        found = self._line()
        if found != line:
            raise ParseError(f"POST {self.url}: {what} expected, {found[:80]!r} found", rule="octets")

    def take(self, entry: Mapping[str, Any], write: Callable[[Iterator[memoryview]], Spooled], base: str,
             ) -> Spooled | PDIError:
        """The next part, which must be ``entry``'s: its octets written and checked, or the problem it holds."""
        name, sha256, size = str(entry["name"]), str(entry["sha256"]), int(entry["size"])
        self._expect(self.delimiter, "a part's boundary")
        head: dict[str, str] = {}
        while line := self._line():
            field_name, _, value = line.decode("latin-1").partition(":")
            head[field_name.strip().lower()] = value.strip()
        length = head.get("content-length", "")
        if head.get("content-location") != name or not length.isdigit():
            raise ParseError(f"POST {self.url}: the part for {name} is not its (Content-Location"
                             f" {head.get('content-location', '')[:200]!r}, Content-Length {length[:20]!r})",
                             rule="octets")
        count = int(length)
        if head.get("content-type", "").startswith("application/problem+json"):
            if count > MAX_PART_PROBLEM:
                raise LimitError(f"POST {self.url}: the problem of {name} is more than {MAX_PART_PROBLEM} octets")
            text = b"".join(bytes(piece) for piece in self._octets(count)).decode("utf-8", "replace")
            self._expect(b"", "the end of a part")
            return RemoteError(f"the octets of {name} at {base}: {told(text) or text[:500]}")
        if count != size:
            raise IntegrityError(f"{name} at {base}: {count} octets, its signed manifest says {size}")
        try:
            spooled = _checked(write(self._octets(count)), name, sha256, size, base)
        except IntegrityError as exc:
            self._expect(b"", "the end of a part")
            return exc
        self._expect(b"", "the end of a part")
        return spooled

    def close(self) -> None:
        """After the last part: the closing boundary."""
        self._expect(self.delimiter + b"--", "the closing boundary")


# --- sync -------------------------------------------------------------------------------------------


@dataclass
class SyncReport:
    """What a sync did: names listed by the origin, new ones kept (and their octets), those held already (before
    the sync, or kept meanwhile by another), withdrawn ones. Each name listed is counted once as new, held
    already, withdrawn, or refused (a problem); a held or withdrawn name whose rule could not be followed here
    (an embargo, a withdrawal) is reported as a problem besides."""

    listed: int = 0
    copied: int = 0
    held: int = 0
    withdrawn: int = 0
    #: Names the origin withdrew that were not withdrawn here yet: withdrawn here too (held), or recorded gone.
    tombstoned: int = 0
    octets: int = 0
    problems: list[Problem] = field(default_factory=list)
    #: Access rules changed here as the origin's signed manifest says (the series' access, embargoes).
    access_changes: int = 0
    #: The embargoes new names come in with, by name (:mod:`pdi.network.mirror_access`), until they are kept.
    embargoes: dict[str, Embargoes] = field(default_factory=dict, repr=False)


class _Written:
    """Every blob a sync writes ahead (:meth:`pdi.archive.Archive.write_ahead`, on any of its threads) until it is
    kept or removed: what is left when the sync ends, however it ends (a refusal, an error, Ctrl-C while a
    request's answer waits to be kept), is removed then, so that nothing it was writing stays in ``tmp/``."""

    def __init__(self, archive: Archive) -> None:
        self._write = archive.write_ahead
        self._lock = threading.Lock()
        self._held: dict[int, Spooled] = {}

    def __call__(self, source: Octets) -> Spooled:
        spooled = self._write(source)
        with self._lock:
            self._held[id(spooled)] = spooled
        return spooled

    def settled(self, spooled: Iterable[Spooled]) -> None:
        """These were kept by an import or removed: forgotten."""
        with self._lock:
            for one in spooled:
                self._held.pop(id(one), None)

    def discard_rest(self) -> None:
        with self._lock:
            left, self._held = list(self._held.values()), {}
        for one in left:
            one.discard()


#: Seconds a sync of one series may take, by default (``pdi mirror sync --max-seconds``): a stranger's origin that
#: answers every page just inside each bound would hold it for days; a sync stopped so goes on from there.
SYNC_SECONDS = 86_400.0


def sync(archive: Archive, record: MirrorRecord, progress: Callable[[SyncReport], None] | None = None,
         max_seconds: float | None = SYNC_SECONDS) -> SyncReport:
    """Copy what ``record``'s origin lists of its series and this archive does not hold yet (module docstring);
    past ``max_seconds`` (``None``: no bound) a :class:`LimitError` once what was fetched is kept."""
    report = SyncReport()
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    written = _Written(archive)
    batch: list[tuple[RepresentationRecord, Spooled]] = []
    running: deque[Future[list[Fetched]]] = deque()
    octets = 0

    def take(fetched: list[Fetched]) -> None:
        nonlocal octets
        for one in fetched:
            if isinstance(one, Problem):
                report.problems.append(one)
                continue
            batch.append(one)
            octets += one[0].size
            if len(batch) >= BATCH_NAMES or octets >= BATCH_OCTETS:
                _keep(archive, record, batch, report, written)
                octets = 0
                if progress is not None:
                    progress(report)

    with _client() as client, contextlib.ExitStack() as leftovers:
        leftovers.callback(written.discard_rest)  # last, once every thread has ended
        origin = peer_of(record, client)
        # the threads end first, then the connections they asked over are closed
        with contextlib.closing(origin), ThreadPoolExecutor(WORKERS) as pool, ThreadPoolExecutor(1) as lister:
            bulk = [True]  # the origin answers POST /api/octets (until it says it does not)
            stopped: PDIError | None = None
            pages = _one_ahead(origin.manifest(record.series), lister)
            try:
                try:
                    for group in _groups(archive, record, _until(pages, deadline, max_seconds, record), report):
                        running.append(pool.submit(_fetch_group, written, origin, record, group, bulk))
                        while len(running) > AHEAD:
                            take(running.popleft().result())
                except PDIError as exc:  # a manifest page refused: what was fetched before it is kept
                    stopped = exc
                while running:
                    take(running.popleft().result())
                _keep(archive, record, batch, report, written)
            finally:
                for future in running:  # a failure while keeping: what the requests in flight wrote is removed
                    for one in future.result():
                        if not isinstance(one, Problem):
                            one[1].discard()
                for _, spooled in batch:
                    spooled.discard()
            if progress is not None:
                progress(report)
            if stopped is not None:
                raise stopped
    if not report.problems:
        archive.mark_synced(record, f"{report.copied} new of {report.listed} listed, {report.octets} octets")
    return report


def _until(pages: Iterator[Manifest], deadline: float | None, seconds: float | None,
           record: MirrorRecord) -> Iterator[Manifest]:
    """``pages``, each one asked for before ``deadline`` (:func:`time.monotonic`); then a :class:`LimitError`."""
    for page in pages:
        yield page
        if deadline is not None and time.monotonic() > deadline:
            raise LimitError(f"the sync of {record.series} from {record.base_url} took more than {seconds:g} s"
                             " (--max-seconds): what it fetched is kept, and the next sync goes on from there")


def _one_ahead(pages: Iterator[Manifest], thread: ThreadPoolExecutor) -> Iterator[Manifest]:
    """The verified pages of ``pages`` in order, the next one asked for and checked on ``thread`` while this one is
    used (its names looked up, fetched, kept): a page refused is raised where it comes, after those before it."""
    following = thread.submit(next, pages, None)
    try:
        while (page := following.result()) is not None:
            following = thread.submit(next, pages, None)
            yield page
    finally:
        following.cancel()


#: A manifest entry to fetch, with its name as :func:`_wanted` parsed it.
Wanted = tuple[Mapping[str, Any], PDI]

#: What fetching one name comes to: its record and octets written ahead, or a problem.
Fetched = tuple[RepresentationRecord, Spooled] | Problem


def _groups(archive: Archive, record: MirrorRecord, pages: Iterable[Manifest], report: SyncReport,
            ) -> Iterator[list[Wanted]]:
    """The entries to fetch with their names parsed, page after page, in groups of :data:`GROUP_NAMES` names or
    :data:`GROUP_OCTETS`."""
    for page in pages:
        group: list[Wanted] = []
        octets = 0
        parsed: dict[str, PDI] = {}
        wanted, embargoes, changed = follow_rules(archive, record, page,
                                                  _wanted(archive, record, page, report, parsed), report.problems)
        report.access_changes += changed
        for name, version, until in embargoes:
            report.embargoes.setdefault(name, []).append((name, version, until))
        asked = 0  # octets of this page's names asked for so far: not on the disk yet
        for entry in wanted:
            room = archive.blob_room()
            if room is not None and int(entry["size"]) > room - asked:
                report.problems.append(Problem("unfetched", str(entry["sha256"]), (str(entry["name"]),),
                                               f"from {record.base_url}: its {int(entry['size']):,} octets would leave"
                                               " this archive's disk less than its reserve free (not fetched)"))
                continue
            asked += int(entry["size"])
            group.append((entry, parsed[str(entry["name"])]))
            octets += int(entry["size"])
            if len(group) >= GROUP_NAMES or octets >= GROUP_OCTETS:
                yield group
                group, octets = [], 0
        if group:
            yield group


def _fetch_group(write: Callable[[Octets], Spooled], origin: Peer, record: MirrorRecord, group: list[Wanted],
                 bulk: list[bool]) -> list[Fetched]:
    """The records and octets of a group of new names (on a worker thread): in one request, or N2R each, each
    written ahead by ``write``."""
    records: list[RepresentationRecord | Problem] = []
    for entry, parsed in group:
        name, sha256, size = str(entry["name"]), str(entry["sha256"]), int(entry["size"])
        try:
            # the signed entry says all a record needs; an origin whose manifests do not, its N2C description
            signed = "created_at" in entry and "media_type" in entry
            records.append(_record(name, parsed, sha256, size,
                                   _from_entry(entry) if signed else origin.description(name)))
        except PDIError as exc:
            records.append(_problem(record, name, sha256, exc))
    asked = [e for (e, _), r in zip(group, records, strict=True) if not isinstance(r, Problem)]
    got = origin.octets_of(asked, write) if bulk[0] and asked else None
    if got is None:
        bulk[0] = False
        got = [_one(write, origin, e) for e in asked]
    answers = iter(got)
    fetched: list[Fetched] = []
    for (entry, _), rec in zip(group, records, strict=True):
        if isinstance(rec, Problem):
            fetched.append(rec)
            continue
        one = next(answers)
        fetched.append(_problem(record, str(entry["name"]), rec.sha256, one) if isinstance(one, PDIError)
                       else (rec, one))
    return fetched


def _one(write: Callable[[Octets], Spooled], origin: Peer, entry: Mapping[str, Any]) -> Spooled | PDIError:
    """One name's octets by N2R, written ahead by ``write`` and checked against its entry."""
    name, sha256, size = str(entry["name"]), str(entry["sha256"]), int(entry["size"])
    try:
        return _checked(write(origin.n2r_pieces(name, size)), name, sha256, size, origin.base)
    except PDIError as exc:
        return exc


def _checked(spooled: Spooled, name: str, sha256: str, size: int, base: str) -> Spooled:
    """What was written, if its octets are the entry's; else removed, and :class:`IntegrityError`."""
    if spooled.info.size != size:
        spooled.discard()
        raise IntegrityError(f"{name} at {base}: {spooled.info.size} octets, its signed manifest says {size}")
    if spooled.info.sha256 != sha256:
        spooled.discard()
        raise IntegrityError(
            f"{name} at {base}: its octets hash to {spooled.info.sha256}, its signed manifest says {sha256}")
    return spooled


def _problem(record: MirrorRecord, name: str, sha256: str, exc: PDIError) -> Problem:
    kind = "altered" if isinstance(exc, IntegrityError) else "unfetched"
    return Problem(kind, sha256, (name,), f"from {record.base_url}: {exc} (not kept)")


def _wanted(archive: Archive, record: MirrorRecord, page: Manifest, report: SyncReport,
            parsed_names: dict[str, PDI]) -> list[Mapping[str, Any]]:
    """The entries of a verified page this archive does not hold yet (those held with another digest: problems);
    each one's name parsed, in ``parsed_names``."""
    listed: list[Mapping[str, Any]] = []
    parsed_listed: list[PDI] = []
    for entry in page.names:
        report.listed += 1
        name = str(entry["name"])
        try:
            if not isinstance(entry["name"], str):
                raise ParseError("its name is not a string", rule="manifest")
            parsed = parse_pdi(name)
            if parsed.series_name.lower() != record.series:  # withdrawn or not: the origin speaks for its own
                raise ParseError(f"a name of another series than {record.series}", rule="mirror-name")
        except PDIError as exc:
            report.problems.append(Problem("manifest-name", "", (name[:200],), f"listed by {record.base_url}: {exc}"))
            continue
        if "withdrawn" in entry:
            report.withdrawn += 1
            _withdraw(archive, record, name, entry, report)
            continue
        try:
            if parsed.format is None or parsed.version is None:
                raise ParseError(f"{name} is not a versioned name (a format and a version)", rule="mirror-name")
            if not isinstance(entry.get("sha256"), str) or not isinstance(entry.get("size"), int):
                raise ParseError("no sha256 and size", rule="manifest")
        except PDIError as exc:
            report.problems.append(Problem("manifest-name", "", (name[:200],), f"listed by {record.base_url}: {exc}"))
            continue
        listed.append(entry)
        parsed_listed.append(parsed)
    held = archive.digests_held(parsed_listed)  # the page's names, one look-up
    wanted: list[Mapping[str, Any]] = []
    for one, parsed, sha256 in zip(listed, parsed_listed, held, strict=True):
        if sha256 is None:
            wanted.append(one)
            parsed_names[str(one["name"])] = parsed
        elif sha256 == one["sha256"]:
            report.held += 1
        else:
            report.problems.append(Problem(
                "conflict", sha256, (str(one["name"]),),
                f"held here with sha256 {sha256}; {record.base_url}'s signed manifest says {one['sha256']}"))
    return wanted


def _withdraw(archive: Archive, record: MirrorRecord, name: str, entry: Mapping[str, Any], report: SyncReport) -> None:
    """A name the origin lists as withdrawn is withdrawn here too, if held (purged too, if it was purged there)."""
    try:
        purge = bool(entry.get("purged"))
        if archive.held(name) is None:  # never held: its tombstone alone, so that it is gone here too (410)
            if archive.withdrawn_at_origin(record, name, str(entry["withdrawn"])[:40], purged=purge):
                report.tombstoned += 1
            return
        if archive.withdrawn_here(name) in (("purged",) if purge else ("withdrawn", "purged")):
            return
        archive.withdraw(name, f"withdrawn at its origin {record.base_url} ({str(entry['withdrawn'])[:40]})",
                         purge=purge)
    except PDIError as exc:
        report.problems.append(Problem("unwithdrawn", "", (name[:200],), f"withdrawn at {record.base_url}: {exc}"))
        return
    report.tombstoned += 1


def _from_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest entry's own fields in the shape of an N2C description (what :func:`_record` reads)."""
    return {"charset": entry.get("charset"), "stored": {
        "media_type": entry.get("media_type"), "line_ending": entry.get("line_ending"),
        "created_at": entry.get("created_at"), "kept": entry.get("stored")}}


def _record(name: str, parsed: PDI, sha256: str, size: int, description: Mapping[str, Any]) -> RepresentationRecord:
    """The catalog record of a mirrored name (and the name parsed): what its name says, its digest and size from
    the signed manifest, and from its description only what the manifest does not carry (each checked for its
    shape)."""
    if parsed.format is None or parsed.version is None or parsed.fragment is not None:
        raise ParseError(f"{name} is not a versioned name", rule="mirror-name")
    token = formats.canonical_token(parsed.format)
    key = key_of(parsed)
    stored = description["stored"]
    media_type, charset = stored.get("media_type"), description.get("charset")
    line_ending, created_at, kept = stored.get("line_ending"), stored.get("created_at"), stored.get("kept")
    if media_type != formats.media_type_for(token):
        raise ParseError(f"{name}: media type {media_type!r} is not that of format {token}", rule="n2c")
    if charset is not None and not isinstance(charset, str):
        raise ParseError(f"{name}: charset {charset!r} is not text", rule="n2c")
    if charset is not None:  # a charset pdi knows, written as pdi stores it (as pdi verify reads the catalog)
        try:
            stored_as = formats.registered_charset(charset)
        except PDIError as exc:
            raise ParseError(f"{name}: {exc}", rule="n2c") from exc
        if stored_as != charset:
            raise ParseError(f"{name}: charset {charset!r} is not written as pdi stores it ({stored_as})", rule="n2c")
    if line_ending is not None and line_ending not in LINE_ENDINGS:
        raise ParseError(f"{name}: line endings {line_ending!r} are not a convention pdi records", rule="n2c")
    if not isinstance(created_at, str):
        raise ParseError(f"{name}: created_at {created_at!r} is not a catalog timestamp", rule="n2c")
    wrong = timestamp_problem(created_at)  # a real time, neither before its name's day nor after today
    if wrong is None and created_at[:10] < key.day.isoformat():
        wrong = f"it was made at {created_at}, before its name's day {key.day.isoformat()}"
    elif wrong is None and created_at > timestamp(utc_now() + datetime.timedelta(days=1)):
        wrong = f"it was made at {created_at}, which is still to come"
    if wrong is not None:
        raise ParseError(f"{name}: {wrong}", rule="n2c")
    if kept not in (STORED_EXACT, STORED_CANONICAL):
        raise ParseError(f"{name}: kept {kept!r} is neither {STORED_EXACT} nor {STORED_CANONICAL}", rule="n2c")
    return RepresentationRecord(
        series=key.series, day=key.day, unique_id=key.unique_id, serial=parsed.serial, version=parsed.version,
        format=token, media_type=media_type, charset=charset, line_ending=line_ending, sha256=sha256, size=size,
        created_at=created_at, stored=kept)


def _keep(archive: Archive, record: MirrorRecord, batch: list[tuple[RepresentationRecord, Spooled]],
          report: SyncReport, written: _Written) -> None:
    """One transaction: the batch's names and their octets, as written ahead (then emptied, and ``written``
    told)."""
    if not batch:
        return
    embargoes = ([one for rec, _ in batch for one in report.embargoes.pop(str(record_name(rec)), ())]
                 if report.embargoes else [])
    try:
        kept = archive.import_mirrored(record, batch, embargoes)
        # only what this sync kept counts as new: a name kept meanwhile (by another sync of the series, or listed
        # twice) is held already, its octets not counted
        report.copied += len(kept)
        report.held += len(batch) - len(kept)
        report.octets += sum(rec.size for rec in kept)
    finally:
        for _, spooled in batch:
            spooled.discard()  # taken by the import, or not needed: removed
        written.settled(spooled for _, spooled in batch)
        batch.clear()


def announce(record: MirrorRecord, url: str, keys: Sequence[PublicKey], token: str) -> bool:
    """Tell ``record``'s origin that the archive at ``url`` (with ``keys``) holds a copy of its series
    (``POST /api/mirrors``, :mod:`pdi.server.write.mirrors`), with ``token`` (role ``mirror``); whether the origin
    recorded it now (``False``: it had already). Its refusal is raised with the problem's words."""
    target = record.base_url + "/api/mirrors"
    body = {"series": record.series, "base_url": base_url(url), "keys": json.loads(key_text(keys))}
    try:
        with _client() as client, client.stream("POST", target, json=body,
                                                 headers={"Authorization": f"Bearer {token}"}) as answer:
            if answer.status_code in (200, 201):
                return answer.status_code == 201
            detail = said(answer, time.monotonic() + HTTP_TIMEOUT) or "(no problem said)"
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot announce this mirror to {target}: {exc}") from exc
    error = {401: AccessError, 403: AccessError, 404: NotFoundError, 409: ImmutabilityError}.get(
        answer.status_code, RemoteError)
    raise error(f"{target} refused this mirror's announcement (HTTP {answer.status_code}): {detail}")
