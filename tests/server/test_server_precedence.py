"""Every conditional field of an N2R at once, against RFC 9110's rules written out here: §13.2.2's order
(``If-Match``, else ``If-Unmodified-Since``: ``412``; ``If-None-Match``, else ``If-Modified-Since``: ``304``;
``If-Range``, then ``Range``), §13.1's fields (entity-tag lists compared strongly or weakly, HTTP-dates of
§5.6.7's three forms, an invalid date ignored), §13.1.5 (``If-Range``: a strong tag, or the very date of a
``Last-Modified`` a second or more old; a weak tag never holds) and §14 (``206``, one part or
``multipart/byteranges`` read back by the ``email`` package; ``416`` with ``bytes */length``; an invalid
``Range`` ignored). ``HEAD`` ignores ``Range`` (§14.2) and otherwise is answered as its ``GET``.

Asked of uvicorn's protocol and of ``pdi serve``'s own making answers itself, twice each (the second meets the
answer cache), of a text the cache keeps whole and of one streamed by chunks.
"""

from __future__ import annotations

import calendar
import email.parser
import email.policy
import re
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_helpers import Served, served_port

from pdi.server.protocol.rfc2169 import rfc2169_query

_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_MONTH = "(" + "|".join(_MONTHS) + ")"


def _date(text: str) -> int | None:
    """RFC 9110 §5.6.7: seconds of an IMF-fixdate, rfc850-date (this century's, as any date here is) or
    asctime-date, case-sensitive, GMT; ``None`` for anything else."""
    text = text.strip(" \t")
    if found := re.fullmatch(rf"({'|'.join(_DAYS)}), ([0-9]{{2}}) {_MONTH} ([0-9]{{4}}) ([0-9]{{2}}):([0-9]{{2}}):"
                             rf"([0-9]{{2}}) GMT", text):
        day, month, year, clock = int(found[2]), found[3], int(found[4]), found.groups()[4:]
    elif found := re.fullmatch(rf"({'|'.join(_LONG_DAYS)}), ([0-9]{{2}})-{_MONTH}-([0-9]{{2}}) ([0-9]{{2}}):"
                               rf"([0-9]{{2}}):([0-9]{{2}}) GMT", text):
        day, month, year, clock = int(found[2]), found[3], 2000 + int(found[4]), found.groups()[4:]
    elif found := re.fullmatch(rf"({'|'.join(_DAYS)}) {_MONTH} ([0-9]{{2}}| [0-9]) ([0-9]{{2}}):([0-9]{{2}}):"
                               rf"([0-9]{{2}}) ([0-9]{{4}})", text):
        day, month, year, clock = int(found[3]), found[2], int(found[7]), found.groups()[3:6]
    else:
        return None
    hour, minute, second = map(int, clock)
    number = _MONTHS.index(month) + 1
    if not (1 <= day <= calendar.monthrange(year, number)[1] and hour < 24 and minute < 60 and second <= 60):
        return None
    return calendar.timegm((year, number, day, hour, minute, second))


def _written(seconds: int, form: int) -> str:
    """``seconds`` as an HTTP-date of form 0 (IMF-fixdate), 1 (rfc850-date) or 2 (asctime-date)."""
    t = time.gmtime(seconds)
    clock = f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    if form == 0:
        return f"{_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon - 1]} {t.tm_year} {clock} GMT"
    if form == 1:
        return f"{_LONG_DAYS[t.tm_wday]}, {t.tm_mday:02d}-{_MONTHS[t.tm_mon - 1]}-{t.tm_year % 100:02d} {clock} GMT"
    return f"{_DAYS[t.tm_wday]} {_MONTHS[t.tm_mon - 1]} {t.tm_mday:2d} {clock} {t.tm_year}"


def _tags(field: str) -> list[tuple[bool, str]] | None:
    """§13.1.1, §13.1.2: ``#entity-tag`` read element by element (§5.6.1: commas and white space between, empty
    elements allowed), each ``(weak, opaque tag with its quotes)``; ``None`` when the field is no such list."""
    tags: list[tuple[bool, str]] = []
    at = 0
    while True:
        while at < len(field) and field[at] in " \t,":
            at += 1
        if at == len(field):
            return tags
        found = re.compile(r'(W/)?("[\x21\x23-\x7e]*")').match(field, at)
        if found is None:
            return None
        tags.append((found[1] is not None, found[2]))
        at = found.end()
        while at < len(field) and field[at] in " \t":
            at += 1
        if at < len(field) and field[at] != ",":
            return None


def _ranges(field: str, length: int) -> list[set[int]] | None:
    """§14.1.2: the octets each satisfiable range-spec selects (``[]``: none, ``416``), or ``None``: ignore the
    field (another unit, an invalid range-spec, no range-spec, the last N octets of an empty body)."""
    unit, equals, specs = field.partition("=")
    if not equals or unit.lower() != "bytes":
        return None
    asked = [spec.strip(" \t") for spec in specs.split(",") if spec.strip(" \t")]
    if not asked:
        return None
    selected = []
    for spec in asked:
        if (found := re.fullmatch(r"([0-9]+)-([0-9]*)", spec)) is not None:
            first = int(found[1])
            if found[2] and int(found[2]) < first:
                return None
            last = length - 1 if not found[2] else min(int(found[2]), length - 1)
        elif (found := re.fullmatch(r"-([0-9]+)", spec)) is not None:
            if length == 0 and int(found[1]) > 0:
                return None
            first, last = max(0, length - int(found[1])), length - 1
        else:
            return None
        if first <= last:
            selected.append(set(range(first, last + 1)))
    return selected


def _expected(fields: dict[str, str], tag: str, modified: int, length: int) -> int | list[set[int]]:
    """The status §13.2.2 gives a GET with ``fields`` of an answer tagged ``tag``, last modified at ``modified``;
    for a ``206``, the octets of each satisfiable range asked."""
    if "If-Match" in fields:
        listed = _tags(fields["If-Match"])
        if not (fields["If-Match"] == "*" or (listed is not None and (False, tag) in listed)):
            return 412
    elif (date := _date(fields.get("If-Unmodified-Since", ""))) is not None and modified > date:
        return 412
    if "If-None-Match" in fields:
        listed = _tags(fields["If-None-Match"])
        if fields["If-None-Match"] == "*" or (listed is not None and tag in [opaque for _, opaque in listed]):
            return 304
    elif (date := _date(fields.get("If-Modified-Since", ""))) is not None and modified <= date:
        return 304
    if "Range" not in fields:
        return 200
    if "If-Range" in fields:
        validator = fields["If-Range"]
        if validator.startswith(('"', "W/")):
            holds = validator == tag
        else:
            holds = _date(validator) == modified and modified <= time.time() - 1
        if not holds:
            return 200
    selected = _ranges(fields["Range"], length)
    return 200 if selected is None else selected or 416


def _octets(answer: httpx.Response, length: int) -> dict[int, int]:
    """The octets a ``206`` sends, by position: its one part, or each part of its multipart body, as the ``email``
    package reads it (no part outside the representation, none twice)."""
    sent: dict[int, int] = {}
    if answer.headers.get("content-type", "").startswith("multipart/byteranges"):
        message = email.parser.BytesParser(policy=email.policy.compat32).parsebytes(
            b"Content-Type: " + answer.headers["content-type"].encode("latin-1") + b"\r\n\r\n" + answer.content)
        assert not message.defects and len(message.get_payload()) > 1
        parts = [(str(part["Content-Range"]), part.get_payload(decode=True)) for part in message.get_payload()]
    else:
        parts = [(answer.headers["content-range"], answer.content)]
    for said, payload in parts:
        found = re.fullmatch(r"bytes ([0-9]+)-([0-9]+)/([0-9]+)", said)
        assert found is not None and int(found[3]) == length, said
        first, last = int(found[1]), int(found[2])
        assert isinstance(payload, bytes) and len(payload) == last - first + 1 and last < length
        for at, octet in enumerate(payload, start=first):
            assert at not in sent
            sent[at] = octet
    return sent


def _tag_fields(tag: str) -> st.SearchStrategy[str]:
    element = st.sampled_from([tag, "W/" + tag, '"other"', 'W/"other"', "w/" + tag, tag[:-1], '""'])
    listed = st.lists(element, min_size=1, max_size=3).flatmap(
        lambda tags: st.sampled_from([", ".join(tags), ",".join(tags), " , ".join(tags) + ",", " ".join(tags)]))
    return st.one_of(listed, listed, listed, st.just("*"))


def _date_fields(modified: int) -> st.SearchStrategy[str]:
    written = st.builds(_written, st.integers(modified - 2, modified + 2), st.integers(0, 2))
    invalid = st.one_of(written.map(str.lower), written.map(lambda d: d.replace(" ", "  ", 1)),
                        written.map(lambda d: d + ", " + d), st.just("yesterday"))
    return st.one_of(written, written, written, invalid)


_SPEC = st.one_of(
    st.tuples(st.integers(0, 7000), st.integers(0, 300)).map(lambda pair: f"{pair[0]}-{pair[0] + pair[1]}"),
    st.tuples(st.integers(0, 7000), st.integers(0, 7000)).map(lambda pair: f"{pair[0]}-{pair[1]}"),
    st.integers(0, 7000).map(lambda first: f"{first}-"),
    st.integers(0, 7000).map(lambda suffix: f"-{suffix}"),
    st.sampled_from(["x", "1-2-3", "0-0"]),
)
_RANGE = st.tuples(st.sampled_from(["bytes", "Bytes", "items"]), st.lists(_SPEC, min_size=1, max_size=4),
                   st.sampled_from([",", ", ", " , "])).map(lambda made: f"{made[0]}={made[2].join(made[1])}")


@pytest.mark.parametrize("how", ["uvicorn", "own, public"])
def test_rfc9110_13_2_2_every_conditional_field_at_once(served: Served, how: str) -> None:
    with served_port(served, how) as port, httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        wholes = {name: client.get(f"/uri-res/N2R?{rfc2169_query(name)}") for name in (served.text, served.long)}
        for whole in wholes.values():  # a Last-Modified a second old is a strong validator (§8.8.2.2)
            deposited = _date(whole.headers["last-modified"])
            assert deposited is not None
            time.sleep(max(0.0, deposited + 1.05 - time.time()))

        @settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(st.sampled_from(sorted(wholes)), st.data())
        def check(name: str, data: st.DataObject) -> None:
            whole = wholes[name]
            tag, modified = whole.headers["etag"], _date(whole.headers["last-modified"])
            assert modified is not None
            drawn = {"Range": _RANGE, "If-Match": _tag_fields(tag), "If-None-Match": _tag_fields(tag),
                     "If-Modified-Since": _date_fields(modified), "If-Unmodified-Since": _date_fields(modified),
                     "If-Range": st.one_of(_date_fields(modified), st.sampled_from([tag, "W/" + tag, '"other"']))}
            fields = {key: data.draw(made, label=key) for key, made in drawn.items()
                      if data.draw(st.booleans(), label=f"with {key}")}
            target = f"/uri-res/N2R?{rfc2169_query(name)}"
            wanted = _expected(fields, tag, modified, len(whole.content))
            for _ in range(2):
                answer = client.get(target, headers=fields)
                if isinstance(wanted, int):
                    assert answer.status_code == wanted, (fields, answer.text[:300])
                    if wanted == 200:
                        assert answer.content == whole.content
                    elif wanted == 416:
                        assert answer.headers["content-range"] == f"bytes */{len(whole.content)}"
                else:
                    assert answer.status_code == 206, (fields, answer.text[:300])
                    sent = _octets(answer, len(whole.content))
                    assert set().union(*wanted) <= set(sent)  # every octet asked, and only the representation's
                    assert all(whole.content[at] == octet for at, octet in sent.items())
                head = client.head(target, headers=fields)
                unranged = {key: value for key, value in fields.items() if key not in ("Range", "If-Range")}
                assert head.status_code == _expected(unranged, tag, modified, len(whole.content)), fields
                if head.status_code == 200:
                    assert {k: v for k, v in head.headers.items() if k != "date"} == {
                        k: v for k, v in whole.headers.items() if k != "date"}

        check()
        for name, whole in wholes.items():  # §13.2.2's order, a field at each step
            tag, modified = whole.headers["etag"], _date(whole.headers["last-modified"])
            assert modified is not None
            before, at, after = (_written(modified + off, form) for off, form in ((-1, 1), (0, 0), (1, 2)))
            for fields in ({"If-None-Match": '"other"', "If-Modified-Since": after},  # the date ignored: 200
                           {"If-None-Match": tag, "If-Modified-Since": before},  # the tag answers: 304
                           {"If-Match": '"other"', "If-None-Match": tag},  # If-Match first: 412
                           {"If-Match": "*", "If-Unmodified-Since": before},  # the date ignored: 200
                           {"If-Unmodified-Since": before, "If-None-Match": "*"},  # 412 before 304
                           {"If-Unmodified-Since": at, "If-Modified-Since": at.lower()},  # an invalid date: 200
                           {"If-Modified-Since": after, "Range": "bytes=0-3"},  # 304 before the range
                           {"If-Range": "W/" + tag, "Range": "bytes=0-3"},  # a weak tag never holds: 200
                           {"If-Range": at, "Range": "bytes=0-3"},  # the very date: 206
                           {"If-Range": before, "Range": "bytes=0-3"}):  # another: 200
                wanted = _expected(fields, tag, modified, len(whole.content))
                got = client.get(f"/uri-res/N2R?{rfc2169_query(name)}", headers=fields).status_code
                assert got == (wanted if isinstance(wanted, int) else 206), (name, fields)
