"""The Open Archives Initiative Protocol for Metadata Harvesting, version 2.0 (pure: values in, XML out).

What a repository needs of the protocol (sections of the OAI-PMH 2.0
specification, 2002-06-14, revised 2015-01-08), with no I/O:

* §3.1.1 and §3.1.2 the request: a ``verb`` and its arguments, read by
  :func:`parse_request`, which raises :class:`OAIError` with the protocol's
  own codes (§3.6): ``badVerb`` for a missing, repeated or unknown verb,
  ``badArgument`` for a missing, repeated or illegal argument, or an
  exclusive ``resumptionToken`` with others;
* §3.3.1 UTCdatetime: datestamps to the second, ``YYYY-MM-DDThh:mm:ssZ``,
  and ``from``/``until`` in either granularity (one granularity for both),
  :func:`parse_datestamp`; a day as ``until`` runs to its last second;
  §2.7.1: a ``from`` later than ``until`` is ``badArgument``;
* §3.5 flow control: a resumption token (:class:`Resumption`) carries the
  last record's identifier (a keyset cursor) and the request's arguments, so a harvest
  needs no state on the server and costs the same on any page; a bad one
  is ``badResumptionToken``. The last page of a list split into pages has
  an empty ``resumptionToken``;
* §3.2 the XML response (:func:`response`) and §4 each verb's element;
* §2.5 deleted records (``status="deleted"``, ``deletedRecord``
  ``persistent``: a withdrawn document's name is never reused, and what a
  harvester was shown is reported deleted once withheld from it), §2.7.1
  sets (one per series) and §2.7.2 selective harvesting by datestamp;
* the ``oai_dc`` format of §6 (Dublin Core, :func:`dublin_core`).

XML is written with :mod:`xml.etree.ElementTree`, which escapes every value;
a character XML 1.0 cannot hold (a control character in a statement) is
written as U+FFFD.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pdi._query import NotUTF8, query_pairs

OAI = "http://www.openarchives.org/OAI/2.0/"
OAI_DC = "http://www.openarchives.org/OAI/2.0/oai_dc/"
DC = "http://purl.org/dc/elements/1.1/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
OAI_SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
OAI_DC_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
for _prefix, _uri in (("", OAI), ("oai_dc", OAI_DC), ("dc", DC), ("xsi", XSI)):
    ET.register_namespace(_prefix, _uri)

#: The one metadata format (§3.4: every repository disseminates oai_dc).
METADATA_FORMATS = {"oai_dc": (OAI_DC_SCHEMA, OAI_DC)}
#: The fifteen elements of simple Dublin Core, in the order of DCMES 1.1.
DC_ELEMENTS = ("title", "creator", "subject", "description", "publisher", "contributor", "date", "type",
               "format", "identifier", "source", "language", "relation", "coverage", "rights")
GRANULARITY = "YYYY-MM-DDThh:mm:ssZ"

#: §3.1.2.1 arguments of each verb: (required, optional, exclusive).
VERBS: dict[str, tuple[frozenset[str], frozenset[str], str | None]] = {
    "Identify": (frozenset(), frozenset(), None),
    "ListMetadataFormats": (frozenset(), frozenset({"identifier"}), None),
    "ListSets": (frozenset(), frozenset(), "resumptionToken"),
    "GetRecord": (frozenset({"identifier", "metadataPrefix"}), frozenset(), None),
    "ListIdentifiers": (frozenset({"metadataPrefix"}), frozenset({"from", "until", "set"}), "resumptionToken"),
    "ListRecords": (frozenset({"metadataPrefix"}), frozenset({"from", "until", "set"}), "resumptionToken"),
}
#: The error codes of §3.6.
ERROR_CODES = frozenset({"badArgument", "badResumptionToken", "badVerb", "cannotDisseminateFormat",
                         "idDoesNotExist", "noRecordsMatch", "noMetadataFormats", "noSetHierarchy"})
#: The longest argument value read (an identifier, a token): longer is ``badArgument`` (a token: ``badResumptionToken``).
MAX_ARGUMENT = 4096


class OAIError(Exception):
    """An OAI-PMH error condition (§3.6): its ``code`` and a message that says what was wrong."""

    def __init__(self, code: str, message: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"no OAI-PMH error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Request:
    """A request whose verb and arguments are well formed (:func:`parse_request`)."""

    verb: str
    arguments: Mapping[str, str]


def form_pairs(raw: bytes, where: str = "the form") -> list[tuple[str, str]]:
    """The ``key=value`` pairs of a query string or a form body as sent (§3.1.1.2: URL-encoded UTF-8): ``+`` a
    space, each key and value UTF-8 once its %-escapes are read, strictly. Octets that are not UTF-8, sent as they
    are or %-escaped (``%FF``), are ``badArgument`` saying where, not read as U+FFFD (an identifier the harvester
    never sent, answered ``idDoesNotExist``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as wrong:
        raise OAIError("badArgument", f"{where} is not UTF-8 (§3.1.1.2: URL-encoded UTF-8): octet {wrong.start}"
                       " is not") from None
    try:
        return query_pairs(text)
    except NotUTF8 as bad:
        raise OAIError("badArgument", f"the argument {bad.name[:80]!r} is not UTF-8 once its %-escapes are read"
                       f" (§3.1.1.2: URL-encoded UTF-8): {bad.part[:80]!r}") from None


def parse_request(pairs: Iterable[tuple[str, str]]) -> Request:
    """The verb and arguments of a request's ``key=value`` pairs (query string or form), checked by §3.1.2.1."""
    verb, arguments = _verb_and_arguments(pairs)
    _check_arguments(verb, arguments)
    return Request(verb, arguments)


def _verb_and_arguments(pairs: Iterable[tuple[str, str]]) -> tuple[str, dict[str, str]]:
    """The one known verb and the arguments, each given once (§3.6 badVerb, badArgument)."""
    verbs: list[str] = []
    arguments: dict[str, str] = {}
    for key, value in pairs:
        if key == "verb":
            verbs.append(value)
            continue
        if key in arguments:
            raise OAIError("badArgument", f"the argument {key!r} is given more than once")
        arguments[key] = value
    if not verbs:
        raise OAIError("badVerb", "no verb: name one of " + ", ".join(VERBS))
    if len(verbs) > 1:
        raise OAIError("badVerb", f"the verb is given {len(verbs)} times: give it once")
    verb = verbs[0]
    if verb not in VERBS:
        raise OAIError("badVerb", f"{verb[:80]!r} is no OAI-PMH verb: use one of " + ", ".join(VERBS))
    return verb, arguments


def _check_arguments(verb: str, arguments: dict[str, str]) -> None:
    """Refuse arguments the verb does not take, misses or cannot echo (§3.1.2.1, §3.6 badArgument)."""
    required, optional, exclusive = VERBS[verb]
    allowed = required | optional | ({exclusive} if exclusive else set())
    for key, value in arguments.items():
        if key not in allowed:
            takes = ", ".join(sorted(allowed)) if allowed else "no argument"
            raise OAIError("badArgument", f"{verb} takes {takes}, not {key[:80]!r}")
        if len(value) > MAX_ARGUMENT and key != "resumptionToken":  # a token too long: Resumption.decode says so
            raise OAIError("badArgument", f"the argument {key} is longer than {MAX_ARGUMENT} characters")
    # Values the response's schema cannot echo are illegal (§3.6 badArgument), so every error a
    # request that passes here meets is answered with the request echoed as valid XML (§3.2).
    for key in ("from", "until"):
        if key in arguments:
            parse_datestamp(arguments[key], argument=key)
    if "metadataPrefix" in arguments and not _PREFIX.fullmatch(arguments["metadataPrefix"]):
        raise OAIError("badArgument", f"metadataPrefix={arguments['metadataPrefix'][:80]!r} holds characters a"
                       " metadata prefix cannot (letters, digits and -_.!~*'() only)")
    if "set" in arguments and not _SET_SPEC.fullmatch(arguments["set"]):
        raise OAIError("badArgument", f"set={arguments['set'][:80]!r} is not a setSpec (letters, digits and"
                       " -_.!~*'(), in parts joined by ':')")
    if exclusive is not None and exclusive in arguments:
        if len(arguments) > 1:
            others = ", ".join(sorted(k for k in arguments if k != exclusive))
            raise OAIError("badArgument", f"{exclusive} is an exclusive argument: it cannot come with {others}")
    else:
        missing = sorted(required - arguments.keys())
        if missing:
            raise OAIError("badArgument", f"{verb} needs the argument {', '.join(missing)}")


#: The schema's metadataPrefixType and setSpecType (OAI-PMH.xsd).
_PREFIX = re.compile(r"[A-Za-z0-9\-_.!~*'()]+")
_SET_SPEC = re.compile(r"[A-Za-z0-9\-_.!~*'()]+(?::[A-Za-z0-9\-_.!~*'()]+)*")
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_SECOND = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


def parse_datestamp(text: str, *, argument: str) -> tuple[datetime.datetime, str]:
    """A ``from`` or ``until`` value (§3.3.1) as a UTC datetime, and its granularity (``YYYY-MM-DD`` or seconds).

    A day as ``until`` is its last second, as ``from`` its first.
    """
    if _DAY.fullmatch(text):
        granularity = "YYYY-MM-DD"
        fmt = "%Y-%m-%d"
    elif _SECOND.fullmatch(text):
        granularity = GRANULARITY
        fmt = "%Y-%m-%dT%H:%M:%SZ"
    else:
        raise OAIError("badArgument", f"{argument}={text[:40]!r} is not a UTC datestamp (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)")
    try:
        moment = datetime.datetime.strptime(text, fmt).replace(tzinfo=datetime.UTC)
    except ValueError:
        raise OAIError("badArgument", f"{argument}={text!r} is no real date or time") from None
    if granularity == "YYYY-MM-DD" and argument == "until":
        moment += datetime.timedelta(days=1, seconds=-1)
    return moment, granularity


def datestamp(moment: datetime.datetime) -> str:
    """A UTC datestamp to the second (§3.3.1), the repository's granularity: four digits of year however small
    the year (``strftime("%Y")`` writes the year 999 as ``999`` on glibc)."""
    return moment.astimezone(datetime.UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


@dataclass(frozen=True)
class Selection:
    """What a list request selects: metadata format, set, and the datestamps it runs between (inclusive)."""

    prefix: str
    set: str | None = None
    start: str | None = None  # the ``from`` argument as given
    until: str | None = None

    def bounds(self) -> tuple[datetime.datetime | None, datetime.datetime | None]:
        """``from`` and ``until`` as datetimes; ``badArgument`` if they are not datestamps of one granularity."""
        start = parse_datestamp(self.start, argument="from") if self.start is not None else None
        until = parse_datestamp(self.until, argument="until") if self.until is not None else None
        if start is not None and until is not None and start[1] != until[1]:
            raise OAIError("badArgument", "from and until have different granularities: give both as days or both to the second")
        if start is not None and until is not None and start[0] > until[0]:  # §2.7.1: from <= until, else badArgument
            raise OAIError("badArgument", f"from={self.start} is later than until={self.until}: from must not be later")
        return (start[0] if start else None), (until[0] if until else None)


def selection(arguments: Mapping[str, str]) -> Selection:
    """The selection of a ListRecords or ListIdentifiers request without a resumption token (checked)."""
    chosen = Selection(arguments["metadataPrefix"], arguments.get("set"), arguments.get("from"), arguments.get("until"))
    check_prefix(chosen.prefix)
    chosen.bounds()
    return chosen


def check_prefix(prefix: str) -> None:
    """``cannotDisseminateFormat`` unless the repository disseminates ``prefix``."""
    if prefix not in METADATA_FORMATS:
        raise OAIError("cannotDisseminateFormat",
                       f"{prefix[:80]!r} is not disseminated here: use " + ", ".join(METADATA_FORMATS))


@dataclass(frozen=True)
class Resumption:
    """A resumption token's content (§3.5): where the list goes on, how many went before, and the selection.

    ``after`` is where the list goes on, as the repository wrote it: the
    identifier of the last record sent (``None``: from the start). It is
    never a row number of the catalog, whose gaps would tell a harvester how
    many records it is not shown.
    """

    after: str | None
    sent: int
    selection: Selection

    def encode(self) -> str:
        """The token: URL-safe base64 of compact JSON (no padding), opaque to harvesters."""
        s = self.selection
        raw = json.dumps([2, self.after, self.sent, s.prefix, s.set, s.start, s.until], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Resumption:
        """The content of a token this repository issued; ``badResumptionToken`` for anything else
        (a token of an earlier form, which carried a catalog row number, too: the harvest starts again)."""
        if len(token) > MAX_ARGUMENT:
            raise OAIError("badResumptionToken", f"the resumption token {token[:60]!r}… ({len(token)} characters) is"
                           f" longer than any issued here ({MAX_ARGUMENT} at most)")
        bad = OAIError("badResumptionToken", f"the resumption token {token[:60]!r} was not issued here or is damaged")
        if not token or not re.fullmatch(r"[A-Za-z0-9_-]+", token):
            raise bad
        try:
            fields = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        except (binascii.Error, ValueError, RecursionError):
            raise bad from None
        if not (isinstance(fields, list) and len(fields) == 7 and fields[0] == 2
                and (fields[1] is None or (isinstance(fields[1], str) and fields[1]))
                and isinstance(fields[2], int) and not isinstance(fields[2], bool) and fields[2] >= 0
                and isinstance(fields[3], str)
                and all(f is None or isinstance(f, str) for f in fields[4:7])):
            raise bad
        chosen = Selection(fields[3], fields[4], fields[5], fields[6])
        if chosen.set is not None and not _SET_SPEC.fullmatch(chosen.set):  # a set no request could have named
            raise bad
        try:
            check_prefix(chosen.prefix)
            chosen.bounds()
        except OAIError:
            raise bad from None
        return cls(fields[1], fields[2], chosen)


@dataclass(frozen=True)
class Header:
    """A record's header (§2.5): identifier, datestamp, sets, and whether the record is deleted."""

    identifier: str
    datestamp: datetime.datetime
    sets: tuple[str, ...]
    deleted: bool = False


@dataclass(frozen=True)
class Record:
    """A record: its header and, unless deleted, its Dublin Core ``(element, value)`` pairs."""

    header: Header
    dc: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Identity:
    """What ``Identify`` says of the repository (§4.2)."""

    name: str
    base_url: str
    admin_emails: tuple[str, ...]
    earliest: datetime.datetime


def dublin_core(
    identifiers: Sequence[str],
    statements: Sequence[tuple[str, str]],
    *,
    dates: Sequence[str] = (),
    formats: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> tuple[tuple[str, str], ...]:
    """A record's simple Dublin Core: the statements whose key names a DC element, and what the catalog knows.

    ``statements`` are ``(key, value)`` pairs, each the current value of a
    key; a key is a DC element when it is one of the fifteen names, alone or
    after ``dc:`` or ``dc.`` (any case). Every distinct value is kept, in
    the order given, after the catalog's own identifiers, dates, formats and
    sources of the same element.
    """
    found: dict[str, list[str]] = {name: [] for name in DC_ELEMENTS}
    found["identifier"] += identifiers
    found["date"] += dates
    found["format"] += formats
    found["source"] += sources
    for key, value in statements:
        name = key.lower()
        for prefix in ("dc:", "dc."):
            if name.startswith(prefix):
                name = name[len(prefix):]
        if name in found and value.strip():
            found[name].append(value)
    return tuple((name, value) for name in DC_ELEMENTS for value in dict.fromkeys(found[name]))


# --- XML --------------------------------------------------------------------------------------------
#: What XML 1.0 cannot hold (its Char production): written as U+FFFD.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _add(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: _text(v) for k, v in attrs.items()})
    if text is not None:
        element.text = _text(text)
    return element


def response(base_url: str, now: datetime.datetime, request: Request | None, body: ET.Element | OAIError) -> bytes:
    """The whole response (§3.2): ``responseDate``, the ``request`` echoed, then the verb's element or the error.

    For ``badVerb`` and ``badArgument`` the request is echoed without
    attributes, as §3.2 asks.
    """
    root = ET.Element(f"{{{OAI}}}OAI-PMH", {f"{{{XSI}}}schemaLocation": f"{OAI} {OAI_SCHEMA}"})
    _add(root, f"{{{OAI}}}responseDate", datestamp(now))
    echoed = request is not None and not (isinstance(body, OAIError) and body.code in ("badVerb", "badArgument"))
    attrs = {"verb": request.verb, **request.arguments} if echoed and request is not None else {}
    _add(root, f"{{{OAI}}}request", base_url, **attrs)
    if isinstance(body, OAIError):
        _add(root, f"{{{OAI}}}error", body.message, code=body.code)
    else:
        root.append(body)
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written


def identify(identity: Identity) -> ET.Element:
    """The ``Identify`` element (§4.2)."""
    element = ET.Element(f"{{{OAI}}}Identify")
    _add(element, f"{{{OAI}}}repositoryName", identity.name)
    _add(element, f"{{{OAI}}}baseURL", identity.base_url)
    _add(element, f"{{{OAI}}}protocolVersion", "2.0")
    for email in identity.admin_emails:
        _add(element, f"{{{OAI}}}adminEmail", email)
    _add(element, f"{{{OAI}}}earliestDatestamp", datestamp(identity.earliest))
    _add(element, f"{{{OAI}}}deletedRecord", "persistent")
    _add(element, f"{{{OAI}}}granularity", GRANULARITY)
    return element


def metadata_formats() -> ET.Element:
    """The ``ListMetadataFormats`` element (§4.4): ``oai_dc``."""
    element = ET.Element(f"{{{OAI}}}ListMetadataFormats")
    for prefix, (schema, namespace) in METADATA_FORMATS.items():
        each = _add(element, f"{{{OAI}}}metadataFormat")
        _add(each, f"{{{OAI}}}metadataPrefix", prefix)
        _add(each, f"{{{OAI}}}schema", schema)
        _add(each, f"{{{OAI}}}metadataNamespace", namespace)
    return element


def list_sets(sets: Sequence[tuple[str, str]]) -> ET.Element:
    """The ``ListSets`` element (§4.6): each ``(setSpec, setName)``."""
    element = ET.Element(f"{{{OAI}}}ListSets")
    for spec, name in sets:
        each = _add(element, f"{{{OAI}}}set")
        _add(each, f"{{{OAI}}}setSpec", spec)
        _add(each, f"{{{OAI}}}setName", name)
    return element


def _header(parent: ET.Element, header: Header) -> None:
    element = _add(parent, f"{{{OAI}}}header", **({"status": "deleted"} if header.deleted else {}))
    _add(element, f"{{{OAI}}}identifier", header.identifier)
    _add(element, f"{{{OAI}}}datestamp", datestamp(header.datestamp))
    for spec in header.sets:
        _add(element, f"{{{OAI}}}setSpec", spec)


def _record(parent: ET.Element, record: Record) -> None:
    element = _add(parent, f"{{{OAI}}}record")
    _header(element, record.header)
    if record.header.deleted:
        return  # §2.5.1: a deleted record has no metadata
    metadata = _add(element, f"{{{OAI}}}metadata")
    dc = _add(metadata, f"{{{OAI_DC}}}dc", **{f"{{{XSI}}}schemaLocation": f"{OAI_DC} {OAI_DC_SCHEMA}"})
    for name, value in record.dc:
        _add(dc, f"{{{DC}}}{name}", value)


def get_record(record: Record) -> ET.Element:
    """The ``GetRecord`` element (§4.1)."""
    element = ET.Element(f"{{{OAI}}}GetRecord")
    _record(element, record)
    return element


def list_records(
    verb: str, records: Sequence[Record], token: str | None, cursor: int, *, resumed: bool
) -> ET.Element:
    """``ListRecords`` (records) or ``ListIdentifiers`` (their headers), with the resumption token (§3.5).

    ``token`` goes on to the next page; ``cursor`` is how many records the
    earlier pages held. A list that needed no token has none; the last page
    of one that did (``resumed``) has an empty one.
    """
    element = ET.Element(f"{{{OAI}}}{verb}")
    for record in records:
        if verb == "ListIdentifiers":
            _header(element, record.header)
        else:
            _record(element, record)
    if token is not None:
        _add(element, f"{{{OAI}}}resumptionToken", token, cursor=str(cursor))
    elif resumed:
        _add(element, f"{{{OAI}}}resumptionToken", cursor=str(cursor))
    return element
