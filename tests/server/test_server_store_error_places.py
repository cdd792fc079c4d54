"""A storage error's answer says that the storage failed and when to ask again, never where the archive keeps its
parts: the catalog's ``postgresql://`` URL, its user, the socket's directory, a file's path (found in review,
2026-11-28: a 503 told whoever asked the catalog's URL and what psycopg said of its socket). The server's log
says all of it, for the operator; ``/readyz`` says why a part failed only to those who may read ``/metrics``.

A real PostgreSQL cluster of the test's own, halted under a running ``pdi serve`` (the fault a failover makes),
and a real blob store taken away from under one."""

from __future__ import annotations

import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import S, start_serve, stop, wait_answering
from test_server_app_edges import BOXES
from test_server_keyboard import _js
from test_server_page_polish import _sized
from test_server_pages_screenshots import dark
from test_server_pdf_viewer import _shoot

from pdi.archive import Archive, Content
from pdi.capture.browser import devtools
from pdi.errors import CommitUnknownError, StoreError
from support.pgcluster import TemporaryCluster

pytestmark = pytest.mark.postgres


@pytest.fixture
def cluster() -> Iterator[TemporaryCluster]:
    with TemporaryCluster() as made:
        yield made


def test_over_http_a_storage_error_names_none_of_the_servers_places() -> None:
    place = "postgresql://pdi@/archive?host=/var/run/postgresql"
    said = StoreError(f'{place}: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed')
    assert said.message.startswith(place)  # the operator's (the command line, the log)
    assert "postgresql" not in said.over_http() and "/var/" not in said.over_http()
    assert "ask again" in said.over_http()
    lost = CommitUnknownError(f"{place}: the connection to the database server was lost as the transaction was"
                              " committed, so whether it was applied is unknown")
    for keyed in (True, False, None):
        assert "postgresql" not in lost.over_http(keyed) and "whether it was applied is unknown" in lost.over_http(keyed)


def test_a_catalog_gone_under_the_resolver_is_a_503_without_its_url_and_the_log_says_it(
        cluster: TemporaryCluster, tmp_path: Path) -> None:
    url = cluster.url()
    with Archive.init(url) as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(b"a ruling\n", "text")])[0])
    process, port, _ = start_serve(url, "--workers", "1", "--replay-port", "0", "--metrics-token", "t0ken",
                                   start_new_session=True)
    lines: list[str] = []  # the server's log, read as it is written (a full pipe would stop it)
    assert process.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
    reader.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_answering(process, f"{base}/api/series")
        cluster.halt()
        answers = [httpx.get(f"{base}/api/resolve", params={"pdi": name}, timeout=60),
                   httpx.get(f"{base}/uri-res/N2C?{name}", timeout=60),
                   httpx.get(f"{base}/readyz", timeout=60)]
        for answer in answers:
            assert answer.status_code == 503, answer.text
            text = answer.text
            for place in (str(cluster.directory), "postgresql://", "postgres@", ".s.PGSQL"):
                assert place not in text, (place, text)
        assert "ask again" in answers[0].json()["detail"] and answers[0].headers["retry-after"]
        assert "catalog" in answers[2].json()["failed"]  # (and blobs: they are its large objects)
        told = httpx.get(f"{base}/readyz", headers={"Authorization": "Bearer t0ken"}, timeout=60)
        assert told.status_code == 503 and str(cluster.directory) in told.json()["detail"]  # the operator's
    finally:
        stop(process)
        if not cluster.started:
            cluster.resume()
    reader.join(30)
    logged = "".join(lines)
    assert "storage error answering 127.0.0.1 (GET /api/resolve)" in logged and str(cluster.directory) in logged


def test_a_catalog_gone_as_the_answer_cache_or_a_token_asks_it_is_a_503_not_a_bug(
        cluster: TemporaryCluster) -> None:
    """What a resolver meets before any route runs: the answer cache asking the catalog whether a name was withdrawn
    (an N2R or N2L once the cache's 2 s are past), and a token looked up (on the resolver and on the replay origin).
    Found following docs/how-to/operate.md with the catalog's server stopped (2026-12-02): those were the bare 500
    of a bug ("the resolver failed on this request (StoreError)"), uncounted in ``pdi_store_errors_total``, a
    traceback in the log, where the same catalog failing in a route is a 503 saying to ask again. Each is now that
    503, with ``Retry-After``, counted, and a line of the log naming the request; and a scrape of ``/metrics``
    meanwhile says in one line that the fixity gauges could not be read, where it logged a traceback each time."""
    import re

    url = cluster.url()
    with Archive.init(url) as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(b"a ruling\n", "text")])[0])
        _, token = archive.add_token("reader", role="read")
    process, port, first = start_serve(url, "--workers", "1", "--replay-port", "0", "--metrics-token", "t0ken",
                                       start_new_session=True)
    replay = re.search(r"replay at http://127\.0\.0\.1:([0-9]+)/", first)
    assert replay is not None, first
    lines: list[str] = []
    assert process.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
    reader.start()
    base = f"http://127.0.0.1:{port}"
    bearer = {"Authorization": f"Bearer {token}"}
    try:
        wait_answering(process, f"{base}/api/series")
        assert httpx.get(f"{base}/uri-res/N2R?{name}", timeout=60).text == "a ruling\n"  # kept by the cache
        assert httpx.get(f"{base}/api/ls", headers=bearer, timeout=60).status_code == 200
        cluster.halt()
        time.sleep(2.5)  # past the cache's REVALIDATE_SECONDS: the next N2R asks the catalog first
        answers = [httpx.get(f"{base}/uri-res/N2R?{name}", timeout=60),
                   httpx.get(f"{base}/uri-res/N2L?{name}", timeout=60),
                   httpx.get(f"{base}/api/ls", headers=bearer, timeout=60),
                   httpx.get(f"http://127.0.0.1:{replay[1]}/replay/{name}", headers=bearer, timeout=60)]
        for answer in answers:
            assert answer.status_code == 503, (answer.request.url, answer.text)
            assert answer.headers["retry-after"] == "5" and "ask again" in answer.json()["detail"], answer.text
        scraped = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer t0ken"}, timeout=60).text
        counted = re.search(r'^pdi_store_errors_total\{part="store"\} ([0-9.]+)$', scraped, re.M)
        assert counted is not None and float(counted[1]) >= 3, scraped  # the replay origin's are not scraped here
    finally:
        stop(process)
        if not cluster.started:
            cluster.resume()
    reader.join(30)
    logged = "".join(lines)
    assert "storage error answering 127.0.0.1 (GET /uri-res/N2" in logged, logged
    assert "Exception in ASGI application" not in logged and "Traceback" not in logged, logged
    # the scrape's fixity gauges, unread while the catalog fails: one line of the log, not a traceback
    assert "the catalog's fixity checks could not be read for /metrics: " in logged, logged


def test_a_reader_page_of_a_storage_error_says_it_as_the_answer_does(cluster: TemporaryCluster, tmp_path: Path) -> None:
    url = cluster.url()
    with Archive.init(url) as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(b"a ruling\n", "text")])[0])
    process, port, _ = start_serve(url, "--workers", "1", "--replay-port", "0", drain=True, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_answering(process, f"{base}/api/series")
        cluster.halt()
        deadline = time.monotonic() + 60
        while (page := httpx.get(f"{base}/view", params={"pdi": name}, headers={"Accept": "text/html"},
                                 timeout=60)).status_code != 503:
            assert time.monotonic() < deadline, page.status_code
            time.sleep(0.2)
        assert "ask again" in page.text
        for place in (str(cluster.directory), "postgresql://", ".s.PGSQL"):
            assert place not in page.text, place
        # what a reader sees: the page in Chromium, its alert, at a desk's width and a phone's, light and dark
        seen, boxes = [], []
        with devtools() as pipe:
            for width, height in ((1100, 700), (390, 844), (375, 740)):
                session = _sized(pipe, f"{base}/view?pdi={urllib.parse.quote(name, safe='')}", width, height)
                seen.append(_js(pipe, session, "[document.title, document.querySelector('[role=alert]').textContent,"
                                               " document.documentElement.scrollWidth <= innerWidth,"
                                               " document.querySelector('.problem h1').textContent]"))
                boxes.append(_js(pipe, session, BOXES))
                _shoot(pipe, session, f"storage-error-page-{width}.png")
                dark(pipe, session, time.monotonic() + 30)
                _shoot(pipe, session, f"storage-error-page-{width}-dark.png")
    finally:
        stop(process)
    for title, alert, fits, heading in seen:
        # in a reader's words, not the problem's title ("storage error", which the JSON answers keep)
        assert heading == "Cannot show this: the archive cannot read it just now", heading
        assert title == f"The archive cannot read it just now: {name}", title
        assert "could not do this just now: ask again shortly" in alert
        assert fits  # nothing wider than the window
    for count, held, in_window, sideways in boxes:  # one box to resolve a name, the header's, holding the name
        assert (count, held, in_window, sideways <= 0) == (1, name, True, True), (count, held, in_window, sideways)
