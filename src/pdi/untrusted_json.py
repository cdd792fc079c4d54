"""JSON that others wrote (a request's body or field, a peer's answer, a file): read, or refused with one error.

``json.loads`` fails three ways on what a stranger sends: not JSON (``ValueError``), not UTF-8 text
(``UnicodeDecodeError``, a ``ValueError`` too), and nested deeper than Python's recursion allows
(``RecursionError``: ``[[[[…]]]]`` of a few hundred kilobytes). Each is a :class:`~pdi.errors.ParseError` here,
naming what was read; the last says so in words rather than as the interpreter's limit.

And it takes what RFC 8259 does not, or what pdi cannot keep: ``NaN``, ``Infinity`` and numbers past a double
(``1e400``, read as infinity), which no strict reader takes back when pdi writes them again (§6); and a lone
surrogate escape (``"\\ud800"``), no character (§8.2), which fails when the value is written as UTF-8 or kept.
It builds every value at once, about 60 octets of memory for each ``[]`` of three octets, and a value nested
deeper than Python recursion reaches when the value is walked later is a crash there. So a text that could be
past either bound (longer than ``most`` octets, since every value takes one at least; or with more than
:data:`MAX_DEPTH` brackets that :func:`_shallow` cannot show to nest within :data:`SHALLOW` levels) is read first
by a streaming reader that builds nothing (ijson's C backend, events counted): past :data:`MAX_DEPTH` levels or
``most`` values (:data:`MAX_VALUES`), or any of those, it is refused before ``json.loads`` builds a thing.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from typing import Any

from pdi.errors import LimitError, ParseError

#: The deepest nesting read (an annotation, a manifest, a registry is a few levels deep).
MAX_DEPTH = 100
#: Levels a text is found to nest within by :func:`_shallow` (a manifest, a key set, a JWS header nest three or
#: four), below :data:`MAX_DEPTH`; one deeper is counted by the streaming reader.
SHALLOW = 8
#: The most values (each object, array, key, string, number, true, false, null) read by default.
MAX_VALUES = 1_000_000

#: A ``\u`` escape of a surrogate (U+D800 to U+DFFF): a pair of them is one character; one alone is none.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_STARTS = frozenset({"start_map", "start_array"})
#: A run of digits a 64-bit integer may not hold (18 fit whatever they are).
_LONG_DIGITS = re.compile(rb"[0-9]{18,}")
_ENDS = frozenset({"end_map", "end_array"})
#: A JSON string (RFC 8259 §7), or what is left of the text after an opening quote that none closes: a string
#: that cannot fail to match, so that each of a million unclosed quotes is not read to the end again.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
#: Every octet but the four brackets (for ``bytes.translate`` to take away).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: An empty array or object, innermost: what one round of :func:`_shallow` takes away.
_INNERMOST = re.compile(rb"\[\]|\{\}")


def loads(data: str | bytes, what: str, *, rule: str, most: int = MAX_VALUES, unique_keys: bool = False) -> Any:
    """The JSON value of ``data``; a :class:`ParseError` of grammar ``rule`` saying ``what`` is not JSON, and why
    (a :class:`~pdi.errors.LimitError` when it holds more than ``most`` values).

    ``unique_keys``: an object that names a member twice is refused too, naming where (an RFC 6901 JSON pointer,
    also the error's ``pointer`` detail). RFC 8259 §4: its names SHOULD be unique, and readers differ on which of
    two is meant (Python's, JavaScript's: the last; others the first), so what a client meant by one is not known,
    and what pdi checked (an annotation's target) could be another reader's other member."""
    if isinstance(data, str):
        text = data
        if _SURROGATE.search(text) is not None:
            raise ParseError(f"{what} is not JSON pdi reads: it holds a lone surrogate, which is no character",
                             rule=rule)
        raw = text.encode("utf-8")
    else:
        raw = data[3:] if data[:3] == b"\xef\xbb\xbf" else data
        try:  # strictly: Python's reader would take UTF-16, and a surrogate's three octets (surrogatepass)
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"{what} is not JSON: it is not UTF-8 (RFC 8259 §8.1): {exc}", rule=rule) from None
    if len(raw) > most or (raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and not _shallow(raw)):
        _bounded(raw, what, rule, most)  # else it cannot pass either bound
    repeated: list[bool] = []
    hook = None if not unique_keys else functools.partial(_unique_members, repeated)
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=hook,
                           parse_int=_integers(raw))
    except _BeyondJSON:
        raise ParseError(f"{what} is not JSON: {_BEYOND}", rule=rule) from None
    except _LongInteger as exc:
        raise ParseError(f"{what} is not JSON pdi reads: {exc}", rule=rule) from None
    except RecursionError:  # pragma: no cover - the streaming pass refuses it first
        raise ParseError(f"{what} is not JSON pdi reads: it is nested too deep", rule=rule) from None
    except ValueError as exc:
        raise ParseError(f"{what} is not JSON: {exc}", rule=rule) from None
    if "\\u" in text and _SURROGATE_ESCAPE.search(raw) is not None and _holds_lone_surrogate(value):
        raise ParseError(f"{what} is not JSON pdi reads: it holds a lone surrogate (a \\ud800-\\udfff escape not in"
                         " a pair), which is no character", rule=rule)
    if repeated:
        where, name = _repeated_member(raw)
        refused = ParseError(f"{what} is not JSON pdi reads: an object names its member {json.dumps(name[:80], ensure_ascii=False)} twice, at"
                             f" {where[:200]} (RFC 8259 §4: the names within an object should be unique)", rule=rule)
        refused.details = {"pointer": where}
        raise refused
    return value


def _unique_members(repeated: list[bool], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of ``json.loads``'s, ``repeated`` told (given a value) when it names a member twice."""
    members = dict(pairs)
    if len(members) != len(pairs) and not repeated:
        repeated.append(True)
    return members


def _repeated_member(raw: bytes) -> tuple[str, str]:
    """The JSON pointer (RFC 6901) of the first member an object of ``raw`` names again, and that name: read by the
    streaming reader, keeping only the path it is on (``raw`` is JSON that ``json.loads`` read)."""
    import ijson

    scanned = _LONG_DIGITS.sub(b"0", raw) if _LONG_DIGITS.search(raw) is not None else raw
    path: list[list[Any]] = []  # each open container: [names seen, the member it is in] or [None, the item's index]
    for event, value in ijson.basic_parse(scanned, use_float=True):
        if event == "map_key":
            seen = path[-1][0]
            if value in seen:
                tokens = [str(step[1]) for step in path[:-1]] + [value]
                return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens), value
            seen.add(value)
            path[-1][1] = value
            continue
        if event in _ENDS:
            path.pop()
            continue
        if path and path[-1][0] is None:  # a value of an array: its next item
            path[-1][1] += 1
        if event == "start_map":
            path.append([set(), ""])
        elif event == "start_array":
            path.append([None, -1])
    raise AssertionError("json.loads found a member named twice that the streaming reader did not")  # pragma: no cover


def _shallow(raw: bytes) -> bool:
    """Whether ``raw``, if it is JSON, is sure to nest no deeper than :data:`MAX_DEPTH` levels, found at the speed
    of ``re`` rather than by the streaming reader's events counted in Python (a mirror's manifest page of 1,000
    names, a thousand objects, took 10 to 50 ms so): its brackets outside strings, the innermost pairs taken away
    at each round, are all gone within :data:`SHALLOW` rounds. ``False`` when they are not (deeper, or not JSON:
    the streaming reader then counts, and says why in its words); what is not JSON whatever this says,
    ``json.loads`` refuses, going no deeper than its brackets before the first fault."""
    # without a backslash no quote is escaped: the text between quotes alternates, outside and in (quicker than re)
    outside = _STRING.sub(b"", raw) if b"\\" in raw else b"".join(raw.split(b'"')[0::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    for _ in range(SHALLOW):  # a few rounds, each a pass over the brackets: not a hundred over a stranger's millions
        if not brackets:
            return True
        brackets = _INNERMOST.sub(b"", brackets)
    return not brackets


def _bounded(raw: bytes, what: str, rule: str, most: int) -> None:
    """Read ``raw`` with a streaming reader, building nothing: a :class:`ParseError` past :data:`MAX_DEPTH` or for
    what it refuses (not JSON, ``NaN``, a number past a double), a :class:`LimitError` past ``most`` values."""
    import ijson

    depth = 0
    values = 0
    # yajl reads an integer as 64 bits and refuses a longer one: each run of 18 digits or more is one 0 for this
    # pass (a number still, a string still), which only counts
    scanned = _LONG_DIGITS.sub(b"0", raw) if _LONG_DIGITS.search(raw) is not None else raw
    try:
        for event, _ in ijson.basic_parse(scanned, use_float=True):
            values += 1
            if event in _STARTS:
                depth += 1
                if depth > MAX_DEPTH:
                    raise ParseError(f"{what} is not JSON pdi reads: it is nested more than {MAX_DEPTH} levels deep",
                                     rule=rule)
            elif event in _ENDS:
                depth -= 1
                values -= 1  # an end is no value
            if values > most:
                raise LimitError(f"{what} holds more than {most:,} JSON values, more than pdi reads at once")
    except (ijson.JSONError, UnicodeDecodeError) as exc:  # the second: a key of a lone surrogate's escape
        reason = exc.args[0] if exc.args else ""
        said = (reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason))
        said = said.split("\n", 1)[0].strip()[:200]
        if len(raw) <= 1 << 20:  # small: Python's reader says where, in its words
            try:
                json.loads(raw, parse_constant=_no_constant, parse_float=_finite, parse_int=_integers(raw))
            except _BeyondJSON:
                said = _BEYOND
            except _LongInteger as long:
                said = str(long)
            except RecursionError:
                pass
            except ValueError as python:
                said = str(python)
        raise ParseError(f"{what} is not JSON: {said}", rule=rule) from None


_BEYOND = "it holds NaN, Infinity or a number past a double's range (1e400), which JSON does not (RFC 8259 §6)"


class _BeyondJSON(Exception):
    """A number :data:`_BEYOND` says."""


def _no_constant(name: str) -> Any:
    raise _BeyondJSON(name)


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise _BeyondJSON(text)
    return number


class _LongInteger(Exception):
    """An integer of more digits than Python converts (``sys.get_int_max_str_digits``), said in pdi's words."""


def _integers(raw: bytes) -> Any:
    """``json.loads``'s ``parse_int`` for ``raw``: ``None`` (its own, quicker) unless a run of digits in ``raw`` is
    longer than Python converts to an integer, which it refuses in the interpreter's words ("Exceeds the limit (4300
    digits) for integer string conversion …; use sys.set_int_max_str_digits()"): then one that refuses such an
    integer in pdi's (RFC 8259 §6 lets a reader limit the numbers it takes), naming its length."""
    most = sys.get_int_max_str_digits()
    if not most or re.search(rb"[0-9]{%d}" % (most + 1), raw) is None:
        return None

    def integer(text: str) -> int:
        digits = len(text) - text.startswith("-")
        if digits > most:
            raise _LongInteger(f"it holds an integer of {digits:,} digits, more than the {most:,} pdi reads"
                               " (RFC 8259 §6 lets a reader limit the numbers it takes)")
        return int(text)

    return integer


def _holds_lone_surrogate(value: Any) -> bool:
    """Whether a value read from JSON holds a lone surrogate in a string or a key (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item) is not None:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
