"""Mirrors between real resolvers on loopback (``pdi serve`` processes): ``pdi mirror add|sync|audit``,
``pdi verify --repair``, the origin's ``Link`` and ``N2Ls``'s every location.

A is a SQLite archive (the origin of ``S``), B a SQLite mirror, P a
PostgreSQL mirror. Every digest is checked against ``hashlib`` of the
bytes deposited; a manifest is tampered with by a proxy between the
mirror and A (one digest changed keeping A's signature, or the change
re-signed by another key), and a blob's octets likewise.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest
from click.testing import CliRunner
from server_helpers import in_thread, start_serve, stop, wait_answering
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pdi.archive import Archive
from pdi.cli import cli as main
from pdi.identifier import PDI
from pdi.network import mirrors, peers
from pdi.network.mirrors import BATCH_NAMES
from pdi.signing import SigningKey, b64url, b64url_decode, canonical_json, sign_manifest
from support.pgcluster import TemporaryCluster
from support.stored_blobs import blob_file, blob_row, damage, flip_octet

S = "mirrored.example.us"
#: Bytes deposited in A: a short text (a catalog row), a page, and 200 KB (a blob file).
BYTES = {
    "text": b"the minutes of the first meeting\n",
    "page": b"<!DOCTYPE html><title>Agenda</title><p>Item one.</p>\n",
    "large": bytes(range(256)) * 800,
}
FORMATS = {"text": "text", "page": "html", "large": "octet-stream"}


def pdi(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@contextmanager
def serving(location: Path | str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``pdi serve`` of ``location`` (a real process) on a free port; its base URL."""
    process, port, _ = start_serve(location, "--replay-port", "0", start_new_session=True, drain=True,
                                   env={**os.environ, **(env or {})})
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def origin(tmp_path: Path, extra: int = 0) -> tuple[Path, dict[str, str]]:
    """A: series S with the three deposits of ``BYTES`` (and ``extra`` small texts), and a signing key."""
    location = tmp_path / "a"
    names: dict[str, str] = {}
    with Archive.init(location) as archive:
        archive.add_series(S)
        for which, data in BYTES.items():
            names[which] = str(archive.add(S, data, format=FORMATS[which]))
        for n in range(extra):
            names[f"extra{n}"] = str(archive.add(S, f"extra text {n}\n".encode(), format="text"))
    assert pdi("keys", "init", "--archive", str(location))[0] == 0
    return location, names


def mirror(tmp_path: Path, name: str) -> Path:
    location = tmp_path / name
    Archive.init(location).close()
    assert pdi("keys", "init", "--archive", str(location))[0] == 0
    return location


def a_key(location: Path) -> str:
    code, out = pdi("keys", "show", "--archive", str(location))
    assert code == 0
    return out.splitlines()[0]


def held(location: Path | str) -> dict[str, str]:
    """The names of S a (closed) archive holds and their SHA-256, from its manifest."""
    with Archive.open(location) as archive:
        return {e["name"]: e["sha256"] for e in archive.manifest_page(S, limit=10_000).entries}


@pytest.fixture
def postgres(pg_cluster: TemporaryCluster, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """P: an empty PostgreSQL archive with a signing key (its file named by PDI_SIGNING_KEY)."""
    url = pg_cluster.create_database(f"pdi_mirror_{os.getpid()}_{time.monotonic_ns()}")
    Archive.init(url).close()
    env = {"PDI_SIGNING_KEY": str(tmp_path / "p-key.pem")}
    assert pdi("keys", "init", "--archive", url, "--key-file", env["PDI_SIGNING_KEY"])[0] == 0
    return url, env


def test_a_postgresql_mirror_serves_identical_bytes_with_the_origin_stopped_and_n2ls_lists_both(
    tmp_path: Path, postgres: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, names = origin(tmp_path)
    p, env = postgres
    with serving(a) as a_url:
        code, out = pdi("mirror", "add", a_url, "--series", S, "--archive", p)
        assert code == 0, out
        # the key printed for the operator to compare is A's own
        kid = json.loads(a_key(a))["kid"]
        assert f"key\t{kid}\t" in out
        code, out = pdi("mirror", "sync", "--archive", p)
        assert code == 0, out
        assert f"{len(BYTES)} new" in out
        again = pdi("mirror", "sync", "--archive", p)
        assert again[0] == 0 and "0 new" in again[1] and f"{len(BYTES)} held already" in again[1]
        # on PostgreSQL too, a lost upload and an altered row are found and repaired from A
        with Archive.open(p) as opened:
            damage(opened, hashlib.sha256(BYTES["large"]).hexdigest(), "delete")
            damage(opened, hashlib.sha256(BYTES["text"]).hexdigest(), "alter")
        code, out = pdi("verify", "--archive", p)
        assert code == 3 and f"missing\t{names['large']}" in out and f"altered\t{names['text']}" in out, out
        code, out = pdi("verify", "--repair", "--archive", p)
        assert code == 0 and out.count(f"\tfrom {a_url}, checked against its signed manifest") == 2, out
    # P holds A's names, with the digests of the bytes deposited
    assert held(p) == {names[w]: hashlib.sha256(data).hexdigest() for w, data in BYTES.items()}
    with Archive.open(a) as theirs, Archive.open(p) as ours:  # each record as A keeps it, field for field
        assert all(ours.held(names[w]) == theirs.held(names[w]) is not None for w in BYTES)
    # a mirror never mints in the series it mirrors
    (tmp_path / "new.txt").write_bytes(b"a minted name\n")
    refused = pdi("add", "--archive", p, "--series", S, str(tmp_path / "new.txt"))
    assert refused[0] == 5 and "only its origin mints" in refused[1]
    with serving(p, env) as p_url:  # A stopped: P answers alone
        for which, data in BYTES.items():
            answer = httpx.get(f"{p_url}/uri-res/N2R?{names[which]}")
            assert answer.status_code == 200 and answer.content == data
            assert f'<{a_url}/uri-res/N2R?{names[which]}>; rel="canonical"' in answer.headers["link"]
        # a passage: the origin's link is to the same passage as the name's own canonical link (RFC 6596: one
        # resource), its fragment %-escaped in the query as every N2R URL writes it
        passage = httpx.get(f"{p_url}/uri-res/N2R?{names['text']}%23char=4,11")
        assert passage.status_code == 200 and passage.content == b"minutes"
        canonical = [link for link in passage.headers["link"].split(", <") if 'rel="canonical"' in link]
        assert sorted(link.lstrip("<").split(">")[0] for link in canonical) == sorted(
            [f"{a_url}/uri-res/N2R?{names['text']}%23char=4,11", f"{names['text']}#char=4,11"])
        p_said = httpx.get(f"{p_url}/uri-res/N2Ls?{names['text']}").text.split("\r\n")
        # A records P as a peer holding S (the origin's side of the choice): each lists both, its own first
        code, out = pdi("mirror", "add", p_url, "--series", S, "--peer", "--archive", str(a))
        assert code == 0, out
        with serving(a) as a_again:
            a_said = httpx.get(f"{a_again}/uri-res/N2Ls?{names['text']}").text.split("\r\n")
            from_a = httpx.get(f"{a_again}/uri-res/N2R?{names['text']}")
            assert "rel=\"canonical\"" in from_a.headers["link"] and p_url not in from_a.headers["link"]
    assert p_said[:3] == [f"# {names['text']}", f"{p_url}/uri-res/N2R?{names['text']}",
                          f"{a_url}/uri-res/N2R?{names['text']}"]
    assert a_said[:3] == [f"# {names['text']}", f"{a_again}/uri-res/N2R?{names['text']}",
                          f"{p_url}/uri-res/N2R?{names['text']}"]


def test_a_sync_collects_cycles_seldom_while_it_runs_and_leaves_the_collector_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While `pdi mirror sync` runs, what was made before it is out of the cyclic collector's sight and a young
    collection waits for many more new objects than Python's 700; after it, a process that goes on (this one) has
    the collector as it was."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    before = gc.get_threshold(), gc.get_freeze_count()
    during: list[tuple[tuple[int, int, int], int]] = []
    syncing = mirrors.sync

    def watched(*args: Any, **kwargs: Any) -> mirrors.SyncReport:
        during.append((gc.get_threshold(), gc.get_freeze_count()))
        return syncing(*args, **kwargs)

    monkeypatch.setattr(mirrors, "sync", watched)
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0, out
    assert held(b) == {names[w]: hashlib.sha256(data).hexdigest() for w, data in BYTES.items()}
    ((threshold, frozen),) = during
    assert threshold[0] >= 50 * 700 and threshold[1:] == before[0][1:] and frozen > 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_flipped_byte_is_found_by_verify_and_repaired_from_the_origin(tmp_path: Path) -> None:
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    large = hashlib.sha256(BYTES["large"]).hexdigest()
    small = hashlib.sha256(BYTES["text"]).hexdigest()
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
        flip_octet(b, large, 1000)  # a blob file
        flip_octet(b, small, 3)  # a small blob's file too: a sync writes each to its file, whatever its size
        assert blob_row(b, small) is None
        code, out = pdi("verify", "--archive", str(b))
        assert code == 3 and f"altered\t{names['large']}" in out and f"altered\t{names['text']}" in out
        code, out = pdi("verify", "--repair", "--archive", str(b))
        assert code == 0, out
        assert f"repaired\t{names['large']}\tfrom {a_url}" in out and f"repaired\t{names['text']}\tfrom {a_url}" in out
    assert pdi("verify", "--archive", str(b))[0] == 0
    with Archive.open(b) as archive:
        assert archive.get(names["large"]).data == BYTES["large"] and archive.get(names["text"]).data == BYTES["text"]
        lines = [e for e in archive.audit() if e.action == "repair"]
    assert {e.subject for e in lines} == {large, small} and all(a_url in e.detail for e in lines)
    # each put right where it was: no damaged file left beside a row read instead of it
    assert blob_row(b, small) is None and blob_file(b, small).read_bytes() == BYTES["text"]
    assert blob_file(b, large).read_bytes() == BYTES["large"]


class Tamper:
    """A proxy in front of A that can change a manifest's digest (keeping or re-signing), or a blob's octets
    (in N2R's answer or in its part of POST /api/octets), can answer that POST 404 as an earlier pdi does
    (``bulk``), and records each name whose octets are asked for (``fetched``)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.manifest: str | None = None  # "digest" | "resigned" | "none" | "header" | "detached"
        #: Fields of named entries changed in every manifest, which is then signed with ``other`` (pinned instead).
        self.entries: dict[str, dict[str, object]] = {}
        #: Names listed twice in every manifest (the copy right after the entry), which is then signed with ``other``.
        self.twice: set[str] = set()
        self.octets_of: str | None = None
        self.bulk = True
        self.fetched: list[str] = []
        self.delay = 0.0
        #: Names whose POST /api/octets is held until ``gate`` is set (a sync caught mid-way for sure).
        self.hold: set[str] = set()
        self.gate = threading.Event()
        self.inflight = 0
        self.lock = threading.Lock()
        self.other = SigningKey.generate()
        self.app = Starlette(routes=[Route("/{path:path}", self.forward, methods=["GET", "POST"])])

    async def forward(self, request: Request) -> Response:
        with self.lock:
            self.inflight += 1
        try:
            body = await request.body()
            return await anyio.to_thread.run_sync(self._forward, request.method, request.url.path,
                                                  request.url.query, body)
        finally:
            with self.lock:
                self.inflight -= 1

    def settled(self) -> None:
        """Wait (30 s at most) until no request is being answered (a killed client's last ones included)."""
        deadline = time.monotonic() + 30
        while self.inflight:
            assert time.monotonic() < deadline
            time.sleep(0.01)

    def _forward(self, method: str, path: str, query: str, asked: bytes) -> Response:
        url = f"{self.target}{path}" + (f"?{query}" if query else "")
        if method == "POST" and path == "/api/octets":
            if not self.bulk:
                return Response(b"", status_code=404)
            names = json.loads(asked)["names"]
            with self.lock:
                self.fetched.extend(names)
            time.sleep(self.delay * len(names))
            if self.hold.intersection(names):
                self.gate.wait(60)
            answer = httpx.post(url, content=asked, headers={"content-type": "application/json"}, timeout=30)
        else:
            answer = httpx.get(url, timeout=30)
        body = answer.content
        if path == "/uri-res/N2R":
            with self.lock:
                self.fetched.append(query)
            time.sleep(self.delay)
            if self.octets_of == query:
                body = body[:-1] + bytes([body[-1] ^ 1])
        marker = f"Content-Location: {self.octets_of}\r\n".encode()
        if path == "/api/octets" and self.octets_of is not None and marker in body:
            # the part's octets end where the next boundary begins: flip the last of them
            head = body.index(marker)
            start = body.index(b"\r\n\r\n", head) + 4
            end = body.index(b"\r\n--", start) - 1
            body = body[:end] + bytes([body[end] ^ 1]) + body[end + 1:]
        if path == "/api/manifest" and self.manifest is not None:
            header, payload, signature = body.decode().split(".")
            value = json.loads(b64url_decode(payload, "payload"))
            value["names"][0]["sha256"] = hashlib.sha256(b"something else").hexdigest()
            if self.manifest == "digest":
                body = f"{header}.{b64url(canonical_json(value))}.{signature}".encode()
            elif self.manifest == "none":  # RFC 7515 §A.5's unsecured JWS (RFC 8725 §3.1: never accepted)
                kid = json.loads(b64url_decode(header, "header"))["kid"]
                unsecured = {"alg": "none", "kid": kid, "typ": "pdi-manifest+jws"}
                body = f"{b64url(json.dumps(unsecured).encode())}.{b64url(canonical_json(value))}.".encode()
            elif self.manifest == "header":  # the same payload and signature under another protected header
                changed = {**json.loads(b64url_decode(header, "header")), "typ": "JWT"}
                body = f"{b64url(json.dumps(changed).encode())}.{payload}.{signature}".encode()
            elif self.manifest == "detached":  # RFC 7515 Appendix F: the payload left out
                body = f"{header}..{signature}".encode()
            else:
                body = sign_manifest(self.other, canonical_json(value)).encode()
        if path == "/api/manifest" and (self.entries or self.twice):
            value = json.loads(b64url_decode(body.decode().split(".")[1], "payload"))
            for entry in value["names"]:
                entry.update(self.entries.get(entry["name"], {}))
            value["names"] = [copy for entry in value["names"]
                              for copy in ([entry, entry] if entry["name"] in self.twice else [entry])]
            body = sign_manifest(self.other, canonical_json(value)).encode()
        headers = {k: v for k, v in answer.headers.items() if k.lower() in ("content-type", "link")}
        return Response(body, status_code=answer.status_code, headers=headers)


@contextmanager
def tampering(target: str) -> Iterator[tuple[Tamper, str]]:
    tamper = Tamper(target)
    with in_thread(tamper.app, host="127.0.0.1", port=0, log_level="warning") as server:
        port = server.servers[0].sockets[0].getsockname()[1]
        yield tamper, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("how", ["digest", "resigned", "none", "header", "detached"])
def test_a_manifest_changed_or_signed_by_another_key_is_refused_and_nothing_from_it_is_stored(
    tmp_path: Path, how: str,
) -> None:
    a, _ = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url, tampering(a_url) as (tamper, proxy):
        # A's own key pinned (as its operator publishes it); the manifests come through the proxy
        assert pdi("mirror", "add", proxy, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
        tamper.manifest = how  # after the add, which reads the first page once
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 3, out
        assert "is refused" in out and ("does not verify" in out or "not one of the keys it is checked with" in out
                                        or "signed with alg 'none'; pdi accepts EdDSA only" in out)
        assert tamper.fetched == []  # not one blob of it was even fetched
    assert held(b) == {}


def test_a_series_of_many_pages_is_synced_and_audited_whatever_its_serials_digits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an attack (2026-11-27): each page's ``next`` was required to sort after the last one as text, but
    a pdi origin lists names in their listing order (by day, then serial as a number): the page after
    ``…/8.text.1`` ends at ``…/12.text.1``, which sorts before it as text, so the sync was refused as a manifest
    that goes back ("not later"). With pages of 1000 names, a series whose day crossed from 999 to 1999 between
    two pages could be neither mirrored, audited nor repaired. Pages of 4 names here: 15 names, 4 pages."""
    a, names = origin(tmp_path, extra=12)
    b = mirror(tmp_path, "b")
    monkeypatch.setattr(peers, "PAGE", 4)
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"{S}\tfrom {a_url}: 15 names listed, 15 new" in out
        audited = pdi("mirror", "audit", "--archive", str(b))
        assert audited[0] == 0 and f"{S}\t15 names compared with 1 peer: 0 disagreements" in audited[1], audited[1]
    assert held(b) == held(a) and len(held(b)) == len(names) == 15
    assert {name: hashlib.sha256(data).hexdigest() for name, data in
            ((names[w], BYTES[w]) for w in BYTES)}.items() <= held(b).items()


def test_the_summary_counts_as_new_only_the_names_and_octets_this_sync_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A name listed twice in one page is new once (its octets once) and held already the second time; a sync that
    found names not held when it listed them, but kept by another sync of the series before it kept them, counts
    them held already, with no octets: new + held already = listed, and the octets are those of the new names."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    total = sum(len(data) for data in BYTES.values())
    with serving(a) as a_url, tampering(a_url) as (tamper, proxy):
        tamper.twice = {names["text"]}
        other = json.dumps(tamper.other.public.jwk())
        assert pdi("mirror", "add", proxy, "--series", S, "--key", other, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert (f"{S}\tfrom {proxy}: 4 names listed, 3 new ({total} octets), 1 held already, 0 withdrawn"
                in out), out
        # the second of two syncs at once: what it listed as not held here was kept by the first meanwhile
        with Archive.open(b) as archive:
            monkeypatch.setattr(archive, "digests_held", lambda listed: [None] * len(listed))
            (record,) = archive.mirrors(S)
            report = mirrors.sync(archive, record)
    assert (report.listed, report.copied, report.held, report.octets, list(report.problems)) == (4, 0, 4, 0, [])
    assert held(b) == {names[w]: hashlib.sha256(data).hexdigest() for w, data in BYTES.items()}


@pytest.mark.parametrize(("field", "value", "said"), [
    ("created_at", "xxxxxxxxxxxxxxxxxxxxxxxxxxZ", "is not a catalog timestamp"),
    ("created_at", "2026-11-20T99:99:99.999999Z", "is not a catalog timestamp"),
    ("created_at", "1999-01-01T00:00:00.000000Z", "before its name's day"),
    ("created_at", "2999-01-01T00:00:00.000000Z", "still to come"),
    ("charset", "no-such-charset", "unknown charset"),
    ("charset", "utf-8\r\nX-Evil: 1", "charset"),
    ("charset", "UTF-8", "not written as pdi stores it"),
])
def test_a_signed_entry_that_no_catalog_could_hold_is_refused_by_name_and_the_others_kept(
    tmp_path: Path, field: str, value: str, said: str,
) -> None:
    """An origin (signing with the key pinned) whose entry says a time that is none, or that is before its name's
    day or to come, or a charset pdi does not store by that name: that name is reported and not kept (a catalog
    pdi verify would call damaged, a resolver failing on it); the others are kept, and verify finds nothing."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url, tampering(a_url) as (tamper, proxy):
        tamper.entries = {names["text"]: {field: value}}
        other = json.dumps(tamper.other.public.jwk())
        assert pdi("mirror", "add", proxy, "--series", S, "--key", other, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 3, out
    refusal = next(line for line in out.splitlines() if names["text"] in line)
    assert said in refusal, out
    assert set(held(b)) == {names["page"], names["large"]}
    verified = pdi("verify", "--archive", str(b))
    assert verified[0] == 0, verified[1]


@pytest.mark.parametrize(("bulk", "direct"), [(True, True), (True, False), (False, True)],
                         ids=["api-octets", "api-octets-through-httpx", "n2r-each"])
def test_a_blob_whose_digest_differs_is_refused_and_the_others_kept(
    tmp_path: Path, bulk: bool, direct: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a part of POST /api/octets (read over http.client, or through httpx as behind a proxy), or (from an
    origin without it, an earlier pdi) in N2R's answer."""
    if not direct:
        monkeypatch.setattr(peers._Direct, "reaches", staticmethod(lambda base: False))
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url, tampering(a_url) as (tamper, proxy):
        tamper.octets_of = names["page"]
        tamper.bulk = bulk
        assert pdi("mirror", "add", proxy, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 3 and f"altered\t{names['page']}" in out and "hash to" in out
    assert set(held(b)) == {names["text"], names["large"]}
    verified = pdi("verify", "--archive", str(b))
    assert verified[0] == 0, verified[1]


def test_a_sync_killed_mid_way_resumes_without_fetching_again_what_it_kept(tmp_path: Path) -> None:
    a, names = origin(tmp_path, extra=BATCH_NAMES + 250)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url, tampering(a_url) as (tamper, proxy):
        tamper.delay = 0.004
        with Archive.open(a) as archive:  # the names after the first batch are held back: the kill comes before them
            tamper.hold = {e["name"] for e in archive.manifest_page(S, limit=10_000).entries[BATCH_NAMES:]}
        assert pdi("mirror", "add", proxy, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
        child = subprocess.Popen([sys.executable, "-m", "pdi", "mirror", "sync", "--archive", str(b)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        kept: dict[str, str] = {}
        while not kept:  # the first batch committed: kill it in the middle of the next
            assert child.poll() is None and time.monotonic() < deadline, "the sync ended before it was killed"
            time.sleep(0.05)
            kept = held(b)
        time.sleep(0.2)
        child.send_signal(signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
        kept = held(b)
        assert 0 < len(kept) < len(names)
        tamper.gate.set()
        tamper.settled()
        before = len(tamper.fetched)
        tamper.delay = 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        again = tamper.fetched[before:]
    assert not set(kept) & set(again)  # nothing kept was fetched again
    assert len(again) == len(set(again)) == len(names) - len(kept)
    with Archive.open(a) as archive:
        assert held(b) == {e["name"]: e["sha256"] for e in archive.manifest_page(S, limit=10_000).entries}
    assert pdi("verify", "--archive", str(b))[0] == 0


def test_a_sync_stopped_with_ctrl_c_leaves_nothing_it_was_writing(tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) while the sync waits for a group of names the origin is slow to send, after others were
    written ahead: the sync ends (130), every file it wrote ahead and did not keep is removed from ``tmp/``, and
    no blob is left that no name holds; the next sync completes."""
    a, _ = origin(tmp_path, extra=BATCH_NAMES + 250)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url, tampering(a_url) as (tamper, proxy):
        with Archive.open(a) as archive:  # the names after the first batch are held back
            tamper.hold = {e["name"] for e in archive.manifest_page(S, limit=10_000).entries[BATCH_NAMES:]}
        assert pdi("mirror", "add", proxy, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
        child = subprocess.Popen([sys.executable, "-m", "pdi", "mirror", "sync", "--archive", str(b)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not held(b):  # the first batch kept: the sync now waits for the held names
            assert child.poll() is None and time.monotonic() < deadline, "the sync ended before it was stopped"
            time.sleep(0.05)
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        time.sleep(0.3)
        tamper.gate.set()  # the requests in flight end, as the origin would answer them
        _, err = child.communicate(timeout=120)
        assert child.returncode == 130, err
        tamper.settled()
        assert sorted(p.name for p in (b / "tmp").iterdir()) == []
        code, out = pdi("verify", "--archive", str(b))
        assert code == 0 and "unreferenced" not in out, out
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
    with Archive.open(a) as archive:
        assert held(b) == {e["name"]: e["sha256"] for e in archive.manifest_page(S, limit=10_000).entries}


def test_audit_reports_who_holds_which_digest(tmp_path: Path) -> None:
    a, names = origin(tmp_path)
    c = tmp_path / "c"  # an archive that minted the same names with other bytes: a forked copy
    with Archive.init(c) as archive:
        archive.add_series(S)
        forked = str(archive.add(S, b"other minutes\n", format="text"))
        archive.add(S, BYTES["page"], format="html")
    assert forked == names["text"]
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--peer", "--archive", str(c))[0] == 0
        code, out = pdi("mirror", "audit", "--archive", str(c))
    assert code == 3, out
    ours, theirs = hashlib.sha256(b"other minutes\n").hexdigest(), hashlib.sha256(BYTES["text"]).hexdigest()
    assert f"disagree\t{names['text']}\there={ours}; {a_url}={theirs}" in out
    assert f"disagree\t{names['large']}\there=missing; {a_url}={hashlib.sha256(BYTES['large']).hexdigest()}" in out
    assert names["page"] not in out  # the same digest on both


def test_audit_asks_a_peer_that_announced_itself_at_a_public_address_only(tmp_path: Path) -> None:
    """A peer a token announced names its own host: what that name resolves to is its DNS's to say. This machine's
    host name is loopback's (its /etc/hosts): announced so, A is not connected to by the audit (unreachable, saying
    why); once the operator records the same address (for any series), it is asked and its digests compared."""
    import socket

    from pdi.archive.tokens import Writer

    host = socket.gethostname()
    found = {info[4][0] for info in socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)}
    assert "127.0.0.1" in found, f"{host} resolves to {found}: this test needs a host name for loopback"
    a, names = origin(tmp_path)
    c = tmp_path / "c"
    with Archive.init(c) as archive:
        archive.add_series(S)
        archive.add_series("e.example.us")
        archive.add(S, b"other minutes\n", format="text")
        token, _ = archive.add_token("stranger", role="mirror", series=[S])
    jwks = json.dumps({"keys": [json.loads(a_key(a))]})
    with serving(a) as a_url:
        by_name = a_url.replace("127.0.0.1", host)
        with Archive.open(c) as archive:
            archive.add_mirror(S, by_name, "peer", jwks, writer=Writer(token, "192.0.2.7"))
        code, out = pdi("mirror", "audit", "--series", S, "--archive", str(c))
        assert code == 3 and f"unreachable\t{by_name}\t" in out and "not a public address (loopback)" in out, out
        assert "disagree\t" not in out
        with Archive.open(c) as archive:
            archive.add_mirror("e.example.us", by_name, "peer", jwks)  # the operator's own record of it
        code, out = pdi("mirror", "audit", "--series", S, "--archive", str(c))
    assert code == 3 and "unreachable\t" not in out, out
    ours, theirs = hashlib.sha256(b"other minutes\n").hexdigest(), hashlib.sha256(BYTES["text"]).hexdigest()
    assert f"disagree\t{names['text']}\there={ours}; {by_name}={theirs}" in out


def test_a_name_the_origin_withdraws_is_withdrawn_on_the_mirror_at_the_next_sync(tmp_path: Path) -> None:
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
        with Archive.open(a) as archive:
            archive.withdraw(names["page"], "a mistake")
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 withdrawn (1 withdrawn here now)" in out, out
        again = pdi("mirror", "sync", "--archive", str(b))
        assert "1 withdrawn (0 withdrawn here now)" in again[1]
    with serving(b) as b_url:
        assert httpx.get(f"{b_url}/uri-res/N2R?{names['page']}").status_code == 410
        assert httpx.get(f"{b_url}/uri-res/N2R?{names['text']}").content == BYTES["text"]
    code, out = pdi("get", "--archive", str(b), names["page"])
    assert code == 11 and a_url in out


@pytest.mark.parametrize("purge", [False, True], ids=["withdrawn", "purged"])
def test_a_name_withdrawn_at_the_origin_before_the_first_sync_is_gone_on_the_mirror_not_unknown(
    tmp_path: Path, purge: bool,
) -> None:
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with Archive.open(a) as archive:
        archive.withdraw(names["page"], "a mistake", purge=purge)
    generic = names["page"].rsplit(".", 2)[0]
    with serving(a) as a_url:
        theirs = httpx.get(f"{a_url}/uri-res/N2R?{names['page']}")
        assert theirs.status_code == 410  # what the origin answers, and the mirror must answer too
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 withdrawn (1 withdrawn here now)" in out, out
        again = pdi("mirror", "sync", "--archive", str(b))
        assert "1 withdrawn (0 withdrawn here now)" in again[1]
    assert names["page"] not in held(b)
    with serving(b) as b_url:
        for name in (names["page"], generic):
            answer = httpx.get(f"{b_url}/uri-res/N2R?{name}")
            assert answer.status_code == 410 and answer.headers["content-type"] == "application/problem+json"
            assert a_url in answer.json()["detail"] and "before this mirror held it" in answer.json()["detail"]
        never = names["page"].replace(".html.1", ".html.2")  # another version, never minted: unknown
        assert httpx.get(f"{b_url}/uri-res/N2R?{never}").status_code == 404
        assert httpx.get(f"{b_url}/uri-res/N2R?{names['text']}").content == BYTES["text"]
    code, out = pdi("get", "--archive", str(b), names["page"])
    assert code == 11 and a_url in out and ("purged" in out) == purge


def test_a_running_server_stops_minting_in_a_series_at_once_when_it_is_mirrored(tmp_path: Path) -> None:
    """`pdi mirror add` in another process, while `pdi serve` runs and has minted in the series: the very next
    deposit, version or batch through the running server is refused (409), whatever it remembers of the series.
    The add warns that the series holds documents here already (the origin's copy of this archive's series would
    rather be added with --peer)."""
    a, _ = origin(tmp_path)
    b = tmp_path / "b"
    with Archive.init(b) as archive:
        archive.add_series(S)
        _, secret = archive.add_token("clerk", role="curate", series=[S])
    bearer = {"Authorization": f"Bearer {secret}"}
    with serving(a) as a_url, serving(b) as b_url:
        minted = [httpx.post(f"{b_url}/api/deposit?series={S}&format=text", content=f"minutes {n}\n".encode(),
                             headers=bearer) for n in range(2)]
        assert [m.status_code for m in minted] == [201, 201]
        first = minted[0].json()["pdi"]
        code, out = pdi("mirror", "add", a_url, "--series", S, "--key", a_key(a), "--archive", str(b))
        assert code == 0, out
        assert f"warning: {S} holds 2 documents this archive minted: from now on only {a_url} mints in it" in out
        assert f"pdi mirror remove {a_url} --series {S}" in out and "--peer" in out
        refused = [
            httpx.post(f"{b_url}/api/deposit?series={S}&format=text", content=b"minutes 3\n", headers=bearer),
            httpx.post(f"{b_url}/api/deposit?series={S}&format=text&id=x-1", content=b"minutes 4\n", headers=bearer),
            httpx.post(f"{b_url}/api/version?pdi={first.rsplit('.', 2)[0]}&format=text", content=b"again\n",
                       headers=bearer),
            httpx.post(f"{b_url}/api/batch?series={S}", headers=bearer, files=[("file", ("a.txt", b"x\n", "text/plain"))]),
        ]
        for answer in refused:
            assert answer.status_code == 409, answer.text
            assert f"mirrored from {a_url}" in answer.json()["detail"]
    assert len(held(b)) == 2


def test_a_series_mirrored_no_more_is_minted_in_and_mirroring_it_again_warns_of_what_was_minted(tmp_path: Path) -> None:
    """`pdi mirror remove` of the origin says that this archive may mint in the series again; once it has, `pdi mirror
    add` of it warns (docs/reference/mirrors.md: "if it holds documents this archive minted"), counting only what it minted, not
    what the syncs brought in."""
    a, _ = origin(tmp_path)
    b = mirror(tmp_path, "b")
    key = a_key(a)
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--key", key, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and f"{len(BYTES)} new" in out, out
    code, out = pdi("mirror", "remove", a_url, "--series", S, "--archive", str(b))
    assert code == 0 and out == (f"removed\t{S}\t{a_url}\npdi: {S} is mirrored from nowhere now: this archive may mint"
                                 f" in it again (the names copied from {a_url} stay)\n"), out
    with Archive.open(b) as archive:
        minted = archive.add(S, b"minted here, the origin forgotten\n", format="text")
    code, out = pdi("mirror", "add", a_url, "--series", S, "--key", key, "--no-check", "--archive", str(b))
    assert code == 0, out
    assert f"warning: {S} holds 1 document this archive minted: from now on only {a_url} mints in it" in out, out
    assert str(minted) in held(b) and len(held(b)) == len(BYTES) + 1
    # a peer forgotten changes nothing of who mints: nothing more said
    peer = "http://peer.example.org"
    assert pdi("mirror", "add", peer, "--series", S, "--key", key, "--peer", "--archive", str(b))[0] == 0
    assert pdi("mirror", "remove", peer, "--series", S, "--archive", str(b)) == (0, f"removed\t{S}\t{peer}\n")


def test_from_an_origin_whose_manifests_list_digests_only_the_records_come_from_n2c(tmp_path: Path) -> None:
    """An origin of an earlier pdi signs names, digests and sizes only: the rest of each record is its N2C's,
    and the mirror describes each name as the origin does."""
    from pdi.archive.manifests import ManifestPage
    from pdi.server import create_app

    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    archive = Archive.open(a)
    real = archive.manifest_page
    bare_keys = {"name", "format", "version", "sha256", "size", "withdrawn", "purged"}

    def bare(*args: object, **kwargs: object) -> ManifestPage:
        page = real(*args, **kwargs)  # type: ignore[arg-type]
        return ManifestPage(page.series, page.day, page.after, page.next,
                            tuple({k: v for k, v in e.items() if k in bare_keys} for e in page.entries))

    archive.manifest_page = bare  # type: ignore[method-assign]
    with in_thread(create_app(str(a), archive=archive), host="127.0.0.1", port=0, log_level="warning") as server:
        a_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        listed = json.loads(b64url_decode(httpx.get(f"{a_url}/api/manifest?series={S}").text.split(".")[1], "payload"))
        assert listed["names"] and all(set(e) <= bare_keys for e in listed["names"])
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and f"{len(BYTES)} new" in out, out
        theirs = {w: httpx.get(f"{a_url}/uri-res/N2C?{names[w]}").json() for w in BYTES}
    archive.close()
    assert held(b) == {names[w]: hashlib.sha256(data).hexdigest() for w, data in BYTES.items()}
    with serving(b) as b_url:
        for which in BYTES:
            ours = httpx.get(f"{b_url}/uri-res/N2C?{names[which]}").json()
            assert (ours["media_type"], ours["charset"], ours["stored"]) == (
                theirs[which]["media_type"], theirs[which]["charset"], theirs[which]["stored"])


def test_a_mirror_announces_itself_and_the_origins_n2ls_lists_it_then_withdraws(tmp_path: Path) -> None:
    """`pdi mirror sync --announce URL` with a token of role mirror the origin issued: A records B as a peer
    (no `pdi mirror add --peer` on A), its N2Ls lists B; DELETE /api/mirrors forgets it."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with Archive.open(a) as archive:
        _, secret = archive.add_token("mirror-b", role="mirror", series=[S])
    (tmp_path / "token").write_text(secret + "\n")
    b_url = "http://b.example.org:8080"
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--announce", b_url + "/", "--token-file", str(tmp_path / "token"),
                        "--archive", str(b))
        assert code == 0 and f"announced\t{S}\tto {a_url}\tnew" in out and f"{len(BYTES)} new" in out, out
        again = pdi("mirror", "sync", "--announce", b_url, "--token-file", str(tmp_path / "token"), "--archive", str(b))
        assert f"announced\t{S}\tto {a_url}\tknown already" in again[1], again[1]
        locations = f"{a_url}/uri-res/N2Ls?{names['text']}"
        deadline = time.monotonic() + 15  # the resolver reads the recorded mirrors again every 5 s
        while f"{b_url}/uri-res/N2R?{names['text']}" not in httpx.get(locations).text:
            assert time.monotonic() < deadline, httpx.get(locations).text
            time.sleep(0.2)
        with Archive.open(a) as archive:
            (peer,) = archive.mirrors(S)
            assert (peer.base_url, peer.role) == (b_url, "peer")
            assert json.loads(peer.jwk)["keys"][0]["x"] == json.loads(a_key(b))["x"]  # B's own key, pinned
            (line,) = [e for e in archive.audit() if e.action == "mirror-peer"]
            assert line.who == "token:mirror-b" and line.address == "127.0.0.1"
        bearer = {"Authorization": f"Bearer {secret}"}
        gone = httpx.delete(f"{a_url}/api/mirrors", params={"series": S, "base_url": b_url}, headers=bearer)
        assert gone.status_code == 204
        while f"{b_url}/uri-res/N2R" in httpx.get(locations).text:
            assert time.monotonic() < deadline + 15
            time.sleep(0.2)
        twice = httpx.delete(f"{a_url}/api/mirrors", params={"series": S, "base_url": b_url}, headers=bearer)
        assert twice.status_code == 404 and f"{b_url} is not recorded as holding {S}" in twice.json()["detail"]


def test_an_announcement_refused_is_a_problem_naming_what_was_wrong(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from pdi.server import create_app

    a, names = origin(tmp_path)
    with Archive.open(a) as archive:
        archive.add_series("other.example.us")
        _, mirror_token = archive.add_token("mirror-b", role="mirror", series=[S])
        _, reader = archive.add_token("reader", role="read", series=[S])
        _, elsewhere = archive.add_token("mirror-c", role="mirror", series=["other.example.us"])
    keys = {"keys": [SigningKey.generate().public.jwk()]}
    good = {"series": S, "base_url": "https://b.example.org", "keys": keys}
    client = TestClient(create_app(str(a)))

    def post(body: object, token: str | None = mirror_token) -> httpx.Response:
        return client.post("/api/mirrors", json=body, headers={"Authorization": f"Bearer {token}"} if token else {})

    for answer, status, words in [
        (post(good, None), 401, "Authorization: Bearer"),
        (post(good, "pdi_not-a-token"), 401, "not known"),
        (post(good, reader), 403, "has the role read; this needs mirror"),
        (post(good, elsewhere), 403, f"not series {S}"),
        (post([good]), 400, '{"series": S, "base_url"'),
        (post({**good, "series": ""}), 400, "series: text"),
        (post({**good, "base_url": "ftp://b.example.org"}), 400, "http(s)://host[:port][/path], not 'ftp://"),
        (post({**good, "base_url": "https://b.example.org/?q=1"}), 400, "base URL"),
        # a port past 65535 made the origin's N2Ls list it and its mirror audit stop on a ValueError
        (post({**good, "base_url": "http://127.0.0.1:99999"}), 400, "a port from 1 to 65535, not 99999"),
        (post({**good, "base_url": "http://127.0.0.1:0"}), 400, "a port from 1 to 65535, not 0"),
        (post({**good, "base_url": "http://u@127.0.0.1:8000"}), 400, "names no user or password"),
        (post({**good, "base_url": "http://u:p@b.example.org"}), 400, "names no user or password"),
        (post({**good, "keys": "x"}), 400, "keys: a JWK set"),
        # an address no stranger may make this resolver ask: N2Ls listed it, and the legacy rescue sent it a GET of
        # an anonymous reader's choosing (found by an attack, 2026-11-27)
        *((post({**good, "base_url": url}), 403, f"announces itself at a public address, not {url}")
          for url in ("http://127.0.0.1:6379", "http://169.254.169.254", "http://[::1]:2375", "http://10.1.2.3",
                      "http://localhost:8000", "http://0x7f.1", "http://2130706433", "http://[::ffff:127.0.0.1]")),
        (post({**good, "keys": {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "!!"}]}}), 400, '"x" is not unpadded base64url'),
        (post({**good, "series": "never.example.us"}, mirror_token), 403, "not series never.example.us"),
        (client.post("/api/mirrors", content=b"x" * 70_000, headers={"Authorization": f"Bearer {mirror_token}"}),
         413, "more than 65536 octets"),
        (client.delete("/api/mirrors", params={"series": S}, headers={"Authorization": f"Bearer {mirror_token}"}),
         400, "base_url"),
    ]:
        assert answer.status_code == status, (status, answer.text)
        assert answer.headers["content-type"] == "application/problem+json"
        assert words in answer.json()["detail"], (words, answer.json())
    assert post(good).status_code == 201 and post(good).status_code == 200
    listed = client.get(f"/uri-res/N2Ls?{names['text']}").text
    assert "b.example.org" in listed
    assert not any(host in listed for host in ("127.0.0.1", "169.254", "[::", "10.1", "localhost", "0x7f", "21307"))
    other = post({**good, "keys": {"keys": [SigningKey.generate().public.jwk()]}})
    assert other.status_code == 409 and "with another key" in other.json()["detail"]


def test_a_mirror_token_withdraws_its_own_announcement_only_not_another_archives(location: str) -> None:
    """Two mirrors of one series, each with a token of role mirror: C may not DELETE B's announcement (nor a peer
    the operator recorded), which would let it announce B's address again with C's own key, the key change
    that the 409 keeps for the operator. Each withdraws its own (204). Found by a security review, 2026-11-27."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    a = location
    with Archive.init(a) as archive:
        archive.add_series(S)
        _, b_token = archive.add_token("mirror-b", role="mirror", series=[S])
        _, c_token = archive.add_token("mirror-c", role="mirror", series=[S])
        operators = json.dumps({"keys": [SigningKey.generate().public.jwk()]})
        archive.add_mirror(S, "https://d.example.org", "peer", operators)  # pdi mirror add --peer
    b_keys, c_keys = ({"keys": [SigningKey.generate().public.jwk()]} for _ in range(2))
    client = TestClient(create_app(a))

    def announce(url: str, keys: object, token: str) -> httpx.Response:
        return client.post("/api/mirrors", json={"series": S, "base_url": url, "keys": keys},
                           headers={"Authorization": f"Bearer {token}"})

    def forget(url: str, token: str) -> httpx.Response:
        return client.delete("/api/mirrors", params={"series": S, "base_url": url},
                             headers={"Authorization": f"Bearer {token}"})

    assert announce("https://b.example.org", b_keys, b_token).status_code == 201
    assert announce("https://c.example.org", c_keys, c_token).status_code == 201
    for url, token in [("https://b.example.org", c_token), ("https://d.example.org", c_token),
                       ("https://d.example.org", b_token)]:
        refused = forget(url, token)
        assert refused.status_code == 403, refused.text
        assert f"{url} was recorded as holding {S} by " in refused.json()["detail"], refused.json()
    assert announce("https://b.example.org", c_keys, c_token).status_code == 409
    with Archive.open(a) as archive:
        pinned = {m.base_url: json.loads(m.jwk) for m in archive.mirrors(S)}
    assert pinned["https://b.example.org"] == b_keys and json.loads(operators) == pinned["https://d.example.org"]
    assert forget("https://c.example.org", c_token).status_code == 204
    assert forget("https://b.example.org", b_token).status_code == 204
    with Archive.open(a) as archive:
        assert [m.base_url for m in archive.mirrors(S)] == ["https://d.example.org"]


def test_what_a_stranger_gets_wrong_is_refused_at_once_in_the_origins_own_words(tmp_path: Path) -> None:
    """What a new user tried (a port past 65535, a user in the URL, a series the origin does not hold, a manifest
    URL with a bad day, an empty manifest file, an audit with the origin stopped): each refused at once, naming
    what was wrong (the origin's own problem detail where it gave one), and nothing recorded. What the reviewer
    of those fixes tried: a mirror removed and added again is not warned about; a row an earlier pdi recorded
    with such a URL is removable; with the origin down, --no-check records it and the first sync says why."""
    a, _ = origin(tmp_path)
    b = mirror(tmp_path, "b")
    key = a_key(a)
    with serving(a) as a_url:
        port = a_url.rsplit(":", 1)[1]
        for url, words in [("http://127.0.0.1:99999", "a port from 1 to 65535, not 99999"),
                           (f"http://someone@127.0.0.1:{port}", "names no user or password")]:
            code, out = pdi("mirror", "add", url, "--series", S, "--key", key, "--archive", str(b))
            assert code == 1 and words in out, out
        # A's problem detail, quoted: not a bare "HTTP 404" that any web server could have said
        code, out = pdi("mirror", "add", a_url, "--series", "nosuch.example.us", "--key", key, "--archive", str(b))
        assert code == 4 and "HTTP 404: series nosuch.example.us is not registered" in out, out
        code, out = pdi("mirror", "add", a_url, "--series", "nosuch.example.us", "--archive", str(b))  # key fetched
        assert code == 4 and "series nosuch.example.us is not registered" in out, out
        assert pdi("mirror", "ls", "--archive", str(b)) == (0, "")
        with Archive.open(b) as archive:
            assert archive.find_series("nosuch.example.us") is None
        code, out = pdi("verify", "--signatures", f"{a_url}/api/manifest?series={S}&day=2026-1-1",
                        "--key", key, "--archive", str(b))
        assert code == 1 and "HTTP 400: " in out and "2026-1-1" in out, out
        empty = tmp_path / "empty.jws"
        empty.write_bytes(b"\n")
        code, out = pdi("verify", "--signatures", str(empty), "--key", key, "--archive", str(b))
        assert code == 3 and f"{empty}\tholds no manifest" in out, out
        assert pdi("mirror", "add", a_url, "--series", S, "--key", key, "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "audit", "--archive", str(b))
        assert code == 0 and f"{S}\t3 names compared with 1 peer: 0 disagreements" in out, out
        # removed and added again (as a changed key asks): its names came from it, so no warning
        assert pdi("mirror", "remove", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "add", a_url, "--series", S, "--key", key, "--archive", str(b))
        assert code == 0 and "warning" not in out, out
    # a row an earlier pdi recorded, which this one refuses to record: its sync says why, and it can be removed
    with sqlite3.connect(b / "catalog.sqlite") as db:
        db.execute("INSERT INTO mirrors (series, base_url, role, jwk, added_at) VALUES"
                   " ('other.example.us', 'http://127.0.0.1:99999', 'origin', ?, '2026-11-25T00:00:00.000000Z')",
                   (key,))
    code, out = pdi("mirror", "sync", "--series", "other.example.us", "--archive", str(b))
    assert code == 1 and "a port from 1 to 65535, not 99999" in out, out
    assert pdi("mirror", "remove", "http://127.0.0.1:99999", "--series", "other.example.us", "--archive", str(b)) == (
        0, "removed\tother.example.us\thttp://127.0.0.1:99999\npdi: other.example.us is mirrored from nowhere now:"
        " this archive may mint in it again (the names copied from http://127.0.0.1:99999 stay)\n")
    # the origin down: --no-check records it with the key given, and the first sync says what is wrong. Not a
    # storage error of this archive (exit 8): a remote error (16), naming the series and the origin's URL
    c = mirror(tmp_path, "c")
    down = f"pdi: remote error: cannot fetch the manifest of {S} at {a_url}/api/manifest?series={S}"
    code, out = pdi("mirror", "add", a_url, "--series", S, "--key", key, "--archive", str(c))
    assert code == 16 and down in out and "Connection refused" in out and "storage" not in out, out
    code, out = pdi("mirror", "add", a_url, "--series", S, "--no-check", "--archive", str(c))  # the key fetched
    assert code == 16 and f"pdi: remote error: cannot fetch the key set {a_url}/api/keys" in out, out
    code, out = pdi("mirror", "add", a_url, "--series", S, "--key", key, "--no-check", "--archive", str(c))
    assert code == 0 and f"origin\t{S}\t{a_url}" in out, out
    code, out = pdi("mirror", "sync", "--archive", str(c))
    assert code == 16 and down in out and "Connection refused" in out, out
    code, out = pdi("mirror", "audit", "--series", S, "--archive", str(b))  # A stopped
    assert code == 3 and f"unreachable\t{a_url}" in out and f"{S}\tno peer reached (1 unreachable): nothing compared" in out


def test_a_sync_parses_each_name_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each name a manifest page lists is parsed once in a sync: to be looked up and fetched, and to have its access
    rules followed (a sync of 10,000 names parsed each twice, some 0.2 s of its CPU)."""
    a, names = origin(tmp_path, extra=5)
    b = mirror(tmp_path, "b")
    parsed: list[str] = []
    parse = PDI.parse.__func__  # type: ignore[attr-defined]

    def counted(cls: type[PDI], text: str, *args: Any, **kwargs: Any) -> PDI:
        parsed.append(text)
        return parse(cls, text, *args, **kwargs)  # type: ignore[no-any-return]

    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        with Archive.open(b) as archive:
            (record,) = archive.mirrors(S)
            monkeypatch.setattr(PDI, "parse", classmethod(counted))
            report = mirrors.sync(archive, record)
            monkeypatch.undo()
    assert (report.listed, report.copied, list(report.problems)) == (len(names), len(names), [])
    assert sorted(n for n in parsed if n in names.values()) == sorted(names.values())
    assert held(b) == {name: held(a)[name] for name in names.values()}


def test_a_series_the_origin_does_not_hold_says_where_its_series_are_listed(tmp_path: Path) -> None:
    """pdi mirror add of a series the origin does not hold passed on the origin's own hint ("`pdi series ls` lists
    those that are"), a command only its operator can run there. It says instead that the origin holds no such
    series, and where its series are listed over HTTP (/api/series), which lists S; nothing is recorded."""
    a, _ = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        code, out = pdi("mirror", "add", a_url, "--series", "nosuch.example.us", "--key", a_key(a), "--archive", str(b))
        assert code == 4, out
        assert out == (
            f"pdi: not found: the origin at {a_url} holds no series nosuch.example.us that it lets this archive read"
            f" (the manifest of nosuch.example.us at {a_url}/api/manifest?series=nosuch.example.us&limit=1000:"
            f" HTTP 404: series nosuch.example.us is not registered): the series it shows are listed at"
            f" {a_url}/api/series; pdi mirror add {a_url} --series S with one of those\n"), out
        assert [s["name"] for s in httpx.get(f"{a_url}/api/series").json()["series"]] == [S]
        assert pdi("mirror", "ls", "--archive", str(b)) == (0, "")
        # the origin's own answer: RFC 9457's type tells the kind of not-found, and its detail names the request
        answer = httpx.get(f"{a_url}/api/manifest", params={"series": "nosuch.example.us"})
        problem = answer.json()
        assert (answer.status_code, problem["type"], problem["detail"]) == (
            404, "/api#problem-unknown-series",
            "series nosuch.example.us is not registered (GET /api/series lists those that are)")


@pytest.mark.parametrize(("detail", "held"), [
    # pdi 0.1.0 and 0.2.0 (src/pdi/archive/base.py of either tag): no problem type of its own, its words
    ("series nosuch.example.us is not registered (`pdi series ls` lists those that are)", False),
    ("no such page: /api/manifest", True),  # a web server that is no pdi, or a pdi without manifests
])
def test_a_404_of_an_origin_without_the_series_problem_type(tmp_path: Path, detail: str, held: bool) -> None:
    """An origin whose 404 has no problem type of a series it lacks: an earlier pdi's words are read as before
    (its operator's command left out, where the series are listed said); anything else is quoted as it is."""
    a, _ = origin(tmp_path)
    b = mirror(tmp_path, "b")
    said = {"type": "/api#problem-not-found", "title": "not found", "status": 404, "detail": detail}

    async def refuse(request: Request) -> Response:
        return Response(json.dumps(said), 404, media_type="application/problem+json")

    app = Starlette(routes=[Route("/{path:path}", refuse)])
    with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as server:
        url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        code, out = pdi("mirror", "add", url, "--series", "nosuch.example.us", "--key", a_key(a), "--archive", str(b))
    assert code == 4, out
    quoted = (f"the manifest of nosuch.example.us at {url}/api/manifest?series=nosuch.example.us&limit=1000:"
              f" HTTP 404: {detail}")
    if held:
        assert out == f"pdi: not found: {quoted}\n", out
    else:
        assert out == (f"pdi: not found: the origin at {url} holds no series nosuch.example.us that it lets this"
                       f" archive read ({quoted.removesuffix(' (`pdi series ls` lists those that are)')}): the series"
                       f" it shows are listed at {url}/api/series; pdi mirror add {url} --series S with one of those\n"
                       ), out
