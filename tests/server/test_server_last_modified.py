"""``Last-Modified``, ``If-Modified-Since``, ``If-Unmodified-Since`` and an ``If-Range`` date on N2R (RFC 9110
§8.8.2, §13.1.3, §13.1.4, §13.1.5, §13.2.2).

The stored bytes of a versioned name never change after their deposit, so
an N2R answer's ``Last-Modified`` is the deposit time (here the archive's
clock, set by the test) and every date a request holds is compared with it.
Expected values are worked out from the RFC with the standard library's
own date formatting (``email.utils.format_datetime``, ``time.strftime``),
not from pdi's answers; each request is asked over a socket of uvicorn
with ``pdi serve``'s protocol twice, so that the second answer (the name
kept by then) comes from the worker's cache where it may, and through
the app alone without a cache: all must agree.
"""

from __future__ import annotations

import calendar
import datetime
import email.utils
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from server_helpers import exchange
from test_server_cache_protocol import _serving

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.http.conditional import http_date

S = "dated.example.us"
DEPOSITED = datetime.datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=datetime.UTC)
#: Past STREAM_FROM (4 MiB): streamed by verified chunks, never kept whole.
LARGE = b"0123456789abcdef" * (5 << 16)


def _imf(moment: datetime.datetime) -> str:
    return email.utils.format_datetime(moment.replace(microsecond=0), usegmt=True)


def _rfc850(moment: datetime.datetime) -> str:
    return time.strftime("%A, %d-%b-%y %H:%M:%S GMT", moment.utctimetuple())


def _asctime(moment: datetime.datetime) -> str:
    return time.asctime(moment.utctimetuple())  # "Wed Mar  4 05:06:07 2026": a space before a one-digit day


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    location = tmp_path_factory.mktemp("dated") / "archive"
    with Archive.init(location, clock=lambda: DEPOSITED) as archive:
        archive.add_series(S)
        small = str(archive.add(S, b"Hello, dated world.\n", format="text"))
        large = str(archive.add(S, LARGE, format="text"))
    return str(location), small, large


def _request(name: str, method: str = "GET", **fields: str) -> bytes:
    lines = [f"{method} /uri-res/N2R?{name} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _head(answer: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    fields = {}
    for line in lines[1:]:
        key, _, value = line.partition(b":")
        fields[key.strip().lower()] = value.strip()
    return int(lines[0].split(b" ")[1]), fields, body


def _asked(location: str, requests: list[bytes]) -> list[list[tuple[int, dict[bytes, bytes], bytes]]]:
    """Each request's answer: through the protocol and its cache, asked twice; and through the app alone."""
    answers = []
    with _serving(create_app(location)) as (port, _):
        answers.append([_head(a) for a in exchange(port, requests)])
        answers.append([_head(a) for a in exchange(port, requests)])
    with _serving(create_app(location, cache_bytes=0), cached=False) as (port, _):
        answers.append([_head(a) for a in exchange(port, requests)])
    return answers


@pytest.mark.parametrize("which", ["small", "large"])
def test_dates_are_read_against_the_deposit_time(archived: tuple[str, str, str], which: str) -> None:
    location, small, large = archived
    name = small if which == "small" else large
    at = DEPOSITED
    second = datetime.timedelta(seconds=1)
    cases = [  # (request fields, the status RFC 9110 gives)
        ({}, 200),
        ({"If_Modified_Since": _imf(at)}, 304),  # §13.1.3: not modified since the date
        ({"If_Modified_Since": _imf(at + datetime.timedelta(days=400))}, 304),
        ({"If_Modified_Since": _imf(at - second)}, 200),  # modified a second after it
        ({"If_Modified_Since": _rfc850(at)}, 304),  # the obsolete forms a recipient must read (§5.6.7)
        ({"If_Modified_Since": _asctime(at)}, 304),
        ({"If_Modified_Since": "yesterday"}, 200),  # not an HTTP-date: ignored
        ({"If_Modified_Since": f"{_imf(at)}, {_imf(at)}"}, 200),  # a list: ignored
        ({"If_Modified_Since": _imf(at), "If_None_Match": '"another"'}, 200),  # ignored beside If-None-Match
        ({"If_Unmodified_Since": _imf(at)}, 200),  # §13.1.4
        ({"If_Unmodified_Since": _imf(at - second)}, 412),
        ({"If_Unmodified_Since": _imf(at - second), "If_Match": "*"}, 200),  # ignored beside If-Match
        ({"If_Unmodified_Since": "not a date"}, 200),
        ({"If_Unmodified_Since": _imf(at - second), "If_Modified_Since": _imf(at)}, 412),  # §13.2.2: step 2 first
        ({"Range": "bytes=0-4", "If_Range": _imf(at)}, 206),  # §13.1.5: the date is the Last-Modified
        ({"Range": "bytes=0-4", "If_Range": _imf(at + second)}, 200),  # any other date: the whole
        ({"If_Modified_Since": "Sat, 01 Jan 0000 00:00:00 GMT"}, 200),  # no day of the calendar: ignored
        ({"If_Unmodified_Since": "Sat, 01 Jan 0000 00:00:00 GMT"}, 200),
    ]
    requests = [_request(name, **fields) for fields, _ in cases]
    requests.append(_request(name, "HEAD", If_Modified_Since=_imf(at)))
    # the field on two lines is a list, which §13.1.3 and §13.1.4 say to ignore
    requests.append(_request(name, If_Modified_Since=_imf(at)).replace(
        b"\r\n\r\n", f"\r\nIf-Modified-Since: {_imf(at)}\r\n\r\n".encode()))
    requests.append(_request(name, If_Unmodified_Since=_imf(at - second)).replace(
        b"\r\n\r\n", f"\r\nIf-Unmodified-Since: {_imf(at - second)}\r\n\r\n".encode()))
    expected = [status for _, status in cases] + [304, 200, 200]
    answers = _asked(location, requests)
    for run in answers:
        assert [status for status, _, _ in run] == expected
    whole, modified_since = answers[0][0], answers[0][1]
    assert whole[1][b"last-modified"] == _imf(at).encode()  # the deposit's second: .89 s is not said
    assert modified_since[1][b"etag"] == whole[1][b"etag"] and modified_since[2] == b""
    assert b"last-modified" not in answers[0][10][1]  # a 412 is a problem, not the bytes
    ranged = answers[0][14]
    assert ranged[1][b"content-range"] == f"bytes 0-4/{len(LARGE) if which == 'large' else 20}".encode()
    assert ranged[2] == (LARGE[:5] if which == "large" else b"Hello")
    # the cache gives what the app gives (the Date aside)
    for first, again, alone in zip(*answers, strict=True):
        for one in (again, alone):
            assert (first[0], {k: v for k, v in first[1].items() if k != b"date"}, first[2]) == (
                one[0], {k: v for k, v in one[1].items() if k != b"date"}, one[2])


#: RFC 9110 §8's representation header fields (§8.3 to §8.6, §8.8.2) a 206 to an If-Range repeats none of, but
#: where §15.3.7.2 requires one (a multipart's Content-Type).
REPRESENTATION_FIELDS = (b"content-type", b"content-encoding", b"content-language", b"last-modified")


@pytest.mark.parametrize("which", ["small", "large"])
def test_a_206_to_an_if_range_repeats_no_representation_field(archived: tuple[str, str, str], which: str) -> None:
    """§15.3.7: "A sender that generates a 206 response to a request with an If-Range header field SHOULD NOT
    generate other representation header fields beyond those required, because the client already has a prior
    response containing those header fields." Required: Date, Cache-Control, ETag, Expires, Content-Location and
    Vary where a 200 sends them; Content-Range of one part (§15.3.7.1); a multipart's Content-Type (§15.3.7.2)."""
    location, small, large = archived
    name = small if which == "small" else large
    requests = [_request(name), _request(name, Range="bytes=0-4"),
                _request(name, Range="bytes=0-4", If_Range=_imf(DEPOSITED)),
                _request(name, Range="bytes=0-1,1000000-1000001", If_Range=_imf(DEPOSITED))]
    for whole, ranged, held, parts in _asked(location, requests):
        assert [whole[0], ranged[0], held[0], parts[0]] == [200, 206, 206, 206]
        assert ranged[1][b"content-type"] == whole[1][b"content-type"]  # no If-Range: the client may have nothing
        assert held[1][b"content-range"] == ranged[1][b"content-range"] and held[2] == ranged[2]
        for required in (b"cache-control", b"etag", b"expires", b"content-location", b"vary"):
            assert held[1].get(required) == whole[1].get(required), required
            assert parts[1].get(required) == whole[1].get(required), required
        repeated = [field for field in REPRESENTATION_FIELDS if field in held[1]]
        assert repeated == [], f"a 206 to If-Range repeats {repeated}"
        if which == "small":  # 20 octets: the second range selects none, the first is answered alone (§14.1.2)
            assert parts[1][b"content-range"] == b"bytes 0-1/20" and b"content-type" not in parts[1]
            continue
        assert parts[1][b"content-type"].startswith(b"multipart/byteranges; boundary="), sorted(parts[1])
        repeated = [field for field in REPRESENTATION_FIELDS[1:] if field in parts[1]]
        assert repeated == [], f"a multipart 206 to If-Range repeats {repeated}"


#: Metadata of the whole representation a 200 sends beside the RFC 9110 §8 fields, which the client of an If-Range
#: has from that prior response too: the stored octets' SHA-256 (what RFC 9530's Repr-Digest says, a digest of the
#: selected representation).
ABOUT_THE_WHOLE = (b"x-pdi-sha256",)
#: What a 206 to If-Range keeps all the same: RFC 7089 §2.1.1 (a memento's answer MUST carry Memento-Datetime),
#: Link (RFC 8288: no representation field; RFC 7089 §2.2.1: a memento's answer SHOULD carry its original and
#: timegate) and the security fields, which are about this answer's handling, not the representation (CSP; nosniff).
KEPT_TO_IF_RANGE = (b"memento-datetime", b"link", b"content-security-policy", b"x-content-type-options")


@pytest.mark.parametrize("which", ["small", "large"])
def test_a_206_to_an_if_range_repeats_no_digest_but_keeps_memento_datetime_link_and_csp(
        archived: tuple[str, str, str], which: str) -> None:
    location, small, large = archived
    name = small if which == "small" else large
    requests = [_request(name), _request(name, Range="bytes=0-4"),
                _request(name, Range="bytes=0-4", If_Range=_imf(DEPOSITED)),
                _request(name, Range="bytes=0-1,7-8", If_Range=_imf(DEPOSITED))]
    for whole, ranged, held, parts in _asked(location, requests):
        assert [whole[0], ranged[0], held[0], parts[0]] == [200, 206, 206, 206]
        for field in ABOUT_THE_WHOLE:
            assert field in whole[1] and ranged[1].get(field) == whole[1][field], field  # no If-Range: all of it
            assert field not in held[1] and field not in parts[1], f"a 206 to If-Range repeats {field!r}"
        for field in KEPT_TO_IF_RANGE:
            assert field in whole[1], field
            assert held[1].get(field) == parts[1].get(field) == whole[1][field], field


def test_an_if_range_date_of_the_deposits_own_second_is_no_strong_validator(tmp_path: Path) -> None:
    """§8.8.2.2: a Last-Modified less than a second before the answer's Date may have changed within that second."""
    now = datetime.datetime.now(datetime.UTC)
    with Archive.init(tmp_path / "archive", clock=lambda: now + datetime.timedelta(seconds=30)) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"Deposited in the future\n", format="text"))
    ranged = _request(name, Range="bytes=0-4", If_Range=_imf(now + datetime.timedelta(seconds=30)))
    with _serving(create_app(str(tmp_path / "archive"), cache_bytes=0), cached=False) as (port, _):
        status, _, body = _head(exchange(port, [ranged])[0])
    assert status == 200 and body == b"Deposited in the future\n"


_MOMENTS = st.datetimes(min_value=datetime.datetime(1970, 1, 1), max_value=datetime.datetime(9999, 12, 31, 23, 59, 59),
                        timezones=st.just(datetime.UTC))


@given(_MOMENTS)
def test_an_imf_fixdate_is_read_as_python_writes_it(moment: datetime.datetime) -> None:
    assert http_date(_imf(moment)) == calendar.timegm(moment.utctimetuple())


@given(_MOMENTS)
def test_an_asctime_date_is_read_as_python_writes_it(moment: datetime.datetime) -> None:
    assert http_date(_asctime(moment)) == calendar.timegm(moment.utctimetuple())


@given(st.datetimes(min_value=datetime.datetime(1900, 1, 1), max_value=datetime.datetime(2199, 12, 31),
                    timezones=st.just(datetime.UTC)))
def test_an_rfc850_date_is_read_in_the_century_fifty_years_allow(moment: datetime.datetime) -> None:
    """§5.6.7: a two-digit year whose timestamp would be more than 50 years ahead is the last year before with those
    digits."""
    now = datetime.datetime.now(datetime.UTC)
    year = now.year - now.year % 100 + moment.year % 100
    if (year, *moment.utctimetuple()[1:6]) > (now.year + 50, *now.utctimetuple()[1:6]):
        year -= 100
    assert http_date(_rfc850(moment)) == calendar.timegm(moment.replace(year=year).utctimetuple()) if not (
        moment.month == 2 and moment.day == 29 and calendar.isleap(year) is False) else http_date(_rfc850(moment)) is None


def test_an_rfc850_date_more_than_fifty_years_ahead_by_its_timestamp_is_a_century_before() -> None:
    """§5.6.7: "a timestamp that appears to be more than 50 years in the future" is read in the past: the timestamp,
    not the year alone. In the year fifty years on, its last second is more than 50 years ahead (a century before),
    its first is not (as written), whatever today is but its own first or last second."""
    ahead = datetime.datetime.now(datetime.UTC).year + 50
    last = datetime.datetime(ahead - 100, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)
    first = datetime.datetime(ahead, 1, 1, tzinfo=datetime.UTC)
    for meant in (last, first):
        assert http_date(_rfc850(meant)) == calendar.timegm(meant.utctimetuple()), _rfc850(meant)


@given(st.text(max_size=40))
def test_anything_else_is_no_date_or_one_python_reads_alike(text: str) -> None:
    read = http_date(text)
    if read is not None and "-" not in text:  # then Python's own reader of dates agrees (not of a two-digit year)
        parsed = email.utils.parsedate(text)
        assert parsed is not None and calendar.timegm((*parsed[:6], 0, 0, 0)) == read


@pytest.mark.parametrize("text", ["Sat, 01 Jan 0000 00:00:00 GMT", "Sun Jan  1 00:00:00 0000",
                                  "Sun, 31 Feb 2026 00:00:00 GMT", "Sun, 01 Jan 2026 24:00:00 GMT",
                                  "Sun, 01 Jan 2026 00:00:00 UTC", "Sun, 1 Jan 2026 00:00:00 GMT",
                                  "Sunday, 01 Jan 2026 00:00:00 GMT", "Sun, 01 Jan 2026 00:00:00 GMT junk", ""])
def test_what_is_not_an_http_date(text: str) -> None:
    assert http_date(text) is None
