"""What an operator watches of a running ``pdi serve`` (real processes, several workers): health, metrics, logs, signals.

The metrics are read with ``prometheus_client``'s own parser of the text
exposition format; JSON log lines with :mod:`json`; access-log lines
against the Common Log Format's grammar (as Apache's ``%h %l %u %t "%r" %>s %b``
writes it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from server_helpers import S, serving, start_serve, stop, wait_answering
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.errors import PDIError
from pdi.server import create_app
from pdi.server.process.observe import clf
from support.pgcluster import TemporaryCluster
from support.stored_blobs import catalog_number

#: The Common Log Format: host ident authuser [dd/Mon/yyyy:HH:MM:SS ±zzzz] "request line" status bytes.
CLF = re.compile(
    r'(?P<host>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<time>\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] '
    r'"(?P<method>[A-Z]+) (?P<target>\S+) (?P<protocol>HTTP/\d\.\d)" (?P<status>\d{3}) (?P<bytes>\d+|-)'
)
#: The short text's octets.
SHORT = b"Hello, operator.\n"
#: 20 MiB: larger than what the kernel's socket buffers hold, so its answer is still being sent when asked to stop.
LARGE = 20 << 20


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """An archive with a short text and a 20 MiB one: its location and their names."""
    location = tmp_path_factory.mktemp("operate") / "archive"
    with Archive.init(location) as opened:
        opened.add_series(S)
        short = str(opened.deposit(S, [Content(b"Hello, operator.\n", "text")])[0])
        large = str(opened.deposit(S, [Content(b"0123456789abcde\n" * (LARGE // 16), "text")])[0])
    yield location, short, large


def scrape(port: int, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``, parsed by prometheus_client's parser: (name, sorted labels) -> value."""
    answer = httpx.get(f"http://127.0.0.1:{port}/metrics", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def moved(before: dict[tuple[str, tuple[tuple[str, str], ...]], float],
          after: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """How much each series of ``name`` moved between two scrapes (those that moved)."""
    return {labels: value - before.get((n, labels), 0.0) for (n, labels), value in after.items()
            if n == name and value != before.get((n, labels), 0.0)}


def requests_of(route: str, status: str, method: str = "GET") -> tuple[tuple[str, str], ...]:
    return (("method", method), ("route", route), ("status", status))


def test_healthz_is_alive_and_readyz_names_the_store_that_failed(archive: tuple[Path, str, str], tmp_path: Path) -> None:
    location = tmp_path / "archive"
    shutil.copytree(archive[0], location)
    with serving(location, "--workers", "2") as (_, port):
        alive = httpx.get(f"http://127.0.0.1:{port}/healthz")
        assert (alive.status_code, alive.text, alive.headers["cache-control"]) == (200, "ok\n", "no-store")
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"status": "ready", "checked": ["catalog", "blobs"]}
        (location / "blobs").rename(location / "blobs-away")  # the blob store gone from under the server
        try:
            for _ in range(4):  # each worker asked, whichever answers
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz")
                assert ready.status_code == 503
                assert ready.headers["content-type"] == "application/problem+json"
                problem = ready.json()
                assert problem["failed"] == ["blobs"] and problem["title"] == "not ready"
                assert problem["detail"].startswith("blobs: StoreError: cannot list blobs in ")
                # alive all the same
                assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
        finally:
            (location / "blobs-away").rename(location / "blobs")
        assert httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200
        failed = moved({}, scrape(port), "pdi_store_errors_total")
        assert failed == {(("part", "blobs"),): 4.0}


def _every_worker_holds(process: subprocess.Popen[str], catalog: Path, workers: int = 2) -> None:
    """Wait (30 s at most) until each of the server's ``workers`` worker processes holds ``catalog`` open (a file
    descriptor of its ``/proc``): a worker still starting when the catalog is replaced opens the new one, rightly."""
    deadline = time.monotonic() + 30
    wanted = os.path.realpath(catalog)
    while True:
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        holding = 0
        for child in children:
            try:
                fds = os.listdir(f"/proc/{child}/fd")
                links = {os.path.realpath(f"/proc/{child}/fd/{fd}") for fd in fds}
            except OSError:  # (a child gone meanwhile)
                continue
            holding += wanted in links
        if holding >= workers:
            return
        assert time.monotonic() < deadline, f"{holding} of {workers} workers hold {catalog} open"
        time.sleep(0.05)


def test_an_archive_restored_under_a_running_server_is_noticed(archive: tuple[Path, str, str], tmp_path: Path) -> None:
    """The operator moves a damaged archive aside and restores a backup in its place while ``pdi serve`` runs: the
    server's workers hold the catalog they opened. ``/readyz`` says so (503, naming the catalog); and a process
    whose archive was moved away under it refuses to deposit into the catalog moved aside, where it would be lost."""
    location = tmp_path / "archive"
    shutil.copytree(archive[0], location)
    with serving(location, "--workers", "2") as (process, port):
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/readyz").status_code == 200
        _every_worker_holds(process, location / "catalog.sqlite")  # (one still starting would open the restored one)
        location.rename(tmp_path / "archive.damaged")
        shutil.copytree(tmp_path / "archive.damaged", location)  # as pdi restore would leave it: another file
        for _ in range(4):  # each worker asked, whichever answers
            ready = httpx.get(f"{base}/readyz")
            assert ready.status_code == 503, ready.text
            problem = ready.json()
            assert problem["failed"] == ["catalog"]
            assert "is another file than the one this process opened" in problem["detail"]
            assert "restart" in problem["detail"]
    def documents(root: Path) -> int:
        return catalog_number(root, "SELECT count(*) FROM documents")

    before = documents(tmp_path / "archive.damaged")
    with Archive.open(str(tmp_path / "archive.damaged")) as moved_aside:
        (tmp_path / "archive.damaged").rename(tmp_path / "gone")
        with pytest.raises(PDIError, match="no longer there"):
            moved_aside.deposit(S, [Content(b"lost?\n", "text")])
    assert documents(tmp_path / "gone") == before


def test_metrics_sum_every_worker_and_move_by_exactly_the_requests_made(archive: tuple[Path, str, str]) -> None:
    location, short, _ = archive
    with serving(location, "--workers", "3") as (_, port):
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20  # serving()'s own /api/series counted, a moment after it was answered
        while (not scrape(port).get(("pdi_http_requests_total", requests_of("/api/series", "200")))
               and time.monotonic() < deadline):
            time.sleep(0.05)
        time.sleep(0.3)  # and the last of those scrapes' own count
        before = scrape(port)
        for _ in range(7):  # a connection each: the three workers share them (not serving()'s own /api/series)
            assert httpx.get(f"{base}/healthz").status_code == 200
        for n in range(5):  # five paths asked, one label: the series cannot grow with what strangers ask
            assert httpx.get(f"{base}/no/such/path/{n}").status_code == 404
        with httpx.Client() as client:  # one connection: its worker's cache of whole answers, a miss, then hits
            bodies = [client.get(f"{base}/uri-res/N2R?{short}").content for _ in range(4)]
        assert bodies == [b"Hello, operator.\n"] * 4
        # HTTP/1.0 is not the connection's plain case: the app answers it, looking it up in the cache (a hit or a
        # miss, as the worker that takes it holds the name or not), and the histogram times it
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(f"GET /uri-res/N2R?{short} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
            answered = b""
            while chunk := raw.recv(65536):
                answered += chunk
        assert answered.startswith(b"HTTP/1.1 200 ") and answered.endswith(b"\r\n\r\nHello, operator.\n")
        # answers written from the cache by the connection reach the metrics within a quarter of a second
        scrapes = 1  # before's
        deadline = time.monotonic() + 30
        while True:
            after = scrape(port)
            scrapes += 1
            n2r = moved(before, after, "pdi_http_requests_total").get(requests_of("/uri-res/{service}", "200"), 0)
            if n2r >= 5 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        time.sleep(0.5)  # and nothing more comes
        after = scrape(port)
        requests = moved(before, after, "pdi_http_requests_total")
        assert requests == {
            requests_of("/healthz", "200"): 7.0,
            requests_of("(unmatched)", "404"): 5.0,
            requests_of("/uri-res/{service}", "200"): 5.0,
            requests_of("/metrics", "200"): float(scrapes),  # each scrape is counted once answered: all but the last
        }
        lookups = moved(before, after, "pdi_answer_cache_lookups_total")
        # the keep-alive connection's four, written without the app: its first asking a miss, then hits
        assert {labels: n for labels, n in lookups.items() if ("answered_by", "connection") in labels} == {
            (("answered_by", "connection"), ("result", "miss")): 1.0,
            (("answered_by", "connection"), ("result", "hit")): 3.0}
        by_app = {labels: n for labels, n in lookups.items() if ("answered_by", "app") in labels}
        assert sum(by_app.values()) == 1.0 and set(lookups) - set(by_app) == {
            (("answered_by", "connection"), ("result", "miss")), (("answered_by", "connection"), ("result", "hit"))}
        octets = moved(before, after, "pdi_http_response_body_bytes_total")
        assert octets[(("route", "/uri-res/{service}"),)] == 5 * len(b"Hello, operator.\n")
        latency = moved(before, after, "pdi_http_request_duration_seconds_count")
        assert latency[(("method", "GET"), ("route", "/healthz"))] == 7.0
        # the histogram times the app's answers alone: the one answered_by="app" counts
        assert latency[(("method", "GET"), ("route", "/uri-res/{service}"))] == sum(by_app.values())


def test_a_workers_file_of_counts_left_empty_does_not_fail_metrics(archive: tuple[Path, str, str],
                                                                   tmp_path: Path) -> None:
    # prometheus_client makes a worker's file of counts and sizes it after (client_python issue 1199): a scrape
    # in between finds it empty, and a worker killed in between leaves it so for good; /metrics failed (500)
    location, _, _ = archive
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process, port, _ = start_serve(location, "--workers", "2", "--replay-port", "0", start_new_session=True,
                                   env={**os.environ, "TMPDIR": str(temporary)})
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        (counts,) = temporary.glob("pdi-serve-metrics-*")  # pdi serve's directory of the workers' counts
        left = counts / "counter_4194304.db"  # a pid no worker has here
        left.write_bytes(b"")
        long_ago = time.time() - 60
        os.utime(left, (long_ago, long_ago))
        scrape(port)  # 200 (scrape says what else), every worker's counts summed
        assert not left.exists()  # put aside: the next scrapes need not wait for it either
        scrape(port)
    finally:
        stop(process)


def test_deposits_are_counted_and_metrics_need_the_token_when_one_is_given(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    with Archive.init(location) as opened:
        opened.add_series(S)
        _, secret = opened.add_token("depositor", role="deposit")
    with serving(location, "--workers", "2", "--metrics-token", "s3cret-scrape") as (_, port):
        base = f"http://127.0.0.1:{port}"
        refused = httpx.get(f"{base}/metrics")
        assert refused.status_code == 403 and refused.headers["content-type"] == "application/problem+json"
        assert "--metrics-token" in refused.json()["detail"]
        assert httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
        scraper = {"Authorization": "Bearer s3cret-scrape"}
        before = scrape(port, **scraper)
        for n in range(3):
            answer = httpx.post(f"{base}/api/deposit?series={S}&format=text", content=f"deposit {n}\n".encode(),
                                headers={"Authorization": f"Bearer {secret}", "Content-Type": "text/plain"})
            assert answer.status_code == 201, answer.text
        deadline = time.monotonic() + 20  # a request is counted once its answer has gone: a moment after
        while (moved(before, after := scrape(port, **scraper), "pdi_deposits_total") != {(("route", "/api/deposit"),): 3.0}
               and time.monotonic() < deadline):
            time.sleep(0.05)
        assert moved(before, after, "pdi_deposits_total") == {(("route", "/api/deposit"),): 3.0}
        assert moved(before, after, "pdi_http_requests_total")[requests_of("/api/deposit", "201", "POST")] == 3.0


def test_json_logs_and_the_access_log_carry_each_request_and_its_id(archive: tuple[Path, str, str],
                                                                   tmp_path: Path) -> None:
    location, short, _ = archive
    access = tmp_path / "access.log"
    process, port, first = start_serve(location, "--replay-port", "0", "--workers", "2", "--log-format", "json",
                                       "--access-log", str(access), start_new_session=True)
    serving_record = json.loads(first)  # standard error is the JSON log from its first line on
    assert serving_record["event"] == "serving" and serving_record["url"] == f"http://127.0.0.1:{port}/"
    assert serving_record["workers"] == 2 and serving_record["message"].startswith("pdi: serving ")
    assert serving_record["read_only"] is False  # its owner serves it: writes are its to make
    try:
        base = f"http://127.0.0.1:{port}"
        wait_answering(process, f"{base}/healthz")
        given = httpx.get(f"{base}/uri-res/N2R?{short}", headers={"X-Request-Id": "req-42.a:b"})
        assert given.status_code == 200 and given.headers["x-request-id"] == "req-42.a:b"
        made = httpx.get(f"{base}/api/series", headers={"X-Request-Id": "not well formed!"})
        assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])
        missing = httpx.get(f"{base}/nothing-here")
        assert missing.status_code == 404 and re.fullmatch(r"[0-9a-f]{32}", missing.headers["x-request-id"])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert process.stderr is not None
        logged = process.stderr.read()
        stop(process)
    records = [json.loads(line) for line in logged.splitlines() if line.strip()]
    requests = {r["request_id"]: r for r in records if r.get("event") == "request"}
    assert requests["req-42.a:b"]["route"] == "/uri-res/{service}" and requests["req-42.a:b"]["status"] == 200
    assert requests[made.headers["x-request-id"]]["path"] == "/api/series"
    assert requests[missing.headers["x-request-id"]]["status"] == 404
    assert all(r["level"] == "info" and r["time"].endswith("Z") for r in requests.values())
    lines = access.read_text("utf-8").splitlines()
    found = [CLF.fullmatch(line) for line in lines]
    assert all(found), lines
    by_target = {m["target"]: m for m in found if m}
    n2r = by_target[f"/uri-res/N2R?{short}"]
    assert (n2r["host"], n2r["ident"], n2r["user"], n2r["status"], n2r["bytes"]) == (
        "127.0.0.1", "-", "-", "200", str(len(b"Hello, operator.\n")))
    assert by_target["/nothing-here"]["status"] == "404" and by_target["/api/series"]["method"] == "GET"


def test_a_head_is_logged_and_counted_as_sending_no_octets_of_content(archive: tuple[Path, str, str],
                                                                       tmp_path: Path) -> None:
    """RFC 9110 §9.3.2: the answer to a HEAD has no content, and none goes on the wire (read here from the socket
    itself: after the header block, nothing). Its access log line says ``-`` (none) and the body octets it adds to
    ``pdi_http_response_body_bytes_total`` are 0, whatever the route made for its Content-Length (found following
    docs/how-to/operate.md, 2026-12-02: ``HEAD /api/ls`` was logged and counted with the 227 octets its GET
    sends)."""
    import socket

    location, short, _ = archive
    access = tmp_path / "access.log"
    targets = ["/api/ls", "/api/series", "/healthz", f"/uri-res/N2R?{short}"]
    with serving(location, "--workers", "1", "--access-log", str(access)) as (_, port):
        time.sleep(0.3)  # serving()'s own /api/series counted
        before = scrape(port)
        for target in targets:
            gets = httpx.get(f"http://127.0.0.1:{port}{target}", timeout=10)
            assert gets.status_code == 200 and gets.content, target
            with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                conn.sendall(f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
                wire = b""
                while chunk := conn.recv(65536):
                    wire += chunk
            head, _, content = wire.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 ") and content == b"", (target, wire)
            assert f"content-length: {len(gets.content)}".encode() in head.lower(), (target, head)
        time.sleep(0.6)  # the cache's answers reach the metrics within a quarter of a second
        after = scrape(port)
    sent = moved(before, after, "pdi_http_response_body_bytes_total")
    heads = moved(before, after, "pdi_http_requests_total")
    assert sum(v for labels, v in heads.items() if ("method", "HEAD") in labels) == len(targets), heads
    lines = [m for m in (CLF.fullmatch(line) for line in access.read_text("utf-8").splitlines()) if m]
    gets_octets = 0
    for target in targets:
        got = [m for m in lines if m["method"] == "GET" and m["target"] == target][-1]  # (serving() asked one too)
        [headed] = [m for m in lines if m["method"] == "HEAD" and m["target"] == target]
        assert headed["status"] == "200" and headed["bytes"] == "-", (target, headed.group(0))
        assert got["bytes"] != "-", got.group(0)
        gets_octets += int(got["bytes"])
    assert sum(v for labels, v in sent.items() if labels[0][1] != "/metrics") == gets_octets, (sent, gets_octets)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_finishes_the_answer_in_flight_refuses_new_connections_and_exits_0(
    archive: tuple[Path, str, str], workers: str,
) -> None:
    location, _, large = archive
    with serving(location, "--workers", workers) as (process, port):
        digest = hashlib.sha256()
        received = 0
        with httpx.stream("GET", f"http://127.0.0.1:{port}/uri-res/N2R?{large}", timeout=30) as answer:
            assert answer.status_code == 200
            pieces = answer.iter_bytes(1 << 16)
            first = next(pieces)
            digest.update(first)
            received += len(first)
            process.send_signal(signal.SIGTERM)  # the answer is megabytes from done: the kernel holds far less
            deadline = time.monotonic() + 10
            while True:  # the listening socket is closed at once: a new connection is refused
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=2).close()
                except ConnectionRefusedError:
                    break
                assert time.monotonic() < deadline, "new connections were still accepted after SIGTERM"
                time.sleep(0.05)
            for piece in pieces:
                digest.update(piece)
                received += len(piece)
        assert received == LARGE
        assert digest.hexdigest() == hashlib.sha256(b"0123456789abcde\n" * (LARGE // 16)).hexdigest()
        assert process.wait(timeout=20) == 0


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sighup_reopens_the_access_log_at_its_path(archive: tuple[Path, str, str], tmp_path: Path,
                                                   workers: str) -> None:
    location, short, _ = archive
    access = tmp_path / "access.log"
    rotated = tmp_path / "access.log.1"
    with serving(location, "--workers", workers, "--access-log", str(access)) as (process, port):
        base = f"http://127.0.0.1:{port}"
        for _ in range(4):
            httpx.get(f"{base}/healthz")
        access.rename(rotated)  # logrotate's rename; the workers still hold the file open
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while not access.exists() or not access.read_text():
            assert time.monotonic() < deadline, "no new access log after SIGHUP"
            httpx.get(f"{base}/healthz")
            time.sleep(0.05)
        time.sleep(0.5)  # the signal has reached every worker by now
        kept = rotated.read_text()
        lines = len(access.read_text().splitlines())
        for _ in range(10):
            httpx.get(f"{base}/api/series")
        with httpx.Client() as client:  # one connection: answers its worker writes from the cache, logged there
            for _ in range(3):
                assert client.get(f"{base}/uri-res/N2R?{short}").status_code == 200
        deadline = time.monotonic() + 20  # a line is written once its answer has gone: a moment after the client has it
        while len(access.read_text().splitlines()) < lines + 13 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        assert rotated.read_text() == kept  # nothing more in the renamed file
        new = access.read_text().splitlines()
        assert len(new) == lines + 13 and all(CLF.fullmatch(line) for line in new)
        assert sum(" /api/series HTTP/1.1" in line for line in new) == 10
        n2r = [line for line in new if f"/uri-res/N2R?{short} " in line]
        assert len(n2r) == 3 and all(line.endswith(f'" 200 {len(SHORT)}') for line in n2r)
        assert process.poll() is None  # SIGHUP did not stop it


def test_waits_for_a_pooled_catalog_connection_are_counted(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.create_database("pdi_operate_pool")
    Archive.init(url).close()
    with Archive.open(url, connections=1) as archive:
        client = TestClient(create_app(url, archive=archive, cache_bytes=0), client=("127.0.0.1", 50000))

        def metric(name: str) -> float:
            answer = client.get("/metrics")
            assert answer.status_code == 200
            return sum(sample.value for family in text_string_to_metric_families(answer.text)
                       for sample in family.samples if sample.name == name)

        before = (metric("pdi_catalog_pool_waits_total"), metric("pdi_catalog_pool_wait_seconds_total"))
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with archive.snapshot():  # a read transaction: the pool's one connection, held
                archive.series_access()
                held.set()
                release.wait(30)

        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(30)
        waiter = threading.Thread(target=archive.probe_catalog)  # finds every connection taken: waits
        waiter.start()
        deadline = time.monotonic() + 30
        while archive.store._pool.pool.get_stats().get("requests_waiting", 0) < 1:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, "the probe never waited for the pool"
            time.sleep(0.01)
        time.sleep(0.2)  # it waits this long at least (psycopg_pool counts whole milliseconds)
        release.set()
        holder.join(30)
        waiter.join(30)
        after = (metric("pdi_catalog_pool_waits_total"), metric("pdi_catalog_pool_wait_seconds_total"))
        assert after[0] - before[0] == 1.0
        assert after[1] - before[1] >= 0.199


def test_json_logs_go_to_the_log_file_for_answers_from_the_cache_too_and_sighup_reopens_it(
    archive: tuple[Path, str, str], tmp_path: Path,
) -> None:
    location, short, _ = archive
    logged = tmp_path / "pdi.log"
    rotated = tmp_path / "pdi.log.1"
    with serving(location, "--workers", "1", "--log-format", "json", "--log-file", str(logged)) as (process, port):
        base = f"http://127.0.0.1:{port}"
        before = scrape(port)
        with httpx.Client() as client:  # one connection: its worker writes the N2R answers from the cache itself
            answers = [client.get(f"{base}/uri-res/N2R?{short}") for _ in range(3)]
        assert all(a.status_code == 200 and a.content == SHORT for a in answers)
        ids = [a.headers["x-request-id"] for a in answers]
        assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids) and len(set(ids)) == 3
        hits = moved(before, scrape(port), "pdi_answer_cache_lookups_total").get(
            (("answered_by", "connection"), ("result", "hit")), 0.0)
        assert hits >= 2  # the second and third came from the cache, without the app
        deadline = time.monotonic() + 10
        while not all(i in logged.read_text() for i in ids):
            assert time.monotonic() < deadline, "a request's JSON record never reached the log file"
            time.sleep(0.05)
        records = {r["request_id"]: r for r in map(json.loads, logged.read_text().splitlines())
                   if r.get("event") == "request"}
        for i in ids:
            assert (records[i]["route"], records[i]["path"], records[i]["status"], records[i]["bytes"]) == (
                "/uri-res/{service}", "/uri-res/N2R", 200, len(SHORT))
        logged.rename(rotated)  # logrotate's rename; the worker still holds the file open
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while not logged.exists():
            assert time.monotonic() < deadline, "no new log file after SIGHUP"
            httpx.get(f"{base}/api/series")
            time.sleep(0.05)
        kept = rotated.read_text()
        after = httpx.get(f"{base}/api/series", headers={"X-Request-Id": "after-rotation"})
        assert after.status_code == 200
        deadline = time.monotonic() + 10
        while "after-rotation" not in logged.read_text():
            assert time.monotonic() < deadline, "the record after SIGHUP is not in the new log file"
            time.sleep(0.05)
        assert rotated.read_text() == kept
        assert process.poll() is None


def test_the_replay_origin_is_counted_and_logged_and_does_not_answer_metrics(
    archive: tuple[Path, str, str], tmp_path: Path,
) -> None:
    location, _, _ = archive
    access = tmp_path / "access.log"
    process, port, first = start_serve(location, "--replay-port", "0", "--access-log", str(access),
                                       start_new_session=True)
    try:
        found = re.search(r"replay at http://[^:]+:(\d+)/", first)
        assert found is not None, first
        replay = int(found.group(1))
        wait_answering(process, f"http://127.0.0.1:{port}/healthz")
        before = scrape(port)
        missing = httpx.get(f"http://127.0.0.1:{replay}/replay/no-such-part")
        elsewhere = httpx.get(f"http://127.0.0.1:{replay}/metrics")  # an archived page's path here, not ours
        assert missing.status_code == 404 and elsewhere.status_code == 404
        assert "pdi_http_requests_total" not in elsewhere.text
        # a request is counted once its answer is sent (its latency is to the end): the client may read the answer
        # first, so the count is waited for, as the access log's line is below
        wanted = {requests_of("/replay/{rest:path}", "404"): 1.0, requests_of("/{rest:path}", "404"): 1.0}
        deadline = time.monotonic() + 10
        while True:
            counted = moved(before, scrape(port), "pdi_http_requests_total")
            if all(label in counted for label in wanted) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert {label: counted.get(label) for label in wanted} == wanted, counted
        deadline = time.monotonic() + 10
        while " /metrics HTTP/1.1" not in access.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        lines = [(m["target"], m["status"]) for m in map(CLF.fullmatch, access.read_text().splitlines()) if m]
        assert ("/replay/no-such-part", "404") in lines
        assert ("/metrics", "404") in lines and ("/metrics", "200") in lines  # the replay origin's, and a scrape
    finally:
        stop(process)


def test_metrics_say_what_pdi_verify_last_found(archive: tuple[Path, str, str], tmp_path: Path) -> None:
    location = tmp_path / "archive"
    shutil.copytree(archive[0], location)
    large = b"0123456789abcde\n" * (LARGE // 16)
    digest = hashlib.sha256(large).hexdigest()  # worked out here, not read from the archive
    verify = [sys.executable, "-m", "pdi", "verify", "--archive", str(location)]
    assert subprocess.run(verify, capture_output=True, timeout=120).returncode == 0
    (stored,) = [p for p in (location / "blobs").rglob(f"{digest}*") if p.is_file()]
    with stored.open("r+b") as damaged:  # one octet flipped in the middle of the large text's file
        damaged.seek(LARGE // 2)
        octet = damaged.read(1)
        damaged.seek(LARGE // 2)
        damaged.write(bytes([octet[0] ^ 0x20]))
    second = time.time()
    result = subprocess.run(verify, capture_output=True, text=True, timeout=120)
    assert result.returncode == 3 and "altered" in result.stdout, result.stdout
    done = time.time()
    with serving(location, "--workers", "2") as (_, port):
        samples = scrape(port)
    assert samples[("pdi_blobs", ())] == 2.0  # the short text and the large one
    assert samples[("pdi_fixity_blobs", (("result", "whole"),))] == 1.0
    assert samples[("pdi_fixity_blobs", (("result", "damaged"),))] == 1.0
    newest = samples[("pdi_fixity_newest_check_timestamp_seconds", ())]
    oldest = samples[("pdi_fixity_oldest_check_timestamp_seconds", ())]
    assert second - 1 <= oldest <= newest <= done + 1  # each blob's latest check is the second verify's


@pytest.mark.postgres
def test_readyz_names_the_catalog_while_postgresql_is_down_and_is_ready_once_it_is_back() -> None:
    with TemporaryCluster() as cluster:
        url = cluster.create_database("pdi_ready")
        with Archive.init(url) as opened:
            opened.add_series(S)
            opened.deposit(S, [Content(SHORT, "text")])
        with serving(url, "--workers", "1") as (_, port):
            assert httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200
            cluster.halt()
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
                assert ready.status_code == 503
                problem = ready.json()
                assert "catalog" in problem["failed"] and problem["detail"].startswith("catalog: ")
                assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200  # alive all the same
            finally:
                cluster.resume()
            deadline = time.monotonic() + 30  # the pool makes new connections to the server that came back
            while httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30).status_code != 200:
                assert time.monotonic() < deadline, "/readyz did not become ready after PostgreSQL came back"
                time.sleep(0.2)
            samples = scrape(port)
        assert samples[("pdi_store_errors_total", (("part", "catalog"),))] >= 1.0


def test_a_reopen_that_fails_keeps_the_file_before_and_closes_nothing_twice(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Log rotation gone wrong: the log's directory moved away, then SIGHUP. The lines go on to the file opened
    before (now under the moved directory), said once in pdi's log (a warning); no descriptor is closed twice (one
    opened since, which may have the number the old one had, stays open); once the directory is back, the
    next SIGHUP opens the file at its path again."""
    from pdi.server.process.observe import AccessLog, reopen_logs

    logs = tmp_path / "logs"
    logs.mkdir()
    log = AccessLog(str(logs / "access.log"))
    log.write("first")
    moved = tmp_path / "logs.moved"
    logs.rename(moved)
    reopen_logs()
    log.write("second")  # the reopen fails: written to the file opened before
    other = os.open(tmp_path / "other", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        log.write("third")
        os.fstat(other)  # still open: nothing closed it
    finally:
        os.close(other)
    assert (moved / "access.log").read_text() == "first\nsecond\nthird\n"
    said = [r for r in caplog.records if r.name == "pdi.server" and r.levelname == "WARNING"]
    assert len(said) == 1 and said[0].getMessage().count(f"cannot open the access log {logs / 'access.log'}") == 1
    assert "still writing to the file opened before" in said[0].getMessage()
    caplog.clear()
    moved.rename(logs)
    reopen_logs()
    log.write("fourth")
    assert (logs / "access.log").read_text() == "first\nsecond\nthird\nfourth\n"
    assert caplog.records == []
    # a process with no file open yet (a worker forked after the directory went): its lines are lost, said once
    fresh = AccessLog(str(logs / "access.log"))
    logs.rename(moved)
    for n in range(3):
        fresh.write(f"lost {n}")
    assert sum("its lines are lost" in r.getMessage() for r in caplog.records) == 1


def test_a_log_file_that_cannot_be_opened_is_named_so(tmp_path: Path) -> None:
    from pdi.server.process.observe import configure_logging

    with pytest.raises(PDIError, match=r"cannot open the log file .*nodir/pdi\.log"):
        configure_logging("json", str(tmp_path / "nodir" / "pdi.log"))


def test_a_log_whose_folder_is_missing_says_to_make_it(tmp_path: Path) -> None:
    """docs/how-to/operate.md: pdi serve makes no folder for its logs. An operator who names one not made yet is
    told which folder is missing and to make it, by the command as run (exit 2, a usage mistake as ``pdi get -o``
    into a folder that is not there is, before it listens)."""
    folder = tmp_path / "var" / "log" / "pdi"
    archive = tmp_path / "archive"
    assert subprocess.run([sys.executable, "-m", "pdi", "init", str(archive)], capture_output=True,
                          timeout=120).returncode == 0
    for option, what in (("--access-log", "access log"), ("--log-file", "log file")):
        done = subprocess.run([sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0",
                               "--archive", str(archive), option, str(folder / "pdi.log")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (f"pdi: cannot open the {what} {folder / 'pdi.log'}: No such file or directory"
                               f" (there is no folder {folder}: make it first, pdi serve makes none)\n")
    assert not folder.parent.exists()
    # a folder that is there, the file not yet: made, as before
    folder.mkdir(parents=True)
    from pdi.server.process.observe import AccessLog
    AccessLog(str(folder / "access.log"))
    assert (folder / "access.log").is_file()


@given(st.text(alphabet=st.characters(codec="ascii", categories=("L", "N"), include_characters="-._~"), min_size=8,
               max_size=40), st.sampled_from(["access_token", "ACCESS_TOKEN", "Access_Token", "access%5Ftoken",
                                              "access%5ftoken"]))
def test_a_bearer_token_a_client_put_in_the_query_is_not_written_to_the_access_log(token: str, key: str) -> None:
    """RFC 6750 §2.3 lets a client send its token as ``access_token=`` (pdi never reads it there): the access log,
    which says it writes no credential, writes ``-`` in its place and the rest of the target as sent."""
    for target, kept in ((f"/api/ls?{key}={token}&limit=5", f"/api/ls?{key}=-&limit=5"),
                         (f"/api/ls?limit=5&{key}={token}", f"/api/ls?limit=5&{key}=-"),
                         (f"/api/ls?limit=5;{key}={token}#x", f"/api/ls?limit=5;{key}=-#x")):
        line = clf("127.0.0.1", "GET", target.encode(), "1.1", 200, 10, 0.0)
        assert token not in line and f'"GET {kept} HTTP/1.1" 200 10' in line
    other = f"/api/ls?not_access_token={token}"  # another parameter is written as it came
    assert token in clf("127.0.0.1", "GET", other.encode(), "1.1", 200, 10, 0.0)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_serving_line_comes_once_both_ports_take_connections(tmp_path: Path, workers: str) -> None:
    """``pdi: serving … at http://…`` is the signal a person (or a script) waits for before asking: both ports
    already take connections then (listening, RFC 9293 §3.3.2's LISTEN state, so a connection waits in the backlog
    for a worker), not refused while the workers are still being made (the evaluators were imported after the
    line, for a second or more, and a connection then met ECONNREFUSED)."""
    location = tmp_path / "archive"
    archive = Archive.init(location)
    archive.add_series(S)
    name = str(archive.add(S, b"minutes of the board\n", format="text"))
    archive.close()
    process, port, line = start_serve(location, "--workers", workers, drain=True)
    try:
        replay = int(line.split("(replay at http://127.0.0.1:", 1)[1].split("/", 1)[0])
        for each in (port, replay):  # at once, no retry: refused is the failure
            socket.create_connection(("127.0.0.1", each), timeout=5).close()
        with socket.create_connection(("127.0.0.1", port), timeout=60) as asked:
            asked.sendall(f"GET /uri-res/N2R?{name} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                          .encode())
            answer = b""
            while chunk := asked.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\nminutes of the board\n")
    finally:
        stop(process)
