"""What a resolved name with a format is answered with: the whole entity, kept by the answer cache, or a large one
streamed by verified chunks (``sendfile`` where its chunks are remembered verified), with the headers that say which
name and which stored bytes it is, and the preconditions (``If-Match``, ``If-Unmodified-Since``) read before it.

Made by :class:`pdi.server.protocol.resolver.Resolver` for ``N2R`` and by the replay origin; nothing here reads a
request's route or name.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from starlette.responses import (
    Response,
    StreamingResponse,
)
from starlette.types import Receive, Scope, Send

from pdi._wording import shown_field
from pdi.archive import Archive, Resolved
from pdi.archive.access import current_reader
from pdi.archive.blobs import FileReader
from pdi.archive.record_facts import StreamedPart
from pdi.fragments.results import position_note
from pdi.mhtml.headers import SERVED_TYPE_OCTETS, served_content_type
from pdi.server.http.conditional import (
    NOT_OF_416,
    NOT_REPEATED_TO_IF_RANGE,
    byte_ranges,
    date_precondition,
    entity_tag,
    if_match_holds,
    if_range_holds,
    tag_matches,
    unsatisfiable,
)
from pdi.server.http.problems import Problem
from pdi.server.http.readers import PRIVATE, by_cookie
from pdi.server.http.site import SITED
from pdi.server.process.cache import (
    IMMUTABLE,
    Entity,
    answer,
    modified_of,
)
from pdi.server.protocol.plain import deposit_stamp, labelled_type
from pdi.server.protocol.rfc2169 import n2r_path
from pdi.server.protocol.stored import FileSend, byteranges_response

#: What an archived page served by N2R may do: run no script (``sandbox`` without
#: ``allow-scripts``, which also gives it an opaque origin, so it can read nothing of
#: the resolver's), and load nothing from anywhere but the archive itself: no image,
#: style sheet, font, frame or media from the live web, no form sent, no base reset.
ARCHIVED_CONTENT_POLICY = (
    "sandbox; default-src 'self' data:; script-src 'none'; object-src 'none';"
    " connect-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'"
)


NO_HEADERS: Mapping[str, str] = {}


def shared_answer(archive: Archive, resolved: Resolved) -> bool:
    """Whether the answer may be kept and given to anyone: the request is anonymous (it got through, so
    the name is public), or the name is readable by anyone now (not private, not embargoed), and it was
    not read with a browser's sign-in (:data:`pdi.server.http.readers.by_cookie`: every such answer is private)."""
    if by_cookie.get():
        return False
    reader = current_reader.get()
    return reader is None or reader.token is None or archive.readable_by_anyone(resolved.record)


def whole_entity(
    resolved: Resolved, extra: Mapping[str, str] = NO_HEADERS, *, shared: bool = True, variant: str = "",
) -> Entity:
    """The whole N2R answer for a resolved name with a format: its bytes, media type and headers (and ``extra``).

    An answer not ``shared`` (a private series' or an embargoed name's, read
    with a token) is marked ``Cache-Control: private, no-store`` (RFC 9111
    §5.2.2.7, §5.2.2.5) and never kept by the resolver's cache.
    """
    tag = entity_tag(resolved.sha256, str(resolved.pdi) + variant)  # variant: another answer Accept chose
    about = {**about_headers(resolved, extra), "ETag": tag, "Cache-Control": IMMUTABLE if shared else PRIVATE,
             "Accept-Ranges": "bytes"}
    return Entity(
        resolved.data,
        content_type_of(resolved, whole=True).encode("latin-1"),
        tag,
        tuple([(field_name(k), v.encode("latin-1")) for k, v in about.items()]),
        names_of(resolved),
        shared,
    )


@functools.lru_cache(maxsize=256)
def field_name(name: str) -> bytes:
    """A header field's name as an answer kept sends it (lower case, latin-1); made once a name."""
    return name.lower().encode("latin-1")


@dataclass(frozen=True)
class Large:
    """A whole representation to stream (only located: its octets not read), with the memento's headers."""

    resolved: Resolved
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: An aggregate's Content-Type with its parameters (:func:`aggregate_type`), read before ``HEAD`` is answered.
    content_type: str | None = None


def aggregate_type(archive: Archive, located: Resolved) -> str | None:
    """A stored multipart file's Content-Type with its ``boundary`` and ``type`` (:func:`served_content_type`).

    Read from the file's first octets (its header block): the one case where
    a large representation's ``HEAD`` reads a chunk, since the catalog keeps
    the media type but not the boundary. ``None`` for anything else.
    """
    if not located.media_type.startswith("multipart/"):
        return None
    with archive.open_octets(str(located.pdi)) as opened:
        start = b"".join(opened.reader.chunks(0, min(located.record.size, SERVED_TYPE_OCTETS)))
    return served_content_type(start)


def check_if_match(field: str, found: Entity | Large | PartAnswer | Response) -> None:
    """``If-Match`` of an N2R (RFC 9110 §13.1.1): when it holds no tag of the answer's, the answer is not given but a
    ``412`` problem (an answer without a tag, a description, is held by ``*`` alone); only of a ``2xx`` answer
    (§13.2.1: a ``404``, a ``300`` list or a redirect ignores it)."""
    tag: str | None
    if isinstance(found, Entity):
        tag = found.etag
    elif isinstance(found, Large):
        tag = entity_tag(found.resolved.sha256, str(found.resolved.pdi))
    elif isinstance(found, PartAnswer):
        tag = found.etag
    elif 200 <= found.status_code < 300:  # a description (JSON): no tag, so only * holds
        tag = found.headers.get("etag")
    else:
        return
    if not (field.strip(" \t") == "*" if tag is None else if_match_holds(field, tag)):
        raise Problem(412, "precondition failed",
                      f"If-Match {shown_field(field, 200)} holds no tag of this answer's, {tag} (strong"
                      " comparison, RFC 9110 §13.1.1)")


def streamed_response(
    archive: Archive, located: Resolved, headers: Mapping[str, str], extra: Mapping[str, str] = NO_HEADERS,
    *, head: bool = False, content_type: str | None = None,
) -> Response:
    """N2R of a large whole representation: streamed by verified chunks, with ``Range`` and ``If-Range``.

    The body is read a chunk at a time on a worker thread as the client takes
    it, so memory stays a few chunks whatever the size. A chunk found
    damaged midway ends the response early (the length promised is not
    reached, so a client sees the cut), and is logged by the reader's error.
    A range of a blob file whose chunks this worker has verified since the
    file last changed (the archive's :attr:`~pdi.archive.Archive.fixity_memo`)
    is sent without hashing again, with ``sendfile`` under ``pdi serve``
    (:class:`FileSend`). For ``HEAD`` (``head``) every field comes from the
    catalog (size, SHA-256, media type): the stored octets are not opened.
    """
    size = located.record.size
    media_type = content_type or content_type_of(located)
    tag = entity_tag(located.sha256, str(located.pdi))
    control = IMMUTABLE if shared_answer(archive, located) else PRIVATE
    base = {**about_headers(located, extra), "ETag": tag, "Cache-Control": control, "Accept-Ranges": "bytes"}
    dated = date_precondition(headers, base["Last-Modified"])  # after If-Match (RFC 9110 §13.2.2)
    if dated == 412:
        raise unmodified_since(headers, base["Last-Modified"])
    held = headers.get("if-none-match")
    if dated == 304 or (held is not None and tag_matches(held, tag)):  # RFC 9110 §13.1.2, §13.1.3: not modified
        return Response(status_code=304, headers={"ETag": tag, "Cache-Control": control, "Vary": base["Vary"]})
    modified = base["Last-Modified"]
    wanted = byte_ranges(headers.get("range"), size) if if_range_holds(headers.get("if-range"), tag, modified) else None
    if wanted == []:
        said, problem = unsatisfiable(headers["range"], size)  # the body of HEAD's answer too: the server drops it
        kept = {k: v for k, v in base.items() if k.lower().encode() not in NOT_OF_416}
        return Response(problem, status_code=416, headers={**kept, **{k.decode(): v.decode() for k, v in said}})
    # a 206 to If-Range repeats no representation field the client has (RFC 9110 §15.3.7) but those required
    if_range = headers.get("if-range") is not None
    partial = {k: v for k, v in base.items() if k.lower().encode() not in NOT_REPEATED_TO_IF_RANGE} if if_range else base
    if wanted is not None and len(wanted) > 1:  # several parts; None: too costly to read, the whole answer
        if (parts := byteranges_response(archive, located, wanted, partial, tag, media_type, head=head)) is not None:
            return parts
        wanted = None
    start, end = (0, size) if wanted is None else (wanted[0][0], wanted[0][1] + 1)
    fields = {**(base if wanted is None else partial), "Content-Length": str(end - start)}
    if wanted is not None:
        fields["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
    status = 206 if wanted is not None else 200
    labelled = None if status == 206 and if_range else media_type  # the client has its Content-Type (§15.3.7)
    if head:
        return Response(status_code=status, headers=fields, media_type=labelled)
    opened = archive.open_octets(str(located.pdi))
    reader = opened.reader
    try:
        verified = reader.trusted(start, end) if isinstance(reader, FileReader) else None
    except BaseException:
        opened.close()
        raise
    if verified is not None and isinstance(reader, FileReader):
        return FileSend(opened, reader, verified, start, end, status, fields, labelled)
    # the first chunk is read (and checked) before the status is sent: a damaged start is a 500 problem
    pieces = opened.reader.chunks(start, end)
    try:
        first = next(pieces, b"")
    except BaseException:
        opened.close()
        raise

    def body() -> Iterator[bytes]:
        try:
            if first:
                yield first
            yield from pieces
        finally:
            opened.close()

    return StreamingResponse(body(), status_code=status, headers=fields, media_type=labelled)


@dataclass(frozen=True)
class PartAnswer:
    """A part (``part=``) of a large message to stream (:meth:`~pdi.archive.Archive.locate_message_part`), with the
    memento's headers and whether any reader may keep it."""

    part: StreamedPart
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    shared: bool = True

    @property
    def etag(self) -> str:
        """Its entity tag: the stored octets' SHA-256 and the name with its fragment, as :func:`whole_entity`'s."""
        return entity_tag(self.part.resolved.sha256, str(self.part.resolved.pdi))


def streamed_part_response(found: PartAnswer, headers: Mapping[str, str], *, head: bool = False) -> Response:
    """N2R of a part of a large message (:class:`PartAnswer`): its octets decoded from the message's verified chunks
    a window at a time as the client takes them, never held; its size, tag and fields as :func:`whole_entity` gives
    a part's in hand, ``If-None-Match`` and ``If-Modified-Since`` answered ``304`` as for one. ``Range`` (with
    ``If-Range``) is answered as a stored blob's is (RFC 9110 §14, :func:`streamed_response`): one range a ``206``,
    decoded from the place nearest before it (:func:`pdi.mail.large.part_range`: a window of the message, not all
    before it), an unsatisfiable one a ``416``; several ranges the whole (§14.2: a server may ignore ``Range``; each
    would be decoded from its own place). A chunk found damaged midway ends the answer early (the length promised is
    not reached). ``head``: the fields alone, nothing decoded again."""
    resolved, tag, size = found.part.resolved, found.etag, found.part.size
    control = IMMUTABLE if found.shared else PRIVATE
    base = {**about_headers(resolved, found.headers), "ETag": tag, "Cache-Control": control, "Accept-Ranges": "bytes"}
    dated = date_precondition(headers, base["Last-Modified"])
    if dated == 412:
        raise unmodified_since(headers, base["Last-Modified"])
    held = headers.get("if-none-match")
    if dated == 304 or (held is not None and tag_matches(held, tag)):  # RFC 9110 §13.1.2, §13.1.3: not modified
        return Response(status_code=304, headers={"ETag": tag, "Cache-Control": control, "Vary": base["Vary"]})
    media_type = content_type_of(resolved)
    modified = base["Last-Modified"]
    wanted = byte_ranges(headers.get("range"), size) if if_range_holds(headers.get("if-range"), tag, modified) else None
    if wanted == []:
        said, problem = unsatisfiable(headers["range"], size)
        kept = {k: v for k, v in base.items() if k.lower().encode() not in NOT_OF_416}
        return Response(problem, status_code=416, headers={**kept, **{k.decode(): v.decode() for k, v in said}})
    if wanted is not None and len(wanted) > 1:  # several: the whole (RFC 9110 §14.2)
        wanted = None
    if wanted is None:
        fields = {**base, "Content-Length": str(size)}
        if head:
            return Response(status_code=200, headers=fields, media_type=media_type)
        return StreamingResponse(found.part.pieces(), headers=fields, media_type=media_type)
    first, stop = wanted[0][0], wanted[0][1] + 1
    if_range = headers.get("if-range") is not None  # a 206 to If-Range repeats no field the client has (§15.3.7)
    partial = {k: v for k, v in base.items() if k.lower().encode() not in NOT_REPEATED_TO_IF_RANGE} if if_range else base
    fields = {**partial, "Content-Length": str(stop - first), "Content-Range": f"bytes {first}-{stop - 1}/{size}"}
    labelled = None if if_range else media_type
    if head:
        return Response(status_code=206, headers=fields, media_type=labelled)
    return StreamingResponse(found.part.range_pieces(first, stop), status_code=206, headers=fields,
                             media_type=labelled)


def entity_response(entity: Entity, headers: Mapping[str, str]) -> Response:
    """The answer to a request for ``entity`` with these headers (:func:`pdi.server.process.cache.answer`), its
    ``If-Unmodified-Since`` and ``If-Modified-Since`` read first (:func:`date_precondition`)."""
    if "if-modified-since" in headers or "if-unmodified-since" in headers:
        modified = modified_of(entity)
        dated = date_precondition(headers, modified)
        if dated == 412:
            raise unmodified_since(headers, modified)
        if dated == 304:
            return RawResponse(*answer(entity, entity.etag, None, None))
    status, raw, body = answer(entity, headers.get("if-none-match"), headers.get("range"), headers.get("if-range"))
    return RawResponse(status, raw, body)


def unmodified_since(headers: Mapping[str, str], modified: str | None) -> Problem:
    """The ``412`` of an ``If-Unmodified-Since`` before the answer's ``Last-Modified`` (RFC 9110 §13.1.4)."""
    said = shown_field(headers.get("if-unmodified-since", ""), 100)
    return Problem(412, "precondition failed",
                   f"If-Unmodified-Since {said} is before this answer's Last-Modified, {modified} (RFC 9110 §13.1.4)")


class RawResponse(Response):
    """A response whose headers are already encoded: those of an :class:`Entity`, N2L's ``302`` (:class:`~pdi.server.process.cache.Fixed`) or
    a ``304`` (:class:`~pdi.server.process.cache.Validator`), what the cache keeps. Their paths were made under the
    base URL's path already (the connection sends them again as they are kept): sent marked
    :data:`~pdi.server.http.site.SITED`, they are not moved again."""

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status_code = status
        self.body = body
        self.raw_headers = headers
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers,
                    SITED: True})
        await send({"type": "http.response.body", "body": self.body})


def content_type_of(resolved: Resolved, *, whole: bool = False) -> str:
    """The Content-Type of an N2R answer; for a ``whole`` multipart file (its octets in ``resolved.data``), with its
    own ``boundary`` and ``type`` (:func:`~pdi.mhtml.headers.served_content_type`), without which no client reads it."""
    from pdi.formats import registered_charset

    if whole and resolved.fragment is None and resolved.media_type.startswith("multipart/"):
        served = served_content_type(resolved.data[:SERVED_TYPE_OCTETS])
        if served is not None:
            return served
    if resolved.fragment is None:
        charset = resolved.charset
    else:  # the fragment's own codec (no BOM: utf-16be), under its IANA name
        charset = registered_charset(resolved.fragment.charset) if resolved.fragment.charset else None
    return labelled_type(resolved.media_type, charset)


def about_headers(resolved: Resolved, extra: Mapping[str, str] = NO_HEADERS) -> dict[str, str]:
    """Headers that say which name and which stored bytes a response is (``extra``'s ``Link`` joined to its own)."""
    own_link = f'<{resolved.pdi}>; rel="canonical"'
    headers = {
        **extra,
        "Link": own_link + (", " + extra["Link"] if "Link" in extra else ""),
        # the answer is the description instead when Accept prefers JSON (prefers_description)
        "Vary": "Accept",
        "X-PDI-SHA256": resolved.sha256,
        "Content-Security-Policy": ARCHIVED_CONTENT_POLICY,
        "X-Content-Type-Options": "nosniff",
        # the deposit of the stored bytes (RFC 9110 §8.8.2): they never change after it
        "Last-Modified": deposit_stamp(resolved.record.created_at),
    }
    if resolved.fragment is not None and resolved.fragment.clamped:  # (wholly past the end is a 416 problem)
        headers["Warning"] = '299 pdi "the fragment reaches past the end: cut there"'
    elif resolved.fragment is not None and resolved.pdi.fragment is not None:
        # line=2 alone: an empty 200 as RFC 5147 reads it, and a note of what it is (pdi get's, on stderr)
        note = position_note(resolved.pdi.fragment.positions, resolved.fragment)
        if note is not None:  # after any other the answer carries (a later capture's): Warning is a list
            headers["Warning"] = ", ".join(w for w in (headers.get("Warning"), f'299 pdi "{note}"') if w)
    return headers


def video_time(resolved: Resolved) -> bool:
    """Whether a name is a time fragment (``sec``, ``msec``) of a video, answered by the whole video."""
    fragment = resolved.pdi.fragment
    return (fragment is not None and resolved.record.media_type.startswith("video/")
            and fragment.effective_scheme(resolved.record.format) in ("sec", "msec"))


def with_clip(about: Mapping[str, str], resolved: Resolved, site: str = "") -> dict[str, str]:
    """``about`` with a clip's headers (:func:`clip_headers`), its ``Link`` joined to any already there."""
    clip = clip_headers(resolved, site)
    if "Link" in about and "Link" in clip:
        clip["Link"] += ", " + about["Link"]
    return {**about, **clip}


def clip_headers(resolved: Resolved, site: str = "") -> dict[str, str]:
    """What N2R says beside a video's time fragment, whose answer is the whole video (:mod:`pdi.fragments.video`).

    ``Content-Location``: the N2R of the whole version (the body is exactly
    its octets); a ``Link`` with ``rel="alternate"`` to the same with the
    Media Fragments URI 1.0 temporal fragment of the interval
    (``#t=npt:1.000,2.500``, seconds to the millisecond), which a browser's
    player seeks to and stops at; none for an empty interval (``#sec=3,3``), which Media Fragments cannot
    say (its ``t=a,b`` needs ``a`` before ``b``). Both paths under ``site``, the base URL's path, for an answer the
    cache keeps (:data:`~pdi.server.http.site.SITED`); else the app's middleware moves them there.
    """
    fragment = resolved.fragment
    assert fragment is not None and fragment.interval is not None
    interval = fragment.interval
    whole = site + n2r_path(resolved.pdi.without_fragment())
    if interval.end <= interval.start:
        return {"Content-Location": whole}
    clip = f"{whole}#t=npt:{interval.start / 1000:.3f},{interval.end / 1000:.3f}"
    link = f'<{clip}>; rel="alternate"; type="{resolved.media_type}"'
    return {"Content-Location": whole, "Link": link}


def names_of(resolved: Resolved) -> tuple[str, ...]:
    """The names a kept answer about ``resolved`` is found by (:meth:`~pdi.server.process.cache.ResponseCache.forget`):
    its canonical versioned name and its document's generic name, without parsing them again."""
    versioned = resolved.pdi if resolved.pdi.fragment is None else resolved.pdi.without_fragment()
    name = str(versioned)  # built from the catalog's record: canonical
    return name, name.rsplit(".", 2)[0]
