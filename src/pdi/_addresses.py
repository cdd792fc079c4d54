"""Which addresses are public, for whatever pdi connects to on a stranger's word (a capture, a peer, a resolver): the
public ones (pure: no I/O).

An address is public when the IANA special-purpose registries do not set it
aside (RFC 6890 and the RFCs that update it):

- IPv4: everything outside the blocks of :data:`_IPV4_NOT_PUBLIC` (this
  network, RFC 1918 private, shared, loopback, link-local, IETF protocol
  assignments, documentation, the deprecated 6to4 relay anycast, benchmarking,
  multicast, reserved and broadcast).
- IPv6 that carries an IPv4 address: the verdict is that of the IPv4 address it
  carries, so no spelling of ``127.0.0.1`` gets through: IPv4-mapped
  ``::ffff:0:0/96``, IPv4-compatible ``::/96`` (RFC 4291 §2.5.5, deprecated),
  IPv4-translated ``::ffff:0:0:0/96`` (RFC 2765), the NAT64 well-known prefix
  ``64:ff9b::/96`` (RFC 6052), 6to4 ``2002::/16`` (RFC 3056) and Teredo
  ``2001::/32`` (RFC 4380: its server and its client, whose address is stored
  inverted; both must be public).
- The local-use NAT64 prefix ``64:ff9b:1::/48`` (RFC 8215) is refused whatever it
  carries: the operator picks where in it the IPv4 address sits (RFC 6052 §2.2
  allows six prefix lengths), so it cannot be read back, and the translator is a
  local network's own.
- Other IPv6: only the global unicast range ``2000::/3`` (RFC 4291 §2.4; the rest
  is loopback, link-local, site-local ``fec0::/10`` (deprecated, RFC 3879), unique
  local ``fc00::/7``, multicast, or unassigned), less its special-purpose blocks:
  ``2001::/23`` (IETF protocol assignments, Teredo aside), ``2001:db8::/32`` and
  ``3fff::/20`` (documentation).

The ``ipaddress`` module reads the embedded addresses (``ipv4_mapped``,
``sixtofour``, ``teredo``) and names the IPv6 ranges its properties get right
(``is_unspecified``, ``is_loopback``, ``is_link_local``, ``is_site_local``,
``is_multicast``). Its ``is_global`` and ``is_private`` are not used: their
tables changed between patch releases of one Python version (CVE-2024-4032),
and Python 3.11.7's call ``64:ff9b::7f00:1``, ``2002:7f00:1::`` and ``fec0::1``
global.

:func:`browser_ipv4` reads a URL's host as a browser does (the WHATWG URL
Standard's host parser, §3.5: a host whose last label is a number is an IPv4
address, in the legacy forms ``inet_aton`` takes too: ``127.1``,
``0x7f.0.0.1``, ``2130706433``), so that one address in two spellings is one.
"""

from __future__ import annotations

import ipaddress

from pdi.errors import ParseError

__all__ = ["browser_ipv4", "embedded_ipv4", "not_public"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

#: IPv4 blocks that are not globally reachable (IANA IPv4 Special-Purpose Address Registry).
_IPV4_NOT_PUBLIC: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "'this network' (RFC 791)"),
    (_V4("10.0.0.0/8"), "private (RFC 1918)"),
    (_V4("100.64.0.0/10"), "shared address space (RFC 6598)"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local"),
    (_V4("172.16.0.0/12"), "private (RFC 1918)"),
    (_V4("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"),
    (_V4("192.0.2.0/24"), "documentation (RFC 5737)"),
    (_V4("192.88.99.0/24"), "deprecated 6to4 relay anycast (RFC 7526)"),
    (_V4("192.168.0.0/16"), "private (RFC 1918)"),
    (_V4("198.18.0.0/15"), "benchmarking (RFC 2544)"),
    (_V4("198.51.100.0/24"), "documentation (RFC 5737)"),
    (_V4("203.0.113.0/24"), "documentation (RFC 5737)"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved (RFC 1112)"),
)

_MAPPED = _V6("::ffff:0:0/96")
_COMPATIBLE = _V6("::/96")
_TRANSLATED = _V6("::ffff:0:0:0/96")
_NAT64 = _V6("64:ff9b::/96")
_NAT64_LOCAL = _V6("64:ff9b:1::/48")
_GLOBAL_UNICAST = _V6("2000::/3")
_UNIQUE_LOCAL = _V6("fc00::/7")
_IPV6_SPECIAL_IN_GLOBAL: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("2001:db8::/32"), "documentation (RFC 3849)"),
    (_V6("2001::/23"), "IETF protocol assignments (RFC 2928)"),
    (_V6("3fff::/20"), "documentation (RFC 9637)"),
)


def _low32(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, tuple[ipaddress.IPv4Address, ...]] | None:
    """The IPv4 addresses ``ip`` carries and how (``None`` if it is not such a form)."""
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", (ip.ipv4_mapped,)
    if ip in _TRANSLATED:
        return "IPv4-translated (RFC 2765)", (_low32(ip),)
    if ip in _NAT64:
        return "NAT64 (RFC 6052)", (_low32(ip),)
    if ip.sixtofour is not None:
        return "6to4 (RFC 3056)", (ip.sixtofour,)
    if ip.teredo is not None:
        server, client = ip.teredo
        return "Teredo (RFC 4380)", (server, client)
    if ip in _COMPATIBLE:
        return "IPv4-compatible (RFC 4291)", (_low32(ip),)
    return None


def _ipv4_reason(ip: ipaddress.IPv4Address) -> str | None:
    for network, reason in _IPV4_NOT_PUBLIC:
        if ip in network:
            return reason
    return None


def _ipv6_reason(ip: ipaddress.IPv6Address) -> str | None:
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    carried = embedded_ipv4(ip)
    if carried is not None:
        form, addresses = carried
        for v4 in addresses:
            reason = _ipv4_reason(v4)
            if reason is not None:
                return f"{form}, carrying {v4}: {reason}"
        return None
    if ip in _NAT64_LOCAL:
        return "local-use NAT64 prefix (RFC 8215)"
    if ip.is_link_local:
        return "link-local"
    if ip.is_site_local:
        return "site-local (fec0::/10, deprecated by RFC 3879)"
    if ip in _UNIQUE_LOCAL:
        return "unique local (RFC 4193)"
    if ip.is_multicast:
        return "multicast"
    if ip not in _GLOBAL_UNICAST:
        return "outside the global unicast range 2000::/3 (reserved or unassigned)"
    for network, reason in _IPV6_SPECIAL_IN_GLOBAL:
        if ip in network:
            return reason
    return None


def host_not_public(host: str) -> str | None:
    """Why a URL's ``host`` names no public address, as a connection to it would read it: an IPv4 address in any
    spelling ``inet_aton`` takes (``127.1``, ``0x7f.1``, ``2130706433``), an IPv6 one, or a name of this host
    (``localhost``, ``….localhost``: RFC 6761 §6.3); ``None`` for a public address or any other name (what a name
    resolves to is the connection's to check)."""
    import socket

    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return "a name of this host itself"
    try:
        host = socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        pass
    try:
        return not_public(host)
    except ParseError:
        return None


def not_public(address: str) -> str | None:
    """Why ``address`` (an IP address, perhaps with an IPv6 ``%zone``) is not public; ``None`` if it is."""
    try:
        ip: IPAddress = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError as exc:
        raise ParseError(f"not an IP address: {address!r}", text=address, offset=0, rule="IP-literal") from exc
    if isinstance(ip, ipaddress.IPv4Address):
        return _ipv4_reason(ip)
    return _ipv6_reason(ip)


#: The digits of each radix the WHATWG IPv4 number parser reads (ASCII only: ``str.isdigit`` is true of ``²``).
_RADIX_DIGITS = {10: frozenset("0123456789"), 8: frozenset("01234567"), 16: frozenset("0123456789abcdefABCDEF")}
#: A number of more significant digits than this in any radix is at least 2**32: no part of an address (octal's
#: 2**32 - 1 has 11 digits, and no wider numeral is ever turned into an int: a stranger's 100,000 digits cost nothing).
_MOST_DIGITS = 11


def _ipv4_number(part: str) -> int | None:
    """WHATWG URL §3.5 "IPv4 number parser" (its validation errors aside): ``0x``/``0X`` then hex, ``0`` then
    octal, else decimal; an empty number after its prefix is 0 (``0x`` is 0). ``None``: failure. A number of
    more digits than any address part is returned as ``2**32`` (too large, whatever it is)."""
    if part == "":
        return None
    radix = 10
    if len(part) >= 2 and part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) >= 2 and part[0] == "0":
        part, radix = part[1:], 8
    if part == "":
        return 0
    if not _RADIX_DIGITS[radix].issuperset(part):
        return None
    significant = part.lstrip("0")
    return 1 << 32 if len(significant) > _MOST_DIGITS else int(significant or "0", radix)


def _ends_in_a_number(host: str) -> bool:
    """WHATWG URL §3.5 "ends in a number checker": whether the last label (a last empty one aside) is decimal
    digits, or an IPv4 number (``0x``, ``0x1f``)."""
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    return (bool(last) and _RADIX_DIGITS[10].issuperset(last)) or _ipv4_number(last) is not None


def browser_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a URL's ``host`` (ASCII, lower-cased: as a browser's domain to ASCII leaves it) is, as a
    browser reads it: the WHATWG URL Standard's IPv4 parser (§3.5), which Chromium, Firefox and Safari follow.
    A host whose last label is a number is an address of one to four parts, each decimal, octal (``0`` first) or
    hex (``0x`` first), the last filling the bytes left: ``127.1``, ``0x7f.0.0.1``, ``017700000001`` and
    ``2130706433`` are ``127.0.0.1``; one last ``.`` is dropped (``127.0.0.1.``), and an empty hex number is 0
    (``0x``), where ``inet_aton`` refuses both. ``None``: the host is a domain (its last label is no number).
    :class:`~pdi.errors.ParseError` naming the host and what is wrong: it ends in a number and is no address
    (``1.2.3.256``, ``1.2.3.4.5``, ``08``): a browser refuses the URL."""
    if not _ends_in_a_number(host):
        return None
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    shown = host[:200]

    def refused(why: str) -> ParseError:
        return ParseError(f"the host {shown!r} ends in a number but is no IPv4 address: {why} (WHATWG URL §3.5)",
                          text=shown, offset=0, rule="IPv4")

    if len(parts) > 4:
        raise refused(f"{len(parts)} parts, at most 4")
    numbers = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            raise refused(f"{part[:40]!r} is no decimal, octal (0…) or hex (0x…) number")
        numbers.append(number)
    if any(number > 255 for number in numbers[:-1]):
        raise refused("a part before the last is more than 255")
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        raise refused(f"its last part is more than {256 ** (5 - len(numbers)) - 1}, the most its {5 - len(numbers)} octet(s) hold")
    address = numbers[-1]
    for counter, number in enumerate(numbers[:-1]):
        address += number * 256 ** (3 - counter)
    return ipaddress.IPv4Address(address)
