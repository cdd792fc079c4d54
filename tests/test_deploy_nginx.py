"""docs/deploy/nginx.conf run by Debian's nginx in front of pdi serve --trusted-proxy: what a client sees through it.

The site file is used as it is, its ports, certificate paths and upstream
ports alone changed (:func:`_site`: each change must find its text, so the
file cannot drift from what is tested), inside a main configuration of
the test's (:mod:`support.nginxnode`); the certificate is a self-signed one
``openssl req`` makes for 127.0.0.1. pdi serve runs the command line of
docs/deploy/pdi.service (its ports changed). Then, through
``https://127.0.0.1:PORT``: N2R's exact bytes, a Range of them, the absolute
URLs pdi makes (``Link``, a TimeGate's ``Location``, N2Ls, OAI-PMH, an
annotation's IRI) all ``https://127.0.0.1:PORT/…``, the sign-in cookie
``Secure``, a 50 MB deposit streamed through (not spooled by nginx) in
bounded memory, and plain http answered by a redirect to https. Sent to
pdi directly from an address that is not the proxy's, forged
``X-Forwarded-*`` fields change nothing (no URL, not the client the access
log names); a bad one from the proxy is ``400``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from pdi._ports import free_port
from pdi.archive import Archive, Content
from support.nginxnode import NginxNode, nginx

DEPLOY = Path(__file__).resolve().parents[1] / "docs" / "deploy"
#: The metrics token the unit's environment gives pdi serve (the operator's guide puts it in /etc/pdi/pdi.env).
METRICS_TOKEN = "c0ffee" * 8
S = "library.example.us"
URL = "https://www.example.org/news"
TEXT = "Zoë's notes, line one\nline two\n".encode() * 300
#: The deposit streamed through the proxy, and how much pdi serve's peak resident memory may grow taking it.
UPLOAD = 50 << 20
GROWTH_AT_MOST = 24 << 20
SERVING = re.compile(r"at http://127\.0\.0\.1:(\d+)/ \(replay at http://127\.0\.0\.1:(\d+)/\)")


@dataclass
class Site:
    """nginx in front of pdi serve: the proxy's https and http base URLs, pdi's own, and what was deposited."""

    https: str
    http: str
    direct: str
    cert: Path
    nginx: NginxNode
    server: subprocess.Popen[str]
    name: str
    deposit_token: str
    read_token: str
    access_log: Path

    def client(self) -> httpx.Client:
        """A client that trusts the site's certificate alone."""
        return httpx.Client(verify=ssl.create_default_context(cafile=str(self.cert)), timeout=120)


def _certificate(where: Path) -> tuple[Path, Path]:
    """A self-signed certificate (P-256) for 127.0.0.1 and the site's two names, and its key."""
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:pdi.example.org,DNS:replay.pdi.example.org",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60)
    return cert, key


def _loopback6() -> str:
    """``[::1]`` where this machine has IPv6 on loopback, else another loopback address for the file's IPv6
    ``listen`` lines (a container without IPv6)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return "127.0.0.2"
    return "[::1]"


def _site(tls: int, plain: int, upstream: int, replay: int, cert: Path, key: Path) -> str:
    """docs/deploy/nginx.conf with its ports (on 127.0.0.1 and ::1), certificate and upstreams changed."""
    text = (DEPLOY / "nginx.conf").read_text()
    six = _loopback6()
    changes = [
        (r"listen 80;", f"listen 127.0.0.1:{plain};"),
        (r"listen \[::\]:80;", f"listen {six}:{plain};"),
        (r"listen 443 ssl", f"listen 127.0.0.1:{tls} ssl"),
        (r"listen \[::\]:443 ssl", f"listen {six}:{tls} ssl"),
        (r"https://\$host\$request_uri", f"https://$host:{tls}$request_uri"),
        (r"/etc/letsencrypt/live/pdi\.example\.org/fullchain\.pem", str(cert)),
        (r"/etc/letsencrypt/live/pdi\.example\.org/privkey\.pem", str(key)),
        (r"server 127\.0\.0\.1:8000;", f"server 127.0.0.1:{upstream};"),
        (r"server 127\.0\.0\.1:8001;", f"server 127.0.0.1:{replay};"),
    ]
    for pattern, replacement in changes:
        text, count = re.subn(pattern, replacement.replace("\\", "\\\\"), text)
        assert count, f"docs/deploy/nginx.conf no longer has {pattern!r}: change the test with it"
    return text


def _unit_command() -> list[str]:
    """pdi serve as docs/deploy/pdi.service runs it, on any free ports, with one worker, and without its
    ``--base-url``: every URL is then made from what the proxy says (X-Forwarded-*), which is what is tested."""
    line = next(line for line in (DEPLOY / "pdi.service").read_text().splitlines() if line.startswith("ExecStart="))
    argv = shlex.split(line.removeprefix("ExecStart="))
    assert argv[:2] == ["/opt/pdi/bin/pdi", "serve"] and argv[argv.index("--trusted-proxy") + 1] == "127.0.0.1"
    at = argv.index("--base-url")
    argv = [arg if arg != "8000" else "0" for arg in argv[2:at] + argv[at + 2:]]
    return [sys.executable, "-c", "from pdi.cli import main; main()", "serve", *argv, "--workers", "1"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("deploy-nginx")
    location = root / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.deposit(S, [Content(TEXT, "text")], foreign_id=URL).names[0])
        _, deposit_token = archive.add_token("upload", role="deposit", series=[S])
        _, read_token = archive.add_token("reader", role="read", series=[S])
    cert, key = _certificate(root)
    access = (root / "access.log").open("wb")  # the unit's --access-log -: standard output
    server = subprocess.Popen(_unit_command(), env={**os.environ, "PDI_ARCHIVE": str(location),
                                                    "PDI_METRICS_TOKEN": METRICS_TOKEN},  # as /etc/pdi/pdi.env gives it
                              stdin=subprocess.DEVNULL, stdout=access, stderr=subprocess.PIPE, text=True)
    access.close()
    assert server.stderr is not None
    first = server.stderr.readline()
    threading.Thread(target=server.stderr.read, daemon=True).start()  # the access log and warnings: not kept
    try:
        found = SERVING.search(first)
        assert found is not None, first
        upstream, replay = int(found[1]), int(found[2])
        tls, plain = free_port(), free_port()
        with nginx(_site(tls, plain, upstream, replay, cert, key), root / "nginx",
                   lambda: socket.create_connection(("127.0.0.1", tls), timeout=1).close()) as node:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.get(f"http://127.0.0.1:{upstream}/healthz", timeout=5)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and server.poll() is None, "pdi serve did not answer"
                    time.sleep(0.05)
            yield Site(f"https://127.0.0.1:{tls}", f"http://127.0.0.1:{plain}", f"http://127.0.0.1:{upstream}",
                       cert, node, server, name, deposit_token, read_token, root / "access.log")
    finally:
        server.terminate()
        server.wait(timeout=30)
        assert server.stderr is not None
        server.stderr.close()


def _links(field: str) -> list[str]:
    """The URLs pdi made in a ``Link`` field: neither a PDI (``urn:pdi:``) nor the captured page's own."""
    return [link for link in re.findall(r"<([^>]*)>", field) if link.startswith("http") and link != URL]


def _from_elsewhere() -> httpx.Client:
    """A client whose connections come from 127.0.0.2: not the trusted proxy (127.0.0.1)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=30)


FORGED = {"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https", "X-Forwarded-Port": "8443",
          "X-Forwarded-For": "203.0.113.9"}


def test_n2r_through_the_proxy_answers_the_exact_bytes_and_names_https_urls(site: Site) -> None:
    with site.client() as client:
        for _ in range(3):  # the resolver's answer, then those the connection makes and keeps (pdi.server.process.cache)
            answer = client.get(f"{site.https}/uri-res/N2R?{site.name}")
            assert answer.status_code == 200 and answer.content == TEXT
            links = _links(answer.headers["link"])
            assert any("/timegate/" in link for link in links) and any("/timemap/" in link for link in links), links
            assert all(link.startswith(f"{site.https}/") for link in links), links
        part = client.get(f"{site.https}/uri-res/N2R?{site.name}", headers={"Range": "bytes=1000-4999"})
        assert part.status_code == 206 and part.content == TEXT[1000:5000]
        assert part.headers["content-range"] == f"bytes 1000-4999/{len(TEXT)}"
    # asked of pdi directly, over http: its own URLs, kept apart from the proxy's
    direct = httpx.get(f"{site.direct}/uri-res/N2R?{site.name}")
    assert all(link.startswith(f"{site.direct}/") for link in _links(direct.headers["link"]))
    with site.client() as client:
        again = client.get(f"{site.https}/uri-res/N2R?{site.name}")
    assert all(link.startswith(f"{site.https}/") for link in _links(again.headers["link"]))


def test_every_absolute_url_pdi_makes_behind_the_proxy_is_the_clients(site: Site) -> None:
    generic = site.name.rsplit(".", 2)[0]
    with site.client() as client:
        gate = client.get(f"{site.https}/timegate/{URL}")
        assert gate.status_code == 302 and gate.headers["location"].startswith(f"{site.https}/uri-res/N2R?"), gate.headers
        listed = client.get(f"{site.https}/uri-res/N2Ls?{site.name}")
        assert listed.status_code == 200 and f"{site.https}/uri-res/N2R?" in listed.text, listed.text
        timemap = client.get(f"{site.https}/timemap/link/{URL}")
        assert timemap.status_code == 200 and _links(timemap.text)
        assert all(link.startswith(f"{site.https}/") for link in _links(timemap.text)), timemap.text
        oai = client.get(f"{site.https}/oai?verb=Identify")
        assert f"<baseURL>{site.https}/oai</baseURL>" in oai.text, oai.text
        described = client.get(f"{site.https}/uri-res/N2C?{generic}")
        for text in (gate.text, listed.text, timemap.text, oai.text, described.text, gate.headers.get("link", "")):
            assert site.direct not in text and "http://127.0.0.1" not in text
        viewed = client.get(f"{site.https}/view", params={"pdi": site.name})
        assert viewed.status_code == 200 and "http://127.0.0.1" not in viewed.text


def test_the_sign_in_cookie_is_secure_behind_the_https_proxy(site: Site) -> None:
    form = {"token": site.read_token, "next": "/series"}
    with site.client() as client:
        answer = client.post(f"{site.https}/signin", data=form, headers={"Origin": site.https})
    assert answer.status_code == 303, answer.text
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("pdi-token=") and "; Secure" in cookie and "HttpOnly" in cookie
    # pdi asked directly over http: the same form, a cookie without Secure (a browser would not send it back)
    plain = httpx.post(f"{site.direct}/signin", data=form, headers={"Origin": site.direct})
    assert plain.status_code == 303 and "Secure" not in plain.headers["set-cookie"]


def test_a_50_mb_deposit_streams_through_the_proxy_in_bounded_memory(site: Site) -> None:
    block = hashlib.sha256(b"upload").digest() * (1 << 15)  # 1 MiB
    expected = hashlib.sha256(block * (UPLOAD // len(block))).hexdigest()

    def body() -> Iterator[bytes]:
        for _ in range(UPLOAD // len(block)):
            yield block

    status = Path(f"/proc/{site.server.pid}/status")
    with site.client() as client:
        # a small deposit first: what the first one imports and opens is not what a large one costs
        warm = client.post(f"{site.https}/api/deposit", params={"series": S, "format": "octet-stream"},
                           content=block * 2, headers={"Authorization": f"Bearer {site.deposit_token}"})
        assert warm.status_code == 201, warm.text
        before = _kib(status.read_text(), "VmHWM")
        answer = client.post(f"{site.https}/api/deposit", params={"series": S, "format": "octet-stream"},
                             content=body(), headers={"Authorization": f"Bearer {site.deposit_token}",
                                                      "Content-Type": "application/octet-stream"})
        grown = (_kib(status.read_text(), "VmHWM") - before) * 1024
        assert answer.status_code == 201, answer.text
        assert answer.headers["location"].startswith("/uri-res/N2R?")
        # read back through the proxy: a 50 MB answer passes through nginx's memory buffers, never a file
        got = hashlib.sha256()
        with client.stream("GET", f"{site.https}{answer.headers['location']}") as back:
            assert back.status_code == 200
            for piece in back.iter_bytes():
                got.update(piece)
    assert got.hexdigest() == expected
    assert grown < GROWTH_AT_MOST, f"pdi serve's peak grew {grown >> 20} MiB taking {UPLOAD >> 20} MiB"
    log = site.nginx.error_log
    assert "buffered to a temporary file" not in log, log[-2000:]


def _kib(status: str, field: str) -> int:
    return int(next(line for line in status.splitlines() if line.startswith(f"{field}:")).split()[1])


def test_metrics_are_scraped_through_the_proxy_with_the_token_alone(site: Site) -> None:
    # the Prometheus job of docs/reference/operate.md: https to the resolver's host name, the token as bearer
    job = (DEPLOY.parent / "reference" / "operate.md").read_text("utf-8")
    assert "    scheme: https\n" in job and "authorization: {credentials_file:" in job
    with site.client() as client:
        scraped = client.get(f"{site.https}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert scraped.status_code == 200, scraped.text
        assert "\npdi_http_requests_total{" in scraped.text
        for sent in ({}, {"Authorization": "Bearer not-the-token"}):
            refused = client.get(f"{site.https}/metrics", headers=sent)
            assert refused.status_code == 403 and "--metrics-token" in refused.json()["detail"]


def test_plain_http_is_sent_to_https(site: Site) -> None:
    answer = httpx.get(f"{site.http}/uri-res/N2R?{site.name}")
    assert answer.status_code == 301
    assert answer.headers["location"] == f"{site.https}/uri-res/N2R?{site.name}"


def test_the_replay_origin_is_served_under_its_own_name(site: Site) -> None:
    with site.client() as client:
        answer = client.get(f"{site.https}/", headers={"Host": "replay.pdi.example.org"})
    # the replay origin's answer (it serves only /replay/…), not the resolver's home page
    assert answer.status_code == 404 and "replay origin" in answer.text, answer.text
    assert "content-security-policy" in answer.headers


def test_forwarded_fields_sent_straight_to_pdi_by_anyone_else_are_ignored(site: Site) -> None:
    with _from_elsewhere() as client:
        for _ in range(2):  # the resolver's answer and the connection's
            answer = client.get(f"{site.direct}/uri-res/N2R?{site.name}", headers=FORGED)
            assert answer.status_code == 200 and answer.content == TEXT
            links = _links(answer.headers["link"])
            assert links and all(link.startswith(f"{site.direct}/") for link in links), links
        gate = client.get(f"{site.direct}/timegate/{URL}", headers=FORGED)
        assert gate.headers["location"].startswith(f"{site.direct}/"), gate.headers
        form = {"token": site.read_token, "next": "/"}
        signed = client.post(f"{site.direct}/signin", data=form, headers={**FORGED, "Origin": "https://evil.example:8443"})
        assert signed.status_code == 403 and "set-cookie" not in signed.headers


@pytest.mark.parametrize(("field", "value"), [
    ("X-Forwarded-Host", "evil.example/path?"), ("X-Forwarded-Host", "user@evil.example"),
    ("X-Forwarded-Host", "evil.example:99999"), ("X-Forwarded-Proto", "javascript"),
    ("X-Forwarded-Port", "80a"), ("X-Forwarded-For", "not an address"),
])
def test_a_bad_forwarded_value_from_the_proxy_is_400_and_names_it(site: Site, field: str, value: str) -> None:
    for path in (f"/uri-res/N2R?{site.name}", f"/timegate/{URL}"):
        answer = httpx.get(f"{site.direct}{path}", headers={field: value})  # from 127.0.0.1, the trusted proxy
        assert answer.status_code == 400, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
        assert field in answer.json()["detail"] and "evil.example" not in answer.headers.get("link", "")


def test_the_access_log_names_the_client_the_proxy_names_and_no_one_elses(site: Site) -> None:
    told = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pdi.example.org", "X-Forwarded-For": "198.51.100.23"}
    spelt = site.name.replace("urn:", "URN:", 1)  # a spelling of the name asked nowhere else: its first answer made anew
    for _ in range(3):  # made by the resolver or the connection, then from the cache the connection answers from
        assert httpx.get(f"{site.direct}/uri-res/N2R?{spelt}", headers=told).status_code == 200  # from 127.0.0.1
    with _from_elsewhere() as client:
        assert client.get(f"{site.direct}/uri-res/N2R?{spelt}", headers=FORGED).status_code == 200
    deadline = time.monotonic() + 10
    while True:
        lines = [line for line in site.access_log.read_text().splitlines() if spelt in line]
        if len(lines) == 4 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert [line.split(" ", 1)[0] for line in lines] == ["198.51.100.23"] * 3 + ["127.0.0.2"], lines


def test_the_deploy_pages_check_from_outside_prints_what_it_shows(site: Site) -> None:
    """docs/how-to/deploy.md's step 6, its ``your.host`` this site's: ``/readyz`` over https is pdi's answer, and
    plain http's ``Location`` (the line ``grep -i '^location'`` keeps of ``curl -sI``'s head) is the same path over
    https."""
    page = (DEPLOY.parent / "how-to" / "deploy.md").read_text("utf-8")
    step = page.split("## 6. ", 1)[1].split("\n## ", 1)[0]
    [lines] = re.findall(r"^```sh\n(.*?)^```", step, flags=re.MULTILINE | re.DOTALL)
    [shown] = re.findall(r"^```text\n(.*?)^```", step, flags=re.MULTILINE | re.DOTALL)
    asked, headed = lines.splitlines()
    assert shlex.split(asked)[:2] == ["curl", "-s"] and shlex.split(headed)[:2] == ["curl", "-sI"]
    assert headed.endswith("| grep -i '^location'")
    with site.client() as client:
        ready = client.get(shlex.split(asked)[2].replace("https://your.host", site.https))
    head = httpx.head(shlex.split(headed)[2].replace("http://your.host", site.http))
    location = [f"{name.decode()}: {value.decode()}" for name, value in head.headers.raw if name.lower() == b"location"]
    printed = ready.text + "\n" + "".join(f"{line}\n" for line in location)
    assert printed == shown.replace("https://your.host", site.https)
