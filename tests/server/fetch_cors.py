"""The Fetch standard's CORS protocol as a browser applies it, written out from the standard for the tests
(https://fetch.spec.whatwg.org/, as of 2026): whether a script of another origin is given an answer, and which of
its fields it may read. Nothing of pdi's is imported: the resolver's answers are judged by these rules alone.

* §2.2.2 "CORS-safelisted method", "CORS-safelisted request-header", "CORS-unsafe request-header names",
  "CORS non-wildcard request-header name", "CORS-safelisted response-header name";
* §4.1 main fetch / §4.3 HTTP fetch: a request whose method is not safelisted or that has CORS-unsafe
  request-header names is preflighted; every answer, a redirect's too, must pass the CORS check;
* §4.8 CORS-preflight fetch: the preflight request and the checks of its answer;
* §4.9 CORS check;
* the CORS-filtered response: the fields a script is given.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: (name, value) pairs of a request or an answer, in order, names in any case.
Fields = Sequence[tuple[str, str]]
#: What a server answers ``(method, URL, request fields)``: its status, fields and body.
Ask = Callable[[str, str, Fields], "Answer"]

SAFELISTED_METHODS = ("GET", "HEAD", "POST")
_UNSAFE_BYTES = set(range(0x20)) - {0x09} | {0x22, 0x28, 0x29, 0x3A, 0x3C, 0x3E, 0x3F, 0x40, 0x5B, 0x5C, 0x5D,
                                              0x7B, 0x7D, 0x7F}
_LANGUAGE = re.compile(r"[0-9A-Za-z *,\-.;=]*")
_SIMPLE_RANGE = re.compile(r"bytes=([0-9]+)-([0-9]*)")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
SAFELISTED_RESPONSE_NAMES = ("cache-control", "content-language", "content-length", "content-type", "expires",
                             "last-modified", "pragma")
REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class Answer:
    status: int
    fields: Fields
    body: bytes = b""


def get(fields: Fields, name: str) -> str | None:
    """Fetch's "get": the values of every field named ``name`` joined with ", ", or None."""
    values = [v for k, v in fields if k.lower() == name.lower()]
    return ", ".join(values) if values else None


def _unsafe_byte_in(value: str) -> bool:
    return any(ord(c) in _UNSAFE_BYTES for c in value)


def safelisted_request_header(name: str, value: str) -> bool:
    """§2.2.2 "CORS-safelisted request-header"."""
    if len(value.encode("latin-1", "replace")) > 128:
        return False
    lowered = name.lower()
    if lowered == "accept":
        return not _unsafe_byte_in(value)
    if lowered in ("accept-language", "content-language"):
        return _LANGUAGE.fullmatch(value) is not None
    if lowered == "content-type":
        if _unsafe_byte_in(value):
            return False
        essence = value.split(";", 1)[0].strip(" \t\r\n").lower()
        return essence in ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")
    if lowered == "range":
        found = _SIMPLE_RANGE.fullmatch(value)  # a single range, whitespace not allowed, its start given
        return found is not None and (not found.group(2) or int(found.group(1)) <= int(found.group(2)))
    return False


def unsafe_request_header_names(fields: Fields) -> list[str]:
    """§2.2.2 "CORS-unsafe request-header names": sorted, lower case, each once."""
    unsafe: list[str] = []
    potentially: list[str] = []
    size = 0
    for name, value in fields:
        if not safelisted_request_header(name, value):
            unsafe.append(name)
        else:
            potentially.append(name)
            size += len(value)
    if size > 1024:
        unsafe += potentially
    return sorted({n.lower() for n in unsafe})


def _list_values(fields: Fields, name: str) -> list[str] | bool | None:
    """Fetch's "extracting header list values" of a ``#token`` field: None if absent, False on failure."""
    value = get(fields, name)
    if value is None:
        return None
    items = [item.strip(" \t") for item in value.split(",")]
    if not all(_TOKEN.fullmatch(item) for item in items):
        return False
    return items


def cors_check(origin: str, credentials: str, fields: Fields) -> bool:
    """§4.9 CORS check of an answer's ``fields`` to a request from ``origin`` in credentials mode ``credentials``."""
    allowed = get(fields, "Access-Control-Allow-Origin")
    if allowed is None:
        return False
    if credentials != "include" and allowed == "*":
        return True
    if allowed != origin:
        return False
    if credentials != "include":
        return True
    return get(fields, "Access-Control-Allow-Credentials") == "true"


def needs_preflight(method: str, fields: Fields) -> bool:
    """§4.3 HTTP fetch: a method that is not safelisted, or CORS-unsafe request-header names."""
    return method not in SAFELISTED_METHODS or bool(unsafe_request_header_names(fields))


def preflight_request(origin: str, method: str, fields: Fields) -> list[tuple[str, str]]:
    """§4.8 steps 1-5: the preflight's fields."""
    made = [("Accept", "*/*"), ("Access-Control-Request-Method", method)]
    unsafe = unsafe_request_header_names(fields)
    if unsafe:
        made.append(("Access-Control-Request-Headers", ",".join(unsafe)))
    return [("Origin", origin), *made]


def preflight_passes(origin: str, credentials: str, method: str, fields: Fields, answer: Answer) -> bool:
    """§4.8 step 7: whether the preflight's ``answer`` lets the request be sent."""
    if not (cors_check(origin, credentials, answer.fields) and 200 <= answer.status <= 299):
        return False
    methods = _list_values(answer.fields, "Access-Control-Allow-Methods")
    names = _list_values(answer.fields, "Access-Control-Allow-Headers")
    if methods is False or names is False:
        return False
    methods = methods or []
    names = [n.lower() for n in (names or [])]
    if method not in methods and method not in SAFELISTED_METHODS and (credentials == "include" or "*" not in methods):
        return False
    if any(n.lower() == "authorization" and n.lower() not in names for n, _ in fields):  # non-wildcard name
        return False
    for unsafe in unsafe_request_header_names(fields):
        if unsafe not in names and (credentials == "include" or "*" not in names):
            return False
    return True


def exposed(fields: Fields, credentials: str) -> dict[str, str]:
    """The CORS-filtered response's fields (lower-case names, values joined): what a script's ``headers.get`` reads."""
    names = _list_values(fields, "Access-Control-Expose-Headers")
    listed: set[str] = set()
    if isinstance(names, list):
        if credentials != "include" and "*" in names:
            listed = {k.lower() for k, _ in fields}
        else:
            listed = {n.lower() for n in names}
    readable = (set(SAFELISTED_RESPONSE_NAMES) | listed) - {"set-cookie", "set-cookie2"}
    return {k.lower(): get(fields, k) or "" for k, _ in fields if k.lower() in readable}


@dataclass(frozen=True)
class Fetched:
    """What a script is given: the last answer's status, its readable fields and body, and the requests sent."""

    status: int
    fields: dict[str, str]
    body: bytes
    sent: list[tuple[str, str]]


def browser_fetch(ask: Ask, origin: str, method: str, url: str, fields: Fields = (), *,
                  credentials: str = "same-origin") -> Fetched | None:
    """A script of ``origin`` calling ``fetch(url, {method, headers: fields, credentials})`` (mode ``cors``,
    redirects followed) on another origin's server: what it is given, or None for a network error (a TypeError in
    the script). No preflight cache: each request that needs one is preflighted."""
    sent: list[tuple[str, str]] = []
    if method.upper() in ("DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"):  # §2.2.1 "normalize" a method
        method = method.upper()
    for _ in range(20):  # §4.4: at most twenty redirects
        if needs_preflight(method, fields):
            sent.append(("OPTIONS", url))
            pre = ask("OPTIONS", url, preflight_request(origin, method, fields))
            if not preflight_passes(origin, credentials, method, fields, pre):
                return None
        sent.append((method, url))
        answer = ask(method, url, [("Origin", origin), *fields])
        if not cors_check(origin, credentials, answer.fields):
            return None
        location = get(answer.fields, "Location")
        if answer.status in REDIRECTS and location is not None:
            url = urllib.parse.urljoin(url, location)
            if answer.status == 303 and method not in ("GET", "HEAD"):
                method = "GET"
            continue
        return Fetched(answer.status, exposed(answer.fields, credentials), answer.body, sent)
    return None
