"""Who answers for a series this archive does not hold: the registries, then the DNS, the live one first.

:class:`Authorities` puts together, in this order:

1. the archive's own registry (``registry.json``: :mod:`pdi.federation.registry`),
   re-read when the file changes;
2. each registry ``pdi serve --registry`` loaded (a file or a URL), its
   signature checked against ``--registry-key`` at every load (one that
   does not verify is refused: at start, an error; at a reload, the one
   held is kept and the refusal logged, as is one issued before the one
   held: a replay); a URL is fetched again after its
   ``Cache-Control: max-age`` (at least :data:`MIN_RELOAD`, at most
   :data:`MAX_RELOAD`; without one, :data:`DEFAULT_RELOAD`), a file when
   it changes. The newest time each source's registry was issued is also
   kept in the archive's catalog (:class:`IssuedRecord`,
   :mod:`pdi.archive.registries`, by :func:`registry_source`), so that one
   issued before it is refused as a replay after a restart too, and by every
   worker and resolver sharing the archive (at start, an error naming both
   times and ``pdi registry forget``, which accepts an older one on
   purpose); a resolver that may only read its archive keeps it in each
   worker alone, and says so once (``pdi serve``'s first line);
3. the DNS (:mod:`pdi.federation.naptr`), when ``--dns`` names a server.

A registry lists the authority first, then its mirrors: the order is kept,
so the first live resolver is the authority when it is up. Whether a
resolver is up is whether it answers ``HEAD`` of its base URL with a status
other than ``5xx`` within :data:`PROBE_SECONDS`, its host name's lookup and
the connection included (the status line and header fields are read, no
body): a connection alone says nothing of a resolver that is hung, or of a
proxy whose resolver behind it is down (``502``), and a reader sent there
would wait for ever. The result is kept :data:`UP_SECONDS` when it answered,
:data:`DOWN_SECONDS` when it did not: a few seconds, because each worker
process of ``pdi serve`` keeps its own (nothing is shared between them, nor
between resolvers on several hosts), and a resolver that comes back must be
found so by every one of them within a few seconds, or readers asking the
same name are sent there by one and answered ``503`` by another. While one
request looks again at a resolver whose result has run out, the others go
on with what was found (so a resolver that stays down, or hangs for the
probe's 1.5 s, is asked once every :data:`DOWN_SECONDS` by a process, not by
every request).

A resolver is never sent a name of its own: the base URLs it is reached at
(its ``--base-url``, the address a connection came to: never what a
request's ``Host`` says, a stranger's word) are left out by whoever asks
(``selves``), and so is any other spelling or alias of it (a host name of
this machine, a proxy's public name), known by its answer to the probe: the
probe carries :data:`PROBE_HEADER`, and a pdi resolver answers a request
that does with its :data:`RESOLVER_HEADER`, a token made when ``pdi serve``
starts (:meth:`Authorities.note_answer`). A stranger who echoes the token only
has his own resolver left out, which he could do by answering ``404``.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import ipaddress
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from pdi._addresses import browser_ipv4
from pdi._refusals import IDENTITY, coded, refusal, said, unreached
from pdi._wording import MESSAGE_MOST, clipped, public_url, shown_url
from pdi.errors import (
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    RemoteError,
    StoreError,
    UnsupportedError,
)
from pdi.federation.naptr import NaptrFinder
from pdi.federation.registry import (
    MAX_REGISTRY,
    Registry,
    base_url,
    read_registry_file,
    verify_registry,
)
from pdi.signing import MAX_JWKS, PublicKey, parse_jwks
from pdi.uri import normalize

if TYPE_CHECKING:
    from pdi.archive.registries import RegistryIssued

__all__ = ["PROBE_HEADER", "RESOLVER_HEADER", "Authorities", "Candidate", "IssuedRecord", "RegistrySource",
           "fetch_bounded", "load_keys", "registry_source", "same_resolver"]

log = logging.getLogger("pdi.federation")

#: The request header of the probes of other resolvers (any value): a pdi resolver answers it with
#: :data:`RESOLVER_HEADER`, and a route probe without probing onward (:mod:`pdi.federation.routes`).
PROBE_HEADER = "PDI-Route-Probe"
#: The answer header by which a resolver asked with :data:`PROBE_HEADER` says which it is: its token.
RESOLVER_HEADER = "PDI-Resolver"
#: Seconds a resolver's answer to the probe (its lookup, connection and status line) may take before it is held
#: to be down.
PROBE_SECONDS = 1.5
#: How long a resolver that answered the probe (a status other than 5xx) is held to be up, and one that did not, down
#: (short: each worker keeps its own, and all of them must find one come back within a few seconds).
UP_SECONDS = 30.0
DOWN_SECONDS = 3.0
#: Resolvers not known to be up or down probed for one answer, at most.
MAX_PROBES = 3
#: Seconds one fetch (a registry, a key, a TimeGate) may take in all.
FETCH_SECONDS = 5.0
#: Seconds a registry held may have been issued ahead of this machine's clock and still hold back an older one.
MAX_AHEAD = 86_400.0
#: How often a registry loaded from a URL is fetched again, without (and within) its max-age.
DEFAULT_RELOAD = 300.0
MIN_RELOAD = 10.0
MAX_RELOAD = 86_400.0


@dataclass(frozen=True)
class Candidate:
    """A resolver that may answer for a series: its base URL and where it was learnt (``registry``, ``dns``)."""

    base: str
    source: str


def fetch_bounded(url: str, most: int, what: str, *, accept: str = "*/*", seconds: float = FETCH_SECONDS,
                  timeout: float | None = None, follow_redirects: bool = False) -> tuple[bytes, dict[str, str]]:
    """The body (at most ``most`` octets) and header fields of ``GET url``, all of it within ``seconds`` (each
    connection and read within ``timeout``, default ``seconds``), naming ``what`` in every refusal and quoting
    the server's own problem (:mod:`pdi._refusals`): :class:`~pdi.errors.ParseError` for a ``400``,
    :class:`~pdi.errors.NotFoundError` for a ``404``, :class:`~pdi.errors.LimitError` past ``most`` octets or
    ``seconds``, :class:`~pdi.errors.RemoteError` for any other status, a failed connection or a body in a
    content coding (asked as it is: never undone here). With ``follow_redirects``, a URL at a public address is
    followed to public addresses only (a :class:`~pdi.errors.RemoteError` says which was not). Every message names
    ``url`` without its userinfo (:func:`pdi._wording.shown_url`: a password never reaches a log)."""
    from pdi import _answer_head as answer_head  # here: httpx is slow to import

    deadline = time.monotonic() + seconds
    # redirects from a public address go to public addresses only (as a stranger's names do: pdi._public_connect);
    # a URL the operator named at a private address is theirs to name, and so is where it sends the request on
    public_only = follow_redirects and _is_public(url, deadline)
    try:
        # each answer's head within the time too: httpx bounds each read of it, not the whole (pdi._answer_head)
        # and (whole) every connection and read, a body's too, within what is left of ``seconds``: each read's own
        # timeout alone let a body sent an octet just inside it run on past the deadline by as much again
        with answer_head.client(seconds, by=deadline, timeout=timeout or seconds, follow_redirects=follow_redirects,
                                public_only=public_only, whole=True) as client:
            if public_only:
                client.event_hooks["request"].append(lambda request: _redirect_checked(request, url, what, deadline))
            with client.stream("GET", url, headers={"accept": accept, **IDENTITY}) as answer:
                return _body(answer, shown_url(url), most, what, seconds, deadline)
    except unreached() as exc:
        if str(exc) == answer_head.LATE:
            raise _late(what, shown_url(url), seconds) from exc
        raise RemoteError(f"cannot fetch {what} {shown_url(url)}: {exc}") from exc


def _is_public(url: str, deadline: float) -> bool:
    """Whether ``url``'s host is at public addresses only (:mod:`pdi._public_connect`); ``False`` for one that
    cannot be looked up (its fetch says why)."""
    from pdi._public_connect import public_addresses

    try:
        host, port = _address(url)
        public_addresses(host, port, max(0.1, deadline - time.monotonic()))
    except (OSError, ValueError):  # NotPublicError among them; ValueError: a port that is no number
        return False
    return True


def _redirect_checked(request: Any, url: str, what: str, deadline: float) -> None:
    """Refuse (:class:`~pdi.errors.RemoteError`) a request ``url`` (at a public address) was redirected to, when its
    host is not at public addresses only (the connection checks the addresses it connects to again)."""
    from pdi._public_connect import NotPublicError, public_addresses

    if str(request.url) == url:
        return
    try:
        public_addresses(request.url.host, request.url.port or (443 if request.url.scheme == "https" else 80),
                         max(0.1, deadline - time.monotonic()))
    except NotPublicError as exc:
        raise RemoteError(f"cannot fetch {what} {shown_url(url)}: it is redirected to"
                          f" {shown_url(str(request.url))[:200]}, and {exc}:"
                          " refused (a public address's redirect is followed to public addresses only)") from None
    except OSError:
        pass  # cannot be looked up: the connection says so


def _body(answer: Any, url: str, most: int, what: str, seconds: float, deadline: float) -> tuple[bytes, dict[str, str]]:
    """The body and header fields of ``answer`` (``url``: as it is shown, :func:`pdi._wording.shown_url`)."""
    if 300 <= answer.status_code < 400 and "location" in answer.headers:  # one not followed (follow_redirects)
        raise RemoteError(f"{what} {url}: HTTP {answer.status_code}, redirected to"
                          f" {clipped(shown_url(answer.headers['location']), 200)}: not followed (give the URL it is"
                          " at)")
    if answer.status_code != 200:
        raise refusal(answer.status_code, f"{what} {url}", said(answer, deadline))
    refused = coded(answer.headers.get("content-encoding"), f"{what} {url}")
    if refused is not None:
        raise refused
    body = bytearray()
    for chunk in answer.iter_raw():
        body += chunk
        if len(body) > most:
            raise LimitError(f"{what} {url} is larger than {most} octets")
        if time.monotonic() > deadline:
            raise _late(what, url, seconds)
    return bytes(body), dict(answer.headers)


def _late(what: str, url: str, seconds: float) -> LimitError:
    return LimitError(f"{what} {url} took more than {seconds:g} s, the most a fetch of it may take (its body too):"
                      " given up")


def load_keys(given: str, where: str = "--registry-key", *, seconds: float = FETCH_SECONDS,
              timeout: float | None = None) -> list[PublicKey]:
    """The Ed25519 keys of a JWK or JWK set given inline (``{…}``), in a file, or at an http(s) URL (fetched
    within ``seconds``, redirects followed: from a public address, to public ones only)."""
    if given.lstrip().startswith("{"):
        return _given_keys(given, where)
    if urlsplit(given).scheme in ("http", "https"):
        data, _ = fetch_bounded(given, MAX_JWKS, "the key set", seconds=seconds, timeout=timeout,
                                follow_redirects=True)
        return parse_jwks(data, shown_url(given))
    try:
        with open(given, "rb") as f:
            return _given_keys(f.read(MAX_JWKS + 1), given)
    except FileNotFoundError as exc:
        raise NotFoundError(f"{where} {given}: no such file (give a JWK, a file holding one, or a URL)") from exc
    except OSError as exc:
        raise StoreError(f"cannot read {where} {given}: {exc.strerror}") from exc


def _given_keys(text: str | bytes, where: str) -> list[PublicKey]:
    """:func:`parse_jwks` of a key the operator gave (inline, or a file); a :class:`ParseError` that also says what
    to give: ``pdi keys show > FILE`` writes a JWK and then two more lines, which are no JSON."""
    try:
        return parse_jwks(text, where)
    except ParseError as exc:
        raise ParseError(f"{exc.reason}: give a JWK or a JWK set, inline or in a file (pdi keys show --jwks prints"
                         " an archive's key set; its first line, without --jwks, is the JWK)", rule="jwk") from None


def _issued_at(issued: str | None) -> datetime.datetime:
    """When a signed registry was issued (:func:`pdi.federation.registry.verify_registry` checked its form); none
    said (a file's, not signed): the earliest time."""
    if issued is None:
        return datetime.datetime.min
    return datetime.datetime.fromisoformat(issued[:-1])


def _max_age(cache_control: str) -> float:
    for part in cache_control.split(","):
        name, _, value = part.strip(" \t").partition("=")
        # delta-seconds: ASCII digits (RFC 9111 §1.2.2; str.isdigit is true of "²" too, which float does not read)
        if name.lower() == "max-age" and re.fullmatch(r"[0-9]+", value.strip(" \t")):
            return min(max(float(value), MIN_RELOAD), MAX_RELOAD)
    return DEFAULT_RELOAD


def registry_source(where: str) -> str:
    """What the newest registry loaded from ``where`` (a ``--registry``) is recorded by in the catalog: a URL
    without its userinfo (the catalog holds no password; another user's or password reads the same registry),
    normalized (RFC 3986 §6.2.2, §6.2.3: :func:`pdi.uri.normalize`; ``HTTP://Reg.Example:80/r`` is
    ``http://reg.example/r``), or a file's absolute path with its symbolic links resolved
    (:func:`os.path.realpath`): a ``registry.jws`` named from another working directory after a restart is the
    same file, and two of that name in two folders are two sources."""
    if "://" in where:
        bare = public_url(where)
        try:
            return normalize(bare)
        except PDIError:  # no URL pdi.uri reads (its fetch says why): as given, without its userinfo
            return bare
    return os.path.realpath(where)


class IssuedRecord(Protocol):
    """Where the newest registry each source was issued is kept beyond one process: the archive's catalog
    (:meth:`pdi.archive.Archive.see_registry`, schema step 26)."""

    def see_registry(self, source: str, issued: str, *, ahead: float) -> RegistryIssued: ...


class RegistrySource:
    """A signed registry loaded from a file or a URL and kept current; :meth:`current` is the last that verified.

    With ``record`` (an archive; or, later, :meth:`keep_in`), the newest time a registry of this source was issued
    is kept there too, and one issued before it is refused at every load, the first too: after a restart, and by
    every worker and resolver sharing the archive. One it may not write keeps the newest in this process alone
    (:attr:`memory_only` says why)."""

    def __init__(self, where: str, keys: list[PublicKey], record: IssuedRecord | None = None) -> None:
        self.where = where
        #: ``where`` as messages and log lines name it: a URL's userinfo (a password) never in them
        self.shown = shown_url(where)
        #: ``where`` as the catalog records its newest registry (:func:`registry_source`)
        self.source = registry_source(where)
        self.keys = keys
        self.record = record
        #: Why the newest registry is kept in this process alone (the archive may only be read); ``None``: it is not.
        self.memory_only: str | None = None
        self._lock = threading.Lock()
        self._next = 0.0
        self._stamp: tuple[int, int] | None = None
        self.registry = self._load()  # the first load's refusal is the caller's error

    def keep_in(self, record: IssuedRecord | None) -> None:
        """Keep the newest registry of this source in ``record`` from the next load on (a worker's own archive,
        opened after the first load's was closed); ``None``: in this process alone."""
        self.record = record

    def _is_url(self) -> bool:
        return urlsplit(self.where).scheme in ("http", "https")

    def _load(self) -> Registry:
        if self._is_url():
            data, headers = fetch_bounded(self.where, MAX_REGISTRY, "the registry", accept="application/jose")
            self._next = time.monotonic() + _max_age(headers.get("cache-control", ""))
        else:
            try:
                stat = os.stat(self.where)
                with open(self.where, "rb") as f:
                    data = f.read(MAX_REGISTRY + 1)
            except FileNotFoundError:
                raise NotFoundError(f"the registry {self.shown}: no such file (give a file holding a signed"
                                    " registry, pdi registry show --jws, or a URL)") from None
            except OSError as exc:
                raise StoreError(f"cannot read the registry {self.shown}: {exc.strerror}") from exc
            self._stamp = (stat.st_mtime_ns, stat.st_size)
            self._next = time.monotonic() + MIN_RELOAD
        if len(data) > MAX_REGISTRY:
            raise UnsupportedError(f"the registry {self.shown} is larger than {MAX_REGISTRY} octets")
        try:
            text = data.decode("ascii").strip()
        except UnicodeDecodeError:
            raise ParseError(f"the registry {self.shown} is not a compact JWS", rule="registry") from None
        loaded = verify_registry(text, self.keys, self.shown)
        held = getattr(self, "registry", None)
        # one held from a clock far ahead (2099) holds nothing back: it would hold back every registry until then
        ahead = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(seconds=MAX_AHEAD)
        if held is not None and _issued_at(loaded.issued) < _issued_at(held.issued) <= ahead:
            # signed, and so once true: a replay of it would point a series back at a resolver it has left
            raise IntegrityError(f"the registry {self.shown} was issued {loaded.issued}, before the one held"
                                 f" ({held.issued}): an older registry is refused")
        if self.record is not None and loaded.issued is not None:
            self._see(loaded.issued)
        return loaded

    def _see(self, issued: str) -> None:
        """Record ``issued`` as this source's newest in :attr:`record`, or refuse (:class:`IntegrityError`) a registry
        issued before the newest recorded there: after a restart, or loaded by another worker or resolver."""
        assert self.record is not None
        seen = self.record.see_registry(self.source, issued, ahead=MAX_AHEAD)
        if seen.unwritable is not None and self.memory_only is None:
            self.memory_only = seen.unwritable
            # said once a process, at a reload; the first load's is said by its caller (pdi serve's first line), and
            # a worker forked after it knows it already
            if getattr(self, "registry", None) is not None:
                log.warning("pdi: the newest registry %s was issued is kept by this process alone, not in the archive:"
                            " %s", self.shown, clipped(seen.unwritable, MESSAGE_MOST))
        if seen.newer is not None:
            raise IntegrityError(
                f"the registry {self.shown} was issued {issued}, before the one issued {seen.newer} that was loaded"
                " from it before (recorded in the archive): an older registry is refused, as a replay of it would"
                " point a series back at a resolver it has left. If its issuer went back to it on purpose, stop every"
                f" pdi serve that loads it, run pdi registry forget {self.shown} (which forgets {seen.newer}) and"
                " start them again")

    def current(self) -> Registry:
        """The registry, loaded again when its time is up (a reload that fails keeps the one held, and says why)."""
        now = time.monotonic()
        if now < self._next or not self._lock.acquire(blocking=False):
            return self.registry
        try:
            if not self._is_url():
                stat = os.stat(self.where)
                if (stat.st_mtime_ns, stat.st_size) == self._stamp:
                    self._next = now + MIN_RELOAD
                    return self.registry
            self.registry = self._load()
        except (PDIError, OSError) as exc:
            self._next = now + MIN_RELOAD
            log.warning("pdi: the registry %s was not reloaded (the one held is kept): %s", self.shown,
                        clipped(str(exc), MESSAGE_MOST))
        finally:
            self._lock.release()
        return self.registry


class Authorities:
    """The resolvers of a series: from the archive's own registry, the loaded ones, then the DNS; which are up."""

    def __init__(self, own: Path | None, sources: list[RegistrySource], dns: NaptrFinder | None,
                 peers: Callable[[], Iterable[str]] | None = None,
                 strangers: Callable[[], Iterable[str]] | None = None, token: str | None = None) -> None:
        self.own = own
        self.sources = sources
        self.dns = dns
        #: The other archives this one knows from its mirrors (origins and peers, ``pdi mirror add``): part of the
        #: network a capture may be asked of, after the registries' resolvers.
        self.peers = peers
        #: Which of ``peers`` announced themselves with a token (``POST /api/mirrors``), not recorded by the
        #: operator: connected to at public addresses only (:mod:`pdi._public_connect`), whatever their names
        #: resolve to by then.
        self.strangers = strangers
        #: This resolver's :data:`RESOLVER_HEADER` (the same in all its workers: ``pdi serve`` makes it); ``None``:
        #: it knows itself by ``selves`` alone.
        self.token = token
        self._own: tuple[tuple[int, int] | None, Registry] = (None, Registry({}))
        self._up: dict[tuple[str, int, bool], tuple[float, bool]] = {}
        #: The base URLs found to be this resolver (their answer to a probe said its token), each until when.
        self._itself: dict[tuple[str, str, int, str], float] = {}
        self._probing: set[tuple[str, int, bool]] = set()  # resolvers a request is looking at again now
        self._lock = threading.Lock()

    def registries(self) -> list[Registry]:
        """The archive's own registry (re-read when its file changed) and each loaded one, in that order."""
        found = []
        if self.own is not None:
            try:
                stat = self.own.stat()
                stamp: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                stamp = None
            if stamp != self._own[0]:
                try:
                    self._own = (stamp, read_registry_file(self.own) if stamp else Registry({}))
                except PDIError as exc:
                    log.warning("pdi: the registry %s cannot be read: %s", self.own,
                                clipped(str(exc), MESSAGE_MOST))
                    self._own = (stamp, Registry({}))
            found.append(self._own[1])
        found.extend(source.current() for source in self.sources)
        return found

    def candidates(self, series: str, urn: str, service: str = "N2R", selves: Sequence[str] = ()) -> list[Candidate]:
        """Every resolver known for ``series``, registries first (authority, then mirrors), then the DNS's; never
        one of ``selves`` (the base URLs this resolver is reached at: sent there, a name it does not hold would
        come back to it, again and again). The DNS failing when no registry names one is the DNS's
        :class:`~pdi.errors.RemoteError`, never "none known"."""
        # one resolver however its base is spelt (HTTP://H/, http://h:80/, http://h/): listed once, the first spelling
        seen: dict[tuple[str, str, int, str], Candidate] = {}
        for registry in self.registries():
            for base in registry.resolvers(series):
                seen.setdefault(_resolver_key(base), Candidate(base, "registry"))
        if self.dns is not None:
            try:
                named = self.dns.services(series, urn)
            except RemoteError as exc:  # the DNS could not say: the registries' resolvers, or that failure
                if not [c for c in seen.values() if not self.is_self(c.base, selves)]:
                    raise
                log.warning("pdi: %s", clipped(str(exc), MESSAGE_MOST))
                named = []
            for found in named:
                if found.offers(service):
                    seen.setdefault(_resolver_key(found.base), Candidate(found.base, "dns"))
        return [c for c in seen.values() if not self.is_self(c.base, selves)]

    def is_self(self, base: str, selves: Sequence[str] = ()) -> bool:
        """Whether ``base`` is this resolver: one of ``selves`` (however spelt), or found so by a probe
        (:meth:`note_answer`) not long ago."""
        if any(same_resolver(base, own) for own in selves):
            return True
        if not self._itself:
            return False
        key = _resolver_key(base)
        with self._lock:
            until = self._itself.get(key)
        return until is not None and until > time.monotonic()

    def note_answer(self, base: str, headers: Any) -> bool:
        """Learn from the header fields ``headers`` of ``base``'s answer to a probe whether it is this resolver
        (its :data:`RESOLVER_HEADER` is :attr:`token`), kept :data:`UP_SECONDS`; whether it is."""
        itself = self.token is not None and headers.get(RESOLVER_HEADER) == self.token
        key = _resolver_key(base)
        with self._lock:
            if itself:
                if len(self._itself) > 4096:
                    self._itself.clear()
                self._itself[key] = time.monotonic() + UP_SECONDS
            else:
                self._itself.pop(key, None)
        return itself

    def every_resolver(self) -> list[tuple[str, bool]]:
        """Every resolver any registry names, for any series, then every archive the mirrors name (the network a
        capture may be asked of), each once however its base URL is spelt (:func:`same_resolver`; as first
        spelt), with whether it is a stranger's: a peer that announced itself (:attr:`strangers`) and that neither a
        registry nor the operator named (in any spelling)."""
        # one resolver however its base is spelt (HTTP://H/, http://h:80/, http://h/): asked once, by the first
        # spelling, and a stranger's only when every spelling of it is
        seen: dict[tuple[str, str, int, str], tuple[str, bool]] = {}
        for registry in self.registries():
            for bases in registry.series.values():
                for base in bases:
                    seen.setdefault(_resolver_key(base), (base, False))
        if self.peers is not None:
            strangers = set()
            for url in self.strangers() if self.strangers is not None else ():
                with contextlib.suppress(PDIError):
                    strangers.add(base_url(url, "a mirror's base URL"))
            for url in self.peers():
                try:
                    base = base_url(url, "a mirror's base URL")
                except PDIError as exc:  # recorded by an older pdi, or by hand: skipped, said
                    log.warning("pdi: a mirror's base URL is not asked for captures: %s", exc)
                    continue
                key = _resolver_key(base)
                first, stranger = seen.get(key, (base, True))
                seen[key] = (first, stranger and base in strangers)
        return list(seen.values())

    def is_up(self, base: str, *, public_only: bool = False) -> bool:
        """Whether ``base`` answers ``HEAD`` with a status other than ``5xx`` within :data:`PROBE_SECONDS` (kept a
        while); with ``public_only`` (a stranger's host name), connected to at a public address it resolves to
        only: a name that leads elsewhere is taken to be down (and logged). While another request looks at it
        again, what was found before."""
        key = (*_probed(base), public_only)
        now = time.monotonic()
        with self._lock:
            kept = self._up.get(key)
            if kept is not None and (kept[0] > now or key in self._probing):
                return kept[1]
            self._probing.add(key)
        try:
            up = self._probe(base, public_only)
        finally:
            with self._lock:
                self._probing.discard(key)
        with self._lock:
            if len(self._up) > 4096:
                self._up.clear()
            self._up[key] = (time.monotonic() + (UP_SECONDS if up else DOWN_SECONDS), up)
        return up

    def _probe(self, base: str, public_only: bool) -> bool:
        """Whether ``base`` answers ``HEAD`` with a status other than ``5xx`` within :data:`PROBE_SECONDS` (and, from
        its answer, whether it is this resolver: :meth:`note_answer`)."""
        from pdi import _answer_head as answer_head  # here: httpx is slow to import

        # the host name's lookup, the connection and the status line within the probe's time: a zone that never
        # answers, a host that takes the connection and never says a word, are down
        deadline = time.monotonic() + PROBE_SECONDS
        try:
            with answer_head.client(PROBE_SECONDS, by=deadline, timeout=PROBE_SECONDS, follow_redirects=False,
                                    public_only=public_only) as client, \
                    client.stream("HEAD", base, headers={PROBE_HEADER: "1", **IDENTITY}) as answer:
                self.note_answer(base, answer.headers)
                return answer.status_code < 500  # only the head is read
        except unreached():
            return False

    def first_up(self, candidates: list[Candidate],
                 accept: Callable[[Candidate, bool], bool] | None = None) -> Candidate | None:
        """The first of ``candidates`` that is up (and that ``accept``, given it and whether it is connected to at
        public addresses only, takes: :mod:`pdi.federation.routes`); at most :data:`MAX_PROBES` of them probed now
        (the others, unknown, are taken to be down), so that one request waits :data:`PROBE_SECONDS` that many
        times at most."""
        probes = 0
        for candidate in candidates:
            public_only = self.public_only(candidate)
            known = self._known(candidate.base, public_only)
            if known is None:
                if probes >= MAX_PROBES:
                    continue
                probes += 1
                known = self.is_up(candidate.base, public_only=public_only)
            if self.is_self(candidate.base):  # its answer to the probe was this resolver's own
                continue
            if known and (accept is None or accept(candidate, public_only)):
                return candidate
        return None

    def public_only(self, candidate: Candidate) -> bool:
        """Whether ``candidate`` is connected to at public addresses only: a stranger's zone may name a host of this
        network, never probed there, never sent to."""
        return candidate.source == "dns" and self.dns is not None and not self.dns.private

    def _known(self, base: str, public_only: bool) -> bool | None:
        """What was last found of ``base``, while it is kept; ``None``: not known."""
        key = (*_probed(base), public_only)
        with self._lock:
            kept = self._up.get(key)
        return kept[1] if kept is not None and kept[0] > time.monotonic() else None


def same_resolver(one: str, other: str) -> bool:
    """Whether two base URLs name the same resolver: the same scheme, host, port (a default one said or not) and
    path, whatever the case of the scheme and host, the escapes of the path (``%70di`` is ``pdi``), its dot
    segments and a last ``/`` (RFC 3986 §6.2.2, §6.2.3: :func:`pdi.uri.normalize`), and however the host is spelt:
    an IPv4 address as a browser reads it (``127.1``, ``0x7f.0.0.1``, ``2130706433`` and ``127.0.0.1.`` are
    ``127.0.0.1``: the WHATWG URL Standard's IPv4 parser, :func:`pdi._addresses.browser_ipv4`), an IPv6 one in
    its shortest form, a domain with or without its last ``.`` (``example.org.`` is ``example.org``: one DNS name,
    RFC 1034 §3.1)."""
    return _resolver_key(one) == _resolver_key(other)


@functools.lru_cache(maxsize=4096)
def _resolver_key(base: str) -> tuple[str, str, int, str]:
    """What names one resolver of ``base``: its scheme, host, port and path, normalized (:func:`same_resolver`)."""
    try:
        normal = normalize(base)
        host, port = _address(normal)  # urlsplit lower-cases the scheme and the host
    except (PDIError, ValueError):  # no URL, not a port: no resolver's, and so no other's
        return (base, "", -1, "")
    parts = urlsplit(normal)
    return parts.scheme, _host_key(host), port, parts.path.rstrip("/")


def _host_key(host: str) -> str:
    """One spelling of the host ``host`` (lower-cased, escapes of unreserved characters decoded: RFC 3986 §6.2.2)
    names: an IPv4 address as a browser reads it, dotted decimal (the WHATWG URL Standard's IPv4 parser, which the
    reader's browser follows when sent there, and which reads every form ``inet_aton``, and so this machine's
    connection, reads alike); an IPv6 address in its shortest form (RFC 5952, as the WHATWG serializer writes it);
    a domain without one last ``.`` (an absolute name, RFC 1034 §3.1: the same DNS name, so the same resolver,
    although a browser keeps ``example.org.`` a site of its own). A host that ends in a number and is no address
    (``1.2.3.256``: a browser refuses the URL, and no connection reaches it) is left as it is."""
    if ":" in host:  # an IPv6 literal: urlsplit's hostname is without its brackets
        try:
            return ipaddress.IPv6Address(host).compressed
        except ValueError:
            return host
    try:
        ipv4 = browser_ipv4(host)
    except ParseError:
        return host
    if ipv4 is not None:
        return str(ipv4)
    return host[:-1] if host.endswith(".") else host


def _probed(base: str) -> tuple[str, int]:
    """The host and port of ``base`` whose probe's result is kept: one host however spelt (:func:`_host_key`), probed
    once."""
    host, port = _address(base)
    return _host_key(host), port


def _address(base: str) -> tuple[str, int]:
    parts = urlsplit(base)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
