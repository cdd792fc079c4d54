"""The registry document: series -> resolver base URLs (the authority first, then mirrors), signed.

The payload is canonical JSON (:func:`pdi.signing.canonical_json`)::

    {"type": "pdi-registry+jws", "issued": "2026-11-25T10:00:00Z",
     "series": {"oma.eop.gov.us": ["https://a.example/", "https://mirror.example/"]}}

and travels as a compact JWS (RFC 7515 §7.1, EdDSA per RFC 8037) whose
protected header is ``{"alg":"EdDSA","kid":<RFC 7638 thumbprint>,
"typ":"pdi-registry+jws"}``: :func:`sign_registry` and
:func:`verify_registry`, reusing :mod:`pdi.signing`. A registry whose
signature does not verify with the key given is refused
(:class:`~pdi.errors.IntegrityError`), never half-read.

An archive keeps its own registry, unsigned, as ``registry.json`` in its
directory (or the file ``$PDI_REGISTRY`` / ``--registry-file`` names: a
PostgreSQL archive has no directory), edited by ``pdi registry add`` and
served signed with the archive's key at ``/.well-known/pdi-registry``.

Every base URL is ``http`` or ``https`` with a host and ends in ``/``
(:func:`base_url`): the resolver redirects only to these, so no registry
entry can turn it into an open redirect to another scheme.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pdi import untrusted_json
from pdi._ascii import ascii_lower
from pdi._wording import shown_url
from pdi.errors import NotFoundError, ParseError, PDIError, StoreError, UnsupportedError
from pdi.signing import PublicKey, SigningKey, canonical_json, sign_compact, verify_compact

__all__ = [
    "MAX_REGISTRY",
    "REGISTRY_ENV",
    "REGISTRY_FILE",
    "REGISTRY_TYPE",
    "Registry",
    "base_url",
    "read_registry_file",
    "registry_path",
    "sign_registry",
    "verify_registry",
    "write_registry_file",
]

#: The ``typ`` of a registry's JWS header and its payload's ``type``.
REGISTRY_TYPE = "pdi-registry+jws"
#: The largest registry read, in octets (a file, a URL's body or a JWS): some 10,000 series.
MAX_REGISTRY = 4 << 20
#: Resolvers one series may list (the authority and its mirrors).
MAX_RESOLVERS = 32
#: The registry's file in a directory archive.
REGISTRY_FILE = "registry.json"
#: The environment variable naming the registry's file (a PostgreSQL archive needs it).
REGISTRY_ENV = "PDI_REGISTRY"
_ISSUED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z")
_SERIES = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+")


def base_url(url: str, where: str = "a resolver's base URL") -> str:
    """``url`` as a resolver's base URL (``http``/``https``, a host, no query or fragment, ending in ``/``);
    :class:`ParseError` naming ``where`` and the URL without its userinfo (:func:`pdi._wording.shown_url`)
    otherwise."""
    text = shown_url(url)[:200]
    shown = repr(text)
    # RFC 3986 §2: a URL is printable ASCII (an IRI's host in its A-label form); these never occur in one
    if len(url) > 2000 or not (url.isascii() and url.isprintable()) or any(c in url for c in " \\\"<>"):
        raise ParseError(f"{where} is not a URL (printable ASCII, no spaces, \\, \", < or >): {shown}",
                         text=text, rule="base-url")
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # an unclosed [ of an IPv6 address
        raise ParseError(f"{where} is not a URL: {exc}: {shown}", text=text, rule="base-url") from None
    if "://" not in url:  # "example.org:8080/" splits as the scheme "example.org"
        raise ParseError(f"{where} must be an http or https URL, beginning http:// or https:// (such as"
                         f" https://pdi.example.org/), not {shown}", text=text, rule="base-url")
    if parts.scheme.lower() not in ("http", "https"):
        raise ParseError(f"{where} must be an http or https URL, not {parts.scheme}: {shown}",
                         text=text, rule="base-url")
    # "?" and "#" themselves, not only what follows them: urlsplit makes "http://h/?" and "http://h/#" a URL with an
    # empty query or fragment, and the resolver's "/" after them would put uri-res/ into it (a Location to h's "/")
    if not parts.hostname or "?" in url or "#" in url or "@" in parts.netloc:
        raise ParseError(f"{where} must be http(s)://host[:port]/path/ with no user, query or fragment: {shown}",
                         text=text, rule="base-url")
    try:
        parts.port  # noqa: B018 — a port that is not a number raises here
    except ValueError as exc:
        raise ParseError(f"{where} has a bad port: {exc}: {shown}", text=text, rule="base-url") from None
    return url if url.endswith("/") else url + "/"


def _series_name(name: str, where: str = "") -> str:
    """``name`` as a series (lower-cased); :class:`ParseError` naming ``where`` (``"reg.json: "``) and ``name``
    otherwise."""
    lowered = ascii_lower(name)  # not str.lower, which makes U+212A KELVIN SIGN a "k": no domain name has one
    if len(lowered) > 253 or not _SERIES.fullmatch(lowered):
        raise ParseError(f"{where}a series is a domain name (oma.eop.gov.us), not {name[:200]!r}", text=name[:200],
                         rule="series")
    return lowered


def _issued(value: object, where: str, *, required: bool) -> str | None:
    """A registry's ``issued``: a UTC time ``YYYY-MM-DDTHH:MM:SSZ`` (fractions of a second allowed), or absent
    unless ``required``; :class:`ParseError` naming ``where`` and the value otherwise."""
    if value is None and not required:
        return None
    if isinstance(value, str) and _ISSUED.fullmatch(value):
        try:
            datetime.datetime.fromisoformat(value[:-1])
            return value
        except ValueError:
            pass
    said = "none" if value is None else repr(value)[:200] if isinstance(value, str) else json.dumps(value)[:200]
    raise ParseError(f"{where}: \"issued\" (when the registry was last edited) must be a UTC time"
                     f" YYYY-MM-DDTHH:MM:SSZ, not {said}", rule="registry")


@dataclass(frozen=True)
class Registry:
    """Series and their resolvers' base URLs, the authority first (:func:`base_url` each)."""

    series: dict[str, tuple[str, ...]]
    issued: str | None = None

    def resolvers(self, series: str) -> tuple[str, ...]:
        return self.series.get(ascii_lower(series), ())

    def with_resolver(self, series: str, url: str, *, mirror: bool,
                      same: Callable[[str, str], bool] | None = None) -> Registry:
        """This registry with ``url`` the authority of ``series`` (first) or, ``mirror``, one of its mirrors: in
        place of the one it lists so spelt, or that ``same`` says is the same resolver spelt otherwise."""
        key, url = _series_name(series), base_url(url)
        listed = [u for u in self.series.get(key, ()) if u != url and not (same is not None and same(u, url))]
        listed = [*listed, url] if mirror else [url, *listed]
        if len(listed) > MAX_RESOLVERS:
            raise UnsupportedError(f"{key} lists {MAX_RESOLVERS} resolvers already, the most a registry keeps")
        return Registry({**self.series, key: tuple(listed)}, self.issued)

    def without(self, series: str, url: str | None = None, same: Callable[[str, str], bool] | None = None,
                ) -> Registry:
        """This registry without ``url`` for ``series`` (``None``: without the series), or each resolver it lists
        that ``same`` says is ``url`` spelt otherwise."""
        key = _series_name(series)
        gone: Callable[[str], bool] = lambda u: False  # noqa: E731
        if url is not None:
            url = base_url(url)
            gone = lambda u: u == url or (same is not None and same(u, url))  # noqa: E731
        if key not in self.series or (url is not None and not any(gone(u) for u in self.series[key])):
            raise NotFoundError(f"the registry lists no {url or 'resolver'} for {key}")
        kept = () if url is None else tuple(u for u in self.series[key] if not gone(u))
        series_map = {k: v for k, v in self.series.items() if k != key}
        if kept:
            series_map[key] = kept
        return Registry(series_map, self.issued)

    def payload(self, issued: str | None = None) -> bytes:
        """The canonical JSON payload (``issued``: when it is signed, default now)."""
        when = issued or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return canonical_json({"type": REGISTRY_TYPE, "issued": when,
                               "series": {k: list(v) for k, v in sorted(self.series.items())}})

    @classmethod
    def from_json(cls, data: bytes | str, where: str, *, signed: bool = False) -> Registry:
        """A registry payload read; :class:`ParseError` naming ``where`` and what is wrong. ``issued`` is required of
        a ``signed`` one (pdi signs none without it); in a file (``registry.json``) it may be absent."""
        if len(data) > MAX_REGISTRY:
            raise UnsupportedError(f"{where} is larger than a registry may be ({MAX_REGISTRY} octets)")
        value: Any = untrusted_json.loads(data, where, rule="registry", unique_keys=True)
        if not isinstance(value, dict) or value.get("type", REGISTRY_TYPE) != REGISTRY_TYPE:
            raise ParseError(f"{where} is not a pdi registry (type {REGISTRY_TYPE})", rule="registry")
        unknown = sorted(set(value) - {"type", "issued", "series"})
        if unknown and not signed:  # a file edited by hand: a misspelt "series" would read as none, and be written so
            raise ParseError(f"{where}: {unknown[0]!r} is no key of a registry (it has series, issued and type)",
                             rule="registry")
        listed = value.get("series", {})
        if not isinstance(listed, dict):
            raise ParseError(f"{where}: \"series\" is not an object of series -> [base URL, …]", rule="registry")
        series: dict[str, tuple[str, ...]] = {}
        for name, urls in listed.items():
            key = _series_name(str(name), f"{where}: ")
            if key in series:  # "X.Example.US" and "x.example.us": one series, two lists, and which one holds?
                raise ParseError(f"{where}: the series {key} is listed twice (as {name!r} too): a series is named"
                                 " once, in any case", rule="registry")
            if not isinstance(urls, list) or not urls or len(urls) > MAX_RESOLVERS:
                raise ParseError(f"{where}: the resolvers of {key} are not a list of 1 to {MAX_RESOLVERS} URLs",
                                 rule="registry")
            for url in urls:
                if not isinstance(url, str):
                    raise ParseError(f"{where}: a resolver of {key} is {json.dumps(url)[:200]}, not a URL (text)",
                                     rule="registry")
            series[key] = tuple(dict.fromkeys(base_url(u, f"{where}: a resolver of {key}") for u in urls))
        return cls(series, _issued(value.get("issued"), where, required=signed))


def sign_registry(key: SigningKey, registry: Registry, issued: str | None = None) -> str:
    """The registry as a compact JWS signed with ``key`` (its header names the key and the type), ``issued`` when
    given, else when it was last edited (else now)."""
    return sign_compact(key, registry.payload(issued or registry.issued),
                        {"alg": "EdDSA", "kid": key.public.thumbprint, "typ": REGISTRY_TYPE})


def verify_registry(jws: str, keys: list[PublicKey], where: str) -> Registry:
    """A registry's JWS checked against ``keys`` and read: :class:`~pdi.errors.IntegrityError` when the
    signature does not verify (another key, a changed payload), naming the registry (``where``: its file or URL),
    as every refusal does."""
    try:
        verified = verify_compact(jws, keys)
    except PDIError as exc:
        raise exc.within(f"the registry {where}: ") from None
    typ = verified.header.get("typ")
    # RFC 7515 §4.1.9: a media type, "application/" understood where no "/" is written; RFC 6838 §4.2: in any case
    if typ is not None and not (isinstance(typ, str)
                                and ascii_lower(typ).removeprefix("application/") == REGISTRY_TYPE):
        raise ParseError(f"{where} is a JWS of type {verified.header.get('typ')!r}, not {REGISTRY_TYPE}",
                         rule="registry")
    return Registry.from_json(verified.payload, where, signed=True)


def registry_path(location: str, given: str | None = None) -> Path:
    """The registry file of the archive at ``location``: ``given``, ``$PDI_REGISTRY``, else ``registry.json`` in
    a directory archive; a PostgreSQL archive without either is refused."""
    named = given or os.environ.get(REGISTRY_ENV)
    if named:
        return Path(named)
    if "://" in location:
        raise UnsupportedError(f"the archive at {location} has no directory to keep a registry in: name its"
                               f" file with --registry-file or ${REGISTRY_ENV}")
    return Path(location) / REGISTRY_FILE


def read_registry_file(path: Path) -> Registry:
    """The registry kept in ``path`` (an empty one when there is no such file)."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_REGISTRY + 1)
    except FileNotFoundError:
        return Registry({})
    except OSError as exc:
        raise StoreError(f"cannot read the registry {path}: {exc.strerror}") from exc
    return Registry.from_json(data, str(path))


def write_registry_file(path: Path, registry: Registry) -> None:
    """Write ``registry`` to ``path`` whole or not at all (a temporary file renamed over it): of the mode of the
    file it replaces, or a new one of the rule of the folder it is in (an archive's: its owner's alone, or
    readable by its group, :func:`pdi.archive.modes.modes_in`), whatever the umask."""
    from pdi.archive.blobs.files import write_new
    from pdi.archive.modes import modes_in

    temporary = path.with_name(path.name + ".new")
    try:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = modes_in(path.parent).file
        temporary.unlink(missing_ok=True)
        write_new(temporary, json.dumps(json.loads(registry.payload()), indent=2).encode() + b"\n", mode)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise StoreError(f"cannot write the registry {path}: {exc.strerror}") from exc
