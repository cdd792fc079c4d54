"""The PDI value, its canonical form, equivalence, patterns, minting and the parser (its resource identifier read by
:mod:`pdi.identifier._head`)."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pdi import formats
from pdi._grammar import ESCAPE_RE, UNIQUE_SAFE, escape, upper_hex
from pdi._wording import NAME_MOST, clipped
from pdi.errors import LimitError, ParseError, UnsupportedError
from pdi.identifier._fragment import (
    Fragment,
    _check_fragment,
    _check_position_value,
    _is_coordinate,
    _parse_fragment,
    _parse_position,
    _position_text,
    token_lookup,
)
from pdi.identifier._head import _fast_head, _slow_head
from pdi.identifier._syntax import (
    _COMPONENT_RE,
    _MAX_DEPTH,
    _MAX_LENGTH,
    COUNTRY_CODE_FOR,
    ISO_3166_ALPHA2,
    Position,
    _fail,
    _Warning,
    escape_unique_id,
)

if TYPE_CHECKING:
    from dataclasses import dataclass as later_dataclass
else:
    from pdi._later import dataclass as later_dataclass

# ---------------------------------------------------------------------------
# Citations
# ---------------------------------------------------------------------------


@later_dataclass(frozen=True)  # made at its first instance (pdi._later): most commands name no citation
class Citation:
    """A citation specifier (line 168): ``@origin=pdi``.

    ``origin`` is the position in the citing document (in its format's default
    scheme) where the ``cited`` PDI (usually a fragment) is quoted.
    """

    origin: Position
    cited: PDI

    def __str__(self) -> str:
        return f"@{_position_text(self.origin, None)}={self.cited}"


# ---------------------------------------------------------------------------
# The identifier
# ---------------------------------------------------------------------------


@later_dataclass(frozen=True)  # made at its first instance: only listings make one
class PDIQuery:
    """A listing query made from a pattern (§2.9): ``None`` = any."""

    series: str
    year: int | None
    month: int | None
    day: int | None
    date_from: datetime.date | None
    date_to: datetime.date | None
    unique_id: str | None
    format: str | None
    version: int | None


@dataclass(frozen=True, slots=True)
class PDI:
    """A persistent document identifier (PDI-GRAMMAR.md §1).

    Fields are as written, except where noted: ``series`` components (the
    last is the country); ``year``/``month``/``day`` (``None`` = wildcard);
    ``unique_id`` %-decoded and ``unique_id_raw`` as written (``"*"`` for the
    wildcard); ``serial`` the daily serial number (``None`` for any other
    unique id, see :attr:`is_serial`); ``format`` the token as written;
    ``version`` (``None`` when omitted, or the wildcard when
    ``version_wildcard``); ``fragment`` or ``citation``; ``warnings`` of the
    lenient reading.
    """

    series: tuple[str, ...]
    year: int | None
    month: int | None
    day: int | None
    unique_id: str
    unique_id_raw: str
    serial: int | None
    format: str | None
    version: int | None
    fragment: Fragment | None = None
    citation: Citation | None = None
    warnings: tuple[str, ...] = ()
    version_wildcard: bool = False
    #: ``str(self)``, made at its first (a resolver prints one name several times an answer); never compared.
    _text: str | None = field(default=None, init=False, compare=False, repr=False, hash=False)
    #: :meth:`canonical`, made at its first (an export asks it of each name for each statement key); never compared.
    _canonical: PDI | None = field(default=None, init=False, compare=False, repr=False, hash=False)

    # -- parsing and printing ------------------------------------------------

    @classmethod
    def parse(cls, text: str, *, strict: bool = False) -> PDI:
        """Parse ``urn:pdi://…`` or ``pdi://…``.

        Raises :class:`ParseError` (rule and offset) for text outside the
        grammar; with ``strict=True`` also for each lenient reading that would
        otherwise be a warning (one-digit month or day, non-ISO country, missing
        version on a fragment or citation, foreign id without format, …).
        """
        if not isinstance(text, str):
            raise ParseError(f"a PDI is a string, not {type(text).__name__}", rule="pdi-urn")
        if len(text) > _MAX_LENGTH:
            raise LimitError(f"a PDI of {len(text)} characters is longer than {_MAX_LENGTH}")
        try:
            return _parse_pdi(text, 0, len(text), strict, 0)
        except ParseError as exc:
            meant = _reserved_in_unique_id(text, strict)
            if meant is not None:
                raise meant from None
            at = text.find("@")
            if exc.offset is None or not 0 <= exc.offset < at or "#" in text[:at]:
                raise
            # a citation that went wrong before its '@': say which of its two PDIs (the cited one says so itself)
            raise exc.within("the citing PDI (before '@'): ") from None

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = "urn:" + self._nss_text()
            object.__setattr__(self, "_text", text)
        return text

    def _nss_text(self) -> str:
        year, month, day = self.year, self.month, self.day
        text = (
            f"pdi://{'.'.join(self.series).lower()}"
            f"/{'*' if year is None else format(year, '04d')}"
            f"/{'*' if month is None else format(month, '02d')}"
            f"/{'*' if day is None else format(day, '02d')}"
            f"/{upper_hex(self.unique_id_raw)}"
        )
        fmt = self.format
        if fmt is not None:
            if self.version_wildcard:
                version = "*"
            else:
                version = str(self.version if self.version is not None else 1)
            text = f"{text}.{formats.canonical_token(fmt)}.{version}"
        if self.fragment is not None:
            return f"{text}#{self.fragment.canonical(fmt)}"
        if self.citation is not None:
            return f"{text}{self.citation}"
        return text

    def canonical(self) -> PDI:
        """The canonical PDI (§2.2), parsed back from ``str(self)``."""
        made = self._canonical
        if made is None:
            text = str(self)
            made = _parse_pdi(text, 0, len(text), False, 0)
            object.__setattr__(self, "_canonical", made)
        return made

    # -- views ---------------------------------------------------------------

    @property
    def series_name(self) -> str:
        """The document series, lower case (``"oma.eop.gov.us"``)."""
        return ".".join(self.series).lower()

    @property
    def country(self) -> str:
        """The last component of the series, lower case."""
        return self.series[-1].lower()

    @property
    def date(self) -> datetime.date | None:
        """The GMT day of minting, ``None`` if any part is a wildcard."""
        if self.year is None or self.month is None or self.day is None:
            return None
        return datetime.date(self.year, self.month, self.day)

    @property
    def is_serial(self) -> bool:
        """Whether the unique id is a daily serial number (line 150, :func:`spells_serial`)."""
        return self.serial is not None

    @property
    def unique_id_is_wildcard(self) -> bool:
        return self.unique_id_raw == "*"

    @property
    def is_pattern(self) -> bool:
        """Whether a wildcard stands in the date, unique id, format or version (§2.9)."""
        return (
            self.year is None
            or self.month is None
            or self.day is None
            or self.unique_id_raw == "*"
            or self.format == "*"
            or self.version_wildcard
            or (self.citation is not None and self.citation.cited.is_pattern)
        )

    @property
    def media_type(self) -> str:
        """The media type of the format (raises :class:`UnsupportedError` when unknown)."""
        if self.format is None:
            raise UnsupportedError(f"{self} has no format")
        return formats.media_type_for(self.format)

    # -- derived identifiers -------------------------------------------------

    def without_fragment(self) -> PDI:
        """The canonical PDI of the whole resource (fragment and citation dropped)."""
        return dataclasses.replace(self, fragment=None, citation=None).canonical()

    def with_version(self, n: int) -> PDI:
        """The canonical PDI with version ``n`` (a positive integer)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ParseError(f"a version is a positive integer, not {n!r}", rule="version")
        if self.format is None:
            raise ParseError("a version requires a format (PDI draft, line 145)", rule="version")
        return dataclasses.replace(self, version=n, version_wildcard=False).canonical()

    def with_format(self, token: str) -> PDI:
        """The canonical PDI with another format token (the fragment is checked against it)."""
        if not isinstance(token, str) or not (token == "*" or formats.is_valid_token(token)):
            raise ParseError(f"invalid format token '{clipped(str(token))}'", rule="format")
        return dataclasses.replace(self, format=token).canonical()

    # -- patterns ------------------------------------------------------------

    def matches(self, other: PDI | str) -> bool:
        """Whether the concrete ``other`` is one of the identifiers this pattern names.

        A wildcard matches anything; an omitted format matches every format and
        version (the generic resource, lines 412-415); an omitted version is
        version 1; a pattern without fragment or citation ignores the other's.
        """
        if not isinstance(other, PDI):
            other = PDI.parse(other)  # a ParseError for anything but text
        if self.series_name != other.series_name:
            return False
        for mine, theirs in (
            (self.year, other.year),
            (self.month, other.month),
            (self.day, other.day),
        ):
            if mine is not None and mine != theirs:
                return False
        if self.unique_id_raw != "*" and upper_hex(self.unique_id_raw) != upper_hex(
            other.unique_id_raw
        ):
            return False
        if self.format is not None:
            if other.format is None:
                return False
            if self.format != "*" and formats.canonical_token(
                self.format
            ) != formats.canonical_token(other.format):
                return False
            if not self.version_wildcard:
                if other.version_wildcard:
                    return False
                if (self.version or 1) != (other.version or 1):
                    return False
        if self.citation is not None:
            # the same origin, and a cited name this pattern's cited name names (its wildcards are wildcards too)
            their_citation = other.citation
            return (
                their_citation is not None
                and _position_text(self.citation.origin, None) == _position_text(their_citation.origin, None)
                and _cites(self.citation.cited, their_citation.cited)
            )
        if self.fragment is not None:
            tail_self = str(self)[len("urn:pdi:") :]
            tail_other = str(other)[len("urn:pdi:") :]
            return _tail(tail_self) == _tail(tail_other)
        return True

    def to_query(self) -> PDIQuery:
        """The listing query this identifier (usually a pattern) stands for."""
        date_from: datetime.date | None = None
        date_to: datetime.date | None = None
        if self.year is not None:
            if self.month is not None:
                if self.day is not None:
                    date_from = date_to = datetime.date(self.year, self.month, self.day)
                else:
                    date_from = datetime.date(self.year, self.month, 1)
                    date_to = _month_end(self.year, self.month)
            else:
                date_from = datetime.date(self.year, 1, 1)
                date_to = datetime.date(self.year, 12, 31)
        fmt = None if self.format in (None, "*") else formats.canonical_token(self.format or "")
        version = None
        if self.format is not None and not self.version_wildcard:
            version = self.version or 1
        return PDIQuery(
            series=self.series_name,
            year=self.year,
            month=self.month,
            day=self.day,
            date_from=date_from,
            date_to=date_to,
            unique_id=None if self.unique_id_raw == "*" else self.unique_id,
            format=fmt,
            version=version,
        )

    # -- minting -------------------------------------------------------------

    @classmethod
    def build(
        cls,
        *,
        series: str | Sequence[str],
        date: datetime.date,
        serial: int | None = None,
        foreign_id: str | None = None,
        format: str | None = None,
        version: int | None = None,
        fragment: Fragment | None = None,
    ) -> PDI:
        """The canonical PDI with these parts, as minting writes it.

        Exactly one of ``serial`` (a positive daily serial number) and
        ``foreign_id`` (any text; reserved characters are %-escaped, so a URL,
        a DOI or an ISBN round-trips exactly as ``unique_id``). The country must
        be an ISO 3166-1 alpha-2 code (§2.3); ``date`` is the GMT day of minting
        (§2.4), written with two-digit month and day (a ``datetime`` with a zone
        is taken at its GMT day; one without, as a GMT time). A foreign id, a version or
        a fragment needs a format; with a format and no version, version 1 is
        written (§2.2); a fragment needs an explicit version. The series is
        written in lower case. Every result is re-parsed strictly.
        """
        comps = series_for_minting(series)
        if not isinstance(date, datetime.date):
            raise ParseError(f"date must be a datetime.date, not {date!r}", rule="iso-date")
        if isinstance(date, datetime.datetime) and date.utcoffset() is not None:
            date = date.astimezone(datetime.UTC)  # its GMT day (§2.4), not the day where it was said
        uid = _minted_unique_id(serial, foreign_id, format)
        text = f"urn:pdi://{'.'.join(comps)}/{date.year:04d}/{date.month:02d}/{date.day:02d}/{uid}"
        if format is not None:
            if not isinstance(format, str) or not formats.is_valid_token(format):
                raise ParseError(f"invalid format token '{clipped(str(format))}'", rule="format")
            text += "." + formats.canonical_token(format)
            if version is not None and (
                isinstance(version, bool) or not isinstance(version, int) or version < 1
            ):
                raise ParseError(
                    f"a version is a positive integer, not {version!r}", rule="version"
                )
            text += f".{1 if version is None else version}"
        elif version is not None:
            raise ParseError("a version requires a format (PDI draft, line 145)", rule="version")
        if fragment is not None:
            text += "#" + _minted_fragment(fragment, format, version)
        return _minted(text) if len(text) <= _REMEMBERED_LENGTH else _read_minted(text)

    def read_back(self) -> PDI:
        """``PDI.parse(str(self))``: this name printed and read again (a minted name's round trip), kept.

        The printed name's length is limited as :meth:`parse` limits it; the
        reading is :meth:`canonical`'s, made once a name (a name :meth:`build`
        wrote canonical reads back as itself).
        """
        text = str(self)
        if len(text) > _MAX_LENGTH:
            raise LimitError(f"a PDI of {len(text)} characters is longer than {_MAX_LENGTH}")
        return self.canonical()


#: A name :meth:`PDI.build` wrote of at most this many characters is kept (the last 1,024 of them: a few MiB at most).
_REMEMBERED_LENGTH = 2048


def _read_minted(text: str) -> PDI:
    """The strict reading of a name :meth:`PDI.build` wrote; ``_minted`` keeps those of short names, built again
    and again (an import builds each page's name when it plans the page, checks it and states it: six readings of
    one name were a tenth of its deposits, issue 24). When it prints as the text it was read from, it is its own :meth:`~PDI.canonical` (the
    reading of that text again, strictness aside: a text read strictly without error reads the same leniently)."""
    made = _parse_pdi(text, 0, len(text), True, 0)
    if str(made) == text:
        object.__setattr__(made, "_canonical", made)
    return made


_minted = functools.lru_cache(maxsize=1024)(_read_minted)


def _minted_unique_id(serial: int | None, foreign_id: str | None, format: str | None) -> str:
    """The unique id :meth:`PDI.build` writes: the daily serial, or the foreign id %-escaped (it needs a format)."""
    if (serial is None) == (foreign_id is None):
        raise ParseError("give exactly one of serial and foreign_id", rule="unique-id")
    if serial is not None:
        if isinstance(serial, bool) or not isinstance(serial, int) or serial < 1:
            raise ParseError(
                f"a daily serial number is a positive integer, not {serial!r}",
                rule="daily-serial-number",
            )
        return str(serial)
    assert foreign_id is not None
    if format is None:
        raise ParseError(
            "an encapsulated foreign id requires a format (PDI draft, line 347)", rule="format"
        )
    return escape_unique_id(foreign_id)


def _minted_fragment(fragment: Fragment, format: str | None, version: int | None) -> str:
    """The fragment :meth:`PDI.build` writes, canonical for ``format``; it needs a format and a version."""
    if not isinstance(fragment, Fragment):
        raise ParseError(f"not a Fragment: {fragment!r}", rule="fragment-specifier")
    for position in fragment.positions:
        _check_position_value(position)
    if format is None:
        raise ParseError("a fragment needs a format (PDI draft, line 404)", rule="fragment-specifier")
    if version is None:
        raise ParseError("a fragment needs a version (PDI draft, line 457)", rule="fragment-specifier")
    return str(fragment.canonical(format))


def _cites(mine: PDI, theirs: PDI) -> bool:
    """Whether the cited name of a citation pattern names ``theirs``: the same name, or for a pattern one it
    :meth:`~PDI.matches`, and then the whole of it (a cited pattern without a fragment names no fragment)."""
    if not mine.is_pattern:
        return str(mine) == str(theirs)
    if mine.fragment is None and mine.citation is None and (theirs.fragment is not None or theirs.citation is not None):
        return False
    return mine.matches(theirs)


def _tail(nss_tail: str) -> str:
    """The fragment or citation part of a canonical NSS."""
    cut = min((i for i in (nss_tail.find("#"), nss_tail.find("@")) if i >= 0), default=-1)
    return "" if cut < 0 else nss_tail[cut:]


# A unique id written with its reserved characters unescaped, then '.' format '.' version, then any fragment: what a
# name copied from a Message-ID (mid:a@b.org) or a file name looks like.
_SPECIFIER_START = re.compile(r"(?:[uU][rR][nN]:)?[pP][dD][iI]://[^/#]*/[^/#]*/[^/#]*/[^/#]*/")


def _reserved_in_unique_id(text: str, strict: bool) -> ParseError | None:
    """The error for a name that does not parse because its unique id holds a reserved character unescaped (a ``@``
    or a ``.`` of a Message-ID, ``mid:a@b.org``: PDI-GRAMMAR.md §1, line 217), naming the first, where it is, its
    escape and the name meant; ``None`` unless the name parses with every character of its unique id the grammar
    does not allow %-escaped (the ``.`` format ``.`` version after it read as they are).

    Without it ``…/mid:a@b.org.rfc822.1#line=1,2`` was "a citation needs a format" (the ``@`` read as a
    citation's), and with ``%40`` but the ``.`` unescaped a '.' somewhere after the id. A text whose unique id would
    hold ``pdi:`` is a citation gone wrong, not an id (its cited name's own error says what is wrong)."""
    start = _SPECIFIER_START.match(text)
    if start is None:
        return None
    spec_start = start.end()
    hash_at = text.find("#", spec_start)
    spec_end = len(text) if hash_at < 0 else hash_at
    parts = text[spec_start:spec_end].rsplit(".", 2)
    if len(parts) != 3:
        return None
    uid, fmt, version = parts
    if not uid or uid == "*" or "pdi:" in uid.lower() or not (version.isdigit() and version.isascii()):
        return None
    if not formats.is_valid_token(fmt):
        return None
    bad: list[int] = []
    i = 0
    while i < len(uid):
        if uid[i] == "%" and ESCAPE_RE.match(uid, i):
            i += 3
            continue
        if uid[i] not in UNIQUE_SAFE:
            bad.append(i)
        i += 1
    if not bad or any(uid[k] == "%" for k in bad):  # a broken %-escape: the parser's own error says so
        return None
    try:
        mended_uid = "".join(escape(ch, UNIQUE_SAFE) if k in bad else ch for k, ch in enumerate(uid))
    except ParseError:  # a lone surrogate: no escape to offer
        return None
    meant = f"{text[:spec_start]}{mended_uid}.{fmt}.{version}{text[spec_end:]}"
    try:
        _parse_pdi(meant, 0, len(meant), strict, 0)
    except ParseError:
        return None
    first = uid[bad[0]]
    said = f"{first!r} at offset {spec_start + bad[0]} inside the unique id must be written {escape(first, UNIQUE_SAFE)}"
    others = dict.fromkeys(uid[k] for k in bad[1:] if uid[k] != first)
    if others:
        said += ", and " + ", ".join(f"{ch!r} {escape(ch, UNIQUE_SAFE)}" for ch in others)
    return ParseError(
        f"{said}: did you mean '{clipped(meant, NAME_MOST)}'? (PDI-GRAMMAR.md §1)",
        text=text,
        offset=spec_start + bad[0],
        rule="unique-id",
    )


def _month_end(year: int, month: int) -> datetime.date:
    if month == 12:
        return datetime.date(year, 12, 31)
    return datetime.date(year, month + 1, 1) - datetime.timedelta(days=1)


def series_for_minting(series: str | Sequence[str]) -> tuple[str, ...]:
    """The lower-case components of a series that PDIs may be minted in.

    Components are ``1*(alpha / digit / "-")`` (line 133), at least one before
    the country, which must be an ISO 3166-1 alpha-2 code (§2.3: minting
    requires one). Errors give the offset in the series text.
    """
    if isinstance(series, str):
        return _series_text_for_minting(series)
    if isinstance(series, Sequence) and all(isinstance(c, str) for c in series):
        return _components_for_minting(list(series))
    raise ParseError(f"not a document series: {series!r}", rule="document-series")


@functools.lru_cache(maxsize=256)  # the few series an archive mints in, checked once each
def _series_text_for_minting(series: str) -> tuple[str, ...]:
    return _components_for_minting(series.split("."))


def _components_for_minting(comps: list[str]) -> tuple[str, ...]:
    """:func:`series_for_minting` of the components as given."""
    text = ".".join(comps)
    offset = 0
    for comp in comps:
        if not _COMPONENT_RE.fullmatch(comp):
            raise ParseError(
                f"invalid series component '{clipped(comp)}': letters, digits and '-' only",
                text=text,
                offset=offset,
                rule="component",
            )
        offset += len(comp) + 1
    if len(comps) < 2:
        raise ParseError(
            f"a document series is a component and a country: '{clipped(text)}'",
            text=text,
            offset=0,
            rule="document-series",
        )
    country = comps[-1].lower()
    if country not in ISO_3166_ALPHA2:
        meant = COUNTRY_CODE_FOR.get(country)
        hint = f"; did you mean '{clipped('.'.join([*comps[:-1], meant]))}'?" if meant else ""
        raise ParseError(
            "a series that names are minted in ends with an ISO 3166-1 alpha-2 country code,"
            f" not '{clipped(comps[-1])}'"
            f" (§2.3){hint}",
            text=text,
            offset=len(text) - len(comps[-1]),
            rule="iso-country",
        )
    return tuple(c.lower() for c in comps)


def equivalent(a: PDI | str, b: PDI | str, *, ignore_fragment: bool = False) -> bool:
    """Whether ``a`` and ``b`` are the same identifier (PDI-GRAMMAR.md §2.2).

    With ``ignore_fragment=True``, RFC 8141 equivalence (§2.10): everything from
    the first ``#`` (the f-component) on is ignored.
    """
    ta = str(a if isinstance(a, PDI) else PDI.parse(a))
    tb = str(b if isinstance(b, PDI) else PDI.parse(b))
    if ignore_fragment:
        ta = ta.split("#", 1)[0]
        tb = tb.split("#", 1)[0]
    return ta == tb


# ---------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------


def _parse_pdi(
    text: str, start: int, end: int, strict: bool, depth: int, *, fast: bool = True
) -> PDI:
    """Parse ``text[start:end]`` as ``pdi-urn / pdi``; offsets are into ``text``.

    ``fast=False`` skips the one-expression path (the tests compare the two).
    """
    if depth > _MAX_DEPTH:
        raise LimitError(f"citations nested deeper than {_MAX_DEPTH} levels")
    warnings: list[_Warning] = []
    head = _fast_head(text, start, end) if fast else None
    if head is None:
        head = _slow_head(text, start, end, warnings)
    # The shared tail: what the resource identifier's parts say together, then
    # the fragment or citation after it (line 125).
    series = head.series
    country = series[-1]
    if country.lower() not in ISO_3166_ALPHA2:
        # The country is the first part that can warn: its warning comes first.
        warnings.insert(
            0,
            (
                f"'{clipped(country)}' is not an ISO 3166-1 alpha-2 country code (§2.3)"
                + (f"; did you mean {COUNTRY_CODE_FOR[country.lower()]!r}?" if country.lower() in COUNTRY_CODE_FOR else ""),
                head.series_end - len(country),
                "iso-country",
            ),
        )
    unique_id_raw = head.unique_id_raw
    serial = head.serial
    fmt = head.format
    version = head.version
    if serial is None and fmt is None and unique_id_raw != "*":
        warnings.append(
            (
                "an encapsulated unique id requires a format (PDI draft, lines 347, 395)",
                head.unique_id_at,
                "format",
            )
        )
    ri_end = head.end
    fragment: Fragment | None = None
    citation: Citation | None = None
    if ri_end < end:
        mark = text[ri_end]
        what = "fragment" if mark == "#" else "citation"
        if fmt is None:
            raise _fail(
                f"a {what} needs a format (PDI draft, line 404)",
                text,
                ri_end,
                "fragment-specifier" if mark == "#" else "citation-specifier",
            )
        if version is None and not head.version_wildcard:
            warnings.append(
                (
                    f"no version on a {what} PDI (the PDI draft, line 457, requires one): read as version 1",
                    ri_end,
                    "version",
                )
            )
            version = 1
        if mark == "#":
            fragment, at = _parse_fragment(text[ri_end + 1 : end], text, ri_end + 1)
            _check_fragment(fragment, fmt, text, ri_end + 1, warnings, at)
        else:
            citation = _parse_citation(
                text, ri_end + 1, end, fmt, strict, depth, warnings, fast=fast
            )

    if strict and warnings:
        message, offset, rule = warnings[0]
        raise _fail(f"{message} (not accepted by strict parsing)", text, offset, rule)
    return PDI(
        series=series, year=head.year, month=head.month, day=head.day,
        unique_id=head.unique_id, unique_id_raw=unique_id_raw, serial=serial,
        format=fmt, version=version, version_wildcard=head.version_wildcard,
        fragment=fragment, citation=citation,
        warnings=tuple(w[0] for w in warnings) if warnings else (),
    )


def _parse_citation(
    text: str,
    start: int,
    end: int,
    fmt: str,
    strict: bool,
    depth: int,
    warnings: list[_Warning],
    *,
    fast: bool = True,
) -> Citation:
    eq = text.find("=", start, end)
    if eq < 0:
        raise _fail(
            "a citation is '@' origin-position '=' pdi (PDI draft, line 168): '=' missing",
            text,
            end,
            "citation-specifier",
        )
    origin_raw = text[start:eq]
    origin = _parse_position(origin_raw, None, text, start)
    scheme = token_lookup(formats.default_fragment_scheme, fmt)
    if scheme in ("rect", "crop"):
        if not _is_coordinate(origin):
            raise _fail(
                f"the origin of a citation in {fmt!r} is a coordinate (x,y)",
                text,
                start,
                "origin-position",
            )
    elif scheme is not None and not isinstance(origin, int):
        raise _fail(
            f"the origin of a citation in {fmt!r} is a {scheme} position (digits)",
            text,
            start,
            "origin-position",
        )
    try:
        cited = _parse_pdi(text, eq + 1, end, strict, depth + 1, fast=fast)
    except ParseError as exc:  # its offset is into the whole text: say that it is of the PDI after the '='
        if depth:
            raise  # a citation cited: the outermost says it once
        raise exc.within("the cited PDI (after '='): ") from None
    warnings.extend((f"cited: {w}", eq + 1, "citation-specifier") for w in cited.warnings)
    return Citation(origin, cited)
