"""An IRI's host beyond ASCII in IDNA's ASCII form (A-labels), as a browser writes it (WHATWG URL §3.5 "domain to
ASCII"): RFC 3987 §3.1's conversion of ``ireg-name`` for the schemes known to use domain names.

RFC 3987 §3.1 allows either form for a host beyond ASCII: its UTF-8 octets percent-encoded (step 2, always) or
each label's IDNA ToASCII (for "schemes known to use domain names in ireg-name"), and RFC 3986 §3.2.2 says URI
producers should give a name meant for the DNS in the IDNA encoding: ``http://b%C3%BCcher.example/`` names a host
no resolver knows, ``http://xn--bcher-kva.example/`` the one a browser asks for. Browsers convert with UTS #46
(nontransitional: ``ß`` stays ``ß``, so ``straße.de`` is ``xn--strae-oqa.de``, not IDNA 2003's ``strasse.de``), which
is what :func:`domain_to_ascii` does, with the checks the URL Standard asks for:

- the host's ``%HH`` escapes decoded first (UTF-8), then UTS #46's mapping (case folded, compatibility forms, the
  ideographic full stop ``。`` a ``.``, soft hyphens dropped) of :mod:`idna`, which refuses a code point UTS #46
  disallows;
- each label beyond ASCII then checked (normalized, no combining mark first, a zero-width joiner or non-joiner only
  where RFC 5892's CONTEXTJ rules allow it) and written ``xn--`` and its Punycode; a label written ``xn--`` must be
  valid Punycode of such a label;
- in a domain with a right-to-left label, every label must satisfy RFC 5893's Bidi rule;
- what is left must be a host name of RFC 3986 (``unreserved`` and ``sub-delims``: no ``<``, no space, no ``%``);
- a host whose last label is a number is an IPv4 address, read as browsers read it (``１２７.０.０.１`` is
  ``127.0.0.1``), or refused (:func:`pdi._addresses.browser_ipv4`).

Hyphens are not checked (``-ü-`` is ``xn-----xka``) and neither is the DNS's length, as in browsers, but a host of
more than :data:`MOST_CHARACTERS` characters is refused unread (where Chromium would write it). A host that
fails is a :class:`~pdi.errors.ParseError` (rule ``ireg-name``) naming what is wrong, with its offset: a browser
refuses such a URL, and no percent-encoded fallback would name a host either.
"""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from collections.abc import Callable

from pdi._addresses import browser_ipv4
from pdi._wording import clipped
from pdi.errors import ParseError

#: Schemes whose host is a domain name: the WHATWG URL Standard's special schemes, whose host a browser writes in
#: IDNA's ASCII form (any other scheme's host beyond ASCII is percent-encoded, by browsers as by RFC 3987 §3.1).
DNS_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})

#: A host beyond ASCII of more characters is refused, not read (idna reads no more: a DNS name has at most 253
#: octets, and a browser, which verifies no length, would send a longer one to no resolver).
MOST_CHARACTERS = 1024

_NOT_HOST_CHAR = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=]")
#: What UTS #46 maps to "." (full stop, ideographic, fullwidth, halfwidth ideographic).
_DOTS = re.compile("[.\u3002\uff0e\uff61]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_JOINERS = frozenset("\u200c\u200d")


def _label_starts(host: str) -> list[int]:
    return [0] + [m.end() for m in _DOTS.finditer(host)]


def domain_to_ascii(text: str, start: int, end: int) -> str:
    """The host ``text[start:end]`` (holding a character beyond ASCII) in IDNA's ASCII form, lower case; or a
    :class:`ParseError` with the offset in ``text`` of the label at fault (the host's, where it cannot be told)."""
    import idna
    import idna.core

    host = text[start:end]

    def refused(why: str, at: int | None = None, label: int | None = None) -> ParseError:
        offset = start
        if at is not None:
            offset = start + at
        elif label is not None and "%" not in host:
            starts = _label_starts(host)
            if label < len(starts):
                offset = start + starts[label]
        return ParseError(f"the host {clipped(host, 80)!r} is no domain name: {why}", text=text, offset=offset,
                          rule="ireg-name")

    decoded = host
    if "%" in host:
        lone = _BAD_PERCENT.search(host)
        if lone is not None:
            raise refused("'%' is not followed by two hexadecimal digits", lone.start())
        try:
            decoded = urllib.parse.unquote_to_bytes(host).decode("utf-8")
        except UnicodeError:  # a lone surrogate (refused before), or octets that are not UTF-8
            raise refused("its percent-encoded octets are not UTF-8") from None
    if len(decoded) > MOST_CHARACTERS:
        raise refused(f"{len(decoded):,} characters, more than the {MOST_CHARACTERS:,} read (the DNS holds 253)")
    try:
        mapped = idna.uts46_remap(decoded, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError) as exc:
        at = next((i for i, ch in enumerate(host) if not _maps(ch)), None) if decoded is host else None
        if at is None:
            raise refused(f"IDNA refuses it ({exc})") from None
        raise refused(f"it holds a character IDNA does not allow (U+{ord(host[at]):04X})", at) from None
    labels = mapped.split(".")
    unicode_labels: list[str] = []
    out: list[str] = []
    for index, label in enumerate(labels):
        if label[:4] == "xn--":
            try:
                shown = label[4:].encode("ascii").decode("punycode")
            except UnicodeError:
                raise refused(f"{label!r} is not valid Punycode", label=index) from None
            if shown.isascii() or _remapped(shown) != shown:
                raise refused(f"{label!r} is not the Punycode of an internationalized label", label=index)
            _check_label(shown, index, refused)
            unicode_labels.append(shown)
            out.append(label)
        elif not label.isascii():
            _check_label(label, index, refused)
            unicode_labels.append(label)
            out.append("xn--" + label.encode("punycode").decode("ascii"))
        else:
            unicode_labels.append(label)
            out.append(label)
    if any(unicodedata.bidirectional(ch) in ("R", "AL", "AN") for label in unicode_labels for ch in label):
        for index, label in enumerate(unicode_labels):
            if label:
                try:
                    idna.core.check_bidi(label, check_ltr=True)
                except ValueError as exc:  # idna.IDNABidiError, or a character it cannot name
                    raise refused(f"a right-to-left domain's label breaks the Bidi rule (RFC 5893): {exc}",
                                  label=index) from None
    ascii_host = ".".join(out)
    stray = _NOT_HOST_CHAR.search(ascii_host)
    if stray is not None:
        bad = stray.group()
        raise refused(f"character {bad!r} is not allowed in a host name",
                      host.find(bad) if bad in host and "%" not in host else None)
    if not ascii_host:
        raise refused("nothing is left of it once mapped")
    try:
        address = browser_ipv4(ascii_host)
    except ParseError as exc:
        raise refused(exc.reason) from None
    return ascii_host if address is None else str(address)


def _maps(ch: str) -> bool:
    import idna

    try:
        idna.uts46_remap(ch, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError):
        return False
    return True


def _remapped(label: str) -> str | None:
    import idna

    try:
        return idna.uts46_remap(label, std3_rules=False, transitional=False)
    except (idna.IDNAError, UnicodeError):
        return None


def _check_label(label: str, index: int, refused: Callable[..., ParseError]) -> None:
    """UTS #46 §4.1's validity criteria for a label beyond ASCII (CheckHyphens off, CheckJoiners on)."""
    import idna.core

    if not unicodedata.is_normalized("NFC", label):
        raise refused(f"label {label!r} is not in Unicode normalization form C", label=index)
    if unicodedata.category(label[0]).startswith("M"):
        raise refused(f"label {label!r} begins with a combining mark", label=index)
    for pos, ch in enumerate(label):
        if ch not in _JOINERS:
            continue
        try:
            allowed = idna.core.valid_contextj(label, pos)
        except ValueError:  # idna cannot name the character before it (a control): no virama, nor a joining letter
            allowed = False
        if not allowed:
            raise refused(f"U+{ord(ch):04X} (a zero-width joiner) is not allowed where it stands in {label!r}",
                          label=index)
