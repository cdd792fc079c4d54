"""What a stranger's request says, read by the grammars the RFCs and protocols write out, hammered with hypothesis.

Each reference here is written from the specification, not from pdi's code: the value a reader accepts agrees
with it, and anything else is a :mod:`pdi.errors` error (a ``400`` naming what was wrong), never another exception.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Iterator
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.errors import ParseError
from pdi.interop import oaipmh
from pdi.server import create_app
from pdi.server.http.bodies import sends_content
from pdi.server.http.readers import refused_authorization
from pdi.server.protocol.manifests import _day

S = "grammars.example.us"


@pytest.fixture(scope="module")
def resolver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, str, str]]:
    """A resolver of one archive holding one document; that document's generic name; a token of its series."""
    location = tmp_path_factory.mktemp("grammars") / "archive"
    archive = Archive.init(location)
    archive.add_series(S)
    name = str(archive.add(S, b"one line\n", format="text"))
    _, secret = archive.add_token("reader", role="read", series=[S])
    try:
        with TestClient(create_app(str(location), archive=archive)) as client:  # its lifespan started
            yield client, name.rsplit(".", 2)[0], secret
    finally:
        archive.close()

#: ``day=`` of /api/manifest: a GMT day, YYYY-MM-DD (RFC 3339's full-date), ASCII digits.
FULL_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")


def _full_date(text: str) -> datetime.date | None:
    """RFC 3339 §5.6 full-date, with §5.7's day-of-month limits (year 0 is no year of Python's calendar)."""
    found = FULL_DATE.match(text)
    if found is None:
        return None
    year, month, day = (int(part) for part in found.groups())
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return datetime.date(year, month, day)


_DAY_TEXT = st.one_of(
    st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}"),
    st.text(st.sampled_from("0123456789-W:T+Z ٣"), min_size=8, max_size=12),
    st.dates().map(lambda d: "{}-W{:02d}-{}".format(*d.isocalendar())),
)


@given(_DAY_TEXT)
def test_a_manifest_day_is_a_full_date_or_refused(text: str) -> None:
    expected = _full_date(text)
    if expected is None:
        with pytest.raises(ParseError, match="YYYY-MM-DD"):
            _day(text)
    else:
        assert _day(text) == expected


def test_an_iso_week_date_is_no_manifest_day() -> None:
    # ten characters, as YYYY-MM-DD is, and read by date.fromisoformat as 2024-01-01
    with pytest.raises(ParseError, match="YYYY-MM-DD"):
        _day("2024-W01-1")


# --- OAI-PMH arguments: URL-encoded UTF-8 (OAI-PMH 2.0 §3.1.1.2) -----------------------------------------------
#: RFC 3629 §4: UTF8-octets, byte by byte.
_TAIL = rb"[\x80-\xbf]"
UTF8_OCTETS = re.compile(
    rb"(?:[\x00-\x7f]|[\xc2-\xdf]" + _TAIL + rb"|\xe0[\xa0-\xbf]" + _TAIL + rb"|[\xe1-\xec\xee\xef]" + _TAIL
    + rb"{2}|\xed[\x80-\x9f]" + _TAIL + rb"|\xf0[\x90-\xbf]" + _TAIL + rb"{2}|[\xf1-\xf3]" + _TAIL
    + rb"{3}|\xf4[\x80-\x8f]" + _TAIL + rb"{2})*\Z")

_OCTETS = re.compile(
    b"(?:[\x00-\x7f]|[\xc2-\xdf]" + _TAIL + b"|\xe0[\xa0-\xbf]" + _TAIL + b"|[\xe1-\xec\xee\xef]" + _TAIL
    + b"{2}|\xed[\x80-\x9f]" + _TAIL + b"|\xf0[\x90-\xbf]" + _TAIL + b"{2}|[\xf1-\xf3]" + _TAIL
    + b"{3}|\xf4[\x80-\x8f]" + _TAIL + b"{2})*\\Z")

_OCTETS = st.one_of(
    st.text(max_size=8).map(lambda t: t.encode("utf-8")),
    st.binary(max_size=6),
    st.sampled_from([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82", b"caf\xe9", b"\xf4\x90\x80\x80"]),
)


@given(st.lists(st.tuples(st.sampled_from([b"verb", b"identifier", b"set", b"x\xff"]), _OCTETS), max_size=4),
       st.booleans())
def test_oai_arguments_are_utf_8_once_their_escapes_are_read(pairs: list[tuple[bytes, bytes]], escaped: bool) -> None:
    # written as a harvester writes them: every octet %-escaped (RFC 3986 §2.1), or sent as it is but & = % +
    def written(octets: bytes) -> bytes:
        if escaped:
            return quote_from_bytes(octets, safe="").encode("ascii")
        return b"".join(b"%%%02X" % o if o in b"&=%+" else bytes([o]) for o in octets)

    raw = b"&".join(written(k) + b"=" + written(v) for k, v in pairs)
    if all(UTF8_OCTETS.match(k) and UTF8_OCTETS.match(v) for k, v in pairs):
        assert oaipmh.form_pairs(raw) == [(k.decode("utf-8"), v.decode("utf-8")) for k, v in pairs]
    else:
        with pytest.raises(oaipmh.OAIError, match="not UTF-8") as refused:
            oaipmh.form_pairs(raw)
        assert refused.value.code == "badArgument"


def test_a_plus_is_a_space_and_an_argument_without_value_is_empty() -> None:
    # application/x-www-form-urlencoded (the HTML standard's parser, which §3.1.1.2 names)
    assert oaipmh.form_pairs(b"verb=List+Sets&set&&x=%2B") == [("verb", "List Sets"), ("set", ""), ("x", "+")]


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_an_oai_identifier_escaping_octets_that_are_not_utf_8_is_a_bad_argument(
        resolver: tuple[TestClient, str, str], method: str) -> None:
    client, generic, _ = resolver
    query = f"verb=GetRecord&metadataPrefix=oai_dc&identifier={generic}%FF"
    if method == "GET":
        answer = client.get(f"/oai?{query}")
    else:
        answer = client.post("/oai", content=query.encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 200, answer.text
    # not the identifier with U+FFFD in the octet's place, answered idDoesNotExist: an identifier never sent
    assert '<error code="badArgument">' in answer.text and "identifier" in answer.text, answer.text
    assert "\ufffd" not in answer.text
    found = client.get(f"/oai?verb=GetRecord&metadataPrefix=oai_dc&identifier={quote_from_bytes(generic.encode())}")
    assert "<error" not in found.text and generic in found.text


# --- Authorization: Bearer (RFC 6750 §2.1) ---------------------------------------------------------------------
_B64_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/")


def _is_b64token(text: str) -> bool:
    """b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" """
    body = text.rstrip("=")
    return bool(body) and all(c in _B64_CHARACTERS for c in body)


@given(st.text(st.sampled_from("aZ09-._~+/= \t,;\"\xa0é\x85"), max_size=12))
def test_a_bearer_credential_is_a_b64token_or_malformed(secret: str) -> None:
    # credentials = "Bearer" 1*SP b64token: the spaces after the scheme's one are the 1*SP, any after the token are
    # the field's own trailing OWS (RFC 9110 §5.5)
    status, detail, error = refused_authorization("Bearer", secret)
    if _is_b64token(secret.strip(" \t")):
        assert (status, error) == (0, None)
    else:
        assert (status, error) == (400, "invalid_request") and "Bearer" in detail


@pytest.mark.parametrize("field", ["Bearer a b", "Bearer pdi_x,y", "Bearer pdi_é", "Bearer pdi_a=b", "Bearer \"pdi_a\""])
def test_what_is_no_bearer_token_is_400_invalid_request(resolver: tuple[TestClient, str, str], field: str) -> None:
    client, _, secret = resolver
    # a token pdi never makes is malformed (RFC 6750 §3.1 invalid_request), not one unknown or revoked (401)
    answer = client.get("/api/series", headers={"Authorization": field.encode("utf-8")})
    assert answer.status_code == 400, answer.text
    assert answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="invalid_request"'
    assert "no bearer token" in answer.json()["detail"] and "pdi_" not in answer.json()["detail"]
    assert client.get("/api/series", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
    assert client.get("/api/series", headers={"Authorization": "Bearer pdi_unknown"}).status_code == 401


# --- the query's octets (RFC 3986 §2: a URI is ASCII, any other octet %-escaped) -------------------------------
async def _asgi_get(app: object, path: str, query: bytes) -> tuple[int, bytes]:
    """A GET sent to ``app`` as an ASGI server that passes the target's octets on as they came would send it (an
    HTTP/2 ``:path`` is octets); its status and body."""
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": query, "root_path": "",
             "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    await app(scope, receive, send)  # type: ignore[operator]
    status = next(int(m["status"]) for m in sent if m["type"] == "http.response.start")  # type: ignore[call-overload]
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]


_PATHS = ["/uri-res/N2R", "/uri-res/N2Ls", "/oai", "/api/manifest", "/timegate/http://x.example/", "/api/annotation",
          "/api/series", "/search"]


@given(st.sampled_from(_PATHS), st.binary(max_size=12), st.sampled_from([b"", b"urn:pdi:", b"verb=Identify&x=", b"pdi="]))
def test_a_query_of_any_octets_is_answered_never_a_failure(
        resolver: tuple[TestClient, str, str], path: str, octets: bytes, before: bytes) -> None:
    client, _, _ = resolver
    query = before + octets
    status, body = client.portal.call(_asgi_get, client.app, path, query)  # type: ignore[union-attr]
    assert status < 500, body
    if not query.isascii():  # no URL holds it: refused as pdi serve's parser refuses it, saying why
        assert status == 400 and b"beyond ASCII" in body, body


# --- Content-Length = 1*DIGIT (RFC 9110 §8.6) ------------------------------------------------------------------
@given(st.sampled_from([0, 1, 10]) | st.integers(0, 10**6), st.integers(0, 3))
def test_a_content_length_of_zero_however_written_sends_no_content(length: int, zeros: int) -> None:
    written = ("0" * zeros + str(length)).encode()
    assert sends_content([(b"content-length", written)]) == (length > 0)


def test_a_get_with_content_length_00_and_a_coding_is_answered(resolver: tuple[TestClient, str, str]) -> None:
    # no content (00 octets), so no content in a coding to refuse: answered as the GET it is, not 415
    client, generic, _ = resolver
    answer = client.get(f"/uri-res/N2C?{generic}", headers={"Content-Length": "00", "Content-Encoding": "gzip"})
    assert answer.status_code == 200, answer.text


# --- a URI-R after /timegate/ and /timemap/link/, as sent or as one encoded segment (RFC 3986, RFC 3987 §3.1) ----
def _route_target(path: str) -> str:
    """The URI-R the Memento routes read after ``/timegate/`` in ``path``, the path's octets as a client sent them."""
    from starlette.requests import Request

    from pdi.server.protocol.memento_oaipmh import _target

    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode("ascii"), "query_string": b"",
             "headers": [], "path_params": {}}
    return _target(Request(scope), "/timegate/")


#: RFC 3986's characters of a path (pchar and "/"), and two beyond ASCII: an IRI's (RFC 3987 §2.2 ucschar).
_IRI_PATHS = st.text(st.sampled_from("az09-._~!$&'()*+,;=:@/é€"), max_size=12)


@given(_IRI_PATHS)
def test_an_iri_sent_as_one_encoded_segment_is_the_uri_sent_as_it_is(path: str) -> None:
    # a client sends an IRI's path as a URI: its characters beyond ASCII %-escaped as UTF-8 (RFC 3987 §3.1), as
    # urllib.parse.quote writes them; encodeURIComponent (quote with safe="") escapes every reserved character too
    iri = f"https://example.org/{path}"
    as_sent = quote_from_bytes(iri.encode("utf-8"), safe=":/?#[]@!$&'()*+,;=-._~")
    encoded = quote_from_bytes(iri.encode("utf-8"), safe="")
    assert _route_target("/timegate/" + as_sent) == as_sent
    assert _route_target("/timegate/" + encoded) == as_sent, encoded


def test_cafe_sent_encoded_is_not_read_as_latin_1() -> None:
    assert _route_target("/timegate/https%3A%2F%2Fexample.com%2Fcaf%C3%A9") == "https://example.com/caf%C3%A9"
    # a URI holding escapes of its own keeps them: its % sent as %25
    assert _route_target("/timegate/https%3A%2F%2Fexample.com%2Fcaf%25C3%25A9") == "https://example.com/caf%C3%A9"
