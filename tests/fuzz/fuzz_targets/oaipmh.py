"""OAI-PMH 2.0 request arguments and resumption tokens: :mod:`pdi.interop.oaipmh`.

The input is a request's ``application/x-www-form-urlencoded`` body (or
query string), read as the resolver reads a POST (``parse_qsl``). A request
that is not well formed is an :class:`~pdi.interop.oaipmh.OAIError` (the
protocol's own error, §3.6, which the resolver answers in XML), so that, as
well as a :class:`pdi.errors.PDIError`, passes. What must hold: an error's
code is one of §3.6; the error response, with the request echoed, is valid
against the OAI-PMH schema (``tests/data/oaipmh/OAI-PMH.xsd``, read by
``xmlschema``); a list request's selection checks, and its resumption token,
encoded, decodes to the same position and selection.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from urllib.parse import parse_qsl

import xmlschema
from fuzz_harness import REPO, Target

from fuzz_targets._common import text_of
from pdi.interop.oaipmh import (
    ERROR_CODES,
    OAIError,
    Request,
    Resumption,
    check_prefix,
    parse_request,
    response,
    selection,
)

DATA = Path(REPO) / "tests" / "data" / "oaipmh"
_NOW = datetime.datetime(2026, 11, 23, 9, tzinfo=datetime.UTC)
_schema: xmlschema.XMLSchema | None = None


def _valid(xml: bytes) -> None:
    global _schema
    if _schema is None:
        _schema = xmlschema.XMLSchema(
            str(DATA / "OAI-PMH.xsd"), allow="sandbox",
            locations={"http://www.openarchives.org/OAI/2.0/oai_dc/": str(DATA / "oai_dc.xsd")},
        )
    _schema.validate(xmlschema.XMLResource(xml, allow="none"))


def _answer(request: Request) -> None:
    if request.verb == "GetRecord":
        check_prefix(request.arguments["metadataPrefix"])  # the resolver's first check, before the identifier's
    if request.verb not in ("ListRecords", "ListIdentifiers"):
        return
    token = request.arguments.get("resumptionToken")
    if token is not None:
        resumed = Resumption.decode(token)
    else:
        resumed = Resumption(None, 0, selection(request.arguments))
    assert Resumption.decode(resumed.encode()) == resumed


def run(data: bytes) -> None:
    pairs = parse_qsl(text_of(data), keep_blank_values=True, strict_parsing=False)
    parsed: Request | None = None
    try:
        parsed = parse_request(pairs)
        _answer(parsed)
    except OAIError as error:
        assert error.code in ERROR_CODES
        _valid(response("http://127.0.0.1/oai", _NOW, parsed, error))


TARGET = Target(
    "oaipmh",
    run,
    warmup=b"verb=ListRecords&metadataPrefix=oai_dc&from=2026-01-01&until=2026-12-31&set=x",
    tokens=(
        b"verb=", b"&", b"=", b"Identify", b"ListRecords", b"ListIdentifiers", b"GetRecord", b"ListSets",
        b"ListMetadataFormats", b"metadataPrefix=", b"oai_dc", b"resumptionToken=", b"identifier=", b"from=",
        b"until=", b"set=", b"2026-11-23", b"2026-11-23T09:00:00Z", b"2026-02-30", b"T24:00:00Z", b"%00", b"%FF",
        b"%EF%BF%BE", b"%ED%A0%80", b"+", b"WzEsMCwwLCJvYWlfZGMiLG51bGwsbnVsbCxudWxsXQ", b"\x01", b"<", b"&amp;",
    ),
)
