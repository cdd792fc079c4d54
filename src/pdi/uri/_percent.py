"""Percent-encoding (RFC 3986 §2.1, §2.4) and IRI to URI mapping (RFC 3987 §3.1)."""

from __future__ import annotations

import re
from urllib.parse import quote

from pdi import charsets
from pdi.errors import ParseError, UnsupportedError
from pdi.uri._resolve import not_text

UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
"""RFC 3986 §2.3 ``unreserved``."""

_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_PCT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _check_percent(text: str) -> None:
    """Every ``%`` must start a ``pct-encoded`` triple (§2.1)."""
    bad = _BAD_PERCENT.search(text)
    if bad is not None:
        raise ParseError(
            "'%' is not followed by two hexadecimal digits",
            text=text,
            offset=bad.start(),
            rule="pct-encoded",
        )


def percent_encode(text: str, safe: str = "") -> str:
    """Percent-encode ``text`` as UTF-8 (RFC 3986 §2.1, §2.5).

    Unreserved characters (§2.3) and the characters of ``safe`` are kept;
    every other character becomes ``%HH`` triples of its UTF-8 octets, with
    upper-case hexadecimal digits (§2.1). ``%`` itself is encoded unless it
    is in ``safe``. A lone surrogate cannot be encoded: :class:`ParseError`.
    """
    if not isinstance(text, str) or not isinstance(safe, str):
        raise not_text(text, safe)
    try:
        if safe.isascii():
            return quote(text, safe=safe, encoding="utf-8", errors="strict")
        keep = set(safe)
        return "".join(ch if ch in keep else quote(ch, safe="", errors="strict") for ch in text)
    except UnicodeEncodeError as exc:
        offset = exc.start if safe.isascii() else text.index(exc.object)
        raise ParseError(
            "a lone surrogate has no UTF-8 encoding", text=text, offset=offset, rule="pct-encoded"
        ) from None


def percent_decode_bytes(text: str) -> bytes:
    """The octets ``text`` stands for: ``%HH`` triples decoded, other characters as UTF-8.

    A ``%`` not followed by two hexadecimal digits is a :class:`ParseError`.
    """
    if not isinstance(text, str):
        raise not_text(text)
    _check_percent(text)
    parts: list[bytes] = []
    pos = 0
    try:
        for m in _PCT_RUN.finditer(text):
            parts.append(text[pos : m.start()].encode("utf-8"))
            parts.append(bytes.fromhex(m.group().replace("%", "")))
            pos = m.end()
        parts.append(text[pos:].encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ParseError(
            "a lone surrogate has no UTF-8 encoding",
            text=text,
            offset=pos + exc.start,
            rule="pct-encoded",
        ) from None
    return b"".join(parts)


def percent_decode(text: str, *, encoding: str = "utf-8", errors: str = "strict") -> str:
    """Decode ``%HH`` triples; each run of triples is decoded with ``encoding``.

    Characters that are not percent-encoded are kept as they are. A ``%``
    not followed by two hexadecimal digits, or octets that are not valid in
    ``encoding`` (with ``errors="strict"``), raise :class:`ParseError` with
    the offset of the first bad triple; an encoding that is not a charset
    (:func:`pdi.charsets.codec_for`) or an unknown error handler
    raises :class:`UnsupportedError`.
    """
    if not isinstance(text, str):
        raise not_text(text)
    if "%" not in text:
        return text
    _check_percent(text)
    # a charset (IANA name or text codec), never idna or zlib; the default needs no look-up
    codec = encoding if encoding == "utf-8" else charsets.codec_for(encoding)
    parts: list[str] = []
    pos = 0
    for m in _PCT_RUN.finditer(text):
        parts.append(text[pos : m.start()])
        raw = bytes.fromhex(m.group().replace("%", ""))
        try:
            parts.append(raw.decode(codec, errors))
        except UnicodeError as exc:
            where = getattr(exc, "start", 0)
            raise ParseError(
                f"percent-encoded octets are not valid {encoding}",
                text=text,
                offset=m.start() + 3 * (where if isinstance(where, int) else 0),
                rule="pct-encoded",
            ) from None
        except LookupError as exc:
            raise UnsupportedError(f"cannot decode with {encoding!r}/{errors!r}: {exc}") from None
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts)


def _iri_char_allowed(o: int) -> bool:
    """RFC 3987 §2.2 ``ucschar`` or ``iprivate``."""
    if o < 0xA0:
        return False
    if o <= 0xD7FF:
        return True
    if o < 0xE000:  # surrogates
        return False
    if o <= 0xFDCF:  # iprivate E000-F8FF, then ucschar F900-FDCF
        return True
    if o < 0xFDF0:
        return False
    if o <= 0xFFEF:
        return True
    if o <= 0xFFFF:
        return False
    if (o & 0xFFFF) >= 0xFFFE:
        return False
    return not 0xE0000 <= o <= 0xE0FFF


#: RFC 3987 §4.1's bidirectional formatting characters, which no IRI holds: LRM, RLM, LRE, RLE, PDF, LRO, RLO.
BIDI_FORMATTING = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e")


def _is_private(code: int) -> bool:
    """RFC 3987 ``iprivate``: U+E000–F8FF, U+F0000–FFFFD, U+100000–10FFFD."""
    return 0xE000 <= code <= 0xF8FF or 0xF0000 <= code <= 0xFFFFD or 0x100000 <= code <= 0x10FFFD


def iri_to_uri(text: str) -> str:
    """Map an IRI to a URI (RFC 3987 §3.1).

    Every ``ucschar`` and ``iprivate`` character becomes the ``%HH`` triples
    of its UTF-8 octets (step 2); every ASCII character is kept as it is (so an
    already valid URI is returned unchanged). The host of a scheme known to use
    domain names (:data:`pdi.uri._host.DNS_SCHEMES`: ``http``, ``https``,
    ``ws``, ``wss``, ``ftp``, ``file``), when it holds a character beyond
    ASCII, is written in IDNA's ASCII form instead, as a browser writes it
    (``http://Bücher.example/`` is ``http://xn--bcher-kva.example/``; see
    :mod:`pdi.uri._host`), and a host that is no domain name is a
    :class:`ParseError` (rule ``ireg-name``). A non-ASCII character that is
    neither (C1 controls, surrogates, non-characters, U+E0000–E0FFF) is not
    allowed in an IRI: :class:`ParseError` with its offset. So is a
    private-use character (``iprivate``) outside the query, the only place
    RFC 3987 §2.2 admits one, and a bidirectional formatting character
    (:data:`BIDI_FORMATTING`: "IRIs MUST NOT contain" them, §4.1), which would
    show the IRI in another order than its characters'.
    """
    out: list[str] = []
    at = 0
    for start, end, replacement in iri_changes(text):
        out.append(text[at:start])
        out.append(replacement)
        at = end
    out.append(text[at:])
    return "".join(out)


def iri_changes(text: str) -> list[tuple[int, int, str]]:
    """What :func:`iri_to_uri` changes in ``text``: ``(start, end, replacement)`` for each span it replaces, in
    order (a run of characters beyond ASCII and its escapes, or a host and its ASCII form): so that an offset in
    the URI can be said of the IRI as written."""
    if not isinstance(text, str):
        raise not_text(text)
    if text.isascii():
        return []
    # the query, as Appendix B splits: from the first "?" before any "#" to that "#"
    hash_at = text.find("#")
    end = hash_at if hash_at >= 0 else len(text)
    query_at = text.find("?", 0, end)
    runs = list(_NON_ASCII_RUN.finditer(text))
    for m in runs:
        for at in range(m.start(), m.end()):
            _check_iri_char(text, at, query_at, end)
    changes: list[tuple[int, int, str]] = []
    host_start, host_end = _dns_host(text)
    if host_start < host_end and not text[host_start:host_end].isascii():
        from pdi.uri._host import domain_to_ascii

        changes.append((host_start, host_end, domain_to_ascii(text, host_start, host_end)))
    for m in runs:
        if not host_start <= m.start() < host_end:
            changes.append((m.start(), m.end(), "".join(f"%{b:02X}" for b in m.group().encode("utf-8"))))
    changes.sort()
    return changes


def _check_iri_char(text: str, at: int, query_at: int, end: int) -> None:
    """Refuse ``text[at]`` (beyond ASCII) where no IRI holds it."""
    ch = text[at]
    if not _iri_char_allowed(ord(ch)):
        raise ParseError(f"character U+{ord(ch):04X} is not allowed in an IRI", text=text, offset=at, rule="ucschar")
    if ch in BIDI_FORMATTING:
        raise ParseError(
            f"bidirectional formatting character U+{ord(ch):04X} is not allowed in an IRI (RFC 3987 §4.1)",
            text=text,
            offset=at,
            rule="ucschar",
        )
    if _is_private(ord(ch)) and not (0 <= query_at < at < end):
        raise ParseError(
            f"private-use character U+{ord(ch):04X} is allowed only in the query of an IRI",
            text=text,
            offset=at,
            rule="iprivate",
        )


def _dns_host(text: str) -> tuple[int, int]:
    """Where the host of ``text`` is when its scheme is one of :data:`~pdi.uri._host.DNS_SCHEMES` and it is a
    registered name (no IP literal): ``(start, end)``, or ``(0, 0)``. Appendix B's split: the authority after
    ``scheme://`` up to the next ``/``, ``?`` or ``#``; the host after its last ``@``, up to a ``:``."""
    from pdi.uri._host import DNS_SCHEMES

    colon = text.find(":")
    if colon <= 0 or text[:colon].lower() not in DNS_SCHEMES or not text.startswith("//", colon + 1):
        return 0, 0
    start = colon + 3
    stop = len(text)
    for delimiter in "/?#":
        found = text.find(delimiter, start, stop)
        if found >= 0:
            stop = found
    start = text.rfind("@", start, stop) + 1 or start
    if text.startswith("[", start):
        return 0, 0
    port = text.find(":", start, stop)
    return start, (port if port >= 0 else stop)


#: ASCII characters RFC 3986 admits nowhere in a URI (§2: not reserved, not unreserved; a space, the controls,
#: ``" < > \\ ^ ` { | }``): written ``%HH`` (§2.1), as a browser sends them.
NEVER_IN_A_URI = frozenset(chr(c) for c in range(0x21)) | frozenset('"<>\\^`{|}\x7f')


def url_meant(url: str) -> str:
    """``url`` (a web URL as a person types it) as a URI writes it and a browser sends it (RFC 3986 §2.1): each
    character beyond ASCII as the ``%HH`` of its UTF-8 octets and a host beyond ASCII in IDNA's ASCII form (RFC 3987
    §3.1, :func:`iri_to_uri`), each ASCII character no URI holds (:data:`NEVER_IN_A_URI`) and each ``%`` that begins
    no triple ``%HH`` escaped; ``url`` itself when it is written so already. A :class:`~pdi.errors.ParseError` for a
    character no IRI holds either (a bidirectional control, a private-use one outside the query)."""
    mended = _BAD_PERCENT.sub("%25", url)  # a "%" that begins no triple: itself written %25
    mended = "".join(f"%{ord(c):02X}" if c in NEVER_IN_A_URI else c for c in mended)
    return iri_to_uri(mended)


def unescaped_at(url: str) -> int | None:
    """Where the first character of ``url`` is that :func:`url_meant` writes escaped (one beyond ASCII, one of
    :data:`NEVER_IN_A_URI`, or a ``%`` that begins no triple ``%HH``); ``None`` when there is none."""
    for at, char in enumerate(url):
        if not char.isascii() or char in NEVER_IN_A_URI or (char == "%" and _BAD_PERCENT.match(url, at)):
            return at
    return None
