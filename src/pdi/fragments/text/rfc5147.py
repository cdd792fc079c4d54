"""RFC 5147: URI fragment identifiers for text/plain (``char=``, ``line=``, ``length=``, ``md5=``).

Implements, to the letter:

* §3 syntax, with lower-case names only (§3's NOTE)::

    text-fragment   =  text-scheme 0*( ";" integrity-check )
    text-scheme     =  ( char-scheme / line-scheme )
    char-scheme     =  "char=" ( position / range )
    line-scheme     =  "line=" ( position / range )
    integrity-check =  ( length-scheme / md5-scheme ) [ "," mime-charset ]
    position        =  number
    range           =  ( position "," [ position ] ) / ( "," position )
    number          =  1*( DIGIT )
    length-scheme   =  "length=" number
    md5-scheme      =  "md5=" md5-value
    md5-value       =  32HEXDIG

  ``mime-charset`` is RFC 2978's ``1*mime-charset-chars``. Integrity checks
  with other names are kept and ignored (§3.1: "implementations MUST ignore
  new types of integrity checks"); they are written ``name=value`` with a
  lower-case name and a value of any characters but ``;``.
* §2.1 and §4.1 counting: characters are code points after decoding with the
  entity's charset, a leading BOM is not a character, and every line ending
  (CR+LF, LF, CR, NEL, CR+NEL) is one character. Lines include their line
  endings; a text without a line ending is one line; a final line ending does
  not open an empty last line (see ``docs/specs/README.md``).
* §4.2: a position past the end is the end (the selection says ``clamped``);
  an omitted range start is the start, an omitted end the end; a range whose
  first number is *greater* than the second is improperly ordered (§4.4's
  parenthesis is inverted, see ``docs/specs/README.md``) and is rejected.
* §3.1/§2.3/§4.3 integrity checks: ``length`` counts characters as above,
  ``md5`` is over the octets of the entity (BOM included); a check applies
  when its charset is the entity's under any name or alias of the IANA
  registry (:func:`pdi.charsets.same_charset`); one whose charset differs
  is not used unless ``transcode=True``;
  a failed check means the fragment is not interpreted.
* §4.4: a syntax error is never corrected or guessed. By default
  :meth:`TextFragment.parse` and :func:`evaluate_rfc5147` raise
  :class:`~pdi.errors.ParseError` (what, offset, rule) and a failed check
  raises :class:`~pdi.errors.IntegrityError`; with ``on_error="ignore"`` the
  fragment is ignored instead and the selection says why.
"""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal, TypeVar

from pdi._wording import plural
from pdi.charsets import iana_name
from pdi.errors import IntegrityError, LimitError, ParseError, UnsupportedError
from pdi.fragments.results import Range
from pdi.fragments.text.charset import codec_name, same_charset
from pdi.fragments.text.index import Buffer, TextIndex

MAX_DIGITS: Final = 4000
_DIGITS: Final = frozenset("0123456789")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
# RFC 2978 §2.3 mime-charset-chars
_CHARSET_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'+-^_`{}~"
)
_NAME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")

OnError = Literal["raise", "ignore"]


def count_of(digits: str, offset: int) -> int:
    """The number ASCII ``digits`` (at ``offset``) write, leading zeros and all: ``0…01`` is 1, however many zeros.

    More than :data:`MAX_DIGITS` significant digits is a :class:`LimitError`. The zeros go before ``int()``
    reads the digits, whose bound (4,300 digits) counts them too: ``char=`` and 5,000 zeros is position 0.
    """
    significant = digits.lstrip("0")
    if len(significant) > MAX_DIGITS:
        raise LimitError(f"number at offset {offset} has more than {MAX_DIGITS} digits")
    return int(significant) if significant else 0
_F = TypeVar("_F")


@dataclass(frozen=True)
class IntegrityCheck:
    """One ``;name=value[,charset]`` integrity check.

    ``name`` is ``"length"``, ``"md5"`` or the name of a check this
    implementation does not know (kept, never used). ``value`` is the number
    without leading zeros or the hex digits in lower case (an unknown check
    keeps everything after ``=`` as written, and its ``charset`` is ``None``).
    """

    name: str
    value: str
    charset: str | None = None

    @property
    def known(self) -> bool:
        """True for ``length`` and ``md5``, the checks RFC 5147 defines."""
        return self.name in ("length", "md5")

    def __str__(self) -> str:
        value = self.value
        tail = f",{self.charset}" if self.charset is not None else ""
        return f"{self.name}={value}{tail}"


@dataclass(frozen=True)
class TextFragment:
    """An RFC 5147 fragment identifier (the part after ``#``).

    ``start``/``end`` are the numbers as given (``None`` where a range omits
    one); a position has ``is_range`` false and ``start == end``.
    """

    scheme: Literal["char", "line"]
    start: int | None
    end: int | None
    is_range: bool = False
    checks: tuple[IntegrityCheck, ...] = field(default=())

    @classmethod
    def parse(cls, text: str) -> TextFragment:
        """Parse exactly the §3 grammar; raise :class:`ParseError` naming the rule and offset."""
        return _Parser(text).fragment()

    @classmethod
    def position(cls, scheme: Literal["char", "line"], value: int, checks: tuple[IntegrityCheck, ...] = ()) -> TextFragment:
        """``char=value`` or ``line=value``."""
        return cls(scheme, value, value, False, checks)

    @classmethod
    def range(
        cls,
        scheme: Literal["char", "line"],
        start: int | None,
        end: int | None,
        checks: tuple[IntegrityCheck, ...] = (),
    ) -> TextFragment:
        """``char=start,end`` (either end may be ``None``, not both)."""
        if start is None and end is None:
            raise ParseError("a range needs a start or an end", rule="range")
        if start is not None and end is not None and start > end:
            raise ParseError(f"range {start},{end} is not properly ordered", rule="range")
        return cls(scheme, start, end, True, checks)

    def __str__(self) -> str:
        if self.is_range:
            a = "" if self.start is None else str(self.start)
            b = "" if self.end is None else str(self.end)
            body = f"{a},{b}"
        else:
            body = str(self.start)
        checks = "".join(f";{check}" for check in self.checks)
        return f"{self.scheme}={body}{checks}"


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def error(self, message: str, rule: str, offset: int | None = None) -> ParseError:
        return ParseError(message, text=self.text, offset=self.i if offset is None else offset, rule=rule)

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    def number(self, rule: str) -> int:
        start = self.i
        while self.peek() in _DIGITS and self.peek():
            self.i += 1
        digits = self.text[start : self.i]
        if not digits:
            found = repr(self.peek()) if self.peek() else "the end"
            raise self.error(f"expected a digit, found {found}", rule)
        return count_of(digits, start)

    def fragment(self) -> TextFragment:
        text = self.text
        if text.startswith("char="):
            scheme: Literal["char", "line"] = "char"
        elif text.startswith("line="):
            scheme = "line"
        else:
            raise self.error(
                "a text fragment starts with 'char=' or 'line=' (lower case)", "text-scheme", 0
            )
        self.i = 5
        start: int | None
        end: int | None
        is_range = False
        if self.peek() == ",":
            self.i += 1
            start, end, is_range = None, self.number("range"), True
        else:
            start = self.number("position")
            end = start
            if self.peek() == ",":
                self.i += 1
                is_range = True
                if self.peek() in _DIGITS and self.peek():
                    mark = self.i
                    end = self.number("range")
                    if start > end:
                        raise self.error(
                            f"range {start},{end} is not properly ordered (start > end)", "range", mark
                        )
                else:
                    end = None
        checks: list[IntegrityCheck] = []
        while self.i < len(text):
            if self.peek() != ";":
                raise self.error(f"unexpected {self.peek()!r}; expected ';' or the end", "text-fragment")
            self.i += 1
            checks.append(self.check())
        return TextFragment(scheme, start, end, is_range, tuple(checks))

    def check(self) -> IntegrityCheck:
        text = self.text
        start = self.i
        while self.peek() and self.peek() in _NAME_CHARS:
            self.i += 1
        name = text[start : self.i]
        if self.peek() and self.peek() in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            raise self.error(
                f"integrity check names are lower case (RFC 5147 §3): {self.peek()!r} is not", "integrity-check"
            )
        if not name or self.peek() != "=":
            raise self.error("an integrity check is written name=value", "integrity-check")
        self.i += 1
        if name == "length":
            value = str(self.number("length-scheme"))
        elif name == "md5":
            vstart = self.i
            while self.peek() and self.peek() in _HEX:
                self.i += 1
            value = text[vstart : self.i].lower()
            if len(value) != 32:
                raise self.error(
                    f"md5-value is 32 hex digits, found {len(value)}", "md5-value", vstart
                )
        else:
            vstart = self.i
            while self.peek() and self.peek() != ";":
                self.i += 1
            value = text[vstart : self.i]
            if not value:
                raise self.error(f"integrity check {name!r} has no value", "integrity-check")
            return IntegrityCheck(name, value, None)
        charset = None
        if self.peek() == ",":
            self.i += 1
            cstart = self.i
            while self.peek() and self.peek() in _CHARSET_CHARS:
                self.i += 1
            charset = text[cstart : self.i]
            if not charset:
                raise self.error("expected a charset name after ','", "mime-charset")
        return IntegrityCheck(name, value, charset)


@dataclass(frozen=True)
class CheckOutcome:
    """What one integrity check said: ``status`` is ``"ok"``, ``"failed"`` or ``"unchecked"``."""

    check: IntegrityCheck
    status: str
    detail: str = ""


@dataclass(frozen=True)
class TextSelection:
    """The part of a text entity a fragment identifies.

    ``ranges`` are in RFC 5147 characters (or, for the PDI schemes, code
    points of the CRLF-canonical text) with octet offsets into the entity;
    ``text`` and ``data`` are the selected text and octets (several ranges
    concatenated in order). ``interpreted`` is false when the fragment was
    ignored (a syntax error or a failed check with ``on_error="ignore"``):
    the whole entity is then what the reference means, and ``reason`` says
    why. ``integrity`` is ``"ok"``, ``"failed: <check>"`` or ``"unchecked"``;
    ``ignored`` lists parts of the fragment that were not used.
    """

    ranges: tuple[Range, ...]
    text: str
    data: bytes
    clamped: bool
    charset: str
    integrity: str = "unchecked"
    checks: tuple[CheckOutcome, ...] = ()
    interpreted: bool = True
    reason: str | None = None
    ignored: tuple[str, ...] = ()


def not_interpreted(
    index: TextIndex, reason: str, integrity: str = "unchecked", checks: tuple[CheckOutcome, ...] = ()
) -> TextSelection:
    """The selection of a fragment that is not interpreted (§4.4), saying why."""
    return TextSelection(
        ranges=(),
        text="",
        data=b"",
        clamped=False,
        charset=index.encoding.body,
        integrity=integrity,
        checks=checks,
        interpreted=False,
        reason=reason,
    )


def _all_ascii(index: TextIndex, chunk: int = 1 << 20) -> bool:
    """Whether every octet of the entity is ASCII (read a chunk at a time: the entity may be mapped)."""
    for start in range(0, index.size, chunk):
        if not index.octets(start, min(start + chunk, index.size)).isascii():
            return False
    return True


def run_checks(
    checks: tuple[IntegrityCheck, ...],
    index: TextIndex,
    *,
    transcode: bool = False,
    undeclared: bool = False,
) -> tuple[CheckOutcome, ...]:
    """Apply ``length`` and ``md5`` checks to the entity of ``index`` (§3.1, §4.3).

    A check applies when the charset it names is the entity's charset (§2.3:
    any name or alias of the IANA registry, :func:`pdi.charsets.same_charset`).
    ``undeclared`` says that the entity declares no charset and ``index``
    reads it as UTF-8: RFC 2046 would assume US-ASCII, a subset of UTF-8, so
    a check labelled US-ASCII applies too when every octet is ASCII.
    """
    outcomes: list[CheckOutcome] = []
    ascii_entity: bool | None = None
    # each check is one pass over the whole entity: a fragment of 1,600 md5= checks on a 45 MB text took 113 s.
    # What a pass gives is kept for the checks after it, so that a fragment costs one pass per charset it names
    transcoded: dict[str, TextIndex | None] = {}  # by codec; None: the text has a character it cannot encode
    digests: dict[int, str] = {}
    for check in checks:
        if not check.known:
            outcomes.append(CheckOutcome(check, "unchecked", "unknown integrity check, ignored (§3.1)"))
            continue
        target = index
        if check.charset is not None and not same_charset(check.charset, index.charset):
            entity = index.encoding.name
            ascii_subset = False
            if undeclared and entity == "utf-8" and same_charset(check.charset, "US-ASCII"):
                if ascii_entity is None:
                    ascii_entity = _all_ascii(index)
                ascii_subset = ascii_entity
                entity = "UTF-8 with octets that are not ASCII (no charset declared)"
            if not ascii_subset:
                if not transcode:
                    detail = f"check is for charset {check.charset}, the entity is {entity} (§2.3)"
                    outcomes.append(CheckOutcome(check, "unchecked", detail))
                    continue
                try:
                    target_codec = codec_name(check.charset)
                except UnsupportedError as exc:
                    outcomes.append(CheckOutcome(check, "unchecked", str(exc)))
                    continue
                if target_codec not in transcoded:
                    try:
                        octets = codecs.encode(index.whole_text(), target_codec, "strict")
                        transcoded[target_codec] = TextIndex(octets, target_codec)
                    except UnicodeEncodeError:
                        transcoded[target_codec] = None
                made = transcoded[target_codec]
                if made is None:
                    outcomes.append(
                        CheckOutcome(check, "failed", f"the text cannot be transcoded to {check.charset}"))
                    continue
                target = made
        if check.name == "length":
            actual = target.char_count
            ok = actual == int(check.value)
            detail = f"length is {actual}, the check says {int(check.value)}"
        else:
            digest = digests.get(id(target))
            if digest is None:
                digest = digests[id(target)] = hashlib.md5(target.data, usedforsecurity=False).hexdigest()
            ok = digest == check.value.lower()
            detail = f"md5 is {digest}, the check says {check.value.lower()}"
        outcomes.append(CheckOutcome(check, "ok" if ok else "failed", "" if ok else detail))
    return tuple(outcomes)


def _integrity_summary(outcomes: tuple[CheckOutcome, ...]) -> str:
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        return "failed: " + ", ".join(str(o.check) for o in failed)
    if any(o.status == "ok" for o in outcomes):
        return "ok"
    return "unchecked"


def parsed_or_not_interpreted(
    fragment: _F | str, parse: Callable[[str], _F], index: TextIndex, on_error: OnError
) -> _F | TextSelection:
    """``fragment``, parsed with ``parse`` when it is a string; on a syntax error, raised (``on_error="raise"``)
    or the selection of a fragment not interpreted (§4.4) that says so."""
    if not isinstance(fragment, str):
        return fragment
    try:
        return parse(fragment)
    except ParseError as exc:
        if on_error == "raise":
            raise
        return not_interpreted(index, f"syntax error: {exc}")


def evaluate_rfc5147(
    fragment: TextFragment | str,
    data: Buffer | TextIndex,
    *,
    charset: str | None = None,
    check_integrity: bool = True,
    transcode: bool = False,
    on_error: OnError = "raise",
    undeclared: bool = False,
) -> TextSelection:
    """Evaluate an RFC 5147 fragment identifier on the octets of a text/plain entity.

    ``charset`` is the entity's charset (default US-ASCII, RFC 2046); ``data``
    may be ``bytes``, a memory map, or a :class:`TextIndex` over them (reused
    across queries). ``check_integrity=False`` ignores the checks (§4.3
    allows it). ``undeclared=True`` says the entity declared no charset and
    ``charset`` (UTF-8) is how it is read (see :func:`run_checks`). Errors:
    see the module docstring.
    """
    index = data if isinstance(data, TextIndex) else TextIndex(data, charset)
    parsed = parsed_or_not_interpreted(fragment, TextFragment.parse, index, on_error)
    if isinstance(parsed, TextSelection):
        return parsed
    fragment = parsed
    outcomes: tuple[CheckOutcome, ...] = ()
    if check_integrity and fragment.checks:
        outcomes = run_checks(fragment.checks, index, transcode=transcode, undeclared=undeclared)
    integrity = _integrity_summary(outcomes)
    if integrity.startswith("failed"):
        failed = next(o for o in outcomes if o.status == "failed")
        message = f"integrity check {failed.check} failed: {failed.detail}"
        if on_error == "raise":
            raise IntegrityError(message)
        return not_interpreted(index, message, integrity, outcomes)
    start = 0 if fragment.start is None else fragment.start
    if fragment.end is None:
        end: int | None = None
    else:
        end = fragment.end
    if end is not None and start > end:
        message = f"range {start},{end} is not properly ordered"
        if on_error == "raise":
            raise ParseError(message, text=str(fragment), rule="range")
        return not_interpreted(index, message, integrity, outcomes)
    if fragment.scheme == "char":
        cp0, c0, clamped0 = _char(index, start)
        if end is None:
            cp1, c1, clamped1 = index.cp_count, index.char_count, False
        else:
            cp1, c1, clamped1 = _char(index, end)
    else:
        cp0, clamped0 = index.line_to_cp(start)
        if end is None:
            cp1, clamped1 = index.cp_count, False
        else:
            cp1, clamped1 = index.line_to_cp(end)
        c0 = index.cp_to_char(cp0)
        c1 = index.cp_to_char(cp1)
    b0 = index.cp_to_octet(cp0)
    b1 = index.cp_to_octet(cp1)
    return TextSelection(
        ranges=(Range(c0, c1, b0, b1),),
        text=index.text(cp0, cp1),  # of the decoded text: a slice of ISO-2022-JP octets loses its shift state
        data=index.octets(b0, b1),
        clamped=clamped0 or clamped1,
        charset=index.encoding.body,
        integrity=integrity,
        checks=outcomes,
    )


def _char(index: TextIndex, char: int) -> tuple[int, int, bool]:
    cp, clamped = index.char_to_cp(char)
    if clamped:
        return cp, index.char_count, True
    return cp, char, False


def make_rfc5147(
    data: Buffer | TextIndex,
    scheme: Literal["char", "line"],
    start: int | None,
    end: int | None = None,
    *,
    charset: str | None = None,
    is_range: bool | None = None,
    length: bool = False,
    md5: bool = False,
    label_charset: bool = True,
) -> TextFragment:
    """Generate the fragment identifier of a character or line selection of an entity.

    ``start``/``end`` are RFC 5147 positions (``end=None`` with
    ``is_range=None`` makes a position). With ``length``/``md5`` the
    integrity checks of the entity are added, labelled with its charset
    unless ``label_charset`` is false. Positions past the end are an error
    (a generated identifier says exactly what it selects).
    """
    index = data if isinstance(data, TextIndex) else TextIndex(data, charset)
    if is_range is None:
        is_range = end is not None
    limit = index.char_count if scheme == "char" else index.line_count
    for value in (start, end):
        if value is not None and not 0 <= value <= limit:
            unit = "character" if scheme == "char" else "line"
            raise ParseError(
                f"{scheme} position {value} is outside the text, which has {plural(limit, unit)}",
                rule="position",
            )
    label = (iana_name(index.charset) or _iana_label(index.encoding.name)) if label_charset else None
    checks: list[IntegrityCheck] = []
    if length:
        checks.append(IntegrityCheck("length", str(index.char_count), label))
    if md5:
        digest = hashlib.md5(index.data, usedforsecurity=False).hexdigest()
        checks.append(IntegrityCheck("md5", digest, label))
    if is_range:
        return TextFragment.range(scheme, start, end, tuple(checks))
    if start is None:
        raise ParseError("a position needs a number", rule="position")
    return TextFragment.position(scheme, start, tuple(checks))


def _iana_label(codec: str) -> str:
    """The IANA name of a Python codec, for the ``,charset`` of a generated check (the codec's name if none)."""
    return iana_name(codec) or codec
