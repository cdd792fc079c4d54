"""What the resolver tells its operators about each request: metrics, a request id, JSON logs, an access log.

:class:`Observe` is the resolver app's outermost middleware. For every
request it

* takes the request id from an incoming ``X-Request-Id`` when it is
  well-formed (:data:`REQUEST_ID`: 1 to 128 letters, digits and ``-._:``),
  else (one that is not, or none and JSON logs that would carry it) makes
  one, 32 hex digits, and echoes it in the answer's ``X-Request-Id``; while
  the request runs, :data:`current_request_id` holds it, so every log record
  made for it carries it (without JSON logs and without an incoming
  ``X-Request-Id`` none is made: nothing would carry it);
* counts it in :mod:`pdi.server.http.metrics` by its route's template
  (``/uri-res/{service}``: never the path asked), method and status, with
  its latency and body octets; a ``201`` of a deposit route as a deposit;
* writes one line for it in the access log (:class:`AccessLog`, the Common
  Log Format) and, with JSON logs (:func:`configure_logging`), one JSON
  record (``"event": "request"``);
* answers ``GET /metrics`` itself, before any token is looked at (a
  Prometheus bearer token is not an archive's token):
  :func:`pdi.server.http.metrics.may_read` says who may.

Answers ``pdi serve``'s connections write from the cache of whole answers
(:mod:`pdi.server.process.connection`) skip the app; they are counted
there (route ``/uri-res/{service}``: :func:`count_cached_answer`, tallied and
added to the metrics within :data:`TALLY_SECONDS`, their latency not
observed) and written in the access log there (:func:`clf`); with JSON logs
they make a request id, echo it and write its record there too
(:func:`log_cached_answer`).

The replay origin's requests are observed by an :class:`Observe` of their
own (``metrics=False``: it does not answer ``/metrics``, an archived page's
path there), counted under the replay app's route templates
(``/replay/{rest:path}``) in the same metrics and logs.

``SIGHUP`` asks every :class:`AccessLog`, and the log file of
:func:`configure_logging` (``pdi serve --log-file``), to reopen its file
before its next line (:func:`reopen_logs`, set by
:mod:`pdi.server.process.run`), so a log rotated by renaming goes on in a
new file at the old path.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import errno
import json
import logging
import os
import re
import sys
import time
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.archive import Archive
from pdi.errors import PDIError, StoreError
from pdi.server.http.metrics import (
    DEPOSIT_ROUTES,
    FIXITY_SECONDS,
    counters,
    exposition,
    fixity_families,
    may_read,
)
from pdi.server.http.middleware import HTTPMiddleware
from pdi.server.http.problems import problem
from pdi.server.process.zerocopy import EXTENSION

#: A well-formed incoming ``X-Request-Id``, kept as the request's id; any other is replaced by one made here.
REQUEST_ID = re.compile(rb"[A-Za-z0-9._:\-]{1,128}")
#: The request id of the request being answered (``-`` outside one): every log record carries it.
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("pdi_request_id", default="-")
#: The route label of a request no route took (an unknown path): one label, however many paths are asked.
UNMATCHED = "(unmatched)"
#: Seconds after a request within which the catalog's pool waits it met are counted.
POOL_SECONDS = 1.0
#: The route label of ``GET /metrics``.
METRICS_PATH = "/metrics"

_request_log = logging.getLogger("pdi.request")


class AccessLog:
    """An access log in the Common Log Format, appended to ``path`` (``-``: standard output).

    Each line is written whole with one ``write`` to a file opened
    ``O_APPEND``, so the workers' lines never interleave. The file is opened
    in each process at its first line (after the fork) and again after
    :func:`reopen_logs`. A path that cannot be opened is a :class:`PDIError`
    when the log is made (``what`` names the log in it: ``access log``, or
    ``log file`` for ``--log-file``; a folder that is not there is named, to
    be made: pdi serve makes none).

    A reopen that fails (its directory moved or not writable) keeps writing
    to the file opened before, if this process had one, else drops the lines;
    either way each worker says so once, in pdi's log (a JSON record with JSON
    logs; the log file's own failure on standard error), and the next
    ``SIGHUP`` tries again. A descriptor is closed once, and only after its
    successor is open.
    """

    def __init__(self, path: str, what: str = "access log") -> None:
        self.path = path
        self.what = what
        self._fd: int | None = None
        self._pid = 0
        self._generation = 0
        if path != "-":
            os.close(self._open())  # a path that cannot be written is said at once, not by each worker

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        except OSError as exc:
            folder = os.path.dirname(os.path.abspath(self.path))
            missing = (f" (there is no folder {folder}: make it first, pdi serve makes none)"
                       if exc.errno == errno.ENOENT and not os.path.isdir(folder) else "")
            raise PDIError(f"cannot open the {self.what} {self.path}: {exc.strerror}{missing}") from exc

    def write(self, line: str) -> None:
        """Append one line (without its newline)."""
        data = (line + "\n").encode("utf-8", "backslashreplace")
        if self.path == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            return
        pid = os.getpid()
        if self._pid != pid or self._generation != _reopen[0]:  # a new process, or a SIGHUP since (once each)
            self._reopen(pid)
        if self._fd is not None:
            os.write(self._fd, data)

    def _reopen(self, pid: int) -> None:
        """Open the path again (a new process, or after ``SIGHUP``); the file before is closed once the new one is
        open, and kept when it cannot be."""
        old = self._fd  # this process's, or its own copy of one a fork inherited: closed here once replaced
        self._generation = _reopen[0]
        try:
            fd = self._open()
        except PDIError as exc:
            kept = "still writing to the file opened before" if old is not None else "its lines are lost"
            said = f"pdi: {exc.message}: {kept} until a SIGHUP finds it can open it"
            if self.what == "log file":  # the log cannot say its own failure: it may be what drops the line
                sys.stderr.write(said + "\n")
            else:
                _log.warning(said, extra={"fields": {"event": "reopen-failed", "path": self.path}})
            self._fd, self._pid = old, pid
            return
        if old is not None:
            os.close(old)
        self._fd, self._pid = fd, pid


#: How many times the logs were asked to reopen (by SIGHUP): an :class:`AccessLog` that has seen fewer reopens.
_reopen = [0]


def reopen_logs(*_: object) -> None:
    """Ask every access log to reopen its file before its next line (``SIGHUP``'s handler: it only counts)."""
    _reopen[0] += 1


def clf_line(scope: Scope, status: int, octets: int, when: float | None = None) -> str:
    """The Common Log Format line of a request: ``host ident authuser [date] "request" status bytes``.

    ``ident`` and ``authuser`` are ``-`` (no token or credential is ever
    written); the request line is the method, the target as sent and the
    protocol, any ``"``, ``\\`` or control character in it escaped ``\\xHH``.
    ``when``: a POSIX time (default now), written in the local zone.
    """
    client = scope.get("client")
    target = scope.get("raw_path") or scope["path"].encode("utf-8")
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    return clf(client[0] if client else "-", scope["method"], target, scope.get("http_version", "1.1"), status,
               octets, when)


def clf(host: str, method: str, target: bytes, version: str, status: int, octets: int,
        when: float | None = None) -> str:
    """:func:`clf_line` of a request's parts (as a connection that answers from the cache has them). A bearer
    token a client put in the query (RFC 6750 §2.3's ``access_token=``, its ``_`` or ``=`` %-escaped or not, which
    pdi never reads) is written ``-``."""
    if b"token" in target.lower():
        target = _ACCESS_TOKEN.sub(rb"\1-", target)
    shown = target.decode("ascii") if _PLAIN_TARGET.fullmatch(target) else _escape(target)
    return f'{host} - - [{_stamp(when)}] "{method} {shown} HTTP/{version}" {status} {octets if octets else "-"}'


#: A query's ``access_token`` parameter and its value (up to the next parameter).
_ACCESS_TOKEN = re.compile(rb"((?:^|[?&;])access(?:_|%5F)token(?:=|%3D))[^&;#]*", re.IGNORECASE)


def _stamp(when: float | None) -> str:
    """``dd/Mon/yyyy:HH:MM:SS ±zzzz`` of a POSIX time, local; made once a second."""
    second = int(time.time() if when is None else when)
    if _stamps[0] != second:
        _stamps[:] = [second, datetime.datetime.fromtimestamp(second).astimezone().strftime("%d/%b/%Y:%H:%M:%S %z")]
    return str(_stamps[1])


#: The second last written in the access log and its date as written.
_stamps: list[object] = [None, ""]
#: A request target with nothing to escape.
_PLAIN_TARGET = re.compile(rb"[\x21\x23-\x5b\x5d-\x7e]*")


def _escape(raw: bytes) -> str:
    return "".join(chr(b) if 0x20 < b < 0x7F and b not in (0x22, 0x5C) else f"\\x{b:02x}" for b in raw)


class JSONFormatter(logging.Formatter):
    """A log record as one JSON object a line: time (RFC 3339, UTC), level, logger, message, request id, pid."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or current_request_id.get(),
            "pid": record.process,
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class ReopenedFile(logging.Handler):
    """A log handler appending each record as one line to ``path`` (an :class:`AccessLog`), reopened after SIGHUP."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.file = AccessLog(path, "log file")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.file.write(self.format(record))
        except Exception:  # a handler never raises into the code that logged (logging's own rule)
            self.handleError(record)


#: How ``text`` log records are written to a ``--log-file`` (uvicorn's own go to standard error without one).
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"


class CurrentStderr(logging.Handler):
    """A log handler writing each record's message as one line to standard error as it is when the record comes
    (Python's own last resort writes so, but only records of level ``WARNING`` and above)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # a handler never raises into the code that logged (logging's own rule)
            self.handleError(record)


def configure_logging(log_format: str, log_file: str | None = None) -> bool:
    """Log records of pdi and uvicorn to ``log_file`` (else standard error): ``json``, one object a line;
    ``text``, uvicorn's own format on standard error (and pdi's records, from level ``INFO``, each its message on
    a line of its own), or one line a record (:data:`TEXT_FORMAT`) in a file.

    Returns whether pdi's configuration replaces uvicorn's (``json``, or a
    file): then ``pdi serve`` passes ``log_config=None`` and uvicorn's errors
    reach this handler (with the request id of the request they were about).
    A file is reopened at its path after ``SIGHUP`` (:func:`reopen_logs`); one
    that cannot be opened is a :class:`PDIError` at once.
    """
    if log_format != "json" and log_file is None:
        own = logging.getLogger("pdi")
        if not any(isinstance(h, CurrentStderr) for h in own.handlers):
            own.addHandler(CurrentStderr(logging.INFO))
        own.setLevel(logging.INFO)  # what a resolver left out of a DNS answer, and why, said as JSON logs say it
        return False
    handler: logging.Handler = logging.StreamHandler(sys.stderr) if log_file is None else ReopenedFile(log_file)
    handler.setFormatter(JSONFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)  # a Python warning is a record too, not a bare line in the JSON log
    logging.getLogger("pdi").setLevel(logging.INFO)
    logging.getLogger("uvicorn.access").disabled = True  # the access log is ours
    return True


class Observe(HTTPMiddleware):
    """The outermost middleware of the resolver (the module's docstring says what it does for each request).

    ``access``: the access log, if any; ``json_logs``: one JSON record a
    request (:func:`configure_logging`); ``metrics_token``: who may read
    ``/metrics`` (:func:`pdi.server.http.metrics.may_read`); ``metrics``:
    whether it answers ``/metrics`` (not on the replay origin).
    """

    def __init__(self, app: ASGIApp, *, access: AccessLog | None = None, json_logs: bool = False,
                 metrics_token: str | None = None, archive: Archive | None = None, metrics: bool = True) -> None:
        super().__init__(app)
        self.access = access
        self.json_logs = json_logs
        self.metrics_token = metrics_token
        self.answers_metrics = metrics
        #: The archive whose catalog's pool waits are counted (:meth:`_pool_waits`), within a second of them.
        self.archive = archive
        self._pool_timer: asyncio.TimerHandle | None = None

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        sent = dict(scope.get("headers") or ()).get(b"x-request-id")
        request_id = (sent.decode("ascii") if sent is not None and REQUEST_ID.fullmatch(sent)
                      else uuid.uuid4().hex if self.json_logs or sent is not None else None)
        token = current_request_id.set(request_id or "-")
        status = 500
        octets = 0
        # a HEAD's answer has no content (RFC 9110 §9.3.2): the body a route hands on for its Content-Length is
        # dropped by the connection, so none of it is counted or logged as sent
        head = scope["method"] == "HEAD"

        async def sending(message: Message) -> None:
            nonlocal status, octets
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                if request_id is not None:
                    headers.append((b"x-request-id", request_id.encode("ascii")))
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and not head:
                octets += len(message.get("body", b""))
            await send(message)

        try:
            if scope["path"] == METRICS_PATH and scope["method"] in ("GET", "HEAD") and self.answers_metrics:
                scope["route"] = None
                self._pool_waits()
                await self._metrics(scope, receive, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            current_request_id.reset(token)
            past_send = scope.get("extensions", {}).get(EXTENSION)
            if past_send is not None and not head:
                octets += past_send.sent  # the octets that went with sendfile (pdi.server.process.zerocopy)
            self._record(scope, status, octets, time.perf_counter() - started, request_id)

    async def _metrics(self, scope: Scope, receive: Receive, send: Send) -> None:
        extra = None
        if self.archive is not None and may_read(scope, self.metrics_token):
            extra = await asyncio.to_thread(_fixity, self.archive)
        await metrics_answer(scope, self.metrics_token, extra)(scope, receive, send)

    def _pool_waits(self) -> None:
        """Count the waits for the catalog's pooled connections since last counted (a timer's call, and /metrics)."""
        self._pool_timer = None
        if self.archive is not None:
            waits, waited = self.archive.catalog_waits()
            if waits:
                metrics = counters()
                metrics.pool_waits.inc(waits)
                metrics.pool_wait_seconds.inc(waited)

    def _record(self, scope: Scope, status: int, octets: int, seconds: float, request_id: str | None) -> None:
        if self._pool_timer is None and self.archive is not None:  # a request ran: it may have waited
            self._pool_timer = asyncio.get_running_loop().call_later(POOL_SECONDS, self._pool_waits)
        route = scope.get("route")
        template = (METRICS_PATH if scope["path"] == METRICS_PATH and route is None and self.answers_metrics
                    else getattr(route, "path", UNMATCHED))
        method = scope["method"] if scope["method"] in _METHODS else "other"
        requests, latency, sent = _series(template, method, status)
        requests.inc()
        latency.observe(seconds)
        if octets:
            sent.inc(octets)
        if status == 201 and template in DEPOSIT_ROUTES:
            counters().deposits.labels(template).inc()
        if self.access is not None:
            self.access.write(clf_line(scope, status, octets))
        if self.json_logs:
            log_request(request_id, scope["method"], scope["path"], template, status, octets, seconds,
                        (scope.get("client") or ("-",))[0])


def log_request(request_id: str | None, method: str, path: str, route: str, status: int, octets: int,
                seconds: float, client: str) -> None:
    """One request's JSON record (``"event": "request"``), with its request id."""
    _request_log.info("%s %s %d", method, path, status, extra={
        "request_id": request_id,
        "fields": {"event": "request", "method": method, "path": path, "route": route, "status": status,
                   "bytes": octets, "seconds": round(seconds, 6), "client": client},
    })


def log_cached_answer(request_id: str, method: bytes, target: bytes, status: int, octets: int, seconds: float,
                      client: str) -> None:
    """The JSON record of an answer a connection wrote from the cache (:mod:`pdi.server.process.connection`)."""
    path = target.partition(b"?")[0].decode("utf-8", "backslashreplace")
    log_request(request_id, method.decode("ascii"), path, _URI_RES, status, octets, seconds, client)


def _fixity(archive: Archive) -> list[Any] | None:
    """The archive's fixity gauges (:func:`pdi.server.http.metrics.fixity_families`), read from its catalog at most
    once in :data:`~pdi.server.http.metrics.FIXITY_SECONDS` in this process; ``None`` while the catalog fails
    (``/readyz`` says so)."""
    now = time.monotonic()
    kept = _fixity_kept
    if kept and kept[0] == os.getpid() and now - kept[1] < FIXITY_SECONDS:
        return list(kept[2])
    try:
        blobs, summary = archive.fixity_summary()
    except StoreError as exc:  # the catalog not answering, said as a line (each scrape meanwhile: no traceback)
        _log.warning("the catalog's fixity checks could not be read for /metrics: %s", exc.message)
        return None
    except Exception:  # whatever else a failing catalog raises: the server's own counts are still answered
        _log.warning("the catalog's fixity checks could not be read for /metrics", exc_info=True)
        return None
    families = fixity_families(blobs, summary)
    _fixity_kept[:] = [os.getpid(), now, families]
    return list(families)


#: This process's id, when the fixity gauges were read and them (:func:`_fixity`).
_fixity_kept: list[Any] = []
_log = logging.getLogger("pdi.server")


def metrics_answer(scope: Scope, token: str | None, extra: list[Any] | None = None) -> Response:
    """The answer to ``GET /metrics``: the exposition (with ``extra`` families) to those :func:`may_read` lets
    through, else a 403 problem."""
    if not may_read(scope, token):
        how = ("send Authorization: Bearer and pdi serve's --metrics-token" if token else
               "ask from the server's own machine (a loopback address, not through a proxy), or give"
               " pdi serve a --metrics-token")
        return problem(403, "forbidden", f"/metrics is not open to this client: {how}")
    flush_tally()  # this worker's answers from the cache, at once; the others' within TALLY_SECONDS
    body, media_type = exposition(extra)
    return Response(body, media_type=media_type, headers={"Cache-Control": "no-store"})


def metrics(token: str | None) -> Any:
    """The endpoint of ``GET /metrics`` (:func:`metrics_answer`)."""

    async def endpoint(request: Request) -> Response:
        """Prometheus metrics of every worker, in the text exposition format (pdi.server.http.metrics)."""
        return metrics_answer(request.scope, token)

    return endpoint


def _series(route: str, method: str, status: int) -> tuple[Any, Any, Any]:
    """The request counter's, latency histogram's and body octets' series of a route, method and status: found
    once a process (``labels`` checks and locks each time), kept while the routes' templates bound them."""
    if _found_pid[0] != os.getpid():
        _found.clear()
        _found_pid[0] = os.getpid()
    key = (route, method, status)
    found = _found.get(key)
    if found is None:
        metrics = counters()
        found = _found[key] = (metrics.requests.labels(route, method, str(status)),
                               metrics.latency.labels(route, method), metrics.bytes.labels(route))
    return found


#: The series :func:`_series` found, by (route, method, status), and the process they were found in.
_found: dict[tuple[str, str, int], tuple[Any, Any, Any]] = {}
_found_pid = [0]

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def count_cached_answer(loop: asyncio.AbstractEventLoop, method: bytes, status: int, octets: int, hit: bool) -> None:
    """Count an answer a connection wrote from the cache (:mod:`pdi.server.process.connection`), without the app.

    The hot path: its counts are tallied here in plain integers and added to
    the metrics (one ``inc`` a series for all of them) at most
    :data:`TALLY_SECONDS` later, by a timer of the worker's event loop, so a
    scrape sees them that late at most. Its latency (microseconds) is not
    observed in ``pdi_http_request_duration_seconds``; its look-up in the
    cache is counted ``answered_by="connection"`` (the app's are ``app``).
    """
    key = (method, status, hit)
    counts = _tally.get(key)
    if counts is None:
        counts = _tally[key] = [0, 0]
    counts[0] += 1
    counts[1] += octets
    if not _flushing:
        _flushing.append(loop.call_later(TALLY_SECONDS, flush_tally))


def flush_tally() -> None:
    """Add what :func:`count_cached_answer` has tallied in this process to the metrics."""
    _flushing.clear()
    if not _tally:
        return
    metrics = counters()
    for (method, status, hit), (answers, octets) in _tally.items():
        if answers:
            verb = "GET" if method == b"GET" else "HEAD"
            metrics.requests.labels(_URI_RES, verb, str(status)).inc(answers)
            metrics.cache.labels("hit" if hit else "miss", "connection").inc(answers)
            if octets:
                metrics.bytes.labels(_URI_RES).inc(octets)
    _tally.clear()


#: Seconds after which the counts of answers written from the cache reach the metrics.
TALLY_SECONDS = 0.25
#: This process's tally of answers written from the cache: (method, status, hit) -> [answers, octets].
_tally: dict[tuple[bytes, int, bool], list[int]] = {}
#: The timer that will flush the tally, while one is set.
_flushing: list[asyncio.TimerHandle] = []


def _forget_the_parents_tally() -> None:
    """In a child just forked: the parent's counts are the parent's to flush, and its timer is of its loop."""
    _tally.clear()
    _flushing.clear()


os.register_at_fork(after_in_child=_forget_the_parents_tally)
_URI_RES = "/uri-res/{service}"
