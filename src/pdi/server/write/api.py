"""The write API: deposits, versions, formats and statements over HTTP, behind bearer tokens (an edge).

Every route takes ``Authorization: Bearer <token>`` (a token made with
``pdi token add``; :mod:`pdi.archive.tokens`): none, an unknown or a
revoked one is ``401`` with ``WWW-Authenticate: Bearer`` (RFC 6750 §3;
``Bearer`` with no token is ``400``); a token whose role or series does
not cover the write is ``403``. A query parameter the route does not take
is ``400`` naming it, and nothing is written (:data:`TAKES`). The body
is streamed into the archive's blob store as it arrives, never held whole;
a failure at any octet (a refused format or charset, a client that goes
away) leaves the archive exactly as it was. Each write is audited in the
transaction that makes it (who: ``token:NAME``, from which address).

* ``POST /api/deposit?series=S[&format=F][&id=FOREIGN_ID][&charset=C]`` —
  mint a name for today (GMT) and deposit the body as its first version.
  Without ``format`` the format is the one registered for the body's
  ``Content-Type``; its ``charset`` parameter is read, with ``format`` too (``charset=`` naming another
  is ``400``); a
  ``multipart/form-data`` body (what ``curl -F`` sends) is ``415`` unless
  ``format=`` says to keep the form itself. ``201``,
  ``Location`` the new name's ``N2R``, and ``{"pdi": NAME, "names": […],
  "version": 1, "unchanged": false}``. With an ``id`` already minted today
  whose latest version holds these bytes, nothing is stored: ``200`` and that
  name, ``"unchanged": true``. An empty body (0 octets) is ``400`` and nothing is written unless
  ``allow_empty=true`` (which ``/api/batch``, for its file parts, ``/api/version`` and ``/api/format`` take too),
  as ``pdi add`` refuses an empty file unless ``--allow-empty``.
* ``POST /api/batch?series=S[&embargo=DATE]`` — many deposits, all or nothing: a
  ``multipart/form-data`` body, each file part one document (its format
  from its ``Content-Type``, or from an optional JSON ``manifest`` field
  listing ``{"format", "id", "charset"}`` item by item; any other field, an
  item sent without a filename among them, or a second manifest is ``400``
  naming its part). ``201`` and
  ``{"items": [{"pdi", "names", "version", "unchanged"}, …]}`` in the parts'
  order; an item whose ``id`` is minted today with these bytes in its latest
  version is that name, ``"unchanged": true``, as a deposit answers it (``200``
  when every item is); a refusal names the item (``item 3: …``) and mints nothing. ``embargo``
  embargoes every item from the start (role ``curate``).
* ``POST /api/version?pdi=GENERIC_NAME[&format=F][&charset=C]`` — a new
  version (``201``; the same bytes as the latest version: ``200``, unchanged).
* ``POST /api/format?pdi=VERSIONED_NAME&format=F[&charset=C]`` — another
  format of an existing version (``201``).
* ``POST /api/statements?pdi=NAME&key=K`` — a statement ``K = body`` (the
  body is the value, text in its ``Content-Type``'s charset, UTF-8 if none); role ``curate``. ``201``.
* ``POST /api/withdraw?pdi=NAME[&reason=WHY][&purge=true]`` — withdraw a
  version (a versioned name) or a document (a generic name): the reason is
  the body (text, as a statement's) or ``reason=``; role ``curate``. ``201`` and the
  tombstone. ``purge=true`` (role ``admin``; a legal takedown) also deletes
  the octets, except blobs another name keeps (``kept``: their SHA-256).
* ``POST /api/embargo?pdi=NAME&until=DATE[&shorten=true]`` — embargo a document (a generic
  name) or a version until a date or a time with its zone; ``…&lift=true`` (no ``until``) lifts
  it, and neither, or a body, is refused (``400``: a form's ``until`` would go unread); a ``DATE`` earlier than the embargo in force is refused (``409``, naming both) without
  ``shorten=true``; role ``curate``. ``embargo=DATE`` on a deposit or a version embargoes
  it from the start (role ``curate`` too); a ``DATE`` past by the archive's clock embargoes nothing, and the
  answer says so in a ``Warning: 299 pdi "an embargo until … is over already: …"``, naming the embargo in force on
  the version, if any. A deposit or a version answered unchanged stored nothing, so set no embargo: with ``embargo=``
  its answer (``200``) says so in a ``Warning: 299 pdi "no embargo was set: …"`` and a member ``"embargo": {"set":
  false, "asked", "in_force"}`` (a batch's: each such item's), the embargo in force on the version (its own or
  its document's, ``null``: none) beside the one asked for; ``POST /api/embargo`` sets one.
  See :mod:`pdi.archive.access`.
* ``GET /api/audit?after=N&limit=L`` — the audit log; role ``admin``.

``Idempotency-Key`` (draft-ietf-httpapi-idempotency-key-header): a deposit,
version or format sent again with the same key and the same request (target,
parameters, content type, and body: compared by SHA-256) is answered with the
first answer and stores nothing (``Idempotent-Replayed: true``); the same key
with another request is ``422``. The first answer is written in the
transaction of the write itself, so a retry after any failure — even one
that lost the answer — never mints a second name. A retry made after what
the write made was withdrawn is answered the same (the write happened), with
``withdrawn``, its tombstone, beside the first answer's members.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pdi import charsets, formats, untrusted_json
from pdi._wording import clipped, plural, printable, shown_field
from pdi.archive import Archive, Content, Deposit
from pdi.archive.store import EmbargoChange
from pdi.archive.tokens import Writer
from pdi.errors import (
    LimitError,
    ParseError,
    ScopeError,
    UnsupportedError,
)
from pdi.server.http.bodies import cut_short, read_body
from pdi.server.http.params import flag, integer, only, optional, required
from pdi.server.http.preconditions import refuse_if_match
from pdi.server.http.problems import Problem
from pdi.server.http.readers import authorization_given_more_than_once, refused_authorization
from pdi.server.process.cache import ResponseCache
from pdi.server.protocol.rfc2169 import n2r_path

_T = TypeVar("_T")

#: The longest Idempotency-Key accepted (characters); the draft sets no limit, Stripe's is 255.
MAX_KEY = 255

#: The most items one batch may carry.
MAX_BATCH = 1000

#: The most audit entries one page of GET /api/audit holds (limit=).
MAX_AUDIT = 10_000

#: The longest statement value accepted over HTTP (octets): pdi.archive.MAX_ASSERTION_VALUE characters of UTF-8.
MAX_STATEMENT = 4 << 16


class Unauthorized(Problem):
    """``401``: no token, or not a live one (RFC 6750 §3: the challenge says which); ``400`` for a malformed
    ``Authorization`` (:func:`~pdi.server.http.readers.refused_authorization`)."""

    def __init__(self, detail: str, *, error: str | None = None, status: int = 401) -> None:
        super().__init__(status, "unauthorized" if status == 401 else "bad request", detail)
        self.challenge = 'Bearer realm="pdi"' + (f', error="{error}"' if error else "")


#: The query parameters each route that writes takes (:func:`~pdi.server.http.params.only` refuses any other).
TAKES: dict[str, frozenset[str]] = {
    "/api/deposit": frozenset({"series", "format", "id", "charset", "embargo", "allow_empty"}),
    "/api/batch": frozenset({"series", "embargo", "allow_empty"}),
    "/api/version": frozenset({"pdi", "format", "charset", "embargo", "allow_empty"}),
    "/api/format": frozenset({"pdi", "format", "charset", "allow_empty"}),
    "/api/statements": frozenset({"pdi", "key"}),
    "/api/withdraw": frozenset({"pdi", "reason", "purge"}),
    "/api/embargo": frozenset({"pdi", "until", "shorten", "lift"}),
    "/api/audit": frozenset({"after", "limit"}),
}


async def _no_body(request: Request, refusal: str) -> None:
    """``400`` (``refusal``) for a request with a body of any octet, where the route reads none: its fields would
    go unread (a ``Content-Length`` above 0 is refused before an octet is read)."""
    declared = request.headers.get("content-length", "")
    if declared.strip() not in ("", "0"):
        raise ParseError(refusal, rule="body")
    try:
        async for piece in request.stream():
            if piece:
                raise ParseError(refusal, rule="body")
    except ClientDisconnect:
        raise cut_short(0, declared) from None


async def bearer_writer(archive: Archive, request: Request, *, reads_if_match: bool = False) -> Writer:
    """The token a write presents in its ``Authorization`` header (never a cookie), checked; ``401`` without a
    live one; a ``Content-Type`` given in more than one field is ``400``. Then, unless the route ``reads_if_match`` itself (an annotation's), a change asked with ``If-Match``
    is refused (:func:`refuse_if_match`)."""
    fields = request.headers.getlist("authorization")
    if not fields:
        raise Unauthorized("this route needs Authorization: Bearer <token> (pdi token add)")
    if len(fields) > 1:
        raise Unauthorized(authorization_given_more_than_once(len(fields)), error="invalid_request", status=400)
    header = fields[0]
    scheme, _, secret = header.partition(" ")
    status, detail, error = refused_authorization(scheme, secret)
    if status:
        raise Unauthorized(detail, error=error, status=status)
    record = await anyio.to_thread.run_sync(archive.authenticate, secret.strip(" \t"))
    if record is None:
        raise Unauthorized("the token is not known, or was revoked", error="invalid_token")
    kinds = request.headers.getlist("content-type")
    if len(kinds) > 1:  # which one the body is in decides its format and charset, kept for good
        said = ", ".join(shown_field(k, 80) for k in kinds[:4])
        raise ParseError(f"the request gives Content-Type {len(kinds)} times ({said}): give the body's media type"
                         " once (RFC 9110 §5.3); nothing was written", rule="Content-Type")
    if not reads_if_match:
        refuse_if_match(request)
    return Writer(record, request.client.host if request.client else None)


class WriteAPI:
    """The routes that write, over one archive."""

    def __init__(
        self, archive: Archive, *, max_upload: int | None = None, cache: ResponseCache | None = None
    ) -> None:
        self.archive = archive
        self.max_upload = max_upload
        self.cache = cache  # this process's whole N2R answers: a withdrawal here forgets its own at once

    # --- who is writing ---------------------------------------------------------------
    async def writer(self, request: Request) -> Writer:
        """The token the request presents, checked; ``401`` without a live one."""
        return await bearer_writer(self.archive, request)

    # --- routes -----------------------------------------------------------------------------
    def routes(self) -> list[Route]:
        """The write API's routes: ``POST`` of deposits, batches, versions, formats, statements, withdrawals and
        embargoes, and ``GET /api/audit``."""
        return [
            Route("/api/deposit", self.deposit, methods=["POST"]),
            Route("/api/batch", self.batch, methods=["POST"]),
            Route("/api/version", self.version, methods=["POST"]),
            Route("/api/format", self.format, methods=["POST"]),
            Route("/api/statements", self.statements, methods=["POST"]),
            Route("/api/withdraw", self.withdraw, methods=["POST"]),
            Route("/api/embargo", self.embargo, methods=["POST"]),
            Route("/api/audit", self.audit),
        ]

    async def deposit(self, request: Request) -> Response:
        writer = await self.writer(request)
        only(request, TAKES["/api/deposit"])
        series = required(request, "series")
        foreign_id = optional(request, "id")
        return await self._one(request, functools.partial(self.archive.deposit, series, foreign_id=foreign_id,
                                                          writer=writer))

    async def batch(self, request: Request) -> Response:
        """Many deposits in one request, all or nothing: a ``multipart/form-data`` body, one file part an item.

        Each file part is one document's only format: the format registered
        for the part's ``Content-Type`` (its ``charset`` too). An optional
        ``manifest`` field (JSON, before the files) lists, item by item,
        ``{"format", "id", "charset"}`` to say otherwise. An item whose
        ``id`` is minted today with these octets in its latest version is
        answered as :meth:`deposit` answers it: that name, ``"unchanged":
        true``, nothing stored for it (``200`` when every item is so). The parts are
        spooled to temporary files as they arrive (Starlette's form parser),
        then each streamed into the store. A body that is malformed, or cut
        short before its closing boundary, or that ends before its
        ``Content-Length`` is ``400`` naming what was wrong, and nothing is
        deposited.
        """
        writer = await self.writer(request)
        only(request, TAKES["/api/batch"])
        series = required(request, "series")
        key = _idempotency_key(request)
        embargo = optional(request, "embargo")
        kind = request.headers.get("content-type", "")
        if not kind.lower().startswith("multipart/form-data"):
            raise ParseError("a batch is a multipart/form-data body, one file part an item", rule="Content-Type")
        async with _whole_form(request, self.max_upload) as form:
            manifest, files = _manifest_and_files(form)
            if not files:
                raise ParseError("a batch needs at least one file part", rule="batch")
            if manifest is not None and len(manifest) != len(files):
                raise ParseError(f"the manifest lists {plural(len(manifest), 'item')}, the body has {plural(len(files), 'file')}",
                                 rule="manifest")
            items: list[tuple[list[Content], str | None]] = []
            allow_empty = flag(request, "allow_empty")
            for index, part in enumerate(files):
                _refuse_twice(index, part)
                _refuse_coded(index, part)
                if not allow_empty and part.size == 0:
                    raise ParseError(f"item {index} ({clipped(part.filename or 'no file name', 80)}) is empty"
                                     f" (0 octets): {_EMPTY_ADVICE}", rule="allow_empty")
                said = manifest[index] if manifest is not None else {}
                media_type = part.content_type or ""
                try:  # a charset no codec reads is refused here, naming the part, before any part is staged
                    token = said.get("format") or (formats.token_for(media_type) if media_type else None)
                    try:
                        charset = _charset(said.get("charset"), media_type, given_as="the manifest's charset ")
                    except ParseError as exc:
                        raise ParseError(f"item {index}: {exc.message}", rule="charset") from None
                    if charset is not None:
                        charsets.codec_for(charset)
                except UnsupportedError as exc:
                    refused = _content_type_refusal(media_type, "its Content-Type")
                    raise UnsupportedError(f"item {index} ({clipped(part.filename or 'no file name', 80)}):"
                                           f" {refused or exc.message}; nothing was deposited") from None
                if token is None:
                    raise ParseError(f"item {index}: no format and no Content-Type", rule="format")
                items.append(([Content(part.file, token, charset, source=part.filename or f"item {index}")],
                              said.get("id")))

            def run() -> list[Deposit]:
                return self.archive.deposit_batch(
                    series, items, writer=writer, idempotency_key=key, request=_fingerprint(request),
                    embargo_until=embargo, unchanged=True,
                )

            deposits = await anyio.to_thread.run_sync(run)
        replayed = any(d.replayed for d in deposits)
        body = {"items": [{"pdi": str(d[0]), "names": [str(n) for n in d], "version": d.version,
                           "unchanged": d.unchanged, **_withdrawn_since(d)} for d in deposits]}
        # as a deposit answers (_created): 200 when nothing new was stored, every item held already
        status = 200 if all(d.unchanged for d in deposits) else 201
        headers = {"Idempotent-Replayed": "true"} if replayed else {}
        unset = [await anyio.to_thread.run_sync(self._embargo_said, embargo, d) for d in deposits]
        for item, one in zip(body["items"], unset, strict=True):
            if one is not None and one[1] is not None:
                item["embargo"] = one[1]
        warnings = list(dict.fromkeys(one[0] for one in unset if one is not None))
        if warnings:
            headers["Warning"] = ", ".join(warnings)
        return JSONResponse(body, status_code=status, headers=headers)

    async def version(self, request: Request) -> Response:
        writer = await self.writer(request)
        only(request, TAKES["/api/version"])
        name = required(request, "pdi")
        return await self._one(request, functools.partial(self.archive.add_version, name, writer=writer))

    async def _one(self, request: Request, write: Callable[..., Deposit]) -> Response:
        """``201`` of ``write([content], idempotency_key=…, request=…, embargo_until=…)`` of the request's body:
        a deposit or a version of one format (``format``, ``charset``, ``Idempotency-Key``, ``embargo``)."""
        content = self._content(request)
        key = _idempotency_key(request)
        embargo = optional(request, "embargo")

        def run(body: Iterator[bytes]) -> tuple[Deposit, tuple[str, dict[str, Any] | None] | None]:
            made = write([content(body)], idempotency_key=key, request=_fingerprint(request), embargo_until=embargo)
            return made, self._embargo_said(embargo, made)

        deposit, said = await self._streamed(request, run)
        return _created(deposit, over=None if said is None else said[0], embargo=None if said is None else said[1])

    def _embargo_said(self, embargo: str | None, deposit: Deposit) -> tuple[str, dict[str, Any] | None] | None:
        """Of a write that asked for an embargo (``embargo=``, written, so it parses) and set none: the ``Warning``
        its answer carries, and (of one answered unchanged) its ``embargo`` member, ``{"set": false, "asked",
        "in_force"}``. An unchanged write stored nothing, so embargoed nothing: it says so, with the embargo in force
        on the version, if any, and how to set one; a moment past set nothing either (as ``pdi add --embargo-until``
        warns), and the version reads as any other name unless an embargo in force holds it, which is said."""
        if embargo is None:
            return None
        from pdi.archive.access import parse_until
        from pdi.archive.naming import timestamp

        until = parse_until(embargo)
        past = until <= timestamp(self.archive.now())
        if not deposit.unchanged and not past:
            return None
        held = self.archive.embargo_in_force(deposit[0])
        if held is not None:
            stands = (f"the version is embargoed until {held} already" if held >= until else
                      f"the version is embargoed only until {held}, not until {until}"
                      " (POST /api/embargo?pdi=NAME&until=DATE embargoes it until then)")
        else:
            stands = ("the version reads as any other name"
                      " (POST /api/embargo?pdi=NAME&until=DATE embargoes it)")
        if deposit.unchanged:
            said = (f"no embargo was set: nothing was deposited (version {deposit.version} already holds these"
                    f" octets), and {stands}")
            return f'299 pdi "{said}"', {"set": False, "asked": until, "in_force": held}
        return f'299 pdi "an embargo until {until} is over already: it set nothing, and {stands}"', None

    async def format(self, request: Request) -> Response:
        writer = await self.writer(request)
        only(request, TAKES["/api/format"])
        name = required(request, "pdi")
        token = required(request, "format")
        charset = optional(request, "charset")
        key = _idempotency_key(request)

        def run(body: Iterator[bytes]) -> Deposit:
            return self.archive.deposit_format(
                name, body, format=token, charset=charset, writer=writer,
                idempotency_key=key, request=_fingerprint(request),
            )

        return _created(await self._streamed(request, run))

    async def statements(self, request: Request) -> Response:
        writer = await self.writer(request)
        only(request, TAKES["/api/statements"])
        name = required(request, "pdi")
        statement = required(request, "key")
        text = _text(request, await read_body(request, MAX_STATEMENT, f"the body is more than {MAX_STATEMENT} octets"),
                     "value")
        record = await anyio.to_thread.run_sync(
            lambda: self.archive.annotate(name, statement, text, writer=writer)
        )
        return JSONResponse(
            {"pdi": name, "key": record.key, "value": record.value, "who": record.who, "at": record.at},
            status_code=201,
        )

    async def withdraw(self, request: Request) -> Response:
        writer = await self.writer(request)
        only(request, TAKES["/api/withdraw"])
        name = required(request, "pdi")
        given = optional(request, "reason") or ""
        reason = _text(request, await read_body(request, MAX_STATEMENT, f"the body is more than {MAX_STATEMENT} octets"),
                       "reason") or given
        purge = flag(request, "purge")
        record = await anyio.to_thread.run_sync(
            lambda: self.archive.withdraw(name, reason, writer=writer, purge=purge)
        )
        if self.cache is not None:
            self.cache.forget(name)
        return JSONResponse(
            {"pdi": name, "withdrawn": {"at": record.at, "reason": record.reason, "who": record.who,
                                        "purged": record.purged},
             "version": record.version, "kept": list(record.kept)},
            status_code=200 if record.earlier else 201,  # withdrawn before: that tombstone, nothing made
        )

    async def embargo(self, request: Request) -> Response:
        """Embargo a document or a version until ``until=`` (role ``curate``); ``lift=true`` lifts it. Its
        parameters are the query's alone: neither ``until`` nor ``lift`` given is refused (``400``), as is a body
        with octets (a form's ``until`` there would be read as no ``until``: a lift nobody asked for)."""
        writer = await self.writer(request)
        only(request, TAKES["/api/embargo"])
        name = required(request, "pdi")
        until = optional(request, "until")
        shorten = flag(request, "shorten")
        lift = flag(request, "lift")
        await _no_body(request, "POST /api/embargo reads its parameters from the query string alone"
                       " (?pdi=NAME&until=DATE, or &lift=true): a request body is not read, and this one has octets;"
                       " nothing changed")
        if lift == (until is not None):
            raise ParseError("give until=DATE to embargo the name, or lift=true to lift its embargo: "
                             + ("not both" if lift else "neither was given") + "; nothing changed", rule="until")

        def embargo() -> EmbargoChange:
            return self.archive.embargo(name, until, writer=writer, shorten=shorten)

        change = await anyio.to_thread.run_sync(embargo)
        if self.cache is not None:
            self.cache.forget(name)
        return JSONResponse({
            "pdi": name, "embargo_until": change.in_force, "changed": change.changed, "before": change.before,
            "held": [{"pdi": held, "embargo_until": held_until} for held, held_until in change.held],
        })

    async def audit(self, request: Request) -> Response:
        writer = await self.writer(request)
        only(request, TAKES["/api/audit"])
        writer.require("admin")
        if writer.token.series:  # the log is the whole archive's: every series' names, withdrawals, tokens
            raise ScopeError(f"token {writer.token.name!r} is an admin of {', '.join(writer.token.series)} only;"
                             " the audit log holds every series' writes: it needs an admin token of every series")
        after = integer(request, "after", 0)
        limit = integer(request, "limit", 1000, least=1, most=MAX_AUDIT)
        entries = await anyio.to_thread.run_sync(self.archive.audit, after, limit)
        return JSONResponse([
            e.to_json()
            for e in entries
        ])

    # --- bodies -------------------------------------------------------------------------------
    def _content(self, request: Request) -> _Body:
        """How to read the request's body as one format: ``format=``, or the one its Content-Type is registered as."""
        charset = optional(request, "charset")
        token = optional(request, "format")
        media_type = request.headers.get("content-type")
        if token is None and not media_type:
            raise ParseError("give format= or the body's Content-Type", rule="format")
        try:
            if token is None:
                assert media_type is not None
                if formats.split_media_type(media_type)[0] == "multipart/form-data":
                    # what curl -F sends: a form (RFC 7578) around the document, kept as it stood for good
                    raise UnsupportedError(
                        "the body is a multipart/form-data form (curl -F sends one), not a document: send the"
                        " document itself with its own Content-Type (curl --data-binary @FILE -H 'Content-Type:"
                        " text/plain'), several documents as the file parts of POST /api/batch, or give"
                        " format=form-data to keep the form itself")
                if formats.split_media_type(media_type)[0] == "application/x-www-form-urlencoded":
                    # what curl --data-binary sends when no Content-Type is given
                    raise UnsupportedError(
                        "the body's Content-Type is application/x-www-form-urlencoded, what curl --data-binary sends"
                        " unless told: give the document's own (-H 'Content-Type: text/plain; charset=utf-8') or"
                        " format=TOKEN")
                token = formats.token_for(media_type)
            return _Body(token, _charset(charset, media_type))
        except UnsupportedError:
            refused = _content_type_refusal(media_type or "", "the Content-Type")
            if refused is None:
                raise
            raise UnsupportedError(refused) from None

    async def _streamed(self, request: Request, write: Callable[[Iterator[bytes]], _T]) -> _T:
        """Run ``write`` on a worker thread, handing it the request's body piece by piece as it arrives; a body of
        no octet is refused at its end (``400``, nothing written) unless ``allow_empty=true``."""
        _within_upload(request.headers.get("content-length"), self.max_upload)
        chunks = request.stream()
        limit = self.max_upload
        allow_empty = flag(request, "allow_empty")

        def body() -> Iterator[bytes]:
            seen = 0
            while True:
                try:
                    piece = anyio.from_thread.run(_next, chunks)
                except ClientDisconnect:  # a refusal (400), not the store's failure (503, counted as one)
                    raise cut_short(seen, request.headers.get("content-length", "")) from None
                if piece is None:
                    if seen == 0 and not allow_empty:  # (raised within the write: the archive is left as it was)
                        raise ParseError(f"the body is empty (0 octets): {_EMPTY_ADVICE}", rule="allow_empty")
                    return
                seen += len(piece)
                if limit is not None and seen > limit:
                    raise LimitError(f"the body is {_beyond(limit)}")
                if piece:
                    yield piece

        return await anyio.to_thread.run_sync(write, body())


#: What the refusal of an empty body (or file part) says: the same rule as ``pdi add``'s (``--allow-empty``).
_EMPTY_ADVICE = ("nothing was deposited (an empty document is most often a mistake, and a name is never taken back;"
                 " allow_empty=true deposits one that is meant)")


class _WholeForm(MultiPartParser):
    """Starlette's ``multipart/form-data`` parser, told whether the body reached its closing boundary.

    python-multipart's ``finalize`` checks nothing, so a body cut short — in a
    part's headers, in its data, before the closing ``--boundary--`` — parsed
    as the parts it had completed: a batch of fewer items than were sent. The
    parser's ``on_end`` is called only at the closing boundary (RFC 2046
    §5.1.1's close-delimiter); until then :attr:`where` says how far it got.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ended = False
        self.parts = 0
        self.where = "before its first boundary"

    def on_part_begin(self) -> None:
        super().on_part_begin()
        self.parts += 1
        self.where = f"in the headers of part {self.parts}"

    def on_headers_finished(self) -> None:
        super().on_headers_finished()
        self.where = f"in the data of part {self.parts}"

    def on_part_end(self) -> None:
        super().on_part_end()
        self.where = f"after part {self.parts}"

    def on_end(self) -> None:
        super().on_end()
        self.ended = True


def _why(exc: MultiPartException, piece_at: int) -> str:
    """What python-multipart found wrong, and at which octet of the body: Starlette's message says only "Invalid
    multipart data." for every fault of the body, the parser's own (its cause) names it (a header field past its
    bound, a delimiter not ended by CRLF) and the octet of the piece it was parsing (``piece_at`` its first)."""
    cause = exc.__cause__
    if not isinstance(cause, FormParserError) or not str(cause):
        return exc.message
    said = printable(str(cause)[:200])
    offset = getattr(cause, "offset", -1)
    return f"{said}, at octet {piece_at + offset:,}" if isinstance(offset, int) and offset >= 0 else said


def _beyond(limit: int) -> str:
    """What a body past ``limit`` octets is more than, in the words an operator set it in."""
    return f"more than this server takes, {limit:,} octets (pdi serve --max-upload-mib {limit / (1 << 20):g})"


def _within_upload(declared: str | None, limit: int | None) -> None:
    """A :class:`LimitError` (``413``) when a body's ``Content-Length`` says more than ``limit`` octets (``None``: no
    bound), before any of it is read; a :class:`ParseError` (``400``) when it is no number of octets."""
    if declared is None:
        return
    # RFC 9110 §8.6: 1*DIGIT, ASCII (str.isdigit is true of "²", which int() refuses, as it does 4,301 digits);
    # pdi serve's HTTP parser refuses any other before this, another ASGI server may not
    digits = declared.strip(" \t").lstrip("0") or "0"
    if re.fullmatch(r"[0-9]+", digits) is None:
        raise ParseError(f"the Content-Length {declared[:40]!r} is not a number of octets (RFC 9110 §8.6: ASCII"
                         " digits)", rule="Content-Length")
    if limit is not None and len(digits) > 19:
        raise LimitError(f"the body of a {len(digits):,}-digit number of octets is {_beyond(limit)}")
    if limit is not None and int(digits) > limit:
        raise LimitError(f"the body of {int(digits):,} octets is {_beyond(limit)}")


@contextlib.asynccontextmanager
async def _whole_form(request: Request, limit: int | None = None) -> AsyncIterator[FormData]:
    """The request's ``multipart/form-data`` body, parsed whole, its files spooled; a :class:`ParseError` (``400``)
    saying what was wrong when it is malformed, cut short, or ends before its ``Content-Length`` (the client
    went away), a :class:`LimitError` (``413``) when it is more than ``limit`` octets. Nothing is deposited from
    a body that is not whole."""
    received = 0
    piece_at = 0  # the body's octet the piece being parsed begins at
    declared = request.headers.get("content-length")
    _within_upload(declared, limit)
    promised = f" of the {declared} its Content-Length promised" if declared and len(declared) <= 20 else ""

    async def counted() -> AsyncGenerator[bytes, None]:
        nonlocal received, piece_at
        try:
            async for piece in request.stream():
                piece_at = received
                received += len(piece)
                if limit is not None and received > limit:
                    raise LimitError(f"the body is {_beyond(limit)}; nothing was deposited")
                yield piece  # resumed once the parser has parsed the piece
                if epilogue is not None:
                    epilogue.see(piece, parser.ended)
        except ClientDisconnect:
            raise ParseError(f"the body ended after {plural(received, 'octet')}{promised}: the client went away;"
                             " nothing was deposited", rule="multipart") from None
        # Every piece is parsed by now: without the closing boundary the body was cut short. Raised here,
        # inside the parse, so that the parser closes every file it spooled, the part cut in two as well.
        if not parser.ended:
            raise ParseError(
                f"the multipart body ends {parser.where}, after {plural(received, 'octet')}, without its closing"
                " boundary (--BOUNDARY--, RFC 2046 §5.1.1): it was cut short; nothing was deposited",
                rule="multipart")

    parser = _WholeForm(request.headers, counted(), max_files=MAX_BATCH, max_fields=MAX_BATCH + 1)
    boundary = parse_options_header(request.headers.get("content-type", ""))[1].get(b"boundary")
    epilogue = _Epilogue(boundary) if boundary else None
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        if parser.parts > MAX_BATCH and exc.message.startswith("Too many files"):  # Starlette's max_files
            raise LimitError(f"a batch holds at most {MAX_BATCH:,} items, and part {parser.parts:,} is one more: send"
                             " the rest in another batch; nothing was deposited") from exc
        if parser.parts > MAX_BATCH and exc.message.startswith("Too many fields"):  # Starlette's max_fields
            raise LimitError(f"a batch's parts are its items and one manifest field, and part {parser.parts:,} is"
                             f" field {MAX_BATCH + 2:,}; nothing was deposited") from exc
        raise ParseError(f"the multipart body is malformed {parser.where} ({_why(exc, piece_at)}); nothing was"
                         " deposited", rule="multipart") from exc
    try:
        yield form
    finally:
        await form.close()


class _Epilogue:
    """Whether a delimiter stands in a multipart body's epilogue, what follows its close-delimiter.

    RFC 2046 §5.1.1 has the epilogue ignored, and python-multipart discards
    it: an item sent after the closing boundary (two bodies written one after
    the other) was dropped, and a batch of fewer items than were sent
    deposited. Fed the body piece by piece, however it is cut, it finds the
    first ``--BOUNDARY`` after the close-delimiter and raises a
    :class:`ParseError` (``400``) naming its octet; any other epilogue stays
    ignored, as the RFC says.
    """

    def __init__(self, boundary: bytes) -> None:
        self.dash = b"--" + boundary
        self.close = b"\r\n" + self.dash + b"--"  # part data never holds CRLF --BOUNDARY: it would end the part
        self.tail = b""  # the last octets seen, enough to find either across two pieces
        self.tail_at = 0  # the body's octet tail[0] is
        self.epilogue_at: int | None = None

    def see(self, piece: bytes, ended: bool) -> None:
        window = self.tail + piece
        if ended and self.epilogue_at is None:
            found = window.find(self.close)
            if found >= 0:
                self.epilogue_at = self.tail_at + found + len(self.close)
            elif self.tail_at == 0 and window.startswith(self.close[2:]):  # a body that is a close-delimiter
                self.epilogue_at = len(self.close) - 2
        if self.epilogue_at is not None:
            found = window.find(self.dash, max(0, self.epilogue_at - self.tail_at))
            if found >= 0:
                raise ParseError(
                    f"the multipart body goes on after its closing boundary: a delimiter"
                    f" ({printable(self.dash[:80].decode('latin-1'))}) at octet {self.tail_at + found:,}, in its"
                    " epilogue, which is ignored (RFC 2046 §5.1.1): send every item before the closing boundary"
                    " (--BOUNDARY--); nothing was deposited", rule="multipart")
        cut = max(0, len(window) - len(self.close))
        self.tail, self.tail_at = window[cut:], self.tail_at + cut


def _charset(given: str | None, media_type: str | None, *, given_as: str = "charset=") -> str | None:
    """The charset of a body: ``charset=`` (``given``) or its ``Content-Type``'s, which says how its octets are text
    whatever the format they are deposited as (RFC 2046 §4.1.2), with ``format=`` too; two that name two charsets
    are a :class:`ParseError` (``400``) naming both: which was meant decides what the text reads, for good."""
    said = formats.split_media_type(media_type)[1] if media_type else None
    if said is None or given is None:
        return given if said is None else said
    if charsets.codec_for(given) != charsets.codec_for(said):
        raise ParseError(f"{given_as}{clipped(given, 40)} and the Content-Type's charset {clipped(said, 40)} name two"
                         " charsets: give one, or the same in both; nothing was written", rule="charset")
    return given


class _Body:
    """One format of a write, whose octets come as the request's body."""

    def __init__(self, token: str, charset: str | None) -> None:
        self.token, self.charset = token, charset

    def __call__(self, body: Iterator[bytes]) -> Content:
        return Content(body, self.token, self.charset, source="the request body")


async def _next(chunks: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await chunks.__anext__()
    except StopAsyncIteration:
        return None


def _created(deposit: Deposit, *, over: str | None = None, embargo: dict[str, Any] | None = None) -> Response:
    """``201`` and the new names; ``200`` when nothing new was stored; a replay answers as the first time. ``over``:
    the ``Warning`` of an embargo asked for and not set, and ``embargo`` its member (:meth:`WriteAPI._embargo_said`)."""
    first = str(deposit[0])
    body = {"pdi": first, "names": [str(n) for n in deposit], "version": deposit.version,
            "unchanged": deposit.unchanged, **_withdrawn_since(deposit)}
    if embargo is not None:
        body["embargo"] = embargo
    # as every answer writes an N2R path (a foreign id's "%23" is "%2523" there: N2R reads "%23" as the "#" of a
    # fragment), so that the Location names the document just deposited and no other
    headers = {"Location": n2r_path(first)}
    if deposit.replayed:
        headers["Idempotent-Replayed"] = "true"
    if over is not None:
        headers["Warning"] = over
    return JSONResponse(body, status_code=200 if deposit.unchanged else 201, headers=headers)


def _withdrawn_since(deposit: Deposit) -> dict[str, Any]:
    """Of a replayed answer whose version was withdrawn since: ``withdrawn``, its tombstone as N2C describes one
    (its names answer ``410``); else nothing: the first answer's members alone."""
    gone = deposit.withdrawn
    if gone is None:
        return {}
    return {"withdrawn": {"at": gone.at, "reason": gone.reason, "who": gone.who, "purged": gone.purged}}


def _fingerprint(request: Request) -> str:
    """What identifies a write besides its body: method, path, parameters (sorted) and content type."""
    params = "&".join(f"{k}={v}" for k, v in sorted(request.query_params.multi_items()))
    # a multipart body's boundary is chosen afresh for each sending: it is not part of what was asked
    kind = ";".join(p for p in request.headers.get("content-type", "").split(";")
                    if not p.strip(" \t").lower().startswith("boundary="))
    return f"{request.method} {request.url.path}?{params}\n{kind}"


def _idempotency_key(request: Request) -> str | None:
    """The request's Idempotency-Key (``None``: none sent); that the route reads one, and whether one was sent, is
    kept in ``request.state.idempotency_keyed`` for a ``503`` of unknown outcome (:mod:`pdi.server.http.problems`)."""
    fields = request.headers.getlist("idempotency-key")
    request.state.idempotency_keyed = bool(fields)
    if not fields:
        return None
    if len(fields) > 1:  # one Structured Fields string; read by its first, a retry sent the other way minted twice
        raise ParseError(f"Idempotency-Key is given {len(fields)} times: give one key, in one field", rule="Idempotency-Key")
    key = fields[0]
    # the draft's value is a Structured Fields string: "…"; a bare token is taken as it is
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    if not key or len(key) > MAX_KEY or not key.isascii() or not key.isprintable():
        raise ParseError(
            f"Idempotency-Key must be 1 to {MAX_KEY} printable ASCII characters", rule="Idempotency-Key"
        )
    return key


def _manifest_and_files(form: FormData) -> tuple[list[dict[str, str]] | None, list[UploadFile]]:
    """A batch's manifest and its items (its file parts, in order); a part that is neither is a :class:`ParseError`.

    A part without a filename is a field (RFC 7578 §4.2), not a file: an
    item sent so (``curl -F 'item=<a.txt'``) would have been left out of the
    batch, a field the batch does not take ignored, and a second manifest
    (§4.3: a name given twice holds two values) read in place of the first.
    """
    manifests: list[int] = []
    files: list[UploadFile] = []
    for number, (name, value) in enumerate(form.multi_items(), 1):
        if not isinstance(value, str):
            files.append(value)
        elif name == "manifest":
            manifests.append(number)
        else:
            raise ParseError(
                f"part {number} ({printable(name[:80])}) is a form field, not a file: an item is a file part (its"
                " Content-Disposition has a filename: curl -F 'item=@FILE'), and the one field a batch takes is"
                " manifest; nothing was deposited", rule="batch")
    if len(manifests) > 1:
        where = ", ".join(str(n) for n in manifests[:-1]) + f" and {manifests[-1]}"
        raise ParseError(f"the manifest is given {len(manifests)} times (parts {where}): give it once; nothing"
                         " was deposited", rule="manifest")
    return _manifest(form.get("manifest")), files


#: The Content-Transfer-Encoding values that say a part's octets are not encoded (RFC 2045 §6.2).
_IDENTITY_TRANSFER = frozenset({"7bit", "8bit", "binary"})


#: The header fields a part gives once (RFC 2045 §5, RFC 7578 §4.2 and §4.4), whose value decides the item.
_ONCE = ("Content-Disposition", "Content-Type", "Content-Transfer-Encoding", "Content-Encoding")


def _refuse_twice(index: int, part: UploadFile) -> None:
    """A :class:`ParseError` (``400``) naming item ``index`` when its part gives a field of :data:`_ONCE` more than
    once: the parser kept one of them (the first Content-Type, the last Content-Disposition), and which one
    decided the item's format or whether it was an item at all."""
    for field in _ONCE:
        count = len(part.headers.getlist(field))
        if count > 1:
            raise ParseError(
                f"item {index} ({printable((part.filename or '')[:80])}) gives {field} {count} times: a part gives it"
                " once (RFC 7578 §4); nothing was deposited", rule="multipart")


def _refuse_coded(index: int, part: UploadFile) -> None:
    """An :class:`UnsupportedError` (``415``) naming item ``index`` when its part says its octets are encoded: a
    ``Content-Transfer-Encoding`` other than ``7bit``, ``8bit`` or ``binary`` (RFC 7578 §4.7: senders do not use
    one), or a ``Content-Encoding`` other than ``identity``. pdi keeps the octets it is sent, and would have kept the
    encoded ones (``aGkK`` for ``hi``) under a name that never changes, as it refuses a deposit's
    ``Content-Encoding`` (:mod:`pdi.server.http.codings`)."""
    said = f"item {index} ({printable((part.filename or '')[:80])}) is sent in the"
    # each value quoted as its client wrote it (shown_field), lower case of ASCII alone (bytes.lower): Starlette
    # reads a part's fields as Latin-1, and str.lower would make an octet beyond ASCII another one
    for value in part.headers.getlist("content-transfer-encoding"):
        coding = value.strip(" \t").encode("latin-1").lower()
        if coding.decode("latin-1") not in _IDENTITY_TRANSFER:
            raise UnsupportedError(
                f"{said} Content-Transfer-Encoding {shown_field(coding, 40)}, which RFC 7578 §4.7 has senders not use:"
                " send its octets as they are (a multipart/form-data part carries any octet); nothing was deposited")
    codings = [c.strip(" \t").encode("latin-1").lower() for value in part.headers.getlist("content-encoding")
               for c in value.split(",")]
    for coding in codings:
        if coding and coding != b"identity":
            raise UnsupportedError(
                f"{said} content coding {shown_field(coding, 40)}: send its octets as they are (without"
                " Content-Encoding), pdi keeps the octets it is sent; nothing was deposited")


def _content_type_refusal(media_type: str, said_as: str) -> str | None:
    """Why the ``Content-Type`` of a body (the request's, or a batch part's: ``said_as`` names it) as its client sent
    it names no format pdi reads, quoting it as the client wrote it (:func:`~pdi._wording.shown_field`: Starlette
    reads a field's octets as Latin-1, and the cores' words quote what they are given, ``'text/plaã¯n'``, whole)
    and at most 120 characters of it; ``None`` when the cores' own words quote it so already (ASCII, and short), or
    when it is not what failed (a manifest's format or charset)."""
    if media_type.isascii() and len(media_type) <= 120:
        return None
    try:
        major_minor, charset = formats.split_media_type(media_type)
    except UnsupportedError:
        why = "is not a media type (type/subtype, then its parameters: RFC 9110 §8.3.1)"
    else:
        try:
            formats.token_for(major_minor)
        except UnsupportedError:
            why = "is not a media type of pdi's registry"
        else:
            try:
                if charset is not None:
                    charsets.codec_for(charset)
                    formats.token_for(major_minor, charset=charset)
            except UnsupportedError:
                why = "names a charset pdi does not know"
            else:
                return None
    return f"{said_as} {shown_field(media_type, 120)} {why}"


def _manifest(value: object) -> list[dict[str, str]] | None:
    """A batch's manifest field: a JSON array of objects whose values are strings (format, id, charset)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ParseError("the manifest is a form field (JSON), not a file", rule="manifest")
    parsed = untrusted_json.loads(value, "the manifest", rule="manifest")
    allowed = {"format", "id", "charset"}
    if not isinstance(parsed, list) or not all(
        isinstance(item, dict) and set(item) <= allowed and all(isinstance(v, str) for v in item.values())
        for item in parsed
    ):
        raise ParseError('the manifest is an array of {"format", "id", "charset"} objects of strings',
                         rule="manifest")
    return parsed


def _text(request: Request, body: bytes, what: str) -> str:
    """The body as text: in the charset its ``Content-Type`` names (RFC 2046 §4.1.2), else UTF-8; octets that are
    not text in it are a :class:`ParseError` naming the first."""
    declared = request.headers.get("content-type")
    charset = (formats.split_media_type(declared)[1] if declared else None) or "utf-8"
    codec = charsets.codec_for(charset)  # a charset: never idna, zlib or a bad label (415 naming it)
    try:
        return body.decode(codec)
    except UnicodeDecodeError as exc:
        raise ParseError(f"the {what} (the body) must be text in {charset}: octet {exc.start} is not", rule=what) from exc
