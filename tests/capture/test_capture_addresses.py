"""Which addresses capture connects to (pdi._addresses, pdi.capture.check_address).

The expected verdicts come from the IANA IPv4 and IPv6 Special-Purpose Address
Registries and the RFCs that define each IPv6 form carrying an IPv4 address
(RFC 4291 §2.5.5, RFC 2765, RFC 6052, RFC 3056, RFC 4380), not from the code.
"""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi._addresses import embedded_ipv4, not_public
from pdi.capture import check_address
from pdi.errors import ParseError, UnsupportedError

# IANA IPv4 Special-Purpose Address Registry: the blocks not globally reachable (192.0.0.0/24
# whole, although two single addresses in it are anycast services: no web page lives there),
# the deprecated 6to4 relay anycast block (RFC 7526), multicast and the reserved 240/4.
IANA_V4_NOT_GLOBAL = [
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
        "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
]
PUBLIC_SERVER = ipaddress.IPv4Address("65.54.227.120")  # a Teredo server address from RFC 4380's era


def refused(address: str) -> bool:
    try:
        check_address("h", address, allow_private=False)
    except UnsupportedError:
        return True
    return False


def teredo(server: ipaddress.IPv4Address, client: ipaddress.IPv4Address, flags: int, port: int) -> str:
    # RFC 4380 §4: 2001:0000 | server | flags | port XOR ffff | client XOR ffffffff
    value = (0x20010000 << 96) | (int(server) << 64) | (flags << 48) | ((port ^ 0xFFFF) << 32)
    return str(ipaddress.IPv6Address(value | (int(client) ^ 0xFFFFFFFF)))


def embeddings(v4: ipaddress.IPv4Address, subnet: int, iid: int, flags: int, port: int) -> dict[str, str]:
    n = int(v4)
    return {
        "mapped": str(ipaddress.IPv6Address((0xFFFF << 32) | n)),  # ::ffff:a.b.c.d
        "compatible": str(ipaddress.IPv6Address(n)),  # ::a.b.c.d
        "translated": str(ipaddress.IPv6Address((0xFFFF << 48) | n)),  # ::ffff:0:a.b.c.d
        "nat64": str(ipaddress.IPv6Address((0x0064FF9B << 96) | n)),  # 64:ff9b::a.b.c.d
        "6to4": str(ipaddress.IPv6Address((0x2002 << 112) | (n << 80) | (subnet << 64) | iid)),
        "teredo-client": teredo(PUBLIC_SERVER, v4, flags, port),
        "teredo-server": teredo(v4, ipaddress.IPv4Address("8.8.8.8"), flags, port),
    }


@settings(max_examples=400, deadline=None)
@given(
    st.ip_addresses(v=4),
    st.integers(0, 0xFFFF),
    st.integers(0, 2**64 - 1),
    st.integers(0, 0xFFFF),
    st.integers(0, 0xFFFF),
)
def test_property_every_ipv6_spelling_of_an_ipv4_address_is_refused_iff_the_ipv4_address_is(
    v4: ipaddress.IPv4Address, subnet: int, iid: int, flags: int, port: int
) -> None:
    expected = any(v4 in block for block in IANA_V4_NOT_GLOBAL)
    assert refused(str(v4)) is expected
    for form, v6 in embeddings(v4, subnet, iid, flags, port).items():
        assert refused(v6) is expected, (form, v6)


@pytest.mark.parametrize(
    ("v6", "carried"),
    [
        ("::ffff:127.0.0.1", ["127.0.0.1"]),
        ("::7f00:1", ["127.0.0.1"]),
        ("::ffff:0:a00:1", ["10.0.0.1"]),
        ("64:ff9b::a9fe:a9fe", ["169.254.169.254"]),
        ("2002:c0a8:101::1", ["192.168.1.1"]),
        # RFC 4380 §4 example: server 65.54.227.120, client 192.0.2.45 (stored inverted)
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", ["65.54.227.120", "192.0.2.45"]),
    ],
)
def test_embedded_ipv4_read_back(v6: str, carried: list[str]) -> None:
    found = embedded_ipv4(ipaddress.IPv6Address(v6))
    assert found is not None
    assert [str(a) for a in found[1]] == carried


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of the cloud metadata address
        "::127.0.0.1",  # IPv4-compatible
        "::ffff:0:127.0.0.1",  # IPv4-translated
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo with client 192.0.2.45 (documentation)
        "fec0::1",  # site-local
        "feff::1",
        "64:ff9b:1::808:808",  # local-use NAT64 (RFC 8215), whatever it carries
        "64:ff9b:1:808:8:800::",
        "2001:db8::1",
        "3fff::1",  # documentation (RFC 9637)
        "2001:2::1",  # benchmarking, in 2001::/23
        "100::1",  # discard-only
        "fd00::1",
        "ff02::1",
        "fe80::1%eth0",
        "5f00::1",  # SRv6 SIDs: outside 2000::/3
        "4000::1",  # unassigned
        "192.0.0.8",
        "192.88.99.1",
        "255.255.255.255",
        "239.1.2.3",
    ],
)
def test_refused(address: str) -> None:
    with pytest.raises(UnsupportedError, match=r"not a public address .*allow-private"):
        check_address("h", address, allow_private=False)
    check_address("h", address, allow_private=True)


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8
        "2002:808:808::1",  # 6to4 of 8.8.8.8
        "::ffff:8.8.8.8",
        "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo, client 8.8.8.8
        "2001:4860:4860::8888",
        "2606:4700:4700::1111",
        "2a00:1450:4001:80b::200e",
        "1.1.1.1",
        "93.184.216.34",
    ],
)
def test_public(address: str) -> None:
    assert not_public(address) is None
    check_address("h", address, allow_private=False)


def test_the_reason_names_the_carried_address() -> None:
    with pytest.raises(UnsupportedError, match=r"NAT64 \(RFC 6052\), carrying 127\.0\.0\.1: loopback"):
        check_address("example.org", "64:ff9b::7f00:1", allow_private=False)


def test_not_an_address_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        not_public("example.org")


def test_a_refusal_names_the_host_and_its_address_once_each() -> None:
    with pytest.raises(UnsupportedError) as named:
        check_address("intranet.example", "10.0.0.7", allow_private=False)
    assert str(named.value).startswith("refusing to connect to intranet.example at 10.0.0.7: not a public address")
    for host, address in (("127.0.0.1", "127.0.0.1"), ("[::1]", "::1")):
        with pytest.raises(UnsupportedError) as bare:
            check_address(host, address, allow_private=False)
        assert str(bare.value).startswith(f"refusing to connect to {host}: not a public address (loopback)")
