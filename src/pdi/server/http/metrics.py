"""The resolver's Prometheus metrics (``prometheus_client``) and ``GET /metrics``, which exposes them.

Every series here has labels of bounded cardinality: a route's template
(``/uri-res/{service}``, never the path asked: a stranger cannot grow the
series), a method, a status, a fixed word.

``pdi serve`` runs several worker processes; each counts in its own files
of one directory (``prometheus_client``'s multiprocess mode:
:data:`MULTIPROC_ENV`, which the serving process sets to a private
temporary directory before this module is first imported and removes at
exit, :func:`pdi.server.process.run.metrics_directory`), and whichever worker
answers ``/metrics`` sums them all. Without that variable (an app made in
a test's own process) the metrics are this process's.

Who may read ``/metrics`` (:func:`may_read`): with ``pdi serve
--metrics-token`` (or ``$PDI_METRICS_TOKEN``), whoever sends
``Authorization: Bearer`` that token; without one, a client on a loopback
address whose request carries no ``Forwarded`` or ``X-Forwarded-For``
field (a reverse proxy on the same machine adds one for the stranger it
forwards). Anyone else: ``403``.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import os
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.types import Scope

if TYPE_CHECKING:
    from prometheus_client import Counter, Histogram
    from prometheus_client.metrics_core import Metric

    from pdi.archive.store import FixitySummary

__all__ = ["CACHE_ANSWERERS", "DEPOSIT_ROUTES", "FIXITY_SECONDS", "MULTIPROC_ENV", "REFUSAL_STATUSES", "STORE_PARTS",
           "Metrics", "cache_lookup", "count_refusal", "counters", "exposition", "fixity_families", "may_read"]

#: The environment variable that puts ``prometheus_client`` in multiprocess mode (its directory of counts).
#: ``prometheus_client`` reads it once, when it is first imported: so this module imports it only when a
#: metric is first counted (:func:`counters`), after ``pdi serve`` has set it.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

#: The routes whose 201 is a deposit.
DEPOSIT_ROUTES = frozenset({"/api/deposit", "/api/batch", "/api/version", "/api/format"})
#: Seconds: the bounds of the latency histogram's buckets.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


@dataclass(frozen=True)
class Metrics:
    """The resolver's metrics (exposed with ``_total`` after each counter's name)."""

    requests: Counter
    latency: Histogram
    bytes: Counter
    deposits: Counter
    cache: Counter
    fixity_failures: Counter
    store_errors: Counter
    pool_waits: Counter
    pool_wait_seconds: Counter
    refusals: Counter


@functools.cache
def counters() -> Metrics:
    """The metrics, made (and ``prometheus_client`` imported) the first time they are asked for."""
    from prometheus_client import Counter, Histogram

    made = Metrics(
        requests=Counter("pdi_http_requests", "HTTP requests answered, by route template, method and status",
                         ["route", "method", "status"]),
        latency=Histogram("pdi_http_request_duration_seconds",
                          "Seconds from a request's head to its answer's last octet, by route template and method",
                          ["route", "method"], buckets=BUCKETS),
        bytes=Counter("pdi_http_response_body_bytes", "Octets of answers' bodies sent, by route template",
                      ["route"]),
        deposits=Counter("pdi_deposits", "Writes that deposited (a 201 of POST /api/deposit, /api/batch,"
                         " /api/version or /api/format), by route template", ["route"]),
        cache=Counter("pdi_answer_cache_lookups", "Look-ups in a worker's cache of whole N2R answers, by result"
                      " (hit, miss) and by what answered (connection: written without the app, its latency not"
                      " observed; app: in pdi_http_request_duration_seconds)", ["result", "answered_by"]),
        fixity_failures=Counter("pdi_fixity_failures", "Reads whose octets did not match their SHA-256"
                                " (answered 500 stored octets damaged)"),
        store_errors=Counter("pdi_store_errors", "Storage errors answered 503 (the blob store or the catalog"
                             " failing), and readiness probes that failed, by part (store, catalog, blobs)",
                             ["part"]),
        pool_waits=Counter("pdi_catalog_pool_waits", "Requests that waited for one of the catalog's pooled"
                           " connections (PostgreSQL, pdi serve --db-connections): all were taken"),
        pool_wait_seconds=Counter("pdi_catalog_pool_wait_seconds", "Seconds requests waited for one of the"
                                  " catalog's pooled connections, in all"),
        refusals=Counter("pdi_http_refusals", "Requests refused by the connection before any route saw them"
                         " (a malformed or oversized head, too many pipelined, too many connections of one"
                         " client; answered, and the connection closed), by status", ["status"]),
    )
    # The series whose labels are known beforehand, made at 0 now: a labelled family has no sample before its
    # first count, and in multiprocess mode it is not even listed; a rate or an alert would see no series, not 0
    # (https://prometheus.io/docs/practices/instrumentation/#avoid-missing-metrics).
    for route in sorted(DEPOSIT_ROUTES):
        made.deposits.labels(route)
    for part in STORE_PARTS:
        made.store_errors.labels(part)
    for result in ("miss", "hit"):
        for answerer in CACHE_ANSWERERS:
            made.cache.labels(result, answerer)
    for status in REFUSAL_STATUSES:
        made.refusals.labels(status)
    return made


#: What answers a request whose answer is looked up in the cache of whole answers (``answered_by`` of
#: ``pdi_answer_cache_lookups_total``): the connection, writing it without the app (a hit, or a first asking it
#: made itself: :func:`pdi.server.process.observe.count_cached_answer`), or the app (:func:`cache_lookup`).
CACHE_ANSWERERS = ("connection", "app")


#: The statuses a connection refuses a request with (:mod:`pdi.server.process.connection`): a malformed head
#: (400), a target (414) or fields (431) too large, the server's own failure on a head (500), a method HTTP does
#: not define (501), too many pipelined requests or one client's connections (503).
REFUSAL_STATUSES = ("400", "414", "421", "431", "500", "501", "503")


def count_refusal(status: int) -> None:
    """Count a refusal by the connection (``pdi_http_refusals_total``): never a label a stranger chose."""
    said = str(status)
    counters().refusals.labels(said if said in REFUSAL_STATUSES else "other").inc()


#: The parts whose failures ``pdi_store_errors_total`` counts: a read's store (a 503 answer), and the two probes of
#: ``/readyz`` (:class:`pdi.server.process.health.Readiness`).
STORE_PARTS = ("store", "catalog", "blobs")


#: Seconds a worker keeps what the catalog said of its fixity checks (:func:`fixity_families`) before asking again.
FIXITY_SECONDS = 60.0


def fixity_families(blobs: int, summary: FixitySummary) -> list[Metric]:
    """The gauges of what ``pdi verify`` last found, read from the catalog's fixity checks at a scrape.

    ``pdi verify`` runs apart from the server and records each blob's check
    in the catalog (:meth:`pdi.archive.Archive.verify`); every worker reads
    the same catalog, so these are the archive's, not summed over workers.
    """
    from prometheus_client.core import GaugeMetricFamily

    held = GaugeMetricFamily("pdi_blobs", "Blobs the catalog names (distinct SHA-256)")
    held.add_metric([], blobs)
    checked = GaugeMetricFamily("pdi_fixity_blobs", "Blobs by what their latest fixity check (pdi verify) found:"
                                " whole (their SHA-256 and size) or damaged (missing, altered, another size)",
                                labels=["result"])
    checked.add_metric(["whole"], summary.whole)
    checked.add_metric(["damaged"], summary.damaged)
    families: list[Metric] = [held, checked]
    for which, at, what in (("newest", summary.newest, "most"), ("oldest", summary.oldest, "least")):
        if at is not None:
            gauge = GaugeMetricFamily(f"pdi_fixity_{which}_check_timestamp_seconds",
                                      f"When the blob checked {what} recently was last checked (pdi verify),"
                                      " seconds since the epoch")
            gauge.add_metric([], _epoch(at))
            families.append(gauge)
    return families


def _epoch(at: str) -> float:
    """Seconds since the epoch of a moment as the catalog keeps it (``2026-11-25T10:31:02.118000Z``)."""
    import datetime

    return datetime.datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def exposition(extra: list[Metric] | None = None) -> tuple[bytes, str]:
    """The text exposition of every worker's metrics (of this process outside multiprocess mode), and of
    ``extra`` families (the archive's own, :func:`fixity_families`); its media type."""
    from prometheus_client import (
        CONTENT_TYPE_LATEST,
        REGISTRY,
        CollectorRegistry,
        generate_latest,
        multiprocess,
    )

    counters()  # every family is listed, at 0, before its first count
    path = os.environ.get(MULTIPROC_ENV)
    if not path:
        body = generate_latest(REGISTRY)
    else:
        for attempt in range(_READS):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry, path=path)  # type: ignore[no-untyped-call]
            try:
                body = generate_latest(registry)
                break
            except struct.error:
                # prometheus_client makes a worker's file of counts and only then gives it its size
                # (client_python issue 1199): read in between, the file is empty and the whole sum fails.
                # Read again in a moment; an empty file that has stayed so is a worker's killed in between,
                # empty for good: put aside.
                if attempt == _READS - 1:
                    raise
                _put_aside_empty(path)
                time.sleep(0.01)
    if extra:
        more = CollectorRegistry(auto_describe=False)
        more.register(_Families(extra))
        body += generate_latest(more)
    return body, CONTENT_TYPE_LATEST


#: How many times the workers' files are read for one ``/metrics`` when one is found empty (:func:`exposition`).
_READS = 3
#: Seconds after which a worker's file of counts still empty is a killed worker's (it is sized at once).
_EMPTY_FOR_GOOD = 1.0


def _put_aside_empty(path: str) -> None:
    """Remove the files of counts in ``path`` that have been empty for :data:`_EMPTY_FOR_GOOD` seconds: left by a
    worker killed between making one and sizing it, they would make every later sum fail."""
    now = time.time()
    with os.scandir(path) as entries:
        for entry in entries:
            if not entry.name.endswith(".db"):
                continue
            try:
                status = entry.stat()
                if status.st_size == 0 and now - status.st_mtime > _EMPTY_FOR_GOOD:
                    os.unlink(entry.path)
            except OSError:
                pass  # gone meanwhile, or sized: the next read sees it as it is


class _Families:
    """A collector of families made already (``prometheus_client``'s custom collector protocol)."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> list[Metric]:
        return self.families


def may_read(scope: Scope, token: str | None) -> bool:
    """Whether the request of ``scope`` may read ``/metrics`` (this module's docstring says who may)."""
    headers = dict(scope.get("headers") or ())
    if token:
        sent = headers.get(b"authorization", b"")
        scheme, _, credentials = sent.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(b" \t"), token.encode())
    if b"forwarded" in headers or b"x-forwarded-for" in headers:
        return False
    client = scope.get("client")
    try:
        return client is not None and ipaddress.ip_address(client[0]).is_loopback
    except ValueError:
        return False


def cache_lookup(hit: bool) -> None:
    """Count the app's look-up in the cache of whole answers (:mod:`pdi.server.process.cache`)."""
    children = _cache_children
    if not children or children[0] != os.getpid():
        family = counters().cache
        children[:] = [os.getpid(), family.labels("miss", "app"), family.labels("hit", "app")]
    children[1 + hit].inc()


#: This process's id and the cache counter's two children of the app's look-ups (miss, hit), found once a process.
_cache_children: list[Any] = []
