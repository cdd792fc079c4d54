"""Resolution across archives (issue 27 §4) and the legacy rescue of 1990s I2R names (§5), over real processes.

Three archives: A (SQLite) holds the series ``a.example.us`` and a later
capture of ``http://www.whitehouse.gov/``; B (SQLite) holds a copy of A's
series under the same names (imported from A's bag, as a mirror holds it);
C (PostgreSQL) holds only ``c.example.us``, with captures of
``http://www.whitehouse.gov/WH/Welcome.html``. A serves its registry (the
authority of ``a.example.us`` is A, its mirror B) signed with its key; a
dnsmasq on 127.0.0.1 serves NAPTR records (RFC 3404). C is served three
ways: with A's registry loaded by URL, with ``--dns`` only, and (after A is
stopped) with the registry from a file.
"""

from __future__ import annotations

import datetime
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from server_helpers import Clock, serving, stop

from pdi.archive import Archive, Content
from support.dnsnode import dnsmasq
from support.pgcluster import TemporaryCluster

A_SERIES = "a.example.us"
C_SERIES = "c.example.us"
HOME = "http://www.whitehouse.gov/"
WELCOME = "http://www.whitehouse.gov/WH/Welcome.html"
#: The 1990s names (PDI-GRAMMAR §2.4, §2.11): the White House server's, whose archive is gone.
LEGACY_HOME = "urn:pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1"
LEGACY_WELCOME_SAME_DAY = "urn:pdi://oma.eop.gov.us/1995/03/01/http%3a%2f%2fwww%2ewhitehouse%2egov%2fWH%2fWelcome%2ehtml.html.1"
LEGACY_WELCOME_EARLIER = "urn:pdi://oma.eop.gov.us/1994/06/01/http%3a%2f%2fwww%2ewhitehouse%2egov%2fWH%2fWelcome%2ehtml.html.1"
LEGACY_NOWHERE = "urn:pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2fnowhere%2ehtml.html.1"



def pdi(*args: str, archive: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args, "--archive", str(archive)],
                          capture_output=True, text=True, timeout=120)


def _deposit_at(archive: Archive, clock: Clock, when: str, series: str, body: bytes, url: str | None = None) -> str:
    clock.now = datetime.datetime.fromisoformat(when).replace(tzinfo=datetime.UTC)
    return str(archive.deposit(series, [Content(body, "html" if url else "text")], foreign_id=url)[0])


@dataclass
class Network:
    a_url: str
    b_url: str
    c_registry: str
    c_dns: str
    a_name: str
    a_home: str
    jws_file: Path
    other_key: Path
    a_process: subprocess.Popen[str]
    c_location: str
    dns_server: str
    a_dir: Path
    a_key: Path


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory, pg_cluster: TemporaryCluster) -> Iterator[Network]:
    root = tmp_path_factory.mktemp("federation")
    a_dir, b_dir = root / "a", root / "b"
    c_location = pg_cluster.create_schema("pdi_federation_c")
    clock = Clock(datetime.datetime(2026, 11, 20, tzinfo=datetime.UTC))
    with Archive.init(str(a_dir), clock=clock) as a:
        a.add_series(A_SERIES)
        a_name = _deposit_at(a, clock, "2026-11-20T09:00:00", A_SERIES, b"the minutes of A\n")
        a_home = _deposit_at(a, clock, "2026-11-21T10:00:00", A_SERIES, b"<h1>The White House, 2026</h1>", HOME)
    with Archive.init(str(c_location), clock=clock) as c:
        c.add_series(C_SERIES)
        _deposit_at(c, clock, "1995-03-01T12:00:00", C_SERIES, b"<h1>Welcome to the White House</h1>", WELCOME)
    assert pdi("export", str(root / "bag"), "--series", A_SERIES, archive=a_dir).returncode == 0
    Archive.init(str(b_dir)).close()
    made = pdi("import", str(root / "bag"), archive=b_dir)
    assert made.returncode == 0, made.stderr
    assert pdi("keys", "init", archive=a_dir).returncode == 0
    other = root / "other"
    Archive.init(str(other)).close()
    assert pdi("keys", "init", archive=other).returncode == 0
    other_key = root / "other-key.json"
    other_key.write_text(pdi("keys", "show", "--jwks", archive=other).stdout)
    with ExitStack() as stack:
        a_process, a_port = stack.enter_context(serving(a_dir))
        _, b_port = stack.enter_context(serving(b_dir))
        a_url, b_url = f"http://127.0.0.1:{a_port}/", f"http://127.0.0.1:{b_port}/"
        assert pdi("registry", "add", A_SERIES, a_url, archive=a_dir).returncode == 0
        added = pdi("registry", "add", A_SERIES, b_url, "--mirror", archive=a_dir)
        assert added.returncode == 0 and added.stdout.strip() == f"{A_SERIES}\t{a_url}\t{b_url}", added
        jws_file = root / "registry.jws"
        jws_file.write_text(pdi("registry", "show", "--jws", archive=a_dir).stdout)
        a_key = root / "a-key.json"
        a_key.write_text(pdi("keys", "show", "--jwks", archive=a_dir).stdout)
        node = stack.enter_context(dnsmasq([
            # RFC 3404 §4: a terminal "U" rule whose output is A's THTTP (RFC 2169) base
            f"--naptr-record={A_SERIES},100,10,U,THTTP+N2R+N2L+N2Ls,!^urn:pdi:.*$!{a_url}!",
            # a rule of the same order for another protocol: skipped
            f"--naptr-record={A_SERIES},100,20,U,z3950+N2L,!^.*$!z3950://127.0.0.1/!",
            # a series whose rule leads to a scheme that is no resolver's
            "--naptr-record=ftp.example.us,100,10,U,THTTP+N2R,!^.*$!ftp://127.0.0.1/pub/!",
            "--naptr-record=js.example.us,100,10,U,THTTP+N2R,!^.*$!javascript:alert(1)//!",
            # "S": an SRV record names the host and port (RFC 2782)
            "--naptr-record=srv.example.us,100,10,S,THTTP+N2R+N2L,,_http._tcp.srv.example.us",
            f"--srv-host=_http._tcp.srv.example.us,localhost,{a_port}",
            # "A": the replacement is the host, http://HOST/ (port 80: no resolver listens there in the tests)
            "--naptr-record=down.example.us,100,10,A,THTTP+N2R+N2Ls,,localhost",
            # a non-terminal rule: the next lookup is at the replacement
            "--naptr-record=moved.example.us,100,10,,,,a.example.us",
            # a name for this host (its /etc/hosts: loopback), not an address: known only by looking it up
            f"--naptr-record=named.example.us,100,10,U,THTTP+N2R,!^.*$!http://{socket.gethostname()}:{a_port}/!",
        ]))
        key_url = f"{a_url}api/keys"
        _, c_reg_port = stack.enter_context(serving(
            c_location, "--registry", f"{a_url}.well-known/pdi-registry", "--registry-key", key_url))
        _, c_dns_port = stack.enter_context(serving(c_location, "--dns", node.server, "--dns-private"))
        yield Network(a_url, b_url, f"http://127.0.0.1:{c_reg_port}/", f"http://127.0.0.1:{c_dns_port}/",
                      a_name, a_home, jws_file, other_key, a_process, c_location, node.server, a_dir, a_key)


def get(url: str, **headers: str) -> httpx.Response:
    return httpx.get(url, headers=headers, timeout=30, follow_redirects=False)


def test_registry_is_served_signed(network: Network) -> None:
    from pdi.federation.registry import verify_registry
    from pdi.signing import parse_jwks

    answer = get(f"{network.a_url}.well-known/pdi-registry")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/jose")
    keys = parse_jwks(get(f"{network.a_url}api/keys").text, "A's keys")
    registry = verify_registry(answer.text.strip(), keys, "A's registry")
    assert registry.resolvers(A_SERIES) == (network.a_url, network.b_url)
    assert verify_registry(network.jws_file.read_text().strip(), keys, "pdi registry show --jws") == registry


@pytest.mark.parametrize("text", [b"{bad", b'{"series": {"x.example.us": [1]}}'])
def test_a_broken_registry_file_is_the_servers_fault_said_without_its_path(
    tmp_path: Path, text: bytes, caplog: pytest.LogCaptureFixture,
) -> None:
    """The request for /.well-known/pdi-registry is fine, the operator's registry.json is not: 500 (not 400), and
    the file's path and what is wrong in it go to the server's log, not to the client."""
    from starlette.testclient import TestClient

    from pdi.server import create_app

    location = tmp_path / "e"
    Archive.init(str(location)).close()
    assert pdi("keys", "init", archive=location).returncode == 0
    (location / "registry.json").write_bytes(text)
    with TestClient(create_app(str(location))) as client, caplog.at_level("ERROR", logger="pdi.federation"):
        answer = client.get("/.well-known/pdi-registry")
    assert answer.status_code == 500 and answer.headers["content-type"] == "application/problem+json"
    assert "registry cannot be read" in answer.json()["detail"]
    assert str(tmp_path) not in answer.text and "registry.json" not in answer.text
    assert any(str(location / "registry.json") in record.getMessage() for record in caplog.records), caplog.text


def test_registry_answers_302_to_the_authority(network: Network) -> None:
    query = network.a_name
    answer = get(f"{network.c_registry}uri-res/N2R?{query}")
    assert answer.status_code == 302 and answer.headers["location"] == f"{network.a_url}uri-res/N2R?{query}"
    followed = httpx.get(answer.headers["location"], timeout=30)
    assert followed.status_code == 200 and followed.content == b"the minutes of A\n"
    for service in ("N2L", "N2C"):
        moved = get(f"{network.c_registry}uri-res/{service}?{query}")
        assert moved.status_code == 302 and moved.headers["location"] == f"{network.a_url}uri-res/{service}?{query}"
    shown = get(f"{network.c_registry}view?pdi={query}")
    assert shown.status_code == 302 and shown.headers["location"].startswith(f"{network.a_url}view?pdi=")


def test_registry_n2ls_lists_the_authority_and_the_mirror(network: Network) -> None:
    answer = get(f"{network.c_registry}uri-res/N2Ls?{network.a_name}")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/uri-list")
    urls = [line for line in answer.text.splitlines() if line and not line.startswith("#")]
    assert urls == [f"{network.a_url}uri-res/N2R?{network.a_name}", f"{network.b_url}uri-res/N2R?{network.a_name}"]
    for url in urls:  # the mirror serves the same bytes under the same name
        assert httpx.get(url, timeout=30).content == b"the minutes of A\n"


def test_own_names_and_unknown_series_are_untouched(network: Network) -> None:
    assert get(f"{network.c_registry}uri-res/N2R?urn:pdi://{C_SERIES}/2026/11/20/1.text.1").status_code == 404
    assert get(f"{network.c_registry}uri-res/N2R?urn:pdi://nobody.example.us/2026/11/20/1.text.1").status_code == 404


def test_dns_naptr_answers_302_to_the_authority(network: Network) -> None:
    answer = get(f"{network.c_dns}uri-res/N2R?{network.a_name}")
    assert answer.status_code == 302 and answer.headers["location"] == f"{network.a_url}uri-res/N2R?{network.a_name}"
    listed = get(f"{network.c_dns}uri-res/N2Ls?{network.a_name}")
    assert [u for u in listed.text.splitlines() if u and not u.startswith("#")] == [
        f"{network.a_url}uri-res/N2R?{network.a_name}"]


def test_without_dns_private_a_resolver_at_a_loopback_address_is_neither_probed_nor_named(network: Network) -> None:
    # the same DNS, without --dns-private: A (at 127.0.0.1, as the DNS names it) is a stranger's pointer into this
    # resolver's own network: not sent to, not listed; the name is as unknown as any other
    with serving(network.c_location, "--dns", network.dns_server) as (_, port):
        base = f"http://127.0.0.1:{port}/"
        answer = get(f"{base}uri-res/N2R?{network.a_name}")
        assert answer.status_code == 404 and "location" not in answer.headers
        listed = get(f"{base}uri-res/N2Ls?{network.a_name}")
        assert network.a_url not in listed.text
        # a resolver the DNS names by a host name: what the name resolves to is checked as it is connected to
        # (never probed there, never sent there: to this resolver it is as if down)
        named = "urn:pdi://named.example.us/2026/11/20/1.text.1"
        refused = get(f"{base}uri-res/N2R?{named}")
        assert refused.status_code == 503 and "location" not in refused.headers, refused.headers
        answer = get(f"{network.c_dns}uri-res/N2R?{named}")  # --dns-private: sent there
        assert answer.status_code == 302, answer.text
        assert answer.headers["location"] == f"http://{socket.gethostname()}:{network.a_url.rsplit(':', 1)[1]}uri-res/N2R?{named}"
        refused = subprocess.run([sys.executable, "-m", "pdi", "serve", "--dns-private", "--archive",
                                  network.c_location], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and "--dns-private" in refused.stderr and "--dns HOST:PORT" in refused.stderr


def test_dns_srv_and_non_terminal_rules(network: Network) -> None:
    port = network.a_url.rsplit(":", 1)[1].rstrip("/")
    name = "urn:pdi://srv.example.us/2026/11/20/1.text.1"
    answer = get(f"{network.c_dns}uri-res/N2L?{name}")
    assert answer.status_code == 302 and answer.headers["location"] == f"http://localhost:{port}/uri-res/N2L?{name}"
    moved = "urn:pdi://moved.example.us/2026/11/20/1.text.1"
    answer = get(f"{network.c_dns}uri-res/N2R?{moved}")
    assert answer.status_code == 302 and answer.headers["location"] == f"{network.a_url}uri-res/N2R?{moved}"


def test_dns_a_rule_and_every_resolver_down(network: Network) -> None:
    name = "urn:pdi://down.example.us/2026/11/20/1.text.1"
    listed = get(f"{network.c_dns}uri-res/N2Ls?{name}")
    assert listed.status_code == 200 and f"http://localhost/uri-res/N2R?{name}" in listed.text.splitlines()
    answer = get(f"{network.c_dns}uri-res/N2R?{name}")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "30"
    assert "every resolver known for down.example.us is down (http://localhost/)" in answer.json()["detail"]
    # the viewer says the same to a reader: not "not in this archive" (404), but down for now (503)
    view = f"{network.c_dns}view?pdi={quote(name, safe='')}"
    page = httpx.get(view, headers={"Accept": "text/html"}, timeout=30)
    assert page.status_code == 503 and page.headers["retry-after"] == "30"
    assert page.headers["content-type"].startswith("text/html") and "Not in this archive" not in page.text
    assert "every resolver known for down.example.us is down (http://localhost/)" in page.text
    # and so does its N2R address followed in a browser: the same page, its status and Retry-After kept
    followed = httpx.get(f"{network.c_dns}uri-res/N2R?{name}", headers={"Accept": "text/html"}, timeout=30)
    assert followed.status_code == 503 and followed.headers["retry-after"] == "30"
    assert followed.headers["content-type"].startswith("text/html") and 'id="unavailable"' in followed.text
    assert "accept" in followed.headers["vary"].lower()
    _shown_in_chromium(view, "every-resolver-down", "unavailable", "This name is held elsewhere, and every resolver")


@pytest.mark.parametrize("series", ["ftp.example.us", "js.example.us"])
def test_dns_answer_of_another_scheme_is_ignored(network: Network, series: str) -> None:
    answer = get(f"{network.c_dns}uri-res/N2R?urn:pdi://{series}/2026/11/20/1.text.1")
    assert answer.status_code == 404 and "location" not in answer.headers


def test_registry_signed_by_another_key_is_refused(network: Network, tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0", "--archive", network.c_location,
         "--registry", str(network.jws_file), "--registry-key", str(network.other_key)],
        capture_output=True, text=True, timeout=60)
    assert process.returncode == 3, process.stderr
    # which registry was refused, and why, in the words docs/reference/federation.md quotes
    assert (f"pdi: integrity check failed: the registry {network.jws_file}: the JWS is signed by the key"
            in process.stderr and "which is not one of the keys it is checked with" in process.stderr), process.stderr
    assert "pdi: serving" not in process.stderr
    header, payload, signature = network.jws_file.read_text().strip().split(".")
    changed = tmp_path / "changed.jws"
    import base64

    body = base64.urlsafe_b64decode(payload + "==").replace(b"127.0.0.1", b"127.0.0.2")
    changed.write_text(f"{header}.{base64.urlsafe_b64encode(body).rstrip(b'=').decode()}.{signature}")
    process = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0", "--archive", network.c_location,
         "--registry", str(changed), "--registry-key", str(network.a_key)],
        capture_output=True, text=True, timeout=60)
    assert process.returncode == 3, process.stderr
    assert f"pdi: integrity check failed: the registry {changed}: the JWS signature does not verify" in process.stderr
    # by URL, and with a key given inline: the URL is named
    url = f"{network.a_url}.well-known/pdi-registry"
    process = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0", "--archive", network.c_location,
         "--registry", url, "--registry-key", network.other_key.read_text()], capture_output=True, text=True, timeout=60)
    assert process.returncode == 3 and f"the registry {url}: the JWS is signed by the key" in process.stderr, process.stderr


def test_a_registry_without_its_key_is_refused(network: Network) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--archive", network.c_location,
         "--registry", str(network.jws_file)], capture_output=True, text=True, timeout=60)
    assert process.returncode == 2 and "--registry-key" in process.stderr


def test_a_registry_key_without_a_registry_is_a_usage_error(network: Network) -> None:
    """--registry-key is only what each --registry is checked with: alone it would be ignored, silently. (One
    worker: were it served, the timeout's kill would leave no worker behind.)"""
    process = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--port", "0", "--workers", "1", "--archive", network.c_location,
         "--registry-key", str(network.a_key)], capture_output=True, text=True, timeout=30)
    assert process.returncode == 2, process.stderr
    assert "--registry-key" in process.stderr and "no --registry is given" in process.stderr, process.stderr
    assert "pdi: serving" not in process.stderr


def test_a_registry_naming_this_resolver_itself_is_not_followed_back_to_it(network: Network, tmp_path: Path) -> None:
    """A registry (its own registry.json, or one it loads) may name this resolver for a series it does not hold:
    never followed there, as the rescue never asks itself (docs/reference/federation.md). Named by the origin the request came
    to, or by --base-url (another case, no last /): skipped; listed alone, the name is known nowhere else (404)."""
    from pdi.federation.registry import Registry, sign_registry
    from pdi.signing import SigningKey, jwk_set_text

    d_dir = tmp_path / "d"
    Archive.init(str(d_dir)).close()
    key = SigningKey.generate()
    named = "http://d.example.test:8000/"  # its --base-url, as another resolver's registry names it
    jws, jwks = tmp_path / "registry.jws", tmp_path / "key.json"
    jws.write_text(sign_registry(key, Registry({"self.example.us": (named,), "both.example.us": (named, network.a_url)})))
    jwks.write_text(jwk_set_text([key.public]))
    with serving(d_dir, "--base-url", "http://D.example.test:8000", "--registry", str(jws), "--registry-key",
                 str(jwks)) as (_, port):
        d_url = f"http://127.0.0.1:{port}/"
        for own in (d_url, network.a_url):  # its own registry: itself (as requests reach it) first, then A
            added = pdi("registry", "add", A_SERIES, own, "--mirror", archive=d_dir)
            assert added.returncode == 0, added.stderr
        assert pdi("registry", "add", "new.example.us", d_url, archive=d_dir).returncode == 0
        answer = get(f"{d_url}uri-res/N2R?{network.a_name}")
        assert answer.status_code == 302 and answer.headers["location"] == f"{network.a_url}uri-res/N2R?{network.a_name}"
        listed = get(f"{d_url}uri-res/N2Ls?{network.a_name}").text.splitlines()
        assert [u for u in listed if u and not u.startswith("#")] == [f"{network.a_url}uri-res/N2R?{network.a_name}"]
        moved = get(f"{d_url}uri-res/N2R?urn:pdi://both.example.us/2026/11/26/1.text.1")
        assert moved.status_code == 302 and moved.headers["location"].startswith(f"{network.a_url}uri-res/N2R?")
        for series in ("new.example.us", "self.example.us"):
            name = f"urn:pdi://{series}/2026/11/26/1.text.1"
            for service in ("N2R", "N2L", "N2Ls", "N2C"):
                answer = get(f"{d_url}uri-res/{service}?{name}")
                assert answer.status_code == 404 and "location" not in answer.headers, (series, service, answer)
            shown = get(f"{d_url}view?pdi={quote(name, safe='')}")
            assert shown.status_code == 404 and "location" not in shown.headers, (series, shown)


def test_a_registry_or_key_not_there_is_not_found_and_one_down_a_remote_error(network: Network, tmp_path: Path) -> None:
    """A --registry file that is not there is "not found" (exit 4), as a --registry-key file that is not there
    is; a registry URL nobody answers at is another server's failure (exit 16), not this archive's storage (8)."""
    import socket

    def serve(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pdi", "serve", "--port", "0", "--replay-port", "0",
                               "--archive", network.c_location, *options], capture_output=True, text=True, timeout=60)

    missing = tmp_path / "nonexist.jws"
    process = serve("--registry", str(missing), "--registry-key", str(network.a_key))
    assert process.returncode == 4, process.stderr
    assert f"pdi: not found: the registry {missing}: no such file" in process.stderr, process.stderr
    process = serve("--registry", str(network.jws_file), "--registry-key", str(tmp_path / "nonexist.jwk"))
    assert process.returncode == 4 and f"{tmp_path / 'nonexist.jwk'}: no such file" in process.stderr, process.stderr
    with socket.socket() as closed:  # bound, never listening: a connection to it is refused
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/.well-known/pdi-registry"
        process = serve("--registry", url, "--registry-key", str(network.a_key))
    assert process.returncode == 16, process.stderr
    assert f"pdi: remote error: cannot fetch the registry {url}: " in process.stderr, process.stderr
    assert "storage" not in process.stderr and "pdi: serving" not in process.stderr


def test_legacy_i2r_rescued_from_a_later_capture_elsewhere(network: Network) -> None:
    answer = get(f"{network.c_registry}uri-res/I2R?{LEGACY_HOME}")
    assert answer.status_code == 302, answer.text
    assert answer.headers["location"].startswith(f"{network.a_url}uri-res/N2R?")
    assert answer.headers["pdi-capture"].startswith("later; asked=1994-10-20; captured=urn:pdi://a.example.us/2026/11/21/")
    assert "this is a later capture (2026-11-21)" in answer.headers["warning"]
    assert httpx.get(answer.headers["location"], timeout=30).content == b"<h1>The White House, 2026</h1>"


def test_legacy_rescue_asks_the_archives_its_mirrors_name_and_never_itself(network: Network, tmp_path: Path) -> None:
    d_dir = tmp_path / "d"  # no registry loaded, no DNS: it knows A only as the origin of a series it mirrors
    Archive.init(str(d_dir)).close()
    added = pdi("mirror", "add", network.a_url, "--series", A_SERIES, archive=d_dir)
    assert added.returncode == 0, added.stderr
    with serving(d_dir) as (_, d_port):
        d_url = f"http://127.0.0.1:{d_port}/"
        # its own registry names only itself: skipped when asking for captures, the mirrors' archives still asked
        own = pdi("registry", "add", "d.example.us", d_url, archive=d_dir)
        assert own.returncode == 0, own.stderr
        answer = get(f"{d_url}uri-res/I2R?{LEGACY_HOME}")
        assert answer.status_code == 302, answer.text
        assert answer.headers["location"].startswith(f"{network.a_url}uri-res/N2R?")
        assert "this is a later capture (2026-11-21)" in answer.headers["warning"]
        assert httpx.get(answer.headers["location"], timeout=30).content == b"<h1>The White House, 2026</h1>"


def test_legacy_rescue_asks_an_announced_peer_at_a_public_address_only(network: Network, tmp_path: Path) -> None:
    """A peer that announced itself with a token (POST /api/mirrors) names its host; what that name resolves to is
    its DNS's to say, then and later. This machine's own host name resolves to loopback (its /etc/hosts): announced
    by a stranger, it is never connected to by the legacy rescue (an anonymous reader chooses the path asked);
    recorded by the operator (pdi mirror add --peer, for any series), it is asked as before."""
    host = socket.gethostname()
    found = {info[4][0] for info in socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)}
    assert "127.0.0.1" in found, f"{host} resolves to {found}: this test needs a host name for loopback"
    a_port = network.a_url.rsplit(":", 1)[1].rstrip("/")
    a_by_name = f"http://{host}:{a_port}"
    d_dir = tmp_path / "d"
    with Archive.init(str(d_dir)) as d:
        d.add_series("d.example.us")
        d.add_series("e.example.us")
        _, secret = d.add_token("stranger", role="mirror", series=["d.example.us"])
    keys = json.loads(network.a_key.read_text())
    with serving(d_dir) as (_, d_port):
        d_url = f"http://127.0.0.1:{d_port}/"
        announced = httpx.post(f"{d_url}api/mirrors", json={"series": "d.example.us", "base_url": a_by_name,
                                                             "keys": keys},
                               headers={"Authorization": f"Bearer {secret}"}, timeout=30)
        assert announced.status_code == 201, announced.text
        answer = get(f"{d_url}uri-res/I2R?{LEGACY_HOME}")
        assert answer.status_code == 404 and "location" not in answer.headers, answer.headers
    vouched = pdi("mirror", "add", a_by_name, "--series", "e.example.us", "--peer", "--key",
                  str(network.a_key), "--no-check", archive=d_dir)
    assert vouched.returncode == 0, vouched.stderr
    with serving(d_dir) as (_, d_port):  # a new resolver: the 404 above is not kept in it
        answer = get(f"http://127.0.0.1:{d_port}/uri-res/I2R?{LEGACY_HOME}")
        assert answer.status_code == 302, answer.text
        assert answer.headers["location"].startswith(f"{a_by_name}/uri-res/N2R?urn:pdi://a.example.us/")


def test_legacy_i2r_rescued_from_a_local_capture(network: Network) -> None:
    same = get(f"{network.c_registry}uri-res/I2R?{LEGACY_WELCOME_SAME_DAY}")
    assert same.status_code == 200 and same.content == b"<h1>Welcome to the White House</h1>"
    assert same.headers["pdi-capture"].startswith("same-day; asked=1995-03-01; captured=urn:pdi://c.example.us/1995/03/01/")
    assert "warning" not in same.headers
    assert same.headers["content-location"].startswith(f"{network.c_registry}uri-res/N2R?urn:pdi://c.example.us/")
    earlier = get(f"{network.c_registry}uri-res/I2R?{LEGACY_WELCOME_EARLIER}")
    assert earlier.status_code == 200 and earlier.content == b"<h1>Welcome to the White House</h1>"
    assert earlier.headers["pdi-capture"].startswith("later; asked=1994-06-01;")
    assert "this is a later capture (1995-03-01)" in earlier.headers["warning"]
    assert get(f"{network.c_registry}uri-res/I2R?{LEGACY_NOWHERE}").status_code == 404


def test_legacy_view_notes_a_later_capture(network: Network) -> None:
    answer = get(f"{network.c_registry}view?pdi={quote(LEGACY_WELCOME_EARLIER, safe='')}")
    assert answer.status_code == 302 and "&later=" in answer.headers["location"]
    page = httpx.get(network.c_registry.rstrip("/") + answer.headers["location"], timeout=30)
    assert page.status_code == 200
    assert 'id="later-capture"' in page.text and "This is a later capture</strong>" in page.text
    _shown_in_chromium(network.c_registry.rstrip("/") + answer.headers["location"], "legacy-later-capture")
    remote = get(f"{network.c_registry}view?pdi={quote(LEGACY_HOME, safe='')}")
    assert remote.status_code == 302 and remote.headers["location"].startswith(f"{network.a_url}view?pdi=")
    shown = httpx.get(remote.headers["location"], timeout=30)
    assert "This is a later capture</strong>" in shown.text


def test_falls_over_to_the_mirror_when_the_authority_is_down(network: Network) -> None:
    """Last: A is stopped. A resolver that loads A's registry from a file sends A's names to B, the mirror."""
    stop(network.a_process)
    with serving(network.c_location, "--registry", str(network.jws_file), "--registry-key", str(network.a_key)) \
            as (_, port):
        c_url = f"http://127.0.0.1:{port}/"
        answer = get(f"{c_url}uri-res/N2R?{network.a_name}")
        assert answer.status_code == 302 and answer.headers["location"] == f"{network.b_url}uri-res/N2R?{network.a_name}"
        assert httpx.get(answer.headers["location"], timeout=30).content == b"the minutes of A\n"
        listed = get(f"{c_url}uri-res/N2Ls?{network.a_name}").text
        assert f"{network.a_url}uri-res/N2R?" in listed and f"{network.b_url}uri-res/N2R?" in listed


def _shown_in_chromium(url: str, name: str, element: str = "later-capture", words: str = "This is a later capture",
                       ) -> None:
    """Open ``url`` in Chromium: the note ``element`` saying ``words`` is on the page a reader sees (its picture
    kept in ``$PDI_SCREENSHOTS``, else tests/artifacts/screenshots, for a person to look at)."""
    import base64
    import os
    import time

    from chromium_helpers import open_page
    from pdi.capture.browser import devtools

    shots = Path(os.environ.get("PDI_SCREENSHOTS") or Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")
    with devtools() as pipe:
        session = open_page(pipe, url)
        deadline = time.monotonic() + 30
        pipe.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1100, "height": 700, "deviceScaleFactor": 1, "mobile": False}, session, deadline)
        note = pipe.call("Runtime.evaluate", {"expression": f"(() => {{ const n = document.getElementById('{element}');"
                                              " return !!n && n.getBoundingClientRect().height > 0"
                                              f" && n.textContent.includes('{words}'); }})()",
                                              "returnByValue": True}, session, deadline)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    shots.mkdir(parents=True, exist_ok=True)
    (shots / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
    assert note["result"]["value"] is True, f"the note {element} is not shown"


def test_a_legacy_name_answered_by_a_capture_is_not_cached_as_immutable(tmp_path: Path) -> None:
    """Found by a tester following docs/how-to/federation.md (2026-12-02): I2R of a 1990s name answered from a
    later capture held here carried the capture's ``Cache-Control: public, max-age=31536000, immutable``, so a
    browser or a shared cache kept that capture for a year as the name's answer; a capture of the name's own day
    deposited later answers it instead (RFC 9111 §5.2.2.1: max-age is how long the answer stays fresh). It is
    kept 60 s, as a redirect elsewhere is; the capture's own N2R stays immutable."""
    location = tmp_path / "d"
    clock = Clock(datetime.datetime(2026, 11, 20, tzinfo=datetime.UTC))
    with Archive.init(str(location), clock=clock) as archive:
        archive.add_series("d.example.us")
        later = _deposit_at(archive, clock, "2026-11-21T10:00:00", "d.example.us", b"<h1>Later</h1>", HOME)
    with serving(location) as (_, port):
        base = f"http://127.0.0.1:{port}/"
        first = get(f"{base}uri-res/I2R?{LEGACY_HOME}")
        assert first.status_code == 200 and first.content == b"<h1>Later</h1>", first.text
        assert first.headers["pdi-capture"] == f"later; asked=1994-10-20; captured={later}"
        assert first.headers["cache-control"] == "public, max-age=60"
        own = get(first.headers["content-location"])
        assert own.content == b"<h1>Later</h1>" and own.headers["cache-control"] == "public, max-age=31536000, immutable"
        with Archive.open(str(location), clock=clock) as archive:
            same = _deposit_at(archive, clock, "1994-10-20T12:00:00", "d.example.us", b"<h1>Unveiled</h1>", HOME)
        again = get(f"{base}uri-res/I2R?{LEGACY_HOME}", **{"Cache-Control": "no-cache"})
    assert again.status_code == 200 and again.content == b"<h1>Unveiled</h1>", again.text
    assert again.headers["pdi-capture"] == f"same-day; asked=1994-10-20; captured={same}"
    assert again.headers["cache-control"] == "public, max-age=60"
