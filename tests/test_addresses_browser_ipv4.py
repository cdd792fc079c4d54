"""A URL's host read as an IPv4 address as a browser reads it (WHATWG URL §3.5, the IPv4 parser), :func:`browser_ipv4`.

The oracles: ``socket.inet_aton`` (glibc's, the reading of this machine's
connections) for every form it takes, ``ipaddress`` for the value a spelling
was made from, and the WHATWG URL Standard's own text for the two forms
``inet_aton`` refuses and a browser takes (one last ``.``, and ``0x`` alone,
which is 0). ``tests/test_federation_hosts_chromium.py`` asks Chromium itself.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pdi._addresses import browser_ipv4
from pdi.errors import ParseError

LOOPBACK = ipaddress.IPv4Address("127.0.0.1")


@st.composite
def spellings(draw: st.DrawFn) -> tuple[str, ipaddress.IPv4Address]:
    """A 32-bit address and a spelling of it that ``inet_aton`` reads: one to four parts, the last filling the octets
    left (as 4.2BSD's ``inet_addr`` read them), each decimal, octal (``0`` first) or hex (``0x``/``0X`` first, then
    at least a digit), with leading zeros as they come."""
    value = draw(st.integers(0, 2**32 - 1))
    count = draw(st.integers(1, 4))
    octets = value.to_bytes(4, "big")
    numbers = [*octets[:count - 1], int.from_bytes(octets[count - 1:], "big")]
    parts = []
    for number in numbers:
        radix = draw(st.sampled_from(["dec", "oct", "hex"]))
        zeros = "0" * draw(st.integers(0, 3))
        if radix == "dec":
            parts.append(str(number))
        elif radix == "oct":
            parts.append("0" + zeros + format(number, "o"))
        else:
            digits = format(number, "x")
            parts.append(draw(st.sampled_from(["0x", "0X"])) + zeros
                         + "".join(draw(st.sampled_from([c, c.upper()])) for c in digits))
    return ".".join(parts), ipaddress.IPv4Address(value)


@given(spellings())
@example(("127.1", LOOPBACK))
@example(("0x7f.0.0.1", LOOPBACK))
@example(("2130706433", LOOPBACK))
@example(("017700000001", LOOPBACK))
def test_property_every_spelling_inet_aton_reads_is_the_address_it_reads(spelt: tuple[str, ipaddress.IPv4Address],
                                                                          ) -> None:
    host, address = spelt
    assert socket.inet_aton(host) == address.packed  # the oracle agrees the spelling is of that address
    assert browser_ipv4(host) == address
    assert browser_ipv4(host + ".") == address  # WHATWG §3.5 IPv4 parser step 2: one last empty part is dropped


#: The characters of a spelling of a number, and a few others; no space (glibc's inet_aton ignores what follows one).
_HOSTISH = st.text(alphabet="0123456789abcdefxX.g-", min_size=1, max_size=24)


@given(_HOSTISH)
@example("0x.0.0.1")
@example("1.2.3.0x")
@example("4294967296")
def test_property_a_host_inet_aton_reads_a_browser_reads_alike_and_only_two_forms_more(host: str) -> None:
    try:
        read = ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        read = None
    try:
        ours: ipaddress.IPv4Address | str | None = browser_ipv4(host)
    except ParseError:
        ours = "refused"
    if read is not None:
        assert ours == read
    elif isinstance(ours, ipaddress.IPv4Address):
        # inet_aton refuses, a browser reads an address: one last "." (step 2) and an empty hex number (0x: 0), and
        # nothing else: without them inet_aton reads the same address
        plain = host[:-1] if host.endswith(".") else host
        plain = ".".join("0x0" if part.lower() == "0x" else part for part in plain.split("."))
        assert ipaddress.IPv4Address(socket.inet_aton(plain)) == ours


@pytest.mark.parametrize(("host", "address"), [
    ("127.0.0.1.", "127.0.0.1"),  # IPv4 parser step 2: the last empty part dropped
    ("0x", "0.0.0.0"),  # IPv4 number parser step 6: "0x" then nothing is 0
    ("0x.0x.0", "0.0.0.0"),
    ("1.2.3.0x", "1.2.3.0"),
    ("0X7F.1", "127.0.0.1"),  # step 4: "0X" too
    ("4294967295", "255.255.255.255"),  # step 8: the last of one part may fill all four octets
    ("1.16777215", "1.255.255.255"),
])
def test_whatwg_3_5_forms_inet_aton_refuses_a_browser_reads(host: str, address: str) -> None:
    assert browser_ipv4(host) == ipaddress.IPv4Address(address)


@pytest.mark.parametrize(("host", "why"), [
    ("1.2.3.256", "more than 255"),  # step 8: the last part of four fills one octet
    ("256.1.1.1", "before the last is more than 255"),  # step 7
    ("4294967296", "more than 4294967295"),
    ("1.2.3.4.5", "5 parts, at most 4"),  # step 3
    ("08", "'08' is no decimal"),  # octal, and 8 is no octal digit
    ("1..2", "'' is no decimal"),  # an empty part before the last
    ("a.0x1", "'a' is no decimal"),  # ends in a number: every part must be one
    ("9" * 5000, "more than 4294967295"),  # never made an int of 5000 digits (Python refuses past 4300)
])
def test_whatwg_3_5_a_host_that_ends_in_a_number_and_is_no_address_is_refused_saying_why(host: str, why: str) -> None:
    with pytest.raises(ParseError, match="ends in a number but is no IPv4 address") as refused:
        browser_ipv4(host)
    assert why in str(refused.value) and refused.value.rule == "IPv4"


@pytest.mark.parametrize("host", ["example.org", "example.org.", "a1", "1a", "00x1", "0x1g", "", ".", "..",
                                  "127.0.0.1..", "xn--bcher-kva.example"])
def test_whatwg_3_5_a_host_whose_last_label_is_no_number_is_a_domain(host: str) -> None:
    assert browser_ipv4(host) is None
