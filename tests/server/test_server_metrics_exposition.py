"""``GET /metrics`` of a running ``pdi serve`` (two workers) checked against the Prometheus text exposition format.

Read with ``prometheus_client``'s own parser, and line by line against the
format's rules (https://prometheus.io/docs/instrumenting/exposition_formats/,
"Text format details"): each family's ``# HELP`` and ``# TYPE`` once, before
its samples, which come together; a counter's samples end ``_total``; a
histogram's buckets are cumulative in ascending ``le``, the ``+Inf`` bucket
equal to ``_count``. Strangers' requests (paths that differ, quotes,
backslashes, line ends, methods nobody uses) must not add series: a label
holds a route's template, never the path asked.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import S, serving, until_closed

from pdi.archive import Archive, Content

#: A sample line's metric name (the format's metric name grammar).
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
#: The suffixes a family's samples may add to its name (counter, histogram, and the created time).
_SUFFIXES = ("_total", "_created", "_bucket", "_count", "_sum")
#: The routes whose 201 is a deposit (docs/reference/write-api.md: the write API's deposits).
_DEPOSITS = {"/api/deposit", "/api/batch", "/api/version", "/api/format"}
#: Distinct paths no route has, asked once each.
_STRANGE = 300


def format_problems(text: str) -> list[str]:
    """What in ``text`` breaks the text format's rules on HELP, TYPE and the grouping of a family's samples."""
    problems: list[str] = []
    helped: set[str] = set()
    typed: dict[str, str] = {}
    finished: set[str] = set()
    current: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            if name in helped:
                problems.append(f"line {number}: a second HELP of {name}")
            helped.add(name)
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            if name in typed:
                problems.append(f"line {number}: a second TYPE of {name}")
            typed[name] = kind
            if current is not None:
                finished.add(current)
            current = name
            continue
        if line.startswith("#"):
            continue
        found = _NAME.match(line)
        assert found is not None, line
        sample = found.group()
        family = sample if sample in typed else next(
            (sample.removesuffix(s) for s in _SUFFIXES if sample.endswith(s) and sample.removesuffix(s) in typed), None)
        if family is None:
            problems.append(f"line {number}: {sample} has no TYPE before it")
        elif family != current or family in finished:
            problems.append(f"line {number}: {sample} is apart from the other samples of {family}")
        elif family not in helped:
            problems.append(f"line {number}: {family} has no HELP")
    return problems


def scrape(port: int) -> str:
    answer = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain; version=")
    return answer.text


def test_metrics_are_valid_text_exposition_and_strangers_add_no_series(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(b"Hello, operator.\n", "text")])[0])
    with serving(location, "--workers", "2") as (_, port):
        base = f"http://127.0.0.1:{port}"
        first = scrape(port)
        assert format_problems(first) == []
        # every family is there before its first count: each series whose labels are known at 0 (a rate or an
        # alert on it sees a 0, not an absent series, until the first deposit, the first failure)
        at_start = {(s.name, tuple(sorted(s.labels.items()))): s.value
                    for family in text_string_to_metric_families(first) for s in family.samples}
        for route in sorted(_DEPOSITS):
            assert at_start.get(("pdi_deposits_total", (("route", route),))) == 0.0, route
        for part in ("store", "catalog", "blobs"):
            assert at_start.get(("pdi_store_errors_total", (("part", part),))) == 0.0, part
        for result in ("hit", "miss"):
            for answerer in ("connection", "app"):
                assert at_start.get(("pdi_answer_cache_lookups_total",
                                     (("answered_by", answerer), ("result", result)))) == 0.0, (result, answerer)

        with httpx.Client(base_url=base, timeout=10) as client:
            for i in range(_STRANGE):  # a quote, a backslash, a line end (%0A), each path another
                assert client.get(f"/no-such-place/{i}/%22%5C%0A\"\\").status_code == 404
            # methods HTTP knows (the parser reads them; one it does not is refused before it is a request) and
            # no route takes: one label value, "other"
            for method in ("PROPFIND", "MKCOL", "LOCK"):
                assert client.request(method, "/no-such-place/\"").status_code in (404, 405)
            for _ in range(3):
                assert client.get(f"/uri-res/N2R?{name}").status_code == 200
            assert client.get("/oai", params={"verb": "Identify"}).status_code == 200
        text = scrape(port)

    assert format_problems(text) == []
    families = {family.name: family for family in text_string_to_metric_families(text)}
    for family in families.values():
        assert family.documentation, family.name
        if family.type == "counter":
            assert all(s.name in (f"{family.name}_total", f"{family.name}_created") for s in family.samples), family
        if family.type == "histogram":
            series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
            counts: dict[tuple[tuple[str, str], ...], float] = {}
            for s in family.samples:
                key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                if s.name == f"{family.name}_bucket":
                    series.setdefault(key, []).append((float(s.labels["le"]), s.value))
                elif s.name == f"{family.name}_count":
                    counts[key] = s.value
            assert series and series.keys() == counts.keys()
            for key, buckets in series.items():
                bounds = [le for le, _ in buckets]
                assert bounds == sorted(bounds) and bounds[-1] == math.inf, key
                values = [v for _, v in buckets]
                assert values == sorted(values), f"{key}: buckets not cumulative"
                assert values[-1] == counts[key], f"{key}: the +Inf bucket is not the count"

    requests = [s for s in families["pdi_http_requests"].samples if s.name == "pdi_http_requests_total"]
    routes = {s.labels["route"] for s in requests}
    assert not any('"' in route or "\\" in route or "\n" in route or "no-such-place" in route for route in routes)
    assert len(requests) < 20, sorted((s.labels["route"], s.labels["method"], s.labels["status"]) for s in requests)
    unmatched = {(s.labels["method"], s.labels["status"]): s.value for s in requests if s.labels["route"] == "(unmatched)"}
    assert unmatched[("GET", "404")] == _STRANGE
    assert sum(v for (method, _), v in unmatched.items() if method == "other") == 3
    latency = families["pdi_http_request_duration_seconds"].samples
    assert [s.value for s in latency if s.name.endswith("_count") and s.labels == {"route": "(unmatched)", "method": "GET"}
            ] == [_STRANGE]


def test_requests_refused_before_any_route_are_counted_by_status(tmp_path: Path) -> None:
    """A flood of malformed heads never becomes a request (``pdi_http_requests_total``): the connection answers
    and closes (RFC 9112). Each is counted by its status, summed over the workers, every status at 0 from the
    start; found by the operations attack (2026-11-27): they were in the log alone, a line a second."""
    location = tmp_path / "archive"
    Archive.init(location).close()
    with serving(location, "--workers", "2") as (_, port):
        first = {s.labels["status"]: s.value for f in text_string_to_metric_families(scrape(port))
                 for s in f.samples if s.name == "pdi_http_refusals_total"}
        assert first == dict.fromkeys(("400", "414", "421", "431", "500", "501", "503"), 0.0)
        sent = {
            "400": [b"GET / HTTP/1.1\r\nHost: a\r\nBad Field: x\r\n\r\n"] * 4,  # a space in a field name
            "414": [b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: a\r\n\r\n"] * 2,
            "421": [b"GET ftp://a/ HTTP/1.1\r\nHost: a\r\n\r\n"],  # a target of another scheme: no proxy here
            "431": [b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(400)) + b"\r\n"],
            "501": [b"BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n"] * 3,
        }
        for status, requests in sent.items():
            for request in requests:
                assert until_closed(port, request).startswith(b"HTTP/1.1 %s " % status.encode())
        counted = {s.labels["status"]: s.value for f in text_string_to_metric_families(scrape(port))
                   for s in f.samples if s.name == "pdi_http_refusals_total"}
    assert counted == {**first, **{status: float(len(requests)) for status, requests in sent.items()}}
