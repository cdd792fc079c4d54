"""XML 1.0 Fifth Edition's names, read by expat, which knows the Fourth Edition's.

XML 1.0 Fifth Edition (§2.3, productions [4] NameStartChar and [4a] NameChar)
made names of far more characters than the Fourth Edition's Appendix B
classes, which expat still implements: ``<\u01caa/>`` (U+01CA, a letter
Unicode 2.0 did not class as one), ``<\u0660/>`` (a digit, now a name's first
character), ``<a\u0346/>`` (a combining mark) or any name holding a character
past U+FFFF are well-formed, and libxml2 reads them, but expat says "not
well-formed (invalid token)".

:func:`fourth_edition_text` writes such a text over so that expat reads it
as the Fifth Edition would, without moving an octet: each character that is a
Fifth Edition name character but not one expat takes in a name (:func:`_expat_class`
asks expat itself) is written, wherever it stands (names, text, attribute
values, comments, entity values alike), as characters expat takes there and
of exactly as many UTF-8 octets: one of two or three octets as another of as
many, one of four as a three-octet character and an ASCII letter. The
characters written are ones the text does not hold (nor names by a character
reference), one for each character written over, and a name's first
character is written as a character a name may begin with, any other as one
it may not begin with: so two names are equal, a tag's name may begin so or
not, exactly as before, and each octet offset expat gives is that of the
text. :meth:`Rewritten.original` gives back what expat reads from it (an
element's name, an attribute's name and value) as the text holds it.

A character reference to such a character in an entity's literal value is
markup when the entity is referred to (``<!ENTITY e "<&#x1CA;/>">``): it is
written over as a reference, of as many octets, to what the character is
written as. When one cannot be (a reference too short for it), or the text
holds more such characters than there are characters free to write them as,
or more than :data:`MAX_CHARACTERS` different characters, the text is given
to expat as it is, as before.

Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

#: A non-ASCII character XML 1.0 Fifth Edition lets a name begin with ([4] NameStartChar).
FIFTH_START: Final = (
    "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d\u2070-\u218f"
    "\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff"
)
#: A non-ASCII character a Fifth Edition name may hold but not begin with ([4a] NameChar).
FIFTH_NAME_ONLY: Final = "\u00b7\u0300-\u036f\u203f-\u2040"
_FIFTH_NAME_CHAR: Final = re.compile(f"[{FIFTH_START}{FIFTH_NAME_ONLY}]")
_FIFTH_START_CHAR: Final = re.compile(f"[{FIFTH_START}]")
#: A character reference in an entity's literal value (XML 1.0 §4.2 [9] EntityValue): expanded when the entity is
#: declared, so that it is markup where the entity is referred to.
_ENTITY_VALUE: Final = re.compile(r"""<!ENTITY\s+(?:%\s+)?[^\s"'<>]+\s+(?:"[^"]*"|'[^']*')""")
_CHARACTER_REFERENCE: Final = re.compile(r"&#(x[0-9a-fA-F]+|[0-9]+);")
#: What could be a character reference once entities are expanded (``&#38;#xC0;``): what it names is not free.
_REFERENCE_BODY: Final = re.compile(r"#(x[0-9a-fA-F]+|[0-9]+);")
#: A text of more different characters is given to expat as it is (it takes more time and memory to write over, and
#: one of every character leaves none free to write them as).
MAX_CHARACTERS: Final = 1 << 16
#: The ASCII letters a four-octet character is written as after a three-octet one.
_TAILS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@functools.lru_cache(maxsize=1 << 17)
def _expat_class(char: str) -> int:
    """2: expat takes ``char`` as a name's first character; 1: in a name but not first; 0: not in a name."""
    import xml.parsers.expat

    for tag, verdict in ((f"<{char}/>", 2), (f"<a{char}/>", 1)):
        parser = xml.parsers.expat.ParserCreate()
        try:
            parser.Parse(tag, True)
        except xml.parsers.expat.ExpatError:
            continue
        return verdict
    return 0


def _written_over(char: str) -> int:
    """What ``char`` must be written as for expat: 2 a character a name may begin with, 1 one a name may hold but
    not begin with; 0 if expat takes it as the Fifth Edition does (or it is in no name)."""
    if _FIFTH_START_CHAR.fullmatch(char):
        return 0 if char < "\U00010000" and _expat_class(char) == 2 else 2
    if _FIFTH_NAME_CHAR.fullmatch(char):
        return 0 if _expat_class(char) >= 1 else 1
    return 0


def _free(lowest: int, highest: int, kind: int, taken: set[str]) -> Iterator[str]:
    """The characters from ``lowest`` to ``highest`` expat takes as ``kind`` (:func:`_written_over`) and ``taken``
    does not hold."""
    for point in range(lowest, highest + 1):
        char = chr(point)
        if char not in taken and not "\ud800" <= char <= "\udfff" and _expat_class(char) == kind:
            yield char


class Rewritten:
    """A text written over for expat (:func:`fourth_edition_text`) and how to read expat's names back."""

    def __init__(self, text: str, table: dict[str, str]) -> None:
        self.text = text
        self._singles = {ord(v): k for k, v in table.items() if len(v) == 1}
        self._pairs = {v: k for k, v in table.items() if len(v) == 2}
        heads = "".join(sorted({v[0] for v in self._pairs}))
        self._pair = re.compile(f"[{re.escape(heads)}].", re.DOTALL) if heads else None

    def original(self, read: str) -> str:
        """``read`` (a name or value expat gave) as the text holds it."""
        if read.isascii():
            return read
        if self._pair is not None:
            read = self._pair.sub(lambda m: self._pairs[m.group()], read)
        return read.translate(self._singles)


def fourth_edition_text(text: str) -> Rewritten | None:
    """``text`` written over so that expat reads its Fifth Edition names (see the module docstring), or ``None``
    when it need not be (or cannot be)."""
    values = [m.group() for m in _ENTITY_VALUE.finditer(text)] if "<!ENTITY" in text else []
    if text.isascii() and not values:
        return None
    taken: set[str] = set()
    for at in range(0, len(text), 1 << 16):  # the characters it holds, so many at most
        taken.update(text[at:at + (1 << 16)])
        if len(taken) > MAX_CHARACTERS:
            return None
    for reference in _CHARACTER_REFERENCE.finditer("".join(values)):  # markup where the entity is referred to
        point = code_point(reference.group(1))
        if point is not None:
            taken.add(chr(point))
    over = {char: kind for char in taken if char >= "\x80" and (kind := _written_over(char))}
    if not over:
        return None
    for reference in _REFERENCE_BODY.finditer(text):
        point = code_point(reference.group(1))
        if point is not None:
            taken.add(chr(point))
    pools = {
        (2, 2): _free(0x80, 0x7FF, 2, taken), (2, 1): _free(0x80, 0x7FF, 1, taken),
        (3, 2): _free(0x800, 0xFFFD, 2, taken), (3, 1): _free(0x800, 0xFFFD, 1, taken),
    }
    head = ""
    tails: Iterator[str] = iter("")
    table: dict[str, str] = {}
    try:
        for char in sorted(over):
            octets = len(char.encode("utf-8"))
            if octets == 4:  # a three-octet character a name may begin with, then an ASCII letter
                tail = next(tails, None)
                if tail is None:
                    head, tails = next(pools[3, 2]), iter(_TAILS)
                    tail = next(tails)
                table[char] = head + tail
            else:
                table[char] = next(pools[octets, over[char]])
    except StopIteration:  # more such characters than free ones to write them as
        return None
    mark = "\ufeff" if text.startswith("\ufeff") else ""  # a byte-order mark, not a character of a name
    written = mark + text[len(mark):].translate({ord(k): v for k, v in table.items()})
    if any(_CHARACTER_REFERENCE.search(value) for value in values):
        try:
            written = _ENTITY_VALUE.sub(lambda m: _references_over(m.group(), table), written)
        except ValueError:  # a reference too short for what it is written as
            return None
    return Rewritten(written, table)


def code_point(digits: str) -> int | None:
    """The code point a character reference's ``digits`` (``x41`` or ``65``) name, ``None`` past U+10FFFF (however
    many digits: zeros may lead)."""
    hexadecimal = digits[0] == "x"
    significant = digits[1:].lstrip("0") if hexadecimal else digits.lstrip("0")
    if len(significant) > 7:
        return None
    point = int(significant or "0", 16 if hexadecimal else 10)
    return point if point <= 0x10FFFF else None


def _references_over(value: str, table: dict[str, str]) -> str:
    """The character references of an entity's literal ``value`` to characters written over, written as references
    of as many octets to what they are written as; a ValueError where one cannot be (it does not fit)."""

    def over(reference: re.Match[str]) -> str:
        digits = reference.group(1)
        point = code_point(digits)
        written = table.get(chr(point)) if point is not None else None
        if written is None:
            return reference.group()
        first = ord(written[0])
        room = len(digits) - (len(written) - 1)  # what follows the reference is written after it as it is
        number = f"x{first:0{room - 1}x}" if digits[0] == "x" else f"{first:0{room}d}"
        if len(number) != room:
            raise ValueError(reference.group())
        return f"&#{number};{written[1:]}"

    return _CHARACTER_REFERENCE.sub(over, value)
