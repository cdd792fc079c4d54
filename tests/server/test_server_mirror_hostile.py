"""What a hostile origin can send ``pdi mirror sync`` and ``pdi verify --repair``, and what the mirror does with it.

The origin here is a small HTTP server of the test's own that signs whatever manifest a case needs with its own
Ed25519 key (pinned by ``pdi mirror add --key``), as a stranger's archive may: a real ``pdi serve`` never sends
these answers, so it stands in only to send them. Found by an attack on the mirrors (2026-11-27): a withdrawal
or an embargo of another series' name was followed, a brotli or gzip answer was undone whole before its size was
checked, a page was read whatever its number of names, a byte every 29 s held a sync for days, a repair fetched
what a hostile manifest said a blob's size was, and a stranger's name reached the terminal with its escapes.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pdi.archive import Archive
from pdi.archive.mirroring import Mirroring
from pdi.archive.naming import key_of, parse_pdi
from pdi.cli import cli
from pdi.signing import SigningKey, canonical_json, jwk_set_text, sign_manifest
from peak_memory import run_with_peak
from support.stored_blobs import flip_octet

SERIES = "evil.example.us"
HOME = "home.example.us"
TEXT = b"hello world\r\n"
KEY = SigningKey.generate()


def entry(serial: int, body: bytes = TEXT, **fields: object) -> dict[str, object]:
    made: dict[str, object] = {"charset": "utf-8", "created_at": "2026-11-27T02:20:44.484697Z", "format": "text",
                               "line_ending": None, "media_type": "text/plain", "stored": "exact", "version": 1,
                               "name": f"urn:pdi://{SERIES}/2026/11/27/{serial}.text.1",
                               "sha256": hashlib.sha256(body).hexdigest(), "size": len(body)}
    made.update(fields)
    return made


def signed(names: list[dict[str, object]], **fields: object) -> bytes:
    value: dict[str, object] = {"type": "pdi-manifest+jws", "series": SERIES, "day": None, "after": None,
                                "next": None, "names": names, "access": "public"}
    value.update(fields)
    return sign_manifest(KEY, canonical_json(value)).encode()


class Origin:
    """The hostile origin: ``manifest(query)`` gives (status, header fields, body, seconds between octets)."""

    def __init__(self) -> None:
        self.manifest: Callable[[dict[str, str]], tuple[int, dict[str, str], bytes, float]] = (
            lambda q: (200, {}, signed([]), 0.0))
        self.octets_asked = 0
        self.octets = b""  # what N2R answers (any name)
        self.head_drip: dict[str, float] = {}  # a path whose answer's head comes an octet every so many seconds
        #: What POST /api/octets answers (multipart/mixed, boundary B) for the names asked: ``None``, a 404 (as an
        #: earlier pdi: N2R is asked for each name).
        self.bulk: Callable[[list[str]], bytes] | None = None
        #: After its first so many octets, that answer comes an octet every so many seconds (0: at once).
        self.bulk_drip: tuple[int, float] = (0, 0.0)
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                if url.path in origin.head_drip:
                    self.close_connection = True
                    try:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                        for _ in range(1000):
                            for octet in b"X-Slow: a\r\n":
                                self.wfile.write(bytes([octet]))
                                self.wfile.flush()
                                time.sleep(origin.head_drip[url.path])
                    except OSError:
                        pass
                    return
                if url.path == "/api/keys":
                    status, fields, body, drip = 200, {}, jwk_set_text([KEY.public]).encode(), 0.0
                elif url.path == "/api/manifest":
                    status, fields, body, drip = origin.manifest(query)
                elif url.path == "/api/octets" and origin.bulk is not None:
                    asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["names"]
                    self._bulk(origin.bulk(asked))
                    return
                elif url.path == "/uri-res/N2R":
                    origin.octets_asked += 1
                    status, fields, body, drip = 200, {"content-type": "text/plain"}, origin.octets, 0.0
                else:  # POST /api/octets and the rest: as an earlier pdi, which asks N2R for each name
                    status, fields, body, drip = 404, {"content-type": "application/json"}, b"{}", 0.0
                self.send_response(status)
                self.send_header("Content-Type", fields.pop("content-type", "application/jose"))
                self.send_header("Content-Length", str(len(body)))
                for name, value in fields.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    if not drip:
                        self.wfile.write(body)
                        return
                    for k in range(len(body)):
                        self.wfile.write(body[k : k + 1])
                        self.wfile.flush()
                        time.sleep(drip)
                except OSError:
                    return

            def _bulk(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "multipart/mixed; boundary=B")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                quick, drip = origin.bulk_drip
                try:
                    self.wfile.write(body if not drip else body[:quick])
                    self.wfile.flush()
                    for k in range(quick, len(body) if drip else 0):
                        time.sleep(drip)
                        self.wfile.write(body[k : k + 1])
                        self.wfile.flush()
                except OSError:
                    return

            do_POST = do_GET

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def origin() -> Iterator[Origin]:
    made = Origin()
    try:
        yield made
    finally:
        made.close()


def run(location: Path, *argv: str) -> Result:
    return CliRunner().invoke(cli, [*argv, "--archive", str(location)])


@pytest.fixture
def mirror(tmp_path: Path, origin: Origin) -> tuple[Path, str]:
    """An archive with a series of its own (one text) mirroring the hostile origin's series: its place and its
    own text's name."""
    location = tmp_path / "mirror"
    assert run(location, "init").exit_code == 0
    assert run(location, "series", "add", HOME).exit_code == 0
    own = tmp_path / "own.txt"
    own.write_bytes(b"this archive's own text\n")
    name = run(location, "add", str(own), "--series", HOME).stdout.strip()
    keys = tmp_path / "origin-keys.json"
    keys.write_text(jwk_set_text([KEY.public]))
    added = run(location, "mirror", "add", origin.url, "--series", SERIES, "--key", str(keys), "--no-check")
    assert added.exit_code == 0, added.output
    return location, name


def test_a_withdrawal_or_embargo_of_another_series_name_is_refused_and_nothing_of_it_follows(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    location, own = mirror
    stranger = "urn:pdi://someoneelse.example.org/2026/11/27/1.text.1"
    origin.octets = TEXT
    origin.manifest = lambda q: (200, {}, signed([
        {"name": own, "withdrawn": "2026-11-27T00:00:00Z", "purged": True},
        {"name": stranger, "withdrawn": "2026-11-27T00:00:00Z"},
        entry(1, name=own.replace(".text.1", ".text.2"), embargo={"document": "2099-01-01T00:00:00Z"}),
        entry(2),
    ]), 0.0)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    assert synced.stdout.count(f"a name of another series than {SERIES}") == 3
    with Archive.open(location) as archive:
        assert archive.get(own).data == b"this archive's own text\n"  # not purged
        assert archive.embargoes_held([key_of(parse_pdi(own))]) == {}  # nor embargoed
        assert archive.verify().ok
    got = run(location, "get", own)
    assert got.exit_code == 0 and got.stdout_bytes == b"this archive's own text\n"
    assert run(location, "get", stranger).exit_code == 4  # not in this archive: no tombstone of it here (410)
    assert run(location, "get", entry(2)["name"]).exit_code == 0  # what was the origin's own is kept


def _gzip_of_zeros(octets: int) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    piece = bytes(1 << 20)
    return b"".join(deflate.compress(piece) for _ in range(octets >> 20)) + deflate.flush()


def test_an_answer_in_a_content_coding_is_never_undone(origin: Origin, mirror: tuple[Path, str]) -> None:
    location, _ = mirror
    bomb = _gzip_of_zeros(256 << 20)  # 256 MiB of zeros in some 250 KB
    origin.manifest = lambda q: (200, {"content-encoding": "gzip"}, bomb, 0.0)
    status, peak, _ = run_with_peak([sys.executable, "-m", "pdi", "mirror", "sync", "--archive", str(location)],
                                    stdout=-1, stderr=-1)
    assert status == 16
    assert peak < 200 * 1024, f"peak {peak // 1024} MiB"  # undone by httpx, the 256 MiB came whole (and more)
    refused = run(location, "mirror", "sync")
    assert "is sent with Content-Encoding 'gzip', though it was asked as it is (identity): not read" in refused.output
    # the same bomb as a refusal's problem: not undone either, and the status said
    origin.manifest = lambda q: (503, {"content-encoding": "gzip", "content-type": "application/problem+json"},
                                 bomb, 0.0)
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 16 and "HTTP 503" in refused.output, refused.output


def test_a_page_of_more_names_than_asked_for_is_refused(origin: Origin, mirror: tuple[Path, str]) -> None:
    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(k) for k in range(1, 1002)]), 0.0)
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3, refused.output
    assert "lists 1,001 names, more than the 1000 asked for: refused" in refused.output
    assert origin.octets_asked == 0
    origin.manifest = lambda q: (200, {}, signed([entry(1)], next={"not": "text"}), 0.0)
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3 and "the manifest's \"next\" is not text" in refused.output, refused.output


def test_a_peer_that_sends_too_slowly_is_given_up(
    origin: Origin, mirror: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pdi.network.peers as peers

    location, _ = mirror
    monkeypatch.setattr(peers, "HTTP_TIMEOUT", 1.0)  # its grace, and the time between reads, made short
    origin.manifest = lambda q: (200, {}, signed([entry(1)]), 0.05)  # 20 octets a second, each read in time
    started = time.monotonic()
    refused = run(location, "mirror", "sync")
    assert time.monotonic() - started < 10
    assert refused.exit_code == 16, refused.output
    assert "octets a second, slower than the 16,384 a peer must send: given up" in refused.output


def test_a_repair_never_fetches_another_size_than_the_catalog_recorded(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    location, _ = mirror
    body = b"the origin's own text\n"
    name = str(entry(1)["name"])
    origin.manifest = lambda q: (200, {}, signed([entry(1, body)]), 0.0)
    origin.octets = body
    assert run(location, "mirror", "sync").exit_code == 0
    flip_octet(location, hashlib.sha256(body).hexdigest(), 3)
    # the same digest, a size of 8 GB: the octets the catalog recorded are 22
    origin.manifest = lambda q: (200, {}, signed([entry(1, body, size=8_000_000_000)], day=q.get("day")), 0.0)
    asked = origin.octets_asked
    repaired = run(location, "verify", "--repair")
    assert repaired.exit_code == 3, repaired.output
    assert f"its signed manifest says {name} is 8000000000 octets; this archive recorded 22" in repaired.output
    assert origin.octets_asked == asked  # nothing fetched


def test_a_stranger_s_name_reaches_the_terminal_with_its_control_characters_shown(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    location, _ = mirror
    forged = "victim\tfrom x: all good, 0 problems\r\x1b]0;owned\x07\nurn:pdi://x.example.us/2026/11/27/1.text.1"
    origin.manifest = lambda q: (200, {}, signed([entry(1, name=forged)]), 0.0)
    refused = run(location, "mirror", "sync")
    lines = refused.stdout.splitlines()
    assert not any(line.startswith("urn:pdi://x.example.us") for line in lines)  # no line of the stranger's making
    assert "\x1b" not in refused.stdout and "\x07" not in refused.stdout and "\r" not in refused.stdout
    assert "victim\\tfrom x: all good, 0 problems\\r\\x1b]0;owned\\x07\\nurn:pdi://x.example.us" in refused.stdout


def test_a_sync_asks_the_disk_s_room_once_a_group_of_names_not_once_a_name(
    origin: Origin, mirror: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """30 names to fetch, one request's group (:data:`pdi.network.mirrors.GROUP_NAMES`): the room left on the disk is
    read once for them (a ``statvfs``), not 30 times, and each is fetched and kept."""
    location, _ = mirror
    origin.octets = TEXT
    origin.manifest = lambda q: (200, {}, signed([entry(n) for n in range(1, 31)]), 0.0)
    asked: list[int | None] = []
    real = Mirroring.blob_room

    def counted(self: Mirroring) -> int | None:
        asked.append(real(self))
        return asked[-1]

    monkeypatch.setattr(Mirroring, "blob_room", counted)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 0, synced.output
    assert "30 names listed, 30 new" in synced.output
    assert len(asked) == 1 and asked[0] is not None


def test_a_blob_larger_than_the_disk_holds_is_not_fetched(origin: Origin, mirror: tuple[Path, str]) -> None:
    # an exbibyte, signed: no disk this runs on has it free
    location, _ = mirror
    origin.octets = TEXT
    origin.manifest = lambda q: (200, {}, signed([entry(1, size=1 << 60), entry(2)]), 0.0)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    assert "its 1,152,921,504,606,846,976 octets would leave this archive's disk less than its reserve free" in synced.output
    assert origin.octets_asked == 1  # the other name alone
    assert run(location, "get", str(entry(2)["name"])).stdout_bytes == TEXT


def test_a_sync_stops_after_its_time_and_keeps_what_it_fetched(origin: Origin, mirror: tuple[Path, str]) -> None:
    # pages that never end, each a second late and each with one new name: within every bound but the whole's
    location, _ = mirror
    origin.octets = TEXT

    def endless(q: dict[str, str]) -> tuple[int, dict[str, str], bytes, float]:
        after = int(q.get("after", "0"))
        time.sleep(1)
        return 200, {}, signed([entry(after + 1)], after=q.get("after"), next=str(after + 1)), 0.0

    origin.manifest = endless
    started = time.monotonic()
    stopped = run(location, "mirror", "sync", "--max-seconds", "3")
    assert time.monotonic() - started < 15
    assert stopped.exit_code == 7, stopped.output
    assert f"the sync of {SERIES} from {origin.url} took more than 3 s (--max-seconds)" in stopped.output
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == TEXT  # kept


def test_an_audit_gives_a_slow_peer_up_and_counts_no_name_of_another_series(
    origin: Origin, mirror: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pdi.network.polls as polls

    location, own = mirror
    origin.octets = TEXT
    origin.manifest = lambda q: (200, {}, signed([entry(1), {"name": own, "sha256": "0" * 64, "size": 1}]), 0.0)
    assert run(location, "mirror", "sync").exit_code == 3  # (the other series' name is a problem)
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert audited.exit_code == 0, audited.output  # the peer agrees on its own series' names; `own` is none of them
    assert "disagree\t" not in audited.output and "0 disagreements" in audited.output

    def endless(q: dict[str, str]) -> tuple[int, dict[str, str], bytes, float]:
        after = int(q.get("after", "0"))
        time.sleep(0.5)
        return 200, {}, signed([], after=q.get("after"), next=str(after + 1)), 0.0

    origin.manifest = endless
    monkeypatch.setattr(polls, "AUDIT_SECONDS", 2.0)
    started = time.monotonic()
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert time.monotonic() - started < 10
    assert audited.exit_code == 3, audited.output
    assert f"unreachable\t{origin.url}\treading {origin.url}'s manifest of {SERIES} took more than 2 s: given up" in (
        audited.output)


def test_an_audit_keeps_a_peers_names_on_disk_and_tells_each_disagreement_as_it_finds_it(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """A peer may list up to ten million names (10,000 pages of 1,000); kept as Python objects, 300,000 of them
    took the audit to a peak of 212 MiB (54 MiB kept on disk; gigabytes at the bound). Each is a disagreement here
    (missing on this archive), and each is told, in the order of the names."""
    location, _ = mirror
    pages, per_page = 300, 1_000
    made: dict[int, bytes] = {}

    def listing(q: dict[str, str]) -> tuple[int, dict[str, str], bytes, float]:
        page = int(q.get("after") or "0")
        if page not in made:
            names = [entry(page * per_page + k + 1) for k in range(per_page)]
            made[page] = signed(names, after=q.get("after"), next=f"{page + 1:06d}" if page + 1 < pages else None)
        return 200, {}, made[page], 0.0

    origin.manifest = listing
    status, peak, out = run_with_peak(
        [sys.executable, "-m", "pdi", "mirror", "audit", "--series", SERIES, "--archive", str(location)],
        stdout=-1, stderr=-1)
    assert status == 3
    lines = out.decode().splitlines()
    told = [line.split("\t")[1] for line in lines if line.startswith("disagree\t")]
    expected = sorted(str(entry(n)["name"]) for n in range(1, pages * per_page + 1))
    assert told == expected  # every one, each once, in the order of the names
    digest = hashlib.sha256(TEXT).hexdigest()
    assert lines[0] == f"disagree\t{expected[0]}\there=missing; {origin.url}={digest}"
    assert f"{SERIES}\t{pages * per_page} names compared with 1 peer: {pages * per_page} disagreements" in lines
    assert peak < 120 * 1024, f"peak {peak // 1024} MiB"


def test_a_sync_tells_each_refused_name_as_it_finds_it_and_holds_none_of_them(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """An origin may list ten million names (10,000 pages of 1,000), each of another series: every one a problem.
    Held until the summary, 300,000 of them took the sync to a peak of 178 MiB (some 4 GiB at the bound); told as
    they are found, the peak stays that of a sync of one page (some 50 MiB)."""
    location, _ = mirror
    pages, per_page = 300, 1_000
    made: dict[int, bytes] = {}

    def stranger(n: int) -> str:
        return f"urn:pdi://other.example.org/2026/11/27/{n}.text.1"

    def listing(q: dict[str, str]) -> tuple[int, dict[str, str], bytes, float]:
        page = int(q.get("after") or "0")
        if page not in made:
            names = [entry(n, name=stranger(n)) for n in range(page * per_page + 1, (page + 1) * per_page + 1)]
            made[page] = signed(names, after=q.get("after"), next=f"{page + 1:06d}" if page + 1 < pages else None)
        return 200, {}, made[page], 0.0

    origin.manifest = listing
    status, peak, out = run_with_peak(
        [sys.executable, "-m", "pdi", "mirror", "sync", "--archive", str(location)], stdout=-1, stderr=-1)
    assert status == 3
    lines = out.decode().splitlines()
    told = [line.split("\t")[1] for line in lines if line.startswith("manifest-name\t")]
    assert told == [stranger(n) for n in range(1, pages * per_page + 1)]  # each once, in the order listed
    assert f"{pages * per_page} names listed, 0 new (0 octets)" in lines[-1]
    assert lines[-1].endswith(f"{pages * per_page} problems")
    assert origin.octets_asked == 0
    assert peak < 110 * 1024, f"peak {peak // 1024} MiB"


@pytest.mark.parametrize("path", ["/api/manifest", "/api/octets"])
def test_a_peer_that_sends_its_answers_head_an_octet_at_a_time_is_given_up(
    origin: Origin, mirror: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """Found by an attack (2026-11-27): each read of an answer was bounded (HTTP_TIMEOUT), its head was not: an
    origin sending its header section an octet just inside each read's timeout held the sync for as long as the
    head may grow (httpcore reads 100 KiB of a head, http.client 100 fields of 64 KiB: at 29 s an octet, months)."""
    import pdi.network.peers as peers

    location, _ = mirror
    monkeypatch.setattr(peers, "HTTP_TIMEOUT", 1.0)  # the time a head may take, made short
    origin.manifest = lambda q: (200, {}, signed([entry(1)]), 0.0)
    origin.octets = TEXT
    origin.head_drip[path] = 0.2  # 5 octets a second: each read in time
    started = time.monotonic()
    refused = run(location, "mirror", "sync")
    assert time.monotonic() - started < 10
    if path == "/api/manifest":
        assert refused.exit_code == 16, refused.output
        assert f"cannot fetch the manifest of {SERIES} at {origin.url}/api/manifest?series={SERIES}&limit=1000: the" \
               " head of the answer took more than 1 s (its status line and header fields)" in refused.output
    else:
        assert refused.exit_code == 3, refused.output
        assert f"unfetched\t{entry(1)['name']}\tfrom {origin.url}: cannot fetch {origin.url}/api/octets: the head of" \
               " the answer took more than 1 s (its status line and header fields) (not kept)" in refused.output
        assert run(location, "get", str(entry(1)["name"])).exit_code == 4  # nothing of it kept


def test_a_withdrawal_whose_time_is_no_time_is_refused_and_no_tombstone_recorded(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """Found by an attack (2026-11-27): the tombstone of a name never held took the origin's ``withdrawn`` as it
    came, whatever it was (``12345``, an escape sequence, a year to come), and served it as when the name was
    withdrawn (N2C's ``"at"``); a held name's withdrawal wrote it into its reason."""
    location, _ = mirror
    origin.octets = TEXT
    origin.manifest = lambda q: (200, {}, signed([entry(1), entry(2)]), 0.0)
    assert run(location, "mirror", "sync").exit_code == 0
    bad: list[object] = ["\x1b]0;owned\x07", 12345, "2099-01-01T00:00:00Z", "2026-02-30T00:00:00Z",
                         "2026-11-27T00:00:00+00:00"]
    origin.manifest = lambda q: (200, {}, signed(
        [{"name": str(entry(1)["name"]), "withdrawn": bad[0]}]  # held here
        + [{"name": str(entry(k + 3)["name"]), "withdrawn": when} for k, when in enumerate(bad)]  # never held
        + [{"name": str(entry(20)["name"]), "withdrawn": "2026-11-27T00:00:00Z"},
           {"name": str(entry(2)["name"]), "withdrawn": "2026-11-27T02:20:44.484697Z"}]), 0.0)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    assert synced.stdout.count("\tunwithdrawn\t") == 0 and synced.stdout.count("unwithdrawn\t") == 1 + len(bad)
    assert ("when it was withdrawn is a UTC time YYYY-MM-DDTHH:MM:SS[.ffffff]Z, not still to come; not"
            " '\\x1b]0;owned\\x07'") in synced.stdout
    assert "8 withdrawn (2 withdrawn here now)" in synced.stdout
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == TEXT  # not withdrawn on those words
    for k in range(len(bad)):
        assert run(location, "get", str(entry(k + 3)["name"])).exit_code == 4  # no tombstone: unknown here
    assert run(location, "get", str(entry(20)["name"])).exit_code == 11  # gone, as at the origin
    assert run(location, "get", str(entry(2)["name"])).exit_code == 11


def part(name: object, body: bytes = TEXT, *, length: bytes | None = None, fields: bytes = b"") -> bytes:
    """One part of a ``POST /api/octets`` answer (RFC 2046 §5.1.1, boundary ``B``), as pdi's own server writes it
    (:mod:`pdi.server.protocol.octets`), its ``Content-Length`` and header fields as a case needs them."""
    said = b"%d" % len(body) if length is None else length
    return (b"--B\r\nContent-Location: %s\r\nContent-Type: text/plain\r\n%sContent-Length: %s\r\n\r\n%s\r\n"
            % (str(name).encode(), fields, said, body))


def test_a_parts_length_that_is_no_number_of_octets_is_refused_by_name_not_a_traceback(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """Found by an attack (2026-11-27): a part's ``Content-Length`` was taken for a number when Python's
    ``str.isdigit`` said so, which it says of ``²`` (0xB2 in the Latin-1 the head is read in) and of 5,000 digits,
    neither of which ``int`` reads: the sync ended in a ``ValueError`` traceback. RFC 9110 §8.6: ``1*DIGIT``, the
    ASCII digits."""
    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(1), entry(2)]), 0.0)
    for length in (b"\xb2", b"9" * 5000, b"\xd9"):
        origin.bulk = lambda names, length=length: part(names[0], length=length) + part(names[1]) + b"--B--\r\n"
        refused = run(location, "mirror", "sync")
        assert refused.exit_code == 3, refused.output
        shown = repr(length.decode("latin-1")[:20])
        assert (f"unfetched\t{entry(1)['name']}\tfrom {origin.url}: POST {origin.url}/api/octets: the part for"
                f" {entry(1)['name']} has no Content-Length that is a number of octets ({shown})"
                " (rule octets) (not kept)") in refused.stdout, refused.output
        assert run(location, "get", str(entry(1)["name"])).exit_code == 4  # nothing of it kept
    # found by a probe (2026-11-30): a part of the name without any Content-Length was said not to be the name's
    origin.bulk = lambda names: (part(names[0]).replace(b"Content-Length: %d\r\n" % len(TEXT), b"")
                                 + part(names[1]) + b"--B--\r\n")
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3, refused.output
    assert (f"the part for {entry(1)['name']} has no Content-Length that is a number of octets (none)"
            in refused.stdout), refused.output
    origin.bulk = lambda names: b"".join(part(name) for name in names) + b"--B--\r\n"
    assert run(location, "mirror", "sync").exit_code == 0  # the same names, their parts as they should be
    assert run(location, "get", str(entry(2)["name"])).stdout_bytes == TEXT


def test_a_parts_head_of_field_after_field_is_refused_past_its_bound(origin: Origin, mirror: tuple[Path, str]) -> None:
    """Found by an attack (2026-11-27): each line of a part's head was bounded (``MAX_PART_HEAD``), not their
    number: a part of a hundred thousand header fields (each kept, by its name) was read to its end and its
    octets kept, and one whose fields never end held the sync, its memory growing, for as long as it came."""
    from pdi.network.peers import MAX_PART_HEAD

    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(1)]), 0.0)
    fields = b"".join(b"X-%d: a\r\n" % k for k in range(100_000))
    origin.bulk = lambda names: part(names[0], fields=fields) + b"--B--\r\n"
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3, refused.output
    assert (f"unfetched\t{entry(1)['name']}\tfrom {origin.url}: POST {origin.url}/api/octets: the head of the part"
            f" for {entry(1)['name']} is more than {MAX_PART_HEAD} octets (not kept)") in refused.stdout, refused.output
    assert run(location, "get", str(entry(1)["name"])).exit_code == 4  # nothing of it kept
    # a head of a few fields more than pdi writes is read as any other
    origin.bulk = lambda names: part(names[0], fields=b"X-PDI-SHA256: 0\r\nX-Other: a\r\n") + b"--B--\r\n"
    assert run(location, "mirror", "sync").exit_code == 0
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == TEXT


def test_an_octets_answer_that_drips_is_given_up_at_its_pace_and_its_epilogue_too(
    origin: Origin, mirror: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an attack (2026-11-27): an octets answer read over http.client (a plain ``http://`` origin) was read
    a buffer at a time, each read waiting until its buffer (a MiB) was full, so an origin sending an octet just
    inside each read's timeout was never given up: the pace (``MIN_RATE``) was checked between reads, and there
    was no second read. Nor was the epilogue after the closing boundary paced (8 KiB of it, a month at 29 s an
    octet). A read that can no longer keep the pace, whatever it brings, is cut now."""
    import pdi.network.peers as peers

    location, _ = mirror
    monkeypatch.setattr(peers, "HTTP_TIMEOUT", 1.0)  # the grace before the pace counts, made short
    monkeypatch.setattr(peers, "MIN_RATE", 1 << 20)  # and the pace high: a read of a MiB is given up within a second
    body = b"a line of the origin's text\r\n" * 100
    origin.manifest = lambda q: (200, {}, signed([entry(1, body), entry(2, body)]), 0.0)
    origin.bulk = lambda names: b"".join(part(name, body) for name in names) + b"--B--\r\n"
    origin.bulk_drip = (500, 0.2)  # the first part's head and some of its octets, then 5 octets a second
    started = time.monotonic()
    refused = run(location, "mirror", "sync")
    assert time.monotonic() - started < 30  # else hung: 6,000 octets at 5 a second
    assert refused.exit_code == 3, refused.output
    slow = (f"{origin.url}/api/octets comes at [0-9,]+ octets a second, slower than the 1,048,576 a peer must send:"
            " given up")
    assert re.search(f"unfetched\t{re.escape(str(entry(1)['name']))}\tfrom {origin.url}: {slow} \\(not kept\\)",
                     refused.stdout), refused.output
    assert re.search(f"unfetched\t{re.escape(str(entry(2)['name']))}\tfrom {origin.url}: not read: the answer to POST"
                     f" {origin.url}/api/octets went wrong before its part \\({slow}\\) \\(not kept\\)",
                     refused.stdout), refused.output
    for n in (1, 2):
        assert run(location, "get", str(entry(n)["name"])).exit_code == 4  # nothing of it kept
    # every part whole and in time (read at once: a read as long as they are), then an epilogue that drips: what
    # the parts held is kept, the rest not waited for
    whole = b"".join(part(str(entry(n)["name"]), body) for n in (1, 2)) + b"--B--\r\n"
    monkeypatch.setattr(peers, "READ_AT_MOST", len(whole))
    origin.bulk = lambda names: whole + b"an epilogue " * 1000
    origin.bulk_drip = (len(whole), 0.2)
    started = time.monotonic()
    synced = run(location, "mirror", "sync")
    assert time.monotonic() - started < 30  # else hung: 8 KiB of it read at 5 octets a second
    assert synced.exit_code == 0, synced.output
    assert run(location, "get", str(entry(2)["name"])).stdout_bytes == body


def test_a_signed_size_or_digest_that_no_blob_has_is_refused_by_name_and_the_names_asked_with_it_kept(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """Found by an attack (2026-11-27): an entry's ``size`` was taken if it was a JSON integer, so ``-1`` and
    ``true`` (an ``int`` to Python) were asked for with the names after it, and the part answered for a size of -1
    was refused as the answer's own fault: every later name of the request was refused with that name's words.
    A size is a whole number of octets a catalog can hold (SQLite's 64-bit integer), a digest 64 hex digits."""
    location, _ = mirror
    bad: list[dict[str, object]] = [entry(1, size=-1), entry(2, size=True), entry(3, size=1 << 63),
                                     entry(4, sha256="../" * 20 + "etc"), entry(5, sha256=hashlib.sha256(TEXT).hexdigest().upper())]
    origin.manifest = lambda q: (200, {}, signed([*bad, entry(6), entry(7)]), 0.0)
    origin.bulk = lambda names: b"".join(part(name) for name in names) + b"--B--\r\n"
    origin.octets = TEXT
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    for one in bad:
        assert (f"manifest-name\t{one['name']}\tlisted by {origin.url}: its sha256 and size are not 64 hex digits and"
                " a whole number of octets (rule manifest)") in synced.stdout, synced.output
        assert run(location, "get", str(one["name"])).exit_code == 4
    assert "unfetched" not in synced.stdout
    for n in (6, 7):
        assert run(location, "get", str(entry(n)["name"])).stdout_bytes == TEXT


def test_the_names_after_a_part_that_breaks_the_answer_are_told_unread_not_altered(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """Found by an attack (2026-11-27): once a part of an octets answer broke it (a length other than the signed
    size, a cut), every later name of the request was reported with that part's words and kind: ``altered``, as
    if its own octets had been found to differ from the manifest, though none of them was read."""
    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(1), entry(2), entry(3)]), 0.0)
    origin.bulk = lambda names: (part(names[0]) + part(names[1], TEXT + b"!") + part(names[2]) + b"--B--\r\n")
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    broken = f"{entry(2)['name']} at {origin.url}: 14 octets, its signed manifest says 13"
    assert f"altered\t{entry(2)['name']}\tfrom {origin.url}: {broken} (not kept)" in synced.stdout, synced.output
    assert (f"unfetched\t{entry(3)['name']}\tfrom {origin.url}: not read: the answer to POST {origin.url}/api/octets"
            f" went wrong before its part ({broken}) (not kept)") in synced.stdout, synced.output
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == TEXT  # its part came before: kept
    assert run(location, "get", str(entry(3)["name"])).exit_code == 4


def test_a_manifest_whose_next_page_comes_back_to_one_already_read_is_refused_as_a_loop(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """An origin whose pages go on A, B, A… (each signed, each starting where it was asked to) would be read for
    10,000 pages; a cursor gone on from once is a loop, refused when it comes back (pdi's own cursors are names in
    listing order, which is not their order as text: a page's ``next`` is checked for a loop, not for sorting
    after the last one)."""
    location, _ = mirror
    cursors = {None: "b", "b": "a", "a": "b"}
    asked: list[str | None] = []

    def looping(q: dict[str, str]) -> tuple[int, dict[str, str], bytes, float]:
        asked.append(q.get("after"))
        return 200, {}, signed([], after=q.get("after"), next=cursors[q.get("after")]), 0.0

    origin.manifest = looping
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3, refused.output
    assert asked == [None, "b", "a"]
    assert (f"the manifest {origin.url}/api/manifest?series={SERIES}&limit=1000&after=a: its next page starts after"
            " 'b', where an earlier page's did (a loop): refused") in refused.output, refused.output


def test_a_next_cursor_longer_than_a_url_carries_is_refused_by_its_page_not_a_traceback(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """Found by an attack (2026-11-27): a page's ``next`` goes back to its origin in the next page's URL, and httpx
    refuses a query longer than 65,536 characters with its own ``InvalidURL`` (no ``HTTPError``): a signed page
    whose ``next`` was 70,000 characters ended ``pdi mirror sync`` (and ``audit``, ``verify --signatures URL``)
    in a traceback. What was listed before it is kept, and the page is refused by its URL."""
    location, _ = mirror
    origin.octets = TEXT
    long_cursor = "x" * 70_000
    origin.manifest = lambda q: (200, {}, signed([entry(1)], next=long_cursor), 0.0)
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3, (refused.exception, refused.output)
    said = (f"the manifest {origin.url}/api/manifest?series={SERIES}&limit=1000: its next page starts after a cursor"
            " of 70,000 characters, more than a URL carries to ask for it: refused")
    assert said in refused.output, refused.output
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == TEXT  # listed before it: kept
    audited = run(location, "mirror", "audit")
    assert audited.exit_code == 3 and f"unreachable\t{origin.url}\t{said}" in audited.output, (audited.exception,
                                                                                               audited.output)
    keys = jwk_set_text([KEY.public])
    checked = run(location, "verify", "--signatures", f"{origin.url}/api/manifest?series={SERIES}", "--key", keys)
    assert checked.exit_code == 3, (checked.exception, checked.output)
    assert (f"{origin.url}/api/manifest?series={SERIES}: its next page starts after a cursor of 70,000 characters,"
            " more than a URL carries to ask for it") in checked.output, checked.output


@pytest.mark.parametrize(("listed", "why"), [
    (lambda: entry(1, sha256="x" * 5000), "its sha256 and size are not 64 hex digits and a whole number of octets"),
    (lambda: entry(1, sha256=None), "its sha256 and size are not 64 hex digits and a whole number of octets"),
    (lambda: entry(1, size="12"), "its sha256 and size are not 64 hex digits and a whole number of octets"),
    (lambda: entry(1, name=f"urn:pdi://{SERIES}/2026/11/27/" + "x" * 5000), "is not a versioned name"),
    (lambda: entry(1, name=f"urn:pdi://{SERIES}/2026/13/27/1.text.1"), "month"),
])
def test_an_audit_refuses_a_peer_that_lists_what_no_name_or_digest_can_be(
    origin: Origin, mirror: tuple[Path, str], listed: Callable[[], dict[str, object]], why: str
) -> None:
    """Found by an attack (2026-11-27): an audit kept whatever a peer's signed manifest listed, as it came, in its
    scratch database: digests of 8 MiB and names no archive can hold (up to 10,000 pages of 8 MiB, some 80 GB of
    disk). Each name and digest is checked as a sync checks them now: a peer that lists one that is not is
    unreachable, saying which and why; nothing it listed is compared."""
    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(2), listed()]), 0.0)
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert audited.exit_code == 3, audited.output
    said = next(line for line in audited.output.splitlines() if line.startswith("unreachable\t"))
    assert said.startswith(f"unreachable\t{origin.url}\tits signed manifest of {SERIES} lists "), said
    assert why in said and len(said) < 1000, said
    assert "disagree\t" not in audited.output  # entry(2), which this archive lacks, is no disagreement: not read


def test_an_audit_gives_up_a_peer_that_lists_more_than_it_keeps(
    origin: Origin, mirror: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a peer lists is kept on disk, bounded (``pdi.network.polls.MAX_LISTED``): 2 GiB of names and digests,
    some ten million names of pdi's; 4,000 octets here, past which the peer is given up (``unreachable``)."""
    import pdi.network.polls as polls

    location, _ = mirror
    monkeypatch.setattr(polls, "MAX_LISTED", 4_000)
    origin.manifest = lambda q: (200, {}, signed([entry(n) for n in range(1, 40)]), 0.0)
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert audited.exit_code == 3, audited.output
    assert (f"unreachable\t{origin.url}\tits signed manifest of {SERIES} lists more than 4,000 octets of names and"
            " digests, more than an audit keeps: given up") in audited.output, audited.output
    origin.manifest = lambda q: (200, {}, signed([entry(n) for n in range(1, 20)]), 0.0)
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert "\nunreachable\t" not in audited.output and "19 disagreements" in audited.output, audited.output


@pytest.mark.parametrize("fields", [{"line_ending": []}, {"line_ending": {"lf": 1}}, {"created_at": ["x"] * 3},
                                    {"media_type": {}}, {"stored": []}, {"charset": []}])
def test_a_signed_entry_whose_field_is_a_list_or_an_object_is_refused_by_name_not_a_traceback(
    origin: Origin, mirror: tuple[Path, str], fields: dict[str, object]
) -> None:
    """Found by a hunt (2026-12-01): a signed entry's ``line_ending`` of ``[]`` or ``{}`` (JSON a stranger's origin
    may sign) was looked up in a set, which Python cannot do with a list (``TypeError``): the sync of every name
    ended in a traceback. A field that is no text is that entry's problem; the names with it are kept."""
    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(1, **fields), entry(2)]), 0.0)
    origin.bulk = lambda names: b"".join(part(name) for name in names) + b"--B--\r\n"
    origin.octets = TEXT
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    assert synced.exception is None or isinstance(synced.exception, SystemExit), synced.exception
    assert f"{entry(1)['name']}\tfrom {origin.url}: " in synced.stdout, synced.output
    assert run(location, "get", str(entry(1)["name"])).exit_code == 4
    assert run(location, "get", str(entry(2)["name"])).stdout_bytes == TEXT


def test_an_audit_passes_over_a_name_of_a_series_that_only_unicode_case_rules_call_its_own() -> None:
    """An audit reads only the names of the series audited from a peer's manifest (an origin speaks for its own);
    ``urn:pdi://\u212aey.example.us/…`` (U+212A KELVIN SIGN, a ``k`` to ``str.lower``) is another series' name, passed
    over like any other, not a refusal of the whole manifest (it is no name of ``key.example.us`` pdi can read)."""
    from types import SimpleNamespace

    from pdi.network import polls

    good = {"name": "urn:pdi://key.example.us/2026/11/28/1.text.1", "sha256": "a" * 64, "size": 3}
    kelvin = {**good, "name": "urn:pdi://\u212aey.example.us/2026/11/28/2.text.1"}
    peer = SimpleNamespace(manifest=lambda series: iter([SimpleNamespace(names=[kelvin, good])]))
    # (name, digest, withheld): a peer's listing withholds nothing of its own (only this archive's names are)
    assert list(polls._listed(peer, "key.example.us", "https://peer.example.org")) == [  # type: ignore[arg-type]
        (good["name"], "a" * 64, False)]


def test_an_audit_reads_a_name_a_peer_spells_otherwise_as_the_same_name(origin: Origin, mirror: tuple[Path, str]) -> None:
    """PDI-GRAMMAR §2: a format token and a series are case-insensitive and a version is a number, so a peer
    listing ``1.TEXT.1`` (or ``URN:PDI://EVIL…/2.text.01``) with the same digest agrees with this archive's
    ``1.text.1``: it was told as two names, each "missing" on the other side."""
    location, _ = mirror
    origin.octets = TEXT
    origin.manifest = lambda q: (200, {}, signed([entry(1), entry(2)]), 0.0)
    assert run(location, "mirror", "sync").exit_code == 0
    other = [entry(1, name=f"urn:pdi://{SERIES}/2026/11/27/1.TEXT.1"),
             entry(2, name=f"URN:PDI://{SERIES.upper()}/2026/11/27/2.text.01")]
    origin.manifest = lambda q: (200, {}, signed(other), 0.0)
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert audited.exit_code == 0 and "0 disagreements" in audited.output, audited.output
    origin.manifest = lambda q: (200, {}, signed([entry(1, b"other octets\n", name=other[0]["name"])]), 0.0)
    audited = run(location, "mirror", "audit", "--series", SERIES)  # a digest that differs is told by pdi's name
    assert audited.exit_code == 3, audited.output
    assert f"disagree\turn:pdi://{SERIES}/2026/11/27/1.text.1\t" in audited.output, audited.output


def test_a_serial_or_version_past_the_catalogs_integers_is_refused_by_name_and_the_rest_kept(
    origin: Origin, mirror: tuple[Path, str]
) -> None:
    """Found by an attack (2026-12-02): the grammar bounds no number, and a signed entry of version (or daily serial)
    2**63 was asked for and then refused by the catalog as its batch was kept, which refused the batch whole (exit 7,
    naming neither the name nor the origin): every name signed with it was lost, at each sync again. SQLite's and
    PostgreSQL's integers end at 2**63 - 1 (SQLite's datatype3 §2, PostgreSQL's bigint): a name up to there is kept."""
    location, _ = mirror
    day = f"urn:pdi://{SERIES}/2026/11/27/"
    past = [f"{day}1.text.{1 << 63}", f"{day}{1 << 63}.text.1", f"{day}{10 ** 30}.text.1"]
    gone = f"{day}2.text.{1 << 63}"
    largest = f"{day}3.text.{(1 << 63) - 1}"
    origin.manifest = lambda q: (200, {}, signed([*[entry(0, name=n) for n in past],
                                                  {"name": gone, "withdrawn": "2026-11-27T00:00:00Z"},
                                                  entry(0, name=largest), entry(4)]), 0.0)
    origin.bulk = lambda names: b"".join(part(name) for name in names) + b"--B--\r\n"
    for _ in range(2):  # and the next sync the same: nothing held back by what it cannot keep
        synced = run(location, "mirror", "sync")
        assert synced.exit_code == 3, synced.output
        for name, what in [(past[0], "version"), (past[1], "daily serial"), (past[2], "daily serial"),
                           (gone, "version")]:
            assert (f"manifest-name\t{name}\tlisted by {origin.url}: its {what} is past 9,223,372,036,854,775,807,"
                    " the largest number a catalog holds (rule mirror-name)") in synced.stdout, synced.output
        assert "4 problems" in synced.stdout, synced.output
    for name in past:
        assert run(location, "get", name).exit_code == 4
    assert run(location, "get", largest).stdout_bytes == TEXT
    assert run(location, "get", str(entry(4)["name"])).stdout_bytes == TEXT


@pytest.mark.parametrize("spelt", ["1.text.1", "1.TEXT.1", "1.text.01", "%61.text.1"])
def test_a_new_name_comes_in_under_its_signed_embargo_however_the_origin_spells_it(
    origin: Origin, mirror: tuple[Path, str], spelt: str
) -> None:
    """Found by an attack (2026-12-02): a new name's embargo was matched to its record by the name as the origin
    listed it, so a name listed otherwise than pdi writes it (its format in capitals, a version 01, its series in
    capitals, an id %-escaped) came in with no embargo, and anyone could read it here until the next sync. A series
    and a format token are the same in any case (PDI-GRAMMAR.md, decision 2), and pdi reads a version 01 as 1 and
    %61 as the id a: each is kept under the one name."""
    location, _ = mirror
    until = "2099-01-01T00:00:00.000000Z"
    listed = [f"urn:pdi://{SERIES}/2026/11/27/{spelt}", f"urn:pdi://{SERIES.upper()}/2026/11/27/2.text.1"]
    origin.manifest = lambda q: (200, {}, signed([entry(0, name=listed[0], embargo={"document": until}),
                                                  entry(0, name=listed[1], embargo={"version": until})]), 0.0)
    origin.bulk = lambda names: b"".join(part(name) for name in names) + b"--B--\r\n"
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 0, synced.output
    with Archive.open(location) as archive:
        one, two = key_of(parse_pdi(listed[0])), key_of(parse_pdi(listed[1]))
        assert archive.embargoes_held([one, two]) == {(one, None): until, (two, 1): until}


@pytest.mark.parametrize("pages", [1, 2, "batch of 1"])
def test_a_name_listed_twice_spelt_two_ways_with_two_digests_is_a_conflict_and_the_rest_kept(
    origin: Origin, mirror: tuple[Path, str], pages: int | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by an attack (2026-12-02): the sync took ``1.text.1`` and ``1.TEXT.01`` for two names (the grammar
    reads them as one: PDI-GRAMMAR.md, decision 2, and a version 01 is 1), fetched both, and the catalog refused
    the batch whole for the second digest (exit 5, nothing imported), at every sync again. The first listed is kept,
    the second is a conflict, the other names are kept."""
    location, _ = mirror
    other = b"another text\n"
    twin = f"urn:pdi://{SERIES.upper()}/2026/11/27/1.TEXT.01"
    listed = [entry(1), entry(0, body=other, name=twin), entry(3)]
    if pages == 1:
        origin.manifest = lambda q: (200, {}, signed(listed), 0.0)
    else:  # the twin on the next page, asked for while the first page's names are still being fetched
        if pages != 2:  # each name kept in a batch of its own: the first, maybe, before the twin's page is read
            import pdi.network.mirrors as mirrors

            monkeypatch.setattr(mirrors, "BATCH_NAMES", 1)
        origin.manifest = lambda q: ((200, {}, signed(listed[:1], next="p"), 0.0) if "after" not in q else
                                     (200, {}, signed(listed[1:], after="p"), 0.0))
    origin.bulk = lambda names: b"".join(part(name, other if name == twin else TEXT) for name in names) + b"--B--\r\n"
    first = run(location, "mirror", "sync")
    assert first.exit_code == 3, first.output
    said = (f"conflict\t{entry(1)['name']}\t{origin.url}'s signed manifest lists it twice, spelt otherwise, with"
            f" sha256 {hashlib.sha256(TEXT).hexdigest()} first (kept) and {hashlib.sha256(other).hexdigest()}\n")
    assert first.stdout.count("conflict\t") == 1, first.output
    if pages == "batch of 1":  # the first kept before the twin was looked up, or after: either is said so
        assert said in first.stdout or f"held here with sha256 {hashlib.sha256(TEXT).hexdigest()}" in first.stdout
    else:
        assert said in first.stdout, first.output
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == TEXT
    assert run(location, "get", str(entry(3)["name"])).stdout_bytes == TEXT
    again = run(location, "mirror", "sync")  # the twin is told again, as a conflict with what is held
    assert again.exit_code == 3 and again.stdout.count(f"conflict\t{twin}\theld here with sha256") == 1, again.output
    assert run(location, "verify").exit_code == 0


@pytest.mark.parametrize("access", ["everyone", "PUBLIC", ""])
def test_a_signed_access_that_is_no_rule_is_refused_naming_the_origin_and_nothing_is_fetched(
    origin: Origin, mirror: tuple[Path, str], access: str
) -> None:
    """Found by an attack (2026-12-02): a page signed with an ``access`` that is no series' access stopped the sync
    with exit 1 and ``a series is public, private, hidden, not 'everyone'``, as if the operator had typed it: no
    origin, no manifest, no field named. A series is public, private or hidden (docs/reference/signatures.md)."""
    location, _ = mirror
    origin.manifest = lambda q: (200, {}, signed([entry(1)], access=access), 0.0)
    origin.octets = TEXT
    refused = run(location, "mirror", "sync")
    assert refused.exit_code == 3, refused.output
    assert (f"{origin.url}'s signed manifest of {SERIES} says its access is {access!r}, which is none of public,"
            " private, hidden: refused, and nothing it lists is fetched") in refused.output, refused.output
    assert origin.octets_asked == 0
    assert run(location, "get", str(entry(1)["name"])).exit_code == 4


@pytest.mark.parametrize("replayed", [True, False])
def test_a_name_withdrawn_at_the_origin_before_it_was_held_is_not_copied_when_listed_live_again(
    origin: Origin, mirror: tuple[Path, str], replayed: bool
) -> None:
    """Found by an attack (2026-12-02): a name its origin's manifest listed withdrawn before this mirror held it is
    recorded gone (``410``); a page that listed it live again (an older page replayed, from before the withdrawal,
    or the same page listing it both ways) had it fetched and served here as if it had never been withdrawn. A
    withdrawal is for ever, so such a listing is a conflict, and the name stays gone."""
    location, _ = mirror
    name = str(entry(1)["name"])
    withdrawn = {"name": name, "withdrawn": "2026-11-27T00:00:00Z"}
    origin.bulk = lambda names: b"".join(part(one) for one in names) + b"--B--\r\n"
    if replayed:
        origin.manifest = lambda q: (200, {}, signed([withdrawn]), 0.0)
        assert run(location, "mirror", "sync").exit_code == 0
        gone = run(location, "get", name)
        origin.manifest = lambda q: (200, {}, signed([entry(1), entry(2)]), 0.0)  # the page before it was withdrawn
    else:
        origin.manifest = lambda q: (200, {}, signed([withdrawn, entry(1), entry(2)]), 0.0)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3, synced.output
    assert (f"conflict\t{name}\t{origin.url}'s signed manifest lists it with sha256 {hashlib.sha256(TEXT).hexdigest()},"
            " but it was recorded here as withdrawn there at 2026-11-27T00:00:00Z: not copied, and still gone here"
            ) in synced.stdout, synced.output
    assert synced.stdout.count("conflict\t") == 1, synced.output
    got = run(location, "get", name)
    assert "withdrawn at its origin" in got.output and got.stdout_bytes != TEXT, got.output
    if replayed:
        assert (got.exit_code, got.output) == (gone.exit_code, gone.output)
    assert run(location, "get", str(entry(2)["name"])).stdout_bytes == TEXT
