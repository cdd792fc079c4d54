"""pdi.interop.oaipmh: requests, datestamps and resumption tokens of OAI-PMH 2.0, and its XML against the schemas."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import xmlschema
from hypothesis import given
from hypothesis import strategies as st

from pdi.interop import oaipmh
from pdi.interop.oaipmh import OAIError, Resumption, Selection, parse_datestamp, parse_request

DATA = Path(__file__).resolve().parents[1] / "data" / "oaipmh"
SCHEMA = xmlschema.XMLSchema(str(DATA / "OAI-PMH.xsd"), allow="sandbox",
                             locations={oaipmh.OAI_DC: str(DATA / "oai_dc.xsd")})
NOW = datetime.datetime(2026, 11, 23, 12, 0, tzinfo=datetime.UTC)

keys = st.sampled_from(["verb", "metadataPrefix", "identifier", "set", "from", "until", "resumptionToken", "x"])
values = st.sampled_from(["Identify", "ListRecords", "ListSets", "GetRecord", "ListIdentifiers",
                          "ListMetadataFormats", "oai_dc", "2024-01-01", "", "zz"])


@given(st.lists(st.tuples(keys, values), max_size=6))
def test_parse_request_answers_a_request_or_the_protocols_error(pairs: list[tuple[str, str]]) -> None:
    try:
        request = parse_request(pairs)
    except OAIError as error:
        assert error.code in ("badVerb", "badArgument")
        body = oaipmh.response("http://r.example.org/oai", NOW, None, error)
        SCHEMA.validate(xmlschema.XMLResource(body, allow="none"))
        return
    required, optional, exclusive = oaipmh.VERBS[request.verb]
    given_keys = set(request.arguments)
    assert given_keys <= required | optional | ({exclusive} if exclusive else set())
    assert given_keys == {exclusive} or required <= given_keys
    assert [k for k, _ in pairs].count("verb") == 1


def test_section_3_1_2_1_examples() -> None:
    assert parse_request([("verb", "GetRecord"), ("identifier", "oai:arXiv.org:hep-th/9901001"),
                          ("metadataPrefix", "oai_dc")]).verb == "GetRecord"
    with pytest.raises(OAIError) as missing:
        parse_request([("verb", "GetRecord"), ("identifier", "x")])
    assert missing.value.code == "badArgument" and "metadataPrefix" in missing.value.message


@given(st.one_of(st.none(), st.text(min_size=1, max_size=300)), st.integers(0, 2**40),
       st.sampled_from([None, "a.example.us", "x:y"]),
       st.sampled_from([(None, None), ("2024-01-01", None), ("2024-01-01T00:00:00Z", "2025-02-28T23:59:59Z")]))
def test_a_resumption_token_round_trips(after: str | None, sent: int, spec: str | None,
                                        bounds: tuple[str | None, str | None]) -> None:
    token = Resumption(after, sent, Selection("oai_dc", spec, *bounds))
    assert Resumption.decode(token.encode()) == token


@given(st.text(max_size=80))
def test_any_other_token_is_bad(text: str) -> None:
    try:
        Resumption.decode(text)
    except OAIError as error:
        assert error.code == "badResumptionToken"


@pytest.mark.parametrize(("text", "argument", "expected"), [
    ("2024-02-29", "from", datetime.datetime(2024, 2, 29, tzinfo=datetime.UTC)),
    ("2024-02-29", "until", datetime.datetime(2024, 2, 29, 23, 59, 59, tzinfo=datetime.UTC)),
    ("2024-02-29T10:11:12Z", "until", datetime.datetime(2024, 2, 29, 10, 11, 12, tzinfo=datetime.UTC)),
])
def test_section_3_3_1_datestamps(text: str, argument: str, expected: datetime.datetime) -> None:
    assert parse_datestamp(text, argument=argument)[0] == expected


@pytest.mark.parametrize("text", ["2023-02-29", "2024-02-29T10:11:12", "2024-02-29T10:11Z", "2024-2-9", "now"])
def test_datestamps_that_are_not(text: str) -> None:
    with pytest.raises(OAIError) as bad:
        parse_datestamp(text, argument="from")
    assert bad.value.code == "badArgument"


def test_dublin_core_keeps_element_order_and_drops_other_keys() -> None:
    dc = oaipmh.dublin_core(["urn:pdi://a.example.us/2024/01/01/1"],
                            [("Title", "T"), ("dc:creator", "C"), ("DC.title", "T2"), ("shelf", "x"), ("title", "T")],
                            dates=["2024-01-01"], formats=["text/plain"])
    assert dc == (("title", "T"), ("title", "T2"), ("creator", "C"), ("date", "2024-01-01"),
                  ("format", "text/plain"), ("identifier", "urn:pdi://a.example.us/2024/01/01/1"))


@given(st.text(max_size=40))
def test_any_statement_text_makes_valid_xml(value: str) -> None:
    header = oaipmh.Header("urn:pdi://a.example.us/2024/01/01/1", NOW, ("a.example.us",))
    record = oaipmh.Record(header, oaipmh.dublin_core([header.identifier], [("title", value)]))
    body = oaipmh.response("http://r.example.org/oai", NOW, parse_request([("verb", "GetRecord"),
                           ("identifier", header.identifier), ("metadataPrefix", "oai_dc")]), oaipmh.get_record(record))
    SCHEMA.validate(xmlschema.XMLResource(body, allow="none"))


@pytest.mark.parametrize(("argument", "value"), [
    ("metadataPrefix", "verb=marc21"),  # found by fuzzing: echoed, it broke the schema's metadataPrefixType
    ("metadataPrefix", "oai dc"),
    ("set", "a b"),
    ("set", "a::b"),
    ("from", "2026-02-30"),
    ("until", "yesterday"),
])
def test_argument_values_the_schema_cannot_echo_are_bad_arguments(argument: str, value: str) -> None:
    arguments = {"metadataPrefix": "marc21", argument: value}
    with pytest.raises(OAIError) as caught:
        parse_request([("verb", "ListRecords"), *arguments.items()])
    assert caught.value.code == "badArgument"
    # and the error answer is valid: the request is echoed without its arguments (§3.2)
    SCHEMA.validate(xmlschema.XMLResource(oaipmh.response("http://r.example.org/oai", NOW, None, caught.value), allow="none"))
    # a valid value of the same argument passes to the next check (the prefix here is not disseminated)
    good = {"metadataPrefix": "oai_dc", "set": "a:b", "from": "2026-02-28", "until": "2026-03-01"}[argument]
    assert parse_request([("verb", "ListRecords"), *{**arguments, argument: good}.items()]).arguments[argument] == good


_MOMENTS = st.datetimes(min_value=datetime.datetime(1970, 1, 1), max_value=datetime.datetime(2999, 12, 31))


@given(_MOMENTS, _MOMENTS, st.booleans())
def test_section_2_7_1_from_later_than_until_is_a_bad_argument(first: datetime.datetime, second: datetime.datetime,
                                                               days: bool) -> None:
    # §2.7.1: "the from argument must be less than or equal to the until argument. Otherwise, a
    # repository must issue a badArgument error." Compared as the granularity both are given in.
    fmt = "%Y-%m-%d" if days else "%Y-%m-%dT%H:%M:%SZ"
    start, until = first.strftime(fmt), second.strftime(fmt)
    chosen = Selection("oai_dc", None, start, until)
    later = (first.date() > second.date()) if days else (first.replace(microsecond=0) > second.replace(microsecond=0))
    if later:
        with pytest.raises(OAIError) as refused:
            chosen.bounds()
        assert refused.value.code == "badArgument"
        with pytest.raises(OAIError) as token:  # a token that would carry them is not one this repository issues
            Resumption.decode(Resumption(None, 0, chosen).encode())
        assert token.value.code == "badResumptionToken"
    else:
        assert chosen.bounds()[0] is not None


def _forged(*fields: object) -> str:
    """A token of this repository's form (URL-safe base64 of compact JSON, no padding) made by a stranger."""
    import base64
    import json

    return base64.urlsafe_b64encode(json.dumps(list(fields), separators=(",", ":")).encode()).decode().rstrip("=")


# Not setSpecs by OAI-PMH.xsd's setSpecType ([A-Za-z0-9\-_.!~*'()]+ in parts joined by ':'): no request could
# have named them, so no token was issued with them.
@pytest.mark.parametrize("spec", ["", "a b", "a<b", "a::b", ":a", "a:", "\ud800", "series\n"])
def test_section_3_5_a_token_carrying_a_set_no_request_could_name_is_bad(spec: str) -> None:
    with pytest.raises(OAIError) as refused:
        Resumption.decode(_forged(2, None, 0, "oai_dc", spec, None, None))
    assert refused.value.code == "badResumptionToken"
    assert Resumption.decode(_forged(2, None, 0, "oai_dc", "a.example.us:x", None, None)).selection.set == "a.example.us:x"


def test_section_3_5_a_token_of_the_earlier_form_with_a_row_number_is_bad() -> None:
    # tokens once carried the catalog's row number of the last record: its gaps counted the records a
    # harvester was not shown (issue 22); such a token is refused, and the harvest starts again
    import base64
    import json

    old = base64.urlsafe_b64encode(json.dumps([1, 57, 50, "oai_dc", None, None, None]).encode()).decode().rstrip("=")
    with pytest.raises(OAIError) as refused:
        Resumption.decode(old)
    assert refused.value.code == "badResumptionToken"
    assert '"urn:pdi://a.example.us/2024/01/01/7"' in base64.urlsafe_b64decode(
        Resumption("urn:pdi://a.example.us/2024/01/01/7", 100, Selection("oai_dc")).encode() + "==").decode()


@given(st.datetimes(min_value=datetime.datetime(1, 1, 1), max_value=datetime.datetime(9999, 12, 31, 23, 59, 59),
                    timezones=st.just(datetime.UTC)))
def test_section_3_3_1_a_datestamp_written_is_one_read_back(moment: datetime.datetime) -> None:
    # §3.3.1: YYYY-MM-DDThh:mm:ssZ, four digits of year however small the year (the XSD's xs:dateTime too)
    written = oaipmh.datestamp(moment)
    assert len(written) == len("YYYY-MM-DDThh:mm:ssZ")
    assert parse_datestamp(written, argument="from") == (moment.replace(microsecond=0), oaipmh.GRANULARITY)
