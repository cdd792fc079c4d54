"""The URI value: strict parsing (RFC 3986 Appendix A), lenient splitting (Appendix B), §5.3."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pdi._wording import clipped
from pdi.errors import ParseError
from pdi.uri._resolve import not_text, split5

# RFC 3986 Appendix B, the regular expression that splits any string.
_SPLIT = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)

# Appendix A character classes (ASCII only; ABNF quoted strings are case-insensitive).
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_USERINFO = re.compile(rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*")
_REG_NAME = re.compile(rf"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*")
_PORT = re.compile(r"[0-9]*")
_PATH = re.compile(rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@/]|{_PCT})*")
_QUERY = re.compile(rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@/?]|{_PCT})*")
_IPV_FUTURE_TAIL = re.compile(rf"[{_UNRESERVED}{_SUB_DELIMS}:]*")
_HEXDIGITS = frozenset("0123456789ABCDEFabcdef")
_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"{_DEC_OCTET}\.{_DEC_OCTET}\.{_DEC_OCTET}\.{_DEC_OCTET}")
_DEC_OCTET_RE = re.compile(_DEC_OCTET)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_FAST = re.compile(
    r"(?:([A-Za-z][A-Za-z0-9+\-.]*):)?"
    rf"(?://(?:([{_UNRESERVED}{_SUB_DELIMS}:%]*)@)?([{_UNRESERVED}{_SUB_DELIMS}%]*)(?::([0-9]*))?"
    rf"(/[{_UNRESERVED}{_SUB_DELIMS}:@/%]*)?"
    rf"|(?!//)([{_UNRESERVED}{_SUB_DELIMS}:@/%]*))"
    rf"(?:\?([{_UNRESERVED}{_SUB_DELIMS}:@/?%]*))?"
    rf"(?:#([{_UNRESERVED}{_SUB_DELIMS}:@/?%]*))?"
)


@dataclass(frozen=True, slots=True)
class URI:
    """A URI reference split into its RFC 3986 components.

    ``None`` means the component is absent (its delimiter does not appear),
    ``""`` that it is present but empty (§5.2: the distinction matters).
    ``host`` is written as in the input, brackets included for an IP
    literal (``[::1]``); ``port`` is the digits as written. ``path`` is
    always present, possibly empty. ``str(uri)`` recomposes the reference
    (§5.3), so ``str(parse(text)) == text``.
    """

    scheme: str | None = None
    userinfo: str | None = None
    host: str | None = None
    port: str | None = None
    path: str = ""
    query: str | None = None
    fragment: str | None = None

    @staticmethod
    def parse(text: str) -> URI:
        """Strict RFC 3986 ``URI-reference`` (see :func:`parse`)."""
        return parse(text)

    @staticmethod
    def split(text: str) -> URI:
        """Lenient Appendix B split (see :func:`split`)."""
        return split(text)

    @property
    def authority(self) -> str | None:
        """``[ userinfo "@" ] host [ ":" port ]``, or ``None`` when there is no authority."""
        if self.host is None:
            return None
        auth = self.host
        if self.userinfo is not None:
            auth = self.userinfo + "@" + auth
        if self.port is not None:
            auth = auth + ":" + self.port
        return auth

    @property
    def is_absolute(self) -> bool:
        """An ``absolute-URI`` (§4.3): a scheme and no fragment."""
        return self.scheme is not None and self.fragment is None

    @property
    def is_relative(self) -> bool:
        """A ``relative-ref`` (§4.2): no scheme."""
        return self.scheme is None

    @property
    def host_type(self) -> str | None:
        """``"ipv6"``, ``"ipvfuture"``, ``"ipv4"``, ``"reg-name"`` (§3.2.2), or ``None`` without authority."""
        host = self.host
        if host is None:
            return None
        if host.startswith("["):
            return "ipvfuture" if host[1:2] in ("v", "V") else "ipv6"
        if _IPV4.fullmatch(host):
            return "ipv4"
        return "reg-name"

    def without_fragment(self) -> URI:
        """The same reference with no fragment."""
        return URI(self.scheme, self.userinfo, self.host, self.port, self.path, self.query, None)

    def __str__(self) -> str:
        """§5.3 component recomposition."""
        out = []
        if self.scheme is not None:
            out.append(self.scheme)
            out.append(":")
        authority = self.authority
        if authority is not None:
            out.append("//")
            out.append(authority)
        out.append(self.path)
        if self.query is not None:
            out.append("?")
            out.append(self.query)
        if self.fragment is not None:
            out.append("#")
            out.append(self.fragment)
        return "".join(out)


def split(text: str) -> URI:
    """Split any string into components with the RFC 3986 Appendix B expression.

    Never fails on text: meant for messy real-world input. The authority is split
    at its last ``@`` and, after the host (an IP literal in brackets, or up
    to the last ``:``), at ``:`` for the port. ``str(split(text)) == text``.
    """
    if not isinstance(text, str):
        raise not_text(text)
    scheme, authority, path, query, fragment = split5(text)
    userinfo = host = port = None
    if authority is not None:
        at = authority.rfind("@")
        if at >= 0:
            userinfo = authority[:at]
            hostport = authority[at + 1 :]
        else:
            hostport = authority
        if hostport.startswith("["):
            close = hostport.find("]")
            if close >= 0 and hostport[close + 1 : close + 2] == ":":
                host, port = hostport[: close + 1], hostport[close + 2 :]
            else:
                host = hostport
        else:
            colon = hostport.rfind(":")
            if colon >= 0:
                host, port = hostport[:colon], hostport[colon + 1 :]
            else:
                host = hostport
    return URI(scheme, userinfo, host, port, path, query, fragment)


def _fail(text: str, offset: int, rule: str, what: str | None = None) -> ParseError:
    if what is None:
        if offset >= len(text):
            what = f"unexpected end of input in {rule}"
        elif text[offset] == "%":
            what = "'%' is not followed by two hexadecimal digits"
        else:
            what = f"character {text[offset]!r} is not allowed in {rule}"
    return ParseError(what, text=text, offset=offset, rule=rule)


def _check(pattern: re.Pattern[str], text: str, start: int, end: int, rule: str) -> None:
    m = pattern.match(text, start, end)
    stop = m.end() if m is not None else start
    if stop != end:
        raise _fail(text, stop, rule)


def _check_ipv6(text: str, start: int, end: int) -> None:
    """RFC 3986 §3.2.2 ``IPv6address`` in ``text[start:end]``, read left to right: an error's offset is that of the
    first character no ``IPv6address`` holds after what comes before it (as every other error of :func:`parse`),
    the end of the address when it stops short.

    The address is 16-bit groups (``h16``, 1 to 4 hexadecimal digits) between single colons, one ``::`` at most
    standing for one or more groups of zeros, and eight groups in all; an IPv4 address may stand for the last two.
    """
    pos = start
    units = 0  # 16-bit groups written so far
    double = False  # "::" seen

    def piece_at(at: int) -> str:
        stop = text.find(":", at, end)
        return clipped(text[at : end if stop < 0 else stop])

    if start == end:
        raise _fail(text, end, "h16", "expected 1 to 4 hexadecimal digits: an IPv6 address is not empty")
    if text.startswith(":", pos, end):
        if not text.startswith("::", pos, end):
            raise _fail(text, pos + 1, "h16", "an IPv6 address begins with a 16-bit group or '::', not a single ':'")
        double = True
        pos += 2
    while pos < end:
        run_end = pos
        while run_end < end and text[run_end] in _HEXDIGITS:
            run_end += 1
        if run_end < end and text[run_end] == ".":  # an IPv4 address, the last 32 bits
            if run_end - pos > 4:
                raise _fail(text, pos + 4, "IPv4address", f"'{piece_at(pos)}' is not a dotted-decimal IPv4 address")
            if not (units <= 5 if double else units == 6):
                raise _fail(text, run_end, "IPv6address", "an IPv4 address may stand only for the last 32 bits of "
                            "an IPv6 address (after six 16-bit groups, or fewer and '::')")
            if not _DEC_OCTET_RE.fullmatch(text, pos, run_end):  # "01", "256", "1a": a group, not an octet
                raise _fail(text, run_end, "IPv4address", f"'{piece_at(pos)}' is not a dotted-decimal IPv4 address")
            _check_ipv4_in_ipv6(text, pos, end)
            return
        if run_end == pos:
            if pos < end and text[pos] == ":" and double and text[pos - 1] == ":":
                raise _fail(text, pos, "IPv6address", "':::' is no part of an IPv6 address")
            if pos < end and text[pos] != ":":
                raise _fail(text, pos, "h16", f"'{piece_at(pos)}' is not 1 to 4 hexadecimal digits")
            raise _fail(text, pos, "h16", "expected 1 to 4 hexadecimal digits")
        if run_end - pos > 4:
            raise _fail(text, pos + 4, "h16", f"'{piece_at(pos)}' is not 1 to 4 hexadecimal digits")
        if run_end < end and text[run_end] != ":":
            raise _fail(text, run_end, "h16", f"'{piece_at(pos)}' is not 1 to 4 hexadecimal digits")
        if double and units == 7:  # "1:2:3:4:5:6:7::" is whole: "::" stands for at least one group
            raise _fail(text, pos, "IPv6address", "'::' must stand for at least one 16-bit group")
        units += 1
        pos = run_end
        if pos == end:
            break
        if units == 8 or (double and units == 7):
            raise _fail(text, pos, "IPv6address", "an IPv6 address has at most 128 bits")
        if text.startswith("::", pos, end):
            if double:
                raise _fail(text, pos + 1, "IPv6address", "'::' may appear only once in an IPv6 address")
            double = True
            pos += 2
        else:
            pos += 1
            if pos == end:
                raise _fail(text, pos, "h16", "expected 1 to 4 hexadecimal digits after ':'")
    if not double and units != 8:
        raise _fail(text, end, "IPv6address", "an IPv6 address without '::' needs eight 16-bit groups")


def _check_ipv4_in_ipv6(text: str, start: int, end: int) -> None:
    """``IPv4address`` in ``text[start:end]``, the last 32 bits of an IPv6 address: the offset of the first
    character that breaks it (a ``dec-octet`` is 0 to 255 without a leading zero)."""
    pos = start
    for octet in range(4):
        first = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            if pos > first and (text[first] == "0" or int(text[first : pos + 1]) > 255):
                break
            pos += 1
        if octet == 3 and pos > first and pos < end and not text[pos].isdigit():
            raise _fail(text, pos, "IPv6address", "nothing may follow the IPv4 address that ends an IPv6 address")
        if pos == first or (pos < end and (octet == 3 or text[pos] != ".")):
            shown = clipped(text[start:end])
            raise _fail(text, pos, "IPv4address", f"'{shown}' is not a dotted-decimal IPv4 address")
        if octet < 3:
            if pos == end:
                raise _fail(text, pos, "IPv4address", f"'{clipped(text[start:end])}' is not a dotted-decimal "
                            "IPv4 address")
            pos += 1


def _check_ipvfuture(text: str, start: int, end: int) -> None:
    """``IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`` after its "v"."""
    pos = start
    while pos < end and text[pos] in _HEXDIGITS:
        pos += 1
    if pos == start:
        raise _fail(text, pos, "IPvFuture", "expected a hexadecimal version number after 'v'")
    if pos == end or text[pos] != ".":
        raise _fail(text, pos, "IPvFuture", "expected '.' after the version number")
    pos += 1
    if pos == end:
        raise _fail(text, pos, "IPvFuture", "expected an address after 'v<version>.'")
    _check(_IPV_FUTURE_TAIL, text, pos, end, "IPvFuture")


def _parse_authority(text: str, start: int, end: int) -> tuple[str | None, str, str | None]:
    at = text.rfind("@", start, end)
    userinfo = None
    host_start = start
    if at >= 0:
        _check(_USERINFO, text, start, at, "userinfo")
        userinfo = text[start:at]
        host_start = at + 1
    port: str | None = None
    if text.startswith("[", host_start):
        close = text.find("]", host_start, end)
        if close < 0:
            raise _fail(text, end, "IP-literal", "IP literal has no closing ']'")
        if text[host_start + 1 : host_start + 2] in ("v", "V"):
            _check_ipvfuture(text, host_start + 2, close)
        else:
            _check_ipv6(text, host_start + 1, close)
        host = text[host_start : close + 1]
        if close + 1 < end:
            if text[close + 1] != ":":
                raise _fail(text, close + 1, "authority", "after an IP literal only ':' port may follow")
            _check(_PORT, text, close + 2, end, "port")
            port = text[close + 2 : end]
    else:
        colon = text.find(":", host_start, end)
        host_end = colon if colon >= 0 else end
        _check(_REG_NAME, text, host_start, host_end, "reg-name")
        host = text[host_start:host_end]
        if colon >= 0:
            _check(_PORT, text, colon + 1, end, "port")
            port = text[colon + 1 : end]
    return userinfo, host, port


def parse(text: str) -> URI:
    """Parse an RFC 3986 ``URI-reference`` strictly (the grammar of Appendix A).

    A :class:`~pdi.errors.ParseError` names the rule and the offset of the
    first character that breaks it. Non-ASCII characters are not allowed
    (map an IRI first with :func:`iri_to_uri`).
    """
    if not isinstance(text, str):
        raise not_text(text)
    # Fast path: one expression for the grammar without IP literals, with
    # "%" checked separately; anything it does not settle goes to the
    # component-by-component parser, which also finds the error's place.
    m = _FAST.fullmatch(text)
    if m is not None and ("%" not in text or _BAD_PERCENT.search(text) is None):
        scheme, userinfo, host, port, abempty, path, query, fragment = m.groups()
        if host is not None:
            return URI(scheme, userinfo, host, port, abempty or "", query, fragment)
        if scheme is not None or ":" not in path:
            return URI(scheme, None, None, None, path, query, fragment)
        colon = path.find(":")
        slash = path.find("/")
        if 0 <= slash < colon:
            return URI(None, None, None, None, path, query, fragment)
    return _parse_slowly(text)


def _parse_slowly(text: str) -> URI:
    m = _SPLIT.fullmatch(text)
    if m is None:  # pragma: no cover - the Appendix B expression matches every string
        raise ParseError("unsplittable", text=text, offset=0, rule="URI-reference")
    scheme = m.group(1)
    if scheme is not None:
        _check(_SCHEME, text, 0, m.end(1), "scheme")
    userinfo = host = port = None
    if m.group(2) is not None:
        userinfo, host, port = _parse_authority(text, m.start(2), m.end(2))
    p_start, p_end = m.span(3)
    _check(_PATH, text, p_start, p_end, "path")
    path = m.group(3)
    if scheme is None and host is None and path and not path.startswith("/"):
        colon = path.find(":")
        slash = path.find("/")
        if colon >= 0 and (slash < 0 or colon < slash):
            raise _fail(
                text,
                p_start + colon,
                "path-noscheme",
                "':' in the first segment of a relative path (write './' before it)",
            )
    query = m.group(4)
    if query is not None:
        _check(_QUERY, text, m.start(4), m.end(4), "query")
    fragment = m.group(5)
    if fragment is not None:
        _check(_QUERY, text, m.start(5), m.end(5), "fragment")
    return URI(scheme, userinfo, host, port, path, query, fragment)
