"""Another pdi archive as a :class:`Peer` over HTTP: its keys, its signed manifests and its octets, read within
bounds, for a mirror's sync (:mod:`pdi.network.mirrors`), audits and repairs (:mod:`pdi.network.polls`).

A peer is a stranger's server. Every request asks for octets as they are (:data:`IDENTITY`) and an answer in a
content coding is refused unread (a few kilobytes of brotli undo to gigabytes); a text answer (a manifest page, a
key set, a description) is read in :data:`MAX_PAGE_JWS` or :data:`MAX_DESCRIPTION` octets and
:data:`TEXT_SECONDS` seconds; octets must come at :data:`MIN_RATE` at least past the first :data:`HTTP_TIMEOUT`
seconds (:class:`Pace`); a manifest page of more names than asked for, or of another series, day or start, is
refused; a name's octets are never read past the size its signed manifest says. ``POST /api/octets`` answers
are read over :mod:`http.client` where the origin is a plain ``http://`` address (:class:`_Direct` says why),
one ``multipart/mixed`` part a name (:class:`_Parts`).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

import httpx

from pdi import _answer_head as answer_head
from pdi import untrusted_json
from pdi._chunked import ChunkedError, Chunks
from pdi._refusals import IDENTITY, coded, refusal, said, told, unreached
from pdi._wording import shown_url
from pdi.archive.blobs.seam import Spooled
from pdi.archive.mirroring import base_url
from pdi.errors import (
    AccessError,
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    RemoteError,
    RemoteNotFoundError,
    UnknownSeriesError,
)
from pdi.network.mirror_access import read_token
from pdi.signing import (
    MAX_JWKS,
    Manifest,
    PublicKey,
    jwk_set_text,
    parse_jwks,
    verify_manifest,
)

if TYPE_CHECKING:
    from pdi.archive.mirroring import MirrorRecord

__all__ = ["Pace", "Peer", "announce", "check_origin", "fetch_keys", "key_text", "peer_of", "pinned_keys", "uncoded", "within"]

#: Seconds a request may wait to connect and between two reads.
HTTP_TIMEOUT = 30.0
#: Seconds a whole answer read as text (a manifest page, a key set, a description) may take.
TEXT_SECONDS = 120.0
#: The slowest a peer may send octets, past its first :data:`HTTP_TIMEOUT` seconds (octets a second): one that
#: sends a byte just inside each timeout would hold a sync for days.
MIN_RATE = 16 << 10
#: The longest manifest page read (a page of :data:`PAGE` names is some hundreds of kilobytes).
MAX_PAGE_JWS = 8 << 20
#: The longest N2C description read (a JSON object).
MAX_DESCRIPTION = 1 << 20
#: Names a manifest page is asked for.
PAGE = 1000
#: Pages one series' manifest may have (10 million names).
MAX_PAGES = 10_000
#: Requests for octets at once (each over a kept-alive connection).
WORKERS = 3
#: The longest header section of a part, and the longest problem a part may hold.
MAX_PART_HEAD = 8 << 10
MAX_PART_PROBLEM = 64 << 10
#: Octets asked of the connection at a time, at most, while an octets answer is read.
READ_AT_MOST = 1 << 20
#: The longest an announcement answered ``503`` waits (its ``Retry-After``, at most this) before it is sent again.
MAX_ANNOUNCE_WAIT = 10.0
#: The wait before sending it again when a ``503`` says no ``Retry-After`` in seconds (pdi's own say 5).
ANNOUNCE_WAIT = 5.0


def _client(*, public_only: bool = False) -> httpx.Client:
    """A client for peers: each answer's head within :data:`HTTP_TIMEOUT` seconds (:mod:`pdi._answer_head`); with
    ``public_only``, for peers that announced themselves: connected to at public addresses only."""
    return answer_head.client(HTTP_TIMEOUT, timeout=HTTP_TIMEOUT, follow_redirects=False, headers=IDENTITY,
                              limits=httpx.Limits(max_connections=WORKERS * 2, max_keepalive_connections=WORKERS * 2),
                              public_only=public_only)


def uncoded(answer: httpx.Response, what: str) -> None:
    """Nothing, when ``answer`` is sent as it is; else a :class:`RemoteError`: :data:`IDENTITY` was asked."""
    refused = coded(answer.headers.get("content-encoding"), what)
    if refused is not None:
        raise refused


class Pace:
    """The octets of one answer as they come: a :class:`RemoteError` once they come slower than :data:`MIN_RATE`
    octets a second on average, past the first :data:`HTTP_TIMEOUT` seconds, or once ``seconds`` have passed."""

    def __init__(self, what: str, seconds: float | None = None) -> None:
        self.what = what
        self.started = time.monotonic()
        self.deadline = None if seconds is None else self.started + seconds
        self.count = 0

    def by(self, octets: int) -> float:
        """The :func:`time.monotonic` time past which a read still waiting for at most ``octets`` more is too slow,
        however many of them it then brings."""
        latest = self.started + max(HTTP_TIMEOUT, (self.count + octets) / MIN_RATE)
        return latest if self.deadline is None else min(latest, self.deadline)

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
    except unreached() as exc:
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
        return parse_jwks(_get_text(client, base_url(url) + "/api/keys", "the key set", MAX_JWKS), url + "/api/keys")


def check_origin(base: str, series: str, keys: Sequence[PublicKey], source: str | None = None) -> None:
    """That the archive at ``base`` answers the first page of ``series``' manifest, signed with one of ``keys``
    (asked with the token ``source`` names): before it is recorded as the series' origin, so that a series it
    does not hold, a key that is not its own or a token it refuses is said now, not at the first sync."""
    token = None if source is None else read_token(source)
    with _client() as client:
        peer = Peer(base, keys, client, token)
        try:
            next(peer.manifest(series), None)
        except NotFoundError as exc:
            raise _not_held(base, series, exc) from None
        finally:
            peer.close()


#: What a pdi origin before 0.3 added to its 404 for a series it lacks, with no problem type of its own to tell it
#: by (:class:`~pdi.errors.UnknownSeriesError`): a command for its own operator, not for this one.
_EARLIER_ORIGINS_HINT = UnknownSeriesError.HINT


def _not_held(base: str, series: str, exc: NotFoundError) -> NotFoundError:
    """The 404 ``exc`` of ``base``'s manifest of ``series`` as this archive's user can act on it: when the origin
    says it holds no such series, where that origin's series can be read and what to run with one of them; any
    other 404 (a web server that is no pdi) as it is. A pdi resolver says so by its problem's type
    (``/api#problem-unknown-series``); one before 0.3.0, by its words, which end with its operator's command."""
    said = exc.message
    if isinstance(exc, RemoteNotFoundError) and exc.told_type == UnknownSeriesError.problem_type:
        said = said.removesuffix(UnknownSeriesError.HINT_OVER_HTTP)  # said below, with the origin's address
    elif f": HTTP 404: series {series} is not registered{_EARLIER_ORIGINS_HINT}" in said:
        said = said.removesuffix(_EARLIER_ORIGINS_HINT)
    else:
        return exc
    shown = shown_url(base_url(base))
    return NotFoundError(f"the origin at {shown} holds no series {series} that it lets this archive read"
                         f" ({said}): the series it shows are listed at {shown}/api/series;"
                         f" pdi mirror add {shown} --series S with one of those")


def pinned_keys(record: MirrorRecord) -> list[PublicKey]:
    """The keys pinned for a mirror when it was added."""
    return parse_jwks(record.jwk, f"the key pinned for {shown_url(record.base_url)}")


def key_text(keys: Sequence[PublicKey]) -> str:
    """Keys as the JWK set pinned in the catalog (JSON text)."""
    return jwk_set_text(keys)


def within(pages: Iterator[Manifest], deadline: float | None, too_long: str) -> Iterator[Manifest]:
    """``pages`` (a :meth:`Peer.manifest`), each asked for before ``deadline`` (:func:`time.monotonic`; ``None``:
    no bound); past it a :class:`LimitError` saying ``too_long``: a peer answering each page just inside every
    bound of its own is given up all the same (a sync, an audit, a repair's search)."""
    for page in pages:
        yield page
        if deadline is not None and time.monotonic() > deadline:
            raise LimitError(too_long)


def peer_of(record: MirrorRecord, client: httpx.Client, *, public_only: bool = False) -> Peer:
    """The archive ``record`` names, its manifests checked with the key pinned, asked with its token if it has
    one (:mod:`pdi.network.mirror_access`); ``public_only``: a peer that announced itself, asked through
    ``client`` alone (which connects to public addresses only), never over :class:`_Direct`."""
    token = None if record.token_source is None else read_token(record.token_source)
    return Peer(record.base_url, pinned_keys(record), client, token, direct=not public_only)


class Peer:
    """Another pdi resolver at ``base`` whose manifests are checked with ``keys``, asked with ``token`` (a bearer
    token of that archive, RFC 6750 §2.1; ``None``: as anyone)."""

    def __init__(self, base: str, keys: Sequence[PublicKey], client: httpx.Client, token: str | None = None, *,
                 direct: bool = True) -> None:
        self.base = base_url(base)
        self.keys = list(keys)
        self.client = client
        self.headers: dict[str, str] = {} if token is None else {"Authorization": f"Bearer {token}"}
        self.direct = _Direct(self.base) if direct and _Direct.reaches(self.base) else None

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
        series and day, starting after the previous page's ``next``, and never going on from a cursor it went on
        from before: :class:`IntegrityError` otherwise."""
        after: str | None = None
        # the cursors gone on from (their digests): one that comes back is a loop. Not "each after the last": a pdi
        # origin's cursors are names in its listing order (a day's serials as numbers), not in their order as text
        seen: set[bytes] = set()
        url = ""
        for _ in range(MAX_PAGES):
            params: dict[str, str | int] = {"series": series, "limit": PAGE}
            if day is not None:
                params["day"] = day
            if after is not None:
                params["after"] = after
            try:
                url = str(httpx.URL(self.base + "/api/manifest", params=params))
            except httpx.InvalidURL:  # the cursor the last page signed: httpx builds no URL past 65,536 characters
                raise IntegrityError(f"the manifest {url}: its next page starts after a cursor of"
                                     f" {len(after or ''):,} characters, more than a URL carries to ask for it:"
                                     " refused") from None
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
            mark = hashlib.sha256(page.next.encode()).digest()
            if mark in seen:
                raise IntegrityError(f"the manifest {url}: its next page starts after {page.next[:200]!r}, where an"
                                     " earlier page's did (a loop): refused")
            seen.add(mark)
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
        count = 0
        # closed as soon as this ends, however it ends: the answer's connection with it
        with contextlib.closing(self._pieces(self.url("N2R", name), f"the octets of {name} at {self.base}")) as pieces:
            for piece in pieces:
                count += len(piece)
                if count > size:
                    raise IntegrityError(f"{name} at {self.base}: more than the {size} octets its signed manifest says")
                yield piece

    def _pieces(self, url: str, what: str) -> Generator[bytes, None, None]:
        """The octets of ``GET url`` (``what`` they are, for a refusal) as they arrive, at :class:`Pace`; not
        content-coded; :class:`RemoteError` if it cannot be reached or read."""
        try:
            with self.client.stream("GET", url, headers=self.headers) as answer:
                if answer.status_code != 200:
                    raise _refusal(answer.status_code, what, self.headers, said(answer, time.monotonic() + HTTP_TIMEOUT))
                uncoded(answer, url)
                pace = Pace(url)
                for piece in answer.iter_raw():
                    pace.took(len(piece))
                    yield piece
        except unreached() as exc:
            raise RemoteError(f"cannot fetch {url}: {exc}") from exc

    def element_index(self, name: str, sha256: str, document_octets: int) -> bytes:
        """The parse the peer keeps of the SGML document ``name`` of ``document_octets`` octets (``GET
        /api/element-index``), refused (:class:`IntegrityError`) unless it hashes to ``sha256``, the digest its
        signed manifest gives; never more than the largest element index pdi makes of a document of that size
        (:func:`~pdi.fragments.markup.bounds.max_sgml_index_octets`) octets read (more: :class:`LimitError`), and
        at :class:`Pace`."""
        from pdi.fragments.markup.bounds import MAX_SGML_OCTETS, max_sgml_index_octets

        most = max_sgml_index_octets(min(document_octets, MAX_SGML_OCTETS))  # (a larger one gets no parse)
        url = str(httpx.URL(self.base + "/api/element-index", params={"pdi": name}))
        body = bytearray()
        with contextlib.closing(self._pieces(url, f"the parse of {name} at {self.base}")) as pieces:
            for piece in pieces:
                body += piece
                if len(body) > most:
                    raise LimitError(f"the parse of {name} at {self.base} is more than {most:,} octets, more than"
                                     f" any element index of a document of {document_octets:,} octets: given up")
        got = hashlib.sha256(body).hexdigest()
        if got != sha256:
            raise IntegrityError(f"the parse of {name} at {self.base} hashes to {got}, its signed manifest says"
                                 f" {sha256}: refused")
        return bytes(body)

    def octets_of(self, entries: Sequence[Mapping[str, Any]], write: Callable[[Iterator[memoryview]], Spooled],
                  ) -> list[Spooled | PDIError] | None:
        """The octets of the manifest's ``entries`` in one ``POST /api/octets``, each written by ``write`` as it
        arrives and checked against its entry's SHA-256 and size; for each, what was written or what went wrong
        (once the answer goes wrong, every later name: that it was not read, and why). ``None`` when the origin does not answer that
        request (an earlier pdi: ask N2R)."""
        url = self.base + "/api/octets"
        done: list[Spooled | PDIError] = []
        body = json.dumps({"names": [str(e["name"]) for e in entries]}).encode()
        try:
            with self._post(url, body) as answer:
                if answer.status in (404, 405):
                    return None
                if answer.status != 200:
                    raise RemoteError(f"POST {url}: HTTP {answer.status}")
                parts = _Parts(answer.read_into, _boundary(answer.content_type, url), url, chunked=answer.chunked)
                for entry in entries:
                    done.append(parts.take(entry, write, self.base))
                parts.close()
                if answer.chunked:
                    answer.whole = parts.finish()
        except unreached() as exc:
            failure: PDIError = RemoteError(f"cannot fetch {url}: {exc}")
        except PDIError as exc:  # the answer is cut or not as it should be: what is left is not trusted
            failure = exc
        else:
            return done
        if len(done) == len(entries):  # after the last part (the closing boundary, the epilogue): each was read
            return done
        # the part being read when it went wrong is its; those after it were not read at all (not "altered")
        unread = RemoteError(f"not read: the answer to POST {url} went wrong before its part ({failure})")
        return [*done, failure, *[unread] * (len(entries) - len(done) - 1)]

    @contextlib.contextmanager
    def _post(self, url: str, body: bytes) -> Iterator[_Answer]:
        """``POST url`` of a JSON ``body``: the answer, its status, ``Content-Type`` and a function that reads its
        next octets into a buffer, how many (0: the end; over :attr:`direct` where it reaches the origin, else
        :attr:`client`). Failures to reach or read it are :class:`RemoteError` or :class:`httpx.HTTPError`.

        Over :attr:`direct`, an answer of ``Transfer-Encoding: chunked`` (a pdi origin's) is read as it comes, its
        framing left to the reader (:class:`_Parts` with ``chunked``), which says whether it read the body whole
        (:attr:`_Answer.whole`): only then is the connection kept for the next request. An answer framed by
        ``Content-Length`` (a proxy's, say) is kept once read to its last octet, the epilogue with it."""
        if self.direct is None:
            headers = {**self.headers, "Content-Type": "application/json"}
            with self.client.stream("POST", url, content=body, headers=headers) as answer:
                if answer.status_code == 200:
                    uncoded(answer, url)
                yield _Answer(answer.status_code, answer.headers.get("content-type", ""),
                              _copier(answer.iter_raw(), url))
            return
        connection, got = self.direct.post(url, body, {**self.headers, **IDENTITY})
        cut = threading.Event()
        try:
            refused = coded(got.getheader("content-encoding"), url)
            if got.status == 200 and refused is not None:
                raise refused
            watch = _Watch(connection, cut)
            try:
                # http.client's own rule for a chunked answer; its buffered reader (fp) holds what follows the head
                chunked = got.fp is not None and (got.getheader("transfer-encoding") or "").lower() == "chunked"
                read = got.fp.readinto1 if chunked else got.readinto
                given = _Answer(got.status, got.getheader("content-type", ""), _reader(read, url, watch, cut),
                                chunked=chunked)
                yield given
                if not chunked:  # what follows the closing boundary (nothing, or a short epilogue), at the same pace
                    given.read_into(memoryview(bytearray(MAX_PART_HEAD)))
                    if got.isclosed() and not got.length:
                        # read to its Content-Length (or, unframed, to the origin's close): http.client says so by
                        # isclosed() alone, its closed false until close(), which lets the connection ask again
                        got.close()
                elif given.whole:
                    got.close()  # read to its end here: done (the connection stays open)
            finally:
                watch.stop()
        finally:
            # read to its end, the connection asks the next request; else (cut, refused, not read) it is closed
            self.direct.done(connection, kept=got.closed and not cut.is_set())

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


class _Answer:
    """An octets answer as :meth:`Peer._post` gives it: its status, ``Content-Type``, a function reading its next
    octets into a buffer, whether they come chunked (the framing left to the reader), and (chunked) whether the
    reader read the body to its end, and no further."""

    def __init__(self, status: int, content_type: str, read_into: Callable[[memoryview], int], *,
                 chunked: bool = False) -> None:
        self.status = status
        self.content_type = content_type
        self.read_into = read_into
        self.chunked = chunked
        self.whole = False


class _Watch:
    """One thread watching the reads of one answer: past the time a read is given (:meth:`arm`), ``connection`` is
    cut (``cut`` set), which ends a read blocked in it at once. One thread for all of an answer's reads, not a
    :class:`threading.Timer` a read (a thread made and ended for each MiB of a sync)."""

    def __init__(self, connection: http.client.HTTPConnection, cut: threading.Event) -> None:
        self._connection, self._cut = connection, cut
        self._due: float | None = None
        self._stopped = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, due: float) -> None:
        """Cut the connection at :func:`time.monotonic` time ``due`` unless :meth:`disarm` is called first."""
        with self._changed:
            self._due = due
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pdi-peer-watch", daemon=True)
                self._thread.start()
            self._changed.notify()

    def disarm(self) -> None:
        with self._changed:
            self._due = None  # the thread, waking, finds nothing due (no notify: a wake-up it does not need)

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        with self._changed:
            while not self._stopped:
                due = self._due
                if due is None:
                    self._changed.wait()
                    continue
                left = due - time.monotonic()
                if left > 0:
                    self._changed.wait(left)
                    continue
                self._due = None
                _cut(self._connection, self._cut)


def _reader(read: Callable[[memoryview], int | None], url: str, watch: _Watch,
            cut: threading.Event) -> Callable[[memoryview], int]:
    """A function reading an answer's next octets into a buffer by ``read`` (its ``readinto``, or its buffered
    reader's ``readinto1``: straight from the connection), how many (0: the end); :class:`RemoteError` if they
    cannot be read (the connection breaks, or is silent for :data:`HTTP_TIMEOUT` seconds), or come slower than
    :class:`Pace` allows.

    http.client's ``readinto`` waits until the buffer is full (its buffered reader reads on), so an origin
    sending an octet just inside each read's timeout would hold one read for as long as the buffer is long, the
    pace checked only after it: each read is watched, and ``connection`` cut (``cut`` set) once it can no longer
    keep the pace, however many octets it brings (``watch`` cuts it, setting ``cut``)."""

    pace = Pace(url)

    def read_into(view: memoryview) -> int:
        watch.arm(pace.by(len(view)))
        try:
            count = read(view) or 0
        except (OSError, http.client.HTTPException) as exc:
            if cut.is_set():
                pace.took(0)  # the pace it no longer keeps, said
            raise RemoteError(f"cannot fetch {url}: {exc}") from exc
        finally:
            watch.disarm()
        pace.took(count)
        if cut.is_set():  # pragma: no cover - cut as it ended: past the pace, which took() said
            raise RemoteError(f"cannot fetch {url}: its octets came slower than a peer must send them")
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
    ``recv``, its chunked framing taken out by :class:`_Parts` where it lies
    (http.client's own reading of a chunked answer read each chunk's size
    line apart, a second ``recv`` a part: 21,000 ``recv`` a sync of 10,000
    names against some 2,000), where httpx's HTTP/1.1 parser (h11) reads 64 KiB at a time and
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
            # the answer's head within HTTP_TIMEOUT: past it, the connection is cut (each read is bounded, the
            # head is not: an octet just inside each read's timeout would hold the sync for as long as it grows)
            cut = threading.Event()
            watch = threading.Timer(HTTP_TIMEOUT, _cut, (connection, cut))
            try:
                connection.request("POST", target, body, sent)
                watch.start()
                try:
                    got = connection.getresponse()
                finally:
                    watch.cancel()
                if cut.is_set():  # cut while its header fields were read: what was read of them is not all
                    got.close()
                    raise http.client.HTTPException("cut")
                return connection, got
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self.done(connection, kept=False)
                if not kept or cut.is_set():
                    raise _unheaded(url, exc, cut) from exc
                connection, kept = None, False  # closed by the origin while it was kept: asked again, once
            except (OSError, http.client.HTTPException) as exc:
                self.done(connection, kept=False)
                raise _unheaded(url, exc, cut) from exc

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


def _cut(connection: http.client.HTTPConnection, cut: threading.Event) -> None:
    """Cut ``connection`` (from another thread: a blocked read ends at once), saying so in ``cut``."""
    cut.set()
    with contextlib.suppress(OSError, AttributeError):
        connection.sock.shutdown(socket.SHUT_RDWR)


def _unheaded(url: str, exc: BaseException, cut: threading.Event) -> RemoteError:
    """The error of a request whose answer's head could not be had: cut past :data:`HTTP_TIMEOUT`, or ``exc``."""
    if cut.is_set():
        return RemoteError(f"cannot fetch {url}: the head of the answer took more than {HTTP_TIMEOUT:g} s (its"
                           " status line and header fields)")
    return RemoteError(f"cannot fetch {url}: {exc}")


#: A part's ``Content-Length``: ASCII digits (RFC 9110 §8.6), as many as a size may have (``str.isdigit`` is true of
#: ``²`` too, and ``int`` reads no more than 4,300 digits).
_CONTENT_LENGTH = re.compile(r"[0-9]{1,20}")
#: A media type's parameter (RFC 9110 §5.6.6): ``OWS ";" OWS token "=" ( token / quoted-string )``, its name in any
#: case; the quoted-string's ``\\`` escapes (§5.6.4) undone where it is read.
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_PARAMETER = re.compile(rf'[ \t]*;[ \t]*({_TOKEN})=(?:({_TOKEN})|"((?:[^"\\\x00-\x08\x0a-\x1f\x7f]|\\[^\x00-\x08\x0a-\x1f\x7f])*)")')
#: A multipart boundary (RFC 2046 §5.1.1): 1 to 70 ``bchars``, the last not a space.
_BOUNDARY = re.compile(r"[0-9A-Za-z'()+_,./:=? -]{0,69}[0-9A-Za-z'()+_,./:=?-]")


def _boundary(content_type: str, url: str) -> bytes:
    """The boundary of a ``multipart/mixed`` answer's ``Content-Type`` (RFC 2046 §5.1.1; its parameters as RFC 9110
    §5.6.6 writes them: named in any case, a value a token or a quoted-string)."""
    found: str | None = None
    twice = False
    at = len("multipart/mixed")
    head = content_type[:at].lower() == "multipart/mixed"
    while head and at < len(content_type.rstrip(" \t")):
        parameter = _PARAMETER.match(content_type, at)
        if parameter is None:
            head = False
            break
        at = parameter.end()
        if parameter[1].lower() == "boundary":
            twice = found is not None
            value = parameter[2] if parameter[2] is not None else re.sub(r"\\(.)", r"\1", parameter[3])
            found = value if found is None else found
    if not head or found is None or twice or _BOUNDARY.fullmatch(found) is None:
        raise ParseError(f"POST {url} answered {content_type[:100]!r}, not multipart/mixed with a boundary",
                         rule="octets")
    return found.encode("ascii")


#: The longest chunk size line (with its extensions) and the longest trailer section read (:mod:`pdi._chunked`).
MAX_CHUNK_LINE = 4 << 10
MAX_TRAILERS = 8 << 10


class _Parts:
    """The parts of a ``POST /api/octets`` answer (:mod:`pdi.server.protocol.octets`), read in order from its
    octets as they arrive (into one buffer, read again and again): each part's head, then exactly its
    ``Content-Length`` octets.

    ``chunked``: ``read_into`` gives the answer's body as it came, in ``Transfer-Encoding: chunked`` (RFC 9112
    §7.1), and its framing is taken out here, where it lies in the buffer, not copied around: each read then
    takes as many octets as the connection holds, across parts and chunks (:mod:`http.client` read each chunk's
    size line apart, a second ``recv`` a part). The framing is read by :class:`pdi._chunked.Chunks`: a chunk's
    size (at most 15 hex digits), its extensions (passed over), the CRLF after its data and the trailer section,
    within bounds (:data:`MAX_CHUNK_LINE`, :data:`MAX_TRAILERS`); anything else is a :class:`RemoteError`, as a
    break of the answer is."""

    def __init__(self, read_into: Callable[[memoryview], int], boundary: bytes, url: str, *,
                 chunked: bool = False) -> None:
        self.read_into = read_into
        self.buffer = bytearray(READ_AT_MOST)
        self.view = memoryview(self.buffer)
        self.start = self.end = 0  # the octets read and not taken yet: buffer[start:end]
        self.delimiter = b"--" + boundary
        self.url = url
        self.chunked = chunked
        #: Chunked: where the current chunk's data ends in the buffer (its framing starts there; ``start`` at the
        #: body's start, a first chunk's size line); not chunked: never reached.
        self.frame = 0 if chunked else 1 << 62
        self.chunks = Chunks(max_digits=15, max_line=MAX_CHUNK_LINE, max_trailer=MAX_TRAILERS)
        #: Chunked: the last chunk and its trailer section read (nothing of the body is left).
        self.ended = False

    def _fill(self) -> bool:
        """Read more octets after those not taken yet (moved to the buffer's start first); whether any came."""
        if self.start:
            left = self.end - self.start
            self.buffer[:left] = self.view[self.start:self.end]
            if self.chunked:
                self.frame -= self.start
            self.start, self.end = 0, left
        if self.end == len(self.buffer):
            return False  # a part's head longer than the buffer (refused by _line)
        count = self.read_into(self.view[self.end:])
        self.end += count
        return count > 0

    def _stop(self) -> int:
        """Where the body's octets in hand end (``end``, or the current chunk's end): past a chunk's framing first,
        if ``start`` is at it (reading more as needed)."""
        while self.start == self.frame and not self.ended:
            self._framing()
        return self.start if self.ended else min(self.end, self.frame)

    def _framing(self) -> None:
        """At the end of a chunk's data (or the body's start): its CRLF, the next chunk's size line; after the last
        chunk, the trailer section and its empty line (reading more as needed). :attr:`frame` then says where the
        next chunk's data ends."""
        chunks = self.chunks
        try:
            while True:
                self.start = self.frame = chunks.framing(self.buffer, self.start, self.end)
                if chunks.in_data:
                    self.frame += chunks.size
                    return
                if chunks.ended:
                    self.ended = True
                    return
                if not self._fill():  # (never for want of room: a line of the framing is bounded well below it)
                    raise chunks.cut_short(self.end - self.start)
        except ChunkedError as exc:
            raise RemoteError(f"POST {self.url}: the answer's chunked transfer coding is broken: {exc}") from None

    def _line(self) -> bytes:
        stop = self._stop()
        end = self.buffer.find(b"\r\n", self.start, stop)
        if end >= 0:  # the line in hand, in one chunk: as it is
            line = bytes(self.view[self.start:end])
            self.start = end + 2
            return line
        gathered = bytearray()  # a line cut by the buffer's end or a chunk's: gathered piece by piece
        while True:
            if self.start == stop:  # (past a chunk's framing already: _stop)
                if len(gathered) > MAX_PART_HEAD or self.ended or not self._fill():
                    raise RemoteError(f"POST {self.url}: the answer ends (or runs on) inside a part's head")
                stop = self._stop()
                continue
            if gathered[-1:] == b"\r" and self.buffer[self.start] == 0x0A:  # the CR and LF in two chunks
                self.start += 1
                return bytes(gathered[:-1])
            end = self.buffer.find(b"\r\n", self.start, stop)
            if end >= 0:
                gathered += self.view[self.start:end]
                self.start = end + 2
                return bytes(gathered)
            gathered += self.view[self.start:stop]
            self.start = stop
            stop = self._stop()

    def _octets(self, count: int) -> Iterator[memoryview]:
        """The next ``count`` octets, as they come: views of the buffer, each to be used before the next is
        asked for (the buffer is read into again)."""
        while count:
            stop = self._stop()
            if self.start == stop:  # (past a chunk's framing already: _stop)
                if self.ended or not self._fill():
                    raise RemoteError(f"POST {self.url}: the answer ends {count} octets before its part does")
                continue
            take = min(count, stop - self.start)
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
        read = 0  # octets of the head so far: each line is bounded by _line, their number here
        while line := self._line():
            read += len(line) + 2
            if read > MAX_PART_HEAD:
                raise LimitError(f"POST {self.url}: the head of the part for {name} is more than {MAX_PART_HEAD}"
                                 " octets")
            field_name, _, value = line.decode("latin-1").partition(":")
            head[field_name.strip(" \t").lower()] = value.strip(" \t")
        length = head.get("content-length", "")
        if head.get("content-location") != name:
            raise ParseError(f"POST {self.url}: the part for {name} is not its (Content-Location"
                             f" {head.get('content-location', '')[:200]!r})", rule="octets")
        if _CONTENT_LENGTH.fullmatch(length) is None:  # said apart: the part is the name's, its length is not given
            raise ParseError(f"POST {self.url}: the part for {name} has no Content-Length that is a number of octets"
                             f" ({'none' if 'content-length' not in head else repr(length[:20])})", rule="octets")
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

    def finish(self) -> bool:
        """Chunked, after :meth:`close`: the rest of the body (an epilogue, at most :data:`MAX_PART_HEAD` octets)
        read through its last chunk and trailer section; whether the body ended with the octets read (none of
        another answer read with it: its connection may ask again)."""
        read = 0
        while (stop := self._stop()) != self.start or not self.ended:
            if self.start == stop:
                if not self._fill():
                    raise RemoteError(f"POST {self.url}: the answer ends inside its last chunk")
                continue
            read += stop - self.start
            self.start = stop
            if read > MAX_PART_HEAD:
                return False
        return self.start == self.end


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


def announce(record: MirrorRecord, url: str, keys: Sequence[PublicKey], token: str, whose: str = "the token given") -> bool:
    """Tell ``record``'s origin that the archive at ``url`` (with ``keys``) holds a copy of its series
    (``POST /api/mirrors``, :mod:`pdi.server.write.mirrors`), with ``token`` (role ``mirror``; ``whose`` says where
    it was read from); whether the origin recorded it now (``False``: it had already). Its refusal is raised with
    the problem's words; a token it does not know (``401``) or whose role or series does not cover this (``403``
    with RFC 6750 §3.1's ``insufficient_scope``) also with how to get one that does.

    An announcement is recorded once however often it is sent (the same again is answered ``200`` and writes
    nothing), so one answered ``503`` (the origin's storage could not answer, or lost its commit's answer, so
    that whether it was recorded is unknown) is sent again, once, after its ``Retry-After`` (at most
    :data:`MAX_ANNOUNCE_WAIT` seconds): ``200`` if the first was recorded, ``201`` if not. A second ``503`` is a
    :class:`RemoteError` saying that running the same announcement again later is safe."""
    target = record.base_url + "/api/mirrors"
    body = {"series": record.series, "base_url": base_url(url), "keys": json.loads(key_text(keys))}
    again = (f"an announcement is recorded once however often it is sent: run pdi mirror sync --announce {url}"
             " again later")
    for sent in (1, 2):
        try:
            with _client() as client, client.stream("POST", target, json=body,
                                                     headers={"Authorization": f"Bearer {token}"}) as answer:
                if answer.status_code in (200, 201):
                    return answer.status_code == 201
                detail = said(answer, time.monotonic() + HTTP_TIMEOUT) or "(no problem said)"
        except unreached() as exc:
            raise RemoteError(f"cannot announce this mirror to {target}: {exc} ({again})") from exc
        if answer.status_code != 503 or sent == 2:
            break
        _pause(_retry_after(answer.headers.get("retry-after")))
    if answer.status_code == 503:
        raise RemoteError(f"{target} could not record this mirror's announcement (HTTP 503, sent twice): {detail}"
                          f" ({again})")
    error = {401: AccessError, 403: AccessError, 404: NotFoundError, 409: ImmutabilityError}.get(
        answer.status_code, RemoteError)
    message = f"{target} refused this mirror's announcement (HTTP {answer.status_code}): {detail}"
    if answer.status_code == 401 or (answer.status_code == 403 and "insufficient_scope" in
                                      answer.headers.get("www-authenticate", "")):
        origin = shown_url(record.base_url)
        message += (f". The token sent was {whose}; an announcement needs a token of role mirror for"
                    f" {record.series}, which the operator of {origin} makes there (pdi token add NAME --role mirror"
                    f" --series {record.series}) and gives to you, to put in a file of mode 0600 and give with"
                    f" pdi mirror sync --announce {url} --token-file FILE")
    raise error(message)


def _retry_after(field: str | None) -> float:
    """The seconds a ``Retry-After`` of delay-seconds asks to wait (RFC 9110 §10.2.3), at most
    :data:`MAX_ANNOUNCE_WAIT`; :data:`ANNOUNCE_WAIT` for none, or an HTTP-date (a clock not this one's)."""
    text = (field or "").strip(" \t")
    if text.isascii() and text.isdigit():
        digits = text.lstrip("0") or "0"  # 1*DIGIT: leading zeros are the number still (not its first six digits)
        return min(float(digits) if len(digits) <= 6 else MAX_ANNOUNCE_WAIT, MAX_ANNOUNCE_WAIT)
    return ANNOUNCE_WAIT


def _pause(seconds: float) -> None:
    """Wait before sending an announcement again (replaced in the tests, which count the waits)."""
    time.sleep(seconds)
