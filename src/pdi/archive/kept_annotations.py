"""The annotation server's domain: W3C Web Annotations kept in the catalog, read as their targets allow.

What the W3C *Web Annotation Protocol* (Recommendation, 23 February 2017,
https://www.w3.org/TR/annotation-protocol/) asks of what is kept, whatever
carries it (the HTTP edge is :mod:`pdi.server.protocol.web_annotation`):

* §5.1 a new annotation is given its own name (``slug``), even if it had an
  ``id``; that ``id`` is kept as ``via`` (unless it has one), a
  ``canonical`` is kept unchanged, and the server may add to it: the time
  it was created (``created``, unless given) and, once replaced, the time
  of that (``modified``);
* §5.2 a ``Slug`` the client suggests is used when it is a safe path
  segment (:func:`safe_slug`: letters, digits, ``.``, ``_``, ``-``, not
  starting with ``.``, at most :data:`MAX_SLUG` characters) and names no
  annotation, present or deleted, and the annotation targets no document of
  a hidden series (a name taken would tell a writer of another series that
  it is); otherwise a UUID is;
* §5.3 a replacement is the whole new state, and may not change a
  ``canonical`` or ``via`` once set (409);
* §5.4 a deleted annotation's name is not used again (``410`` from then on);
* §3 every state has an entity tag (:func:`entity_tag`), which §5.3 and
  §5.4 changes must present (``If-Match``): a stale one is refused (412).

What the Web Annotation Data Model (§3.1) asks of what is posted
(:func:`check_annotation`): a JSON object whose ``@context`` is (or
includes, with the W3C's LDP context only) ``http://www.w3.org/ns/anno.jsonld`` (415 otherwise: the
protocol's §6 lists a context it does not recognize as 415), whose ``type``
is (or includes) ``Annotation``, with a ``target``, and not both a ``body``
and a ``bodyValue`` (§3.2.5); whose targets and bodies name resources, with
the selectors the Model describes whole (:func:`check_resources`: what is
wrong is named by its RFC 6901 JSON pointer); at most
:data:`MAX_ANNOTATION` octets.

Who may read one (decision): an annotation whose targets name archived
documents (a PDI as a target, or as a ``SpecificResource``'s ``source``)
is read only by those who may read every one of those documents
(:mod:`pdi.archive.access`: private and hidden series, embargoes); one of a
hidden series is not found, as its document is not. Its targets must be in
the archive, and readable by the writer. An annotation of anything else (a
web page) is read by all. Writing needs a token with the role ``curate``
(the role that makes statements) over the series of every archived target,
old and new.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote

from pdi.archive.store import AnnotationRecord
from pdi.errors import LimitError, ParseError, PDIError, UnsupportedError

#: The JSON-LD context of the Web Annotation Data Model.
CONTEXT: Final = "http://www.w3.org/ns/anno.jsonld"
#: The most octets of one annotation's JSON kept.
MAX_ANNOTATION: Final = 1 << 20
#: The longest ``Slug`` used.
MAX_SLUG: Final = 64
_SLUG = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*\Z")
#: Targets of one annotation read at most.
MAX_TARGETS: Final = 1000


def safe_slug(value: str | None) -> str | None:
    """The ``Slug`` a client suggests (RFC 5023 §9.7; quotes and percent-escapes of its value read), if it is a
    safe last path segment (:data:`_SLUG`, at most :data:`MAX_SLUG` characters); else ``None`` (a UUID is used)."""
    if value is None:
        return None
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    try:
        text = unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None  # escapes of octets that are no UTF-8: no name
    if len(text) > MAX_SLUG or not _SLUG.match(text):
        return None
    return text


def new_slug() -> str:
    """A name no one chose: a random UUID."""
    import uuid  # (with platform, a millisecond and more of every command's start: only when one is made)

    return str(uuid.uuid4())


def entity_tag(record: AnnotationRecord) -> str:
    """The strong entity tag of an annotation's state (RFC 9110 §8.8.3): its name, revision and JSON hashed."""
    state = f"{record.slug}\n{record.revision}\n{record.data}".encode()
    return f'"{hashlib.sha256(state).hexdigest()[:32]}"'


#: The contexts an annotation may name beside :data:`CONTEXT`: the W3C's own, which define none of its terms again.
KNOWN_CONTEXTS: Final = frozenset({CONTEXT, "http://www.w3.org/ns/ldp.jsonld"})


def _is_context(value: object) -> bool:
    """The Web Annotation context, alone or in a list of contexts pdi knows (:data:`KNOWN_CONTEXTS`): not an inline
    one, nor one named by a URL pdi does not know (and never fetches), either of which could make another term stand
    for ``target`` (which :func:`archived_targets` would not read)."""
    if isinstance(value, str):
        return value == CONTEXT
    return isinstance(value, list) and CONTEXT in value and all(
        isinstance(v, str) and v in KNOWN_CONTEXTS for v in value)


def _types(value: object) -> list[object]:
    return value if isinstance(value, list) else [value]


def check_annotation(data: object) -> dict[str, Any]:
    """``data`` if it is an annotation the server keeps (module docstring), without its ``id``."""
    if not isinstance(data, Mapping):
        raise _refused(f"an annotation is a JSON object, not {_json(data)}", "", "annotation")
    if not _is_context(data.get("@context")):
        given = f"not {_json(data['@context'])}" if "@context" in data else "and this one has none"
        raise _refused(f"an annotation's @context is (or includes) {CONTEXT}, {given}",
                       "/@context", "@context", UnsupportedError)
    if "Annotation" not in _types(data.get("type")):
        given = f"not {_json(data['type'])}" if "type" in data else "and this one has none"
        raise _refused(f"an annotation's type is (or includes) Annotation, {given}", "/type", "type")
    if data.get("target") in (None, [], ""):
        raise _refused("an annotation needs a target (Web Annotation Data Model §3.1)", "/target", "target")
    if "body" in data and "bodyValue" in data:
        raise _refused("an annotation has a body or a bodyValue, not both (Web Annotation Data Model §3.2.5)",
                       "/bodyValue", "bodyValue")
    check_resources(data)
    kept = {k: v for k, v in data.items() if k != "id"}
    if len(encode(kept)) > MAX_ANNOTATION:
        raise LimitError(f"an annotation is at most {MAX_ANNOTATION} octets of JSON")
    return kept


def check_resources(data: Mapping[str, Any]) -> None:
    """A :class:`~pdi.errors.ParseError` naming where (an RFC 6901 JSON pointer, also its ``pointer`` member) unless
    each target and body names a resource (Web Annotation Data Model §3.2, §4: an IRI, or an object with an ``id``,
    a ``source`` or ``items``; a body may be a ``TextualBody``'s ``value``) and each selector it is refined by has
    what the Model says it MUST (§4.2: a ``TextQuoteSelector``'s ``exact``, a position selector's ``start`` and
    ``end`` of 0 or more, a ``FragmentSelector``'s ``value``, a ``RangeSelector``'s ``startSelector`` and
    ``endSelector``). A ``5``, a ``null`` or a ``{}`` kept as a target was an annotation of nothing, which no client
    of the Model can read; a selector without its positions points nowhere in the document it names."""
    value = data.get("bodyValue", "")
    if not isinstance(value, str) and not (isinstance(value, list) and len(value) == 1 and isinstance(value[0], str)):
        raise _refused(f"a bodyValue is one text (Web Annotation Data Model §3.2.5), not {_json(value)}",
                       "/bodyValue", "bodyValue")
    stack: list[tuple[object, str, str]] = []
    for key, kind in (("target", "target"), ("body", "body")):
        if key in data:
            value = data[key]
            items = value if isinstance(value, list) else [value]
            base = f"/{key}"
            stack.extend((item, f"{base}/{k}" if isinstance(value, list) else base, kind)
                         for k, item in reversed(list(enumerate(items))))
    while stack:
        value, where, kind = stack.pop()
        if kind == "selector":
            _check_selector(value, where, stack)
            continue
        if isinstance(value, str) and value.strip():
            continue
        naming = _BODY_KEYS if kind == "body" else _RESOURCE_KEYS
        if not isinstance(value, Mapping) or not any(key in value for key in naming):
            what = {"target": "a target", "body": "a body"}.get(kind, "a resource named")
            wanted = "an IRI, or an object with an id, a source or items" + (
                " (or a TextualBody's value)" if kind == "body" else "")
            raise _refused(f"{what} is {wanted} (Web Annotation Data Model §3.2, §4), not {_json(value)}", where,
                           "target" if kind != "body" else "body")
        if kind == "body" and "value" in value and not isinstance(value["value"], str):
            raise _refused(f"a TextualBody's value is text (Web Annotation Data Model §3.2.4), not"
                           f" {_json(value['value'])}", _pointer(where, "value"), "body")
        for key in _RESOURCE_KEYS:
            if key in value:
                inner = value[key]
                if inner == []:
                    raise _refused(f"{key} names no resource: it is an empty list", _pointer(where, key),
                                   "target" if kind != "body" else "body")
                listed = inner if isinstance(inner, list) else [inner]
                stack.extend((item, _pointer(where, key, k) if isinstance(inner, list) else _pointer(where, key),
                              "resource") for k, item in reversed(list(enumerate(listed))))
        if "selector" in value:
            inner = value["selector"]
            listed = inner if isinstance(inner, list) else [inner]
            stack.extend((item, _pointer(where, "selector", k) if isinstance(inner, list) else
                          _pointer(where, "selector"), "selector") for k, item in reversed(list(enumerate(listed))))


#: The members an object names the resource it is by: its IRI (``id``, JSON-LD's ``@id``), a Specific Resource's
#: ``source`` (and the terms the anno context makes of it), a Choice's, List's, Composite's or Independents'
#: ``items`` (JSON-LD's ``@list``, ``@set``); a body also a TextualBody's ``value``.
_RESOURCE_KEYS: Final = ("id", "@id", "source", "oa:hasSource", "http://www.w3.org/ns/oa#hasSource", "items",
                         "@list", "@set")
_BODY_KEYS: Final = (*_RESOURCE_KEYS, "value")
#: What each selector of the Model MUST have (§4.2.1 to §4.2.9): its members and what they are.
_SELECTOR_MUSTS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "FragmentSelector": (("value", "text"),), "CssSelector": (("value", "text"),),
    "XPathSelector": (("value", "text"),), "TextQuoteSelector": (("exact", "text"),),
    "TextPositionSelector": (("start", "position"), ("end", "position")),
    "DataPositionSelector": (("start", "position"), ("end", "position")),
    "RangeSelector": (("startSelector", "selector"), ("endSelector", "selector")),
}
#: Members of a selector that are text when it has them (§4.2.1, §4.2.4).
_SELECTOR_TEXTS: Final = {"TextQuoteSelector": ("prefix", "suffix"), "FragmentSelector": ("conformsTo",)}


def _check_selector(value: object, where: str, stack: list[tuple[object, str, str]]) -> None:
    """One selector (or a state) of :func:`check_resources`: an IRI, or an object with what its type MUST have;
    what it holds (a Range's selectors, a ``refinedBy``) put on ``stack``."""
    if isinstance(value, str) and value.strip():
        return
    if not isinstance(value, Mapping):
        raise _refused(f"a selector is an IRI or an object (Web Annotation Data Model §4.2), not {_json(value)}",
                       where, "selector")
    kind = value.get("type")
    for key, what in _SELECTOR_MUSTS.get(kind, ()) if isinstance(kind, str) else ():
        member = value.get(key)
        at = _pointer(where, key)
        if what == "text" and not isinstance(member, str):
            raise _refused(f"a {kind} MUST have its {key}, as text (Web Annotation Data Model §4.2), not"
                           f" {_json(member)}", at, "selector")
        if what == "position" and (isinstance(member, bool) or not isinstance(member, int) or member < 0):
            raise _refused(f"a {kind} MUST have its {key}, a whole number of at least 0 (Web Annotation Data Model"
                           f" §4.2.5, §4.2.6), not {_json(member)}", at, "selector")
        if what == "selector":
            stack.append((member, at, "selector"))
    for key in _SELECTOR_TEXTS.get(kind, ()) if isinstance(kind, str) else ():
        if key in value and not isinstance(value[key], str):
            raise _refused(f"a {kind}'s {key} is text (Web Annotation Data Model §4.2), not {_json(value[key])}",
                           _pointer(where, key), "selector")
    if "refinedBy" in value:
        inner = value["refinedBy"]
        listed = inner if isinstance(inner, list) else [inner]
        stack.extend((item, _pointer(where, "refinedBy", k) if isinstance(inner, list) else _pointer(where, "refinedBy"),
                      "selector") for k, item in reversed(list(enumerate(listed))))


def _pointer(base: str, *tokens: str | int) -> str:
    """``base`` and ``tokens`` as an RFC 6901 JSON pointer (``~`` as ``~0``, ``/`` as ``~1``, §3)."""
    return base + "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def _json(value: object) -> str:
    """``value`` as JSON, at most 80 characters of it: what the client sent, in the client's words."""
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"


def _refused(message: str, where: str, rule: str, kind: type[PDIError] = ParseError) -> PDIError:
    """A :class:`~pdi.errors.ParseError` (or ``kind``) of ``message`` at the JSON pointer ``where`` (``""``: the whole
    document, RFC 6901 §5): said, and kept as the problem's ``pointer`` member (RFC 9457 §3.2)."""
    said = f"{message}, at {where or 'the top'}"
    refused = ParseError(said, rule=rule) if kind is ParseError else kind(said)
    refused.details = {"pointer": where}
    return refused


def encode(data: Mapping[str, Any]) -> str:
    """The JSON text an annotation is kept as."""
    import json  # here: reading a name needs no JSON

    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def archived_targets(
    data: Mapping[str, Any], held: Callable[[str], bool] | None = None,
    elsewhere: Callable[[str], None] | None = None,
) -> list[str]:
    """The PDIs an annotation's targets name, however JSON-LD spells them: every string anywhere in its
    ``target`` (or ``oa:hasTarget``, the term it stands for) that is a PDI, or that holds one of a series
    ``held`` here (a URL whose query or path holds it, %-escaped or not: ``…/uri-res/N2R?urn:pdi:…``,
    ``…/view?pdi=pdi://…``), in any member (``id``, ``@id``, ``source``, ``items``, ``@list``, a selector's).

    Whatever way a target names an archived document decides who may annotate it and who may read the
    annotation: one spelling missed here would be an annotation of a private document kept as one of the web,
    public, by a token of another series. So every string is looked at, and one that names a series held here
    but is no PDI is refused rather than let by. A URL that holds no PDI of a series held here (another
    resolver's names, a search for the words ``urn:pdi:``) is a web page's; ``elsewhere`` is told the series each
    such PDI names (a writer's scope is asked of them too, so that its answer is the same whether or not a
    series is held here, which a hidden series' writer outside it must not learn)."""
    from urllib.parse import unquote

    targets = [data[key] for key in _TARGET_KEYS if key in data]
    if sum(len(t) if isinstance(t, list) else 1 for t in targets) > MAX_TARGETS:
        raise LimitError(f"an annotation has at most {MAX_TARGETS} targets")
    found: list[str] = []
    for text in _strings(targets):
        if text[:8].lower() == "urn:pdi:" or text[:4].lower() == "pdi:":
            found.append(text)
        elif "pdi" in text.lower():
            plain = unquote(text)
            for embedded in _EMBEDDED.finditer(plain):
                series = embedded["series"].lower().rstrip(".")
                if held is None or held(series):
                    found.append(embedded[0])
                elif elsewhere is not None:
                    elsewhere(series)
        if len(found) > MAX_TARGETS:
            raise LimitError(f"an annotation has at most {MAX_TARGETS} targets")
    return found


#: The members an annotation names its targets by: ``target``, and the term the Web Annotation context makes of it.
_TARGET_KEYS = ("target", "oa:hasTarget", "http://www.w3.org/ns/oa#hasTarget")
#: A PDI inside a longer string (a URL), to the first character no name holds unescaped: its series named.
_EMBEDDED = re.compile(r"(?i)(?:urn:)?pdi://(?P<series>[^/?#&\s<>\"']+)/[^#&\s<>\"']*")
#: The most strings of a target looked at (an annotation is at most a few kilobytes of them).
MAX_TARGET_STRINGS = 100_000


def _strings(values: list[object]) -> Iterator[str]:
    """Every string in ``values``, at any depth, keys aside, without recursion; at most :data:`MAX_TARGET_STRINGS`."""
    stack = list(reversed(values))
    seen = 0
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            seen += 1
            if seen > MAX_TARGET_STRINGS:
                raise LimitError(f"an annotation's targets hold more than {MAX_TARGET_STRINGS:,} strings")
            yield item
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def representation(record: AnnotationRecord, iri: str) -> dict[str, Any]:
    """The annotation as the server gives it (JSON-LD compacted against :data:`CONTEXT`): ``@context`` and its
    ``id`` (``iri``) first, then what was kept, its ``created`` time (unless it had one) and ``modified``."""
    import json

    kept = json.loads(record.data)
    shown: dict[str, Any] = {"@context": kept.pop("@context", CONTEXT), "id": iri}
    shown.update(kept)
    shown.setdefault("created", record.created_at)
    if record.modified_at is not None:
        shown["modified"] = record.modified_at
    return shown


def unchanged_links(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The names of ``canonical`` and ``via`` that a replacement would change once set (§5.3: refused)."""
    return [key for key in ("canonical", "via") if key in before and after.get(key) != before[key]]
