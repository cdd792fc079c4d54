"""A NAPTR record's service field as RFC 3404 §4.4 writes it: ``service_field = [ [protocol] *("+" rs)]``, "an
optional protocol specification followed by 0 or more resolution services", each service after a ``+``; the
empty string is a valid service field too.

So ``+N2R+N2L`` (no protocol, two services) and the empty field (no protocol, no service) are well-formed; the
only protocol RFC 3404 §4.4.2 defines for URI resolution is THTTP (RFC 2169), so a terminal record that names no
protocol is a THTTP resolver's, used for the services it lists (none: all), as one that names ``THTTP`` is. By the
same grammar ``N2R`` alone is a *protocol* named N2R, no THTTP: the record is skipped, and the log says how the
service is written. A field the grammar does not make (``THTTP+N2R+``, ``+2NR``) is a malformed record, skipped and
said, the next one tried; so is a record with flag ``P`` (§4.3: its protocol's own rules follow; THTTP has none),
and one with flags pdi does not know (RFC 3403 §4.1).
Each is served by dnsmasq (tests/support/dnsnode.py) and read by :class:`NaptrFinder`.
"""

from __future__ import annotations

import logging
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.errors import ParseError
from pdi.federation.naptr import NaptrFinder, _parse_service
from support.dnsnode import dnsmasq

URN = "urn:pdi://a.example.us/2026/11/20/1.text.1"
RULE = "!^(.*)$!http://r.example.org/uri-res/N2R?\\1!"


@pytest.mark.parametrize(("service", "offered"), [
    ("+N2R+N2L", ["n2l", "n2r"]),  # no protocol, two services
    ("+n2c", ["n2c"]),  # the case of a service is not significant
    ("", []),  # the empty service field: no protocol, no service listed: all
    ("THTTP+N2R", ["n2r"]),  # as before
])
def test_rfc3404_4_4_a_terminal_u_record_with_no_protocol_is_thttp(service: str, offered: list[str]) -> None:
    with dnsmasq([f"--naptr-record=a.example.us,100,10,U,{service},{RULE}"]) as node:
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [(s.base, sorted(s.services)) for s in found] == [("http://r.example.org/", offered)]
    assert found[0].offers("N2R") == (not offered or "n2r" in offered)


def test_rfc3404_4_4_a_terminal_s_record_with_no_protocol_names_http_targets() -> None:
    records = ["--naptr-record=a.example.us,100,10,S,+N2R,,_http._tcp.a.example.us",
               "--srv-host=_http._tcp.a.example.us,r.example.org,8080,0,10",
               "--naptr-record=b.example.us,100,10,A,,,r.example.org"]
    with dnsmasq(records) as node:
        finder = NaptrFinder(node.server)
        assert [(s.base, sorted(s.services)) for s in finder.services("a.example.us", URN)] == [
            ("http://r.example.org:8080/", ["n2r"])]
        assert [(s.base, sorted(s.services)) for s in finder.services(
            "b.example.us", URN.replace("a.example", "b.example"))] == [("http://r.example.org/", [])]


def test_rfc3404_4_4_n2r_alone_is_a_protocol_so_the_record_is_skipped_and_said(
        caplog: pytest.LogCaptureFixture) -> None:
    records = [f"--naptr-record=a.example.us,100,10,U,N2R,{RULE}",
               "--naptr-record=a.example.us,100,20,U,z3950+N2L,!^.*$!http://z.example.org/!",
               "--naptr-record=a.example.us,100,30,U,+N2R,!^.*$!http://r2.example.org/!"]
    with dnsmasq(records) as node, caplog.at_level(logging.INFO, logger="pdi.federation"):
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r2.example.org/"]  # neither N2R's record nor z3950's
    said = [record.getMessage() for record in caplog.records if record.name == "pdi.federation"]
    assert any("'N2R'" in line and "+N2R" in line and "a.example.us" in line for line in said), said
    assert not any("z3950" in line for line in said), said  # another protocol's record is no one's mistake


SERVICES = st.sampled_from(["N2L", "N2Ls", "N2R", "N2Rs", "N2C", "N2Cs", "N2N", "N2Ns", "I2L", "I2R", "I2C"])


@given(protocol=st.sampled_from(["", "THTTP", "thttp", "http", "HTTPS", "z3950", "rcds", "E2U", "N2R"]),
       services=st.lists(SERVICES, max_size=4))
def test_rfc3404_4_4_a_service_field_is_an_optional_protocol_and_its_services(protocol: str,
                                                                               services: list[str]) -> None:
    """Any field the ABNF makes: a protocol (or none) before the first ``+``, a service after each ``+``."""
    field = protocol + "".join("+" + s for s in services)
    read = _parse_service(field)
    schemes = {"": "http", "thttp": "http", "http": "http", "https": "https"}  # none: THTTP, over http
    if protocol.lower() not in schemes:
        assert read is None
    else:
        assert read == (schemes[protocol.lower()], frozenset(s.lower() for s in services))


#: RFC 3404 §4.4's grammar, written out here from its ABNF (RFC 2234: ALPHA and DIGIT are ASCII):
#: ``service_field = [ [protocol] *("+" rs)]``, ``protocol = rs = ALPHA *31ALPHANUM``.
_LABEL = r"[A-Za-z][A-Za-z0-9]{0,31}"
_SERVICE_FIELD = re.compile(rf"(?:{_LABEL})?(?:\+{_LABEL})*")


@given(field=st.text(alphabet=st.sampled_from("+AaNn2RrTtHhPp_-;.é 0"), max_size=40)
       | st.builds(lambda p, n: p + "+" + "N" * n, st.sampled_from(["", "THTTP"]), st.integers(30, 34)))
def test_rfc3404_4_4_a_service_field_outside_the_grammar_is_refused_saying_so(field: str) -> None:
    """A field the ABNF does not make (a ``+`` with no service after it, a label that starts with a digit or holds
    another character, a label of more than 32 characters) is no service field: refused, the field and the section
    named; one it makes is read (or is another protocol's, ``None``)."""
    if _SERVICE_FIELD.fullmatch(field):
        _parse_service(field)
    else:
        with pytest.raises(ParseError, match=r"RFC 3404 §4\.4") as refused:
            _parse_service(field)
        assert refused.value.text == field


@pytest.mark.parametrize("field", ["THTTP+N2R+", "THTTP++N2R", "+2NR", "+N2R+" + "N" * 33, "THTTP+N2R-N2L"])
def test_rfc3404_4_4_a_terminal_record_whose_service_field_breaks_the_grammar_is_skipped_and_said(
        field: str, caplog: pytest.LogCaptureFixture) -> None:
    records = [f"--naptr-record=a.example.us,100,10,U,{field},{RULE}",
               "--naptr-record=a.example.us,100,20,U,THTTP+N2R,!^.*$!http://r2.example.org/!"]
    with dnsmasq(records) as node, caplog.at_level(logging.INFO, logger="pdi.federation"):
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r2.example.org/"]  # the next record tried, not the malformed one's
    said = [record.getMessage() for record in caplog.records if record.name == "pdi.federation"]
    assert any(repr(field) in line and "a.example.us" in line and "RFC 3404 §4.4" in line for line in said), said


def test_rfc3404_4_3_a_p_record_is_skipped_and_said(caplog: pytest.LogCaptureFixture) -> None:
    # P: the rest is the protocol's own rules (RFC 3404 §4.3); THTTP, the one protocol pdi speaks, has none
    records = [f"--naptr-record=a.example.us,100,10,P,THTTP+N2R,{RULE}",
               "--naptr-record=a.example.us,100,20,U,THTTP+N2R,!^.*$!http://r2.example.org/!"]
    with dnsmasq(records) as node, caplog.at_level(logging.INFO, logger="pdi.federation"):
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r2.example.org/"]
    said = [record.getMessage() for record in caplog.records if record.name == "pdi.federation"]
    assert any("flag P" in line and "a.example.us" in line and "RFC 3404 §4.3" in line for line in said), said


@pytest.mark.parametrize("flags", ["X", "SU", "Z9"])
def test_rfc3403_4_1_a_record_with_flags_pdi_does_not_know_is_skipped_and_said(
        flags: str, caplog: pytest.LogCaptureFixture) -> None:
    # flags other than S, A, U and P, or more than one of those (RFC 3404 §4.3: they are mutually exclusive), are
    # unknown to pdi; RFC 3403 §4.1: such a record is skipped, the next one tried
    records = [f"--naptr-record=a.example.us,100,10,{flags},THTTP+N2R,{RULE}",
               "--naptr-record=a.example.us,100,20,U,THTTP+N2R,!^.*$!http://r2.example.org/!"]
    with dnsmasq(records) as node, caplog.at_level(logging.INFO, logger="pdi.federation"):
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r2.example.org/"]
    said = [record.getMessage() for record in caplog.records if record.name == "pdi.federation"]
    assert any(repr(flags) in line and "a.example.us" in line and "RFC 3403 §4.1" in line for line in said), said
