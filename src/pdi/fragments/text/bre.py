"""POSIX basic regular expressions (BRE), run on RE2: a regex from a URI cannot hang the process.

draft-wilde-text-fragment-00 §2.1.5 takes a POSIX BRE (ISO 9945-2) in
``match(...)``. A fragment comes from strangers, so the expression is
translated to RE2 syntax and run by **RE2** (``google-re2``, module
``re2``): a linear-time automaton engine with no backtracking, so the time
of a search is bounded by (text length × expression size) whatever the
expression. Limits:

* the expression is at most :data:`MAX_PATTERN` characters, a repetition
  count at most 1000 (RE2's limit), the compiled program at most
  :data:`MAX_MEMORY` octets (RE2's ``max_mem``): beyond them
  :class:`~pdi.errors.LimitError`;
* back-references (``\\1`` … ``\\9``) need backtracking, which RE2 refuses
  by design: :class:`~pdi.errors.UnsupportedError`.

Translation (POSIX.1-2017 XBD §9.3), with the POSIX matching rules kept:
leftmost-longest matches (RE2 ``longest_match``), ``.`` and bracket
expressions match a newline, ``^``/``$`` anchor only at the start/end of the
text (no ``REG_NEWLINE``).

* ``\\(`` ``\\)`` group; ``*`` repeats (literal at the start of the
  expression, after ``\\(`` or after an anchoring ``^``); ``\\{m\\}``,
  ``\\{m,\\}``, ``\\{m,n\\}`` intervals;
* ``^`` anchors at the start of the expression or of a group (GNU's reading
  of a choice POSIX leaves to implementations), ``$`` at the end of the
  expression or of a group; elsewhere both are literal;
* ``\\.`` ``\\*`` ``\\[`` ``\\]`` ``\\^`` ``\\$`` ``\\\\`` are literal
  characters; any other escape is undefined in a BRE and is a syntax error
  (GNU extensions such as ``\\+``, ``\\|``, ``\\w`` are not BRE);
* ``+ ? | { } ( )`` are ordinary characters;
* bracket expressions: ranges, ``[:class:]`` (ASCII classes), and
  single-character ``[=c=]``/``[.c.]``; a backslash is literal inside
  brackets. Multi-character collating elements are unsupported.
"""

from __future__ import annotations

from typing import Any, Final

import re2

from pdi.errors import LimitError, ParseError, UnsupportedError

MAX_PATTERN: Final = 4096
MAX_REPEAT: Final = 1000
MAX_MEMORY: Final = 8 << 20
_CLASSES: Final = frozenset(
    ["alpha", "digit", "alnum", "upper", "lower", "space", "blank", "punct", "print", "graph", "cntrl", "xdigit"]
)
_LITERAL_ESCAPES: Final = frozenset(".*[]^$\\")


def _lit(char: str) -> str:
    """``char`` as an RE2 literal."""
    if char.isascii() and (char.isalnum() or char == "_"):
        return char
    if char.isascii():
        return f"\\x{{{ord(char):x}}}"
    return char


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def error(self, message: str, offset: int | None = None) -> ParseError:
        return ParseError(message, text=self.p, offset=self.i if offset is None else offset, rule="BRE")

    def translate(self) -> str:
        body = self.sequence(top=True)
        return body

    def sequence(self, *, top: bool) -> str:
        """Translate up to the end (``top``) or up to the matching ``\\)``."""
        p = self.p
        atoms: list[str] = []
        repeated: list[bool] = []
        start = True  # at the start of the expression or group: '*' is literal, '^' anchors
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                if self.i + 1 >= len(p):
                    raise self.error("a BRE cannot end with a lone backslash")
                d = p[self.i + 1]
                if d == ")":
                    if top:
                        raise self.error("'\\)' closes no group")
                    self.i += 2
                    return "".join(atoms)
                if d == "(":
                    self.i += 2
                    inner = self.sequence(top=False)
                    atoms.append(f"(?:{inner})")
                    repeated.append(False)
                    start = False
                    continue
                if d == "{":
                    if start or not atoms:
                        raise self.error("an interval \\{…\\} with nothing to repeat")
                    self.i += 2
                    low, high = self.interval()
                    quant = f"{{{low}}}" if high == low else f"{{{low},{'' if high is None else high}}}"
                    atoms[-1] = (f"(?:{atoms[-1]})" if repeated[-1] else atoms[-1]) + quant
                    repeated[-1] = True
                    continue
                if d in "123456789":
                    raise UnsupportedError(
                        "back-references (\\1 … \\9) need a backtracking engine; "
                        "pdi runs regular expressions from URIs on linear-time RE2"
                    )
                if d in _LITERAL_ESCAPES:
                    atoms.append(_lit(d))
                    repeated.append(False)
                    self.i += 2
                    start = False
                    continue
                raise self.error(f"'\\{d}' is not defined in a POSIX basic regular expression")
            if c == "*":
                if start or not atoms:
                    atoms.append(_lit("*"))
                    repeated.append(False)
                    start = False
                else:
                    atoms[-1] = (f"(?:{atoms[-1]})" if repeated[-1] else atoms[-1]) + "*"
                    repeated[-1] = True
                self.i += 1
                continue
            if c == "^" and start and not atoms:
                atoms.append("^")
                repeated.append(False)
                self.i += 1
                continue  # '*' right after an anchoring '^' is still literal
            if c == "$" and self._at_end():
                atoms.append("$")
                repeated.append(False)
                self.i += 1
                start = False
                continue
            if c == "[":
                atoms.append(self.bracket())
                repeated.append(False)
                start = False
                continue
            if c == ".":
                atoms.append(".")
            else:
                atoms.append(_lit(c))
            repeated.append(False)
            self.i += 1
            start = False
        if not top:
            raise self.error("'\\(' is never closed")
        return "".join(atoms)

    def _at_end(self) -> bool:
        rest = self.p[self.i + 1 :]
        return rest == "" or rest.startswith("\\)")

    def interval(self) -> tuple[int, int | None]:
        p = self.p
        start = self.i
        end = p.find("\\}", start)
        if end < 0:
            raise self.error("'\\{' is never closed by '\\}'")
        body = p[start:end]
        low_s, comma, high_s = body.partition(",")
        if not low_s.isdigit() or not low_s.isascii() or (high_s and not (high_s.isdigit() and high_s.isascii())):
            raise self.error(f"an interval is \\{{m\\}}, \\{{m,\\}} or \\{{m,n\\}}, not \\{{{body}\\}}", start)
        if len(low_s) > 4 or len(high_s) > 4:
            raise LimitError(f"repetition count above {MAX_REPEAT} in a regular expression")
        low = int(low_s)
        high: int | None = low if not comma else (int(high_s) if high_s else None)
        if low > MAX_REPEAT or (high is not None and high > MAX_REPEAT):
            raise LimitError(f"repetition count above {MAX_REPEAT} in a regular expression")
        if high is not None and high < low:
            raise self.error(f"interval \\{{{body}\\}} has its maximum below its minimum", start)
        self.i = end + 2
        return low, high

    def bracket(self) -> str:
        p = self.p
        open_at = self.i
        self.i += 1
        negate = False
        if self.i < len(p) and p[self.i] == "^":
            negate = True
            self.i += 1
        items: list[str] = []
        first = True
        while True:
            if self.i >= len(p):
                raise self.error("'[' is never closed by ']'", open_at)
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if p.startswith("[:", self.i):
                end = p.find(":]", self.i + 2)
                name = p[self.i + 2 : end] if end >= 0 else ""
                if end < 0 or name not in _CLASSES:
                    raise self.error(f"unknown character class [:{name}:]")
                items.append(f"[:{name}:]")
                self.i = end + 2
                continue
            low = self.element()
            if (
                self.i + 1 < len(p)
                and p[self.i] == "-"
                and p[self.i + 1] != "]"
            ):
                self.i += 1
                high = self.element()
                if ord(high) < ord(low):
                    raise self.error(f"range {low}-{high} is out of order")
                items.append(f"{_lit(low)}-{_lit(high)}")
            else:
                items.append(_lit(low))
        return "[" + ("^" if negate else "") + "".join(items) + "]"

    def element(self) -> str:
        """One bracket element: a character, ``[.c.]`` or ``[=c=]``."""
        p = self.p
        for opener, closer in (("[.", ".]"), ("[=", "=]")):
            if p.startswith(opener, self.i):
                end = p.find(closer, self.i + 2)
                if end < 0:
                    raise self.error(f"'{opener}' is never closed by '{closer}'")
                name = p[self.i + 2 : end]
                if len(name) != 1:
                    raise UnsupportedError(
                        f"collating element {opener}{name}{closer}: only single characters are supported"
                    )
                self.i = end + 2
                return name
        c = p[self.i]
        self.i += 1
        return c


def bre_to_re2(pattern: str) -> str:
    """Translate a POSIX BRE to RE2 syntax (see the module docstring)."""
    if len(pattern) > MAX_PATTERN:
        raise LimitError(f"regular expression longer than {MAX_PATTERN} characters")
    return _Translator(pattern).translate()


def compile_bre(pattern: str) -> Any:
    """Compile a POSIX BRE for RE2 with POSIX semantics (leftmost-longest, ``.`` matches newline)."""
    translated = bre_to_re2(pattern)
    options = re2.Options()
    options.longest_match = True
    options.dot_nl = True
    options.log_errors = False
    options.max_mem = MAX_MEMORY
    try:
        return re2.compile(translated, options)
    except re2.error as exc:
        message = str(exc)
        if "too big" in message or "memory" in message:
            raise LimitError(f"regular expression too large for RE2: {message}") from None
        raise ParseError(f"RE2 rejects the expression: {message}", text=pattern, rule="BRE") from None
