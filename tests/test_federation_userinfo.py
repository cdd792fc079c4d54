"""A registry's, a key set's or a resolver's URL given with a user and password (``https://user:pass@host/…``, RFC 3986
§3.2.1) is named in every message and log line with its userinfo written ``***@``: never the password."""

from __future__ import annotations

import http.server
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi._wording import shown_url
from pdi.errors import PDIError
from pdi.signing import SigningKey
from support.handler_server import handler_server

SECRET = "s3cr3t-Pa55"
#: RFC 3986 §3.2.1: userinfo = *( unreserved / pct-encoded / sub-delims / ":" )
_USERINFO = st.text(st.sampled_from("abcXYZ019-._~!$&'()*+,;=:%"), min_size=1, max_size=30)
_HOST = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z][a-z0-9-]{0,10}){0,3}(:[0-9]{1,5})?", fullmatch=True)
#: what follows the authority: a path, a query or a fragment, which may hold "@" and ":" of their own (§3.3-§3.5)
_REST = st.one_of(st.just(""), st.tuples(st.sampled_from("/?#"), st.text(st.sampled_from("ab/@:?#=&%"),
                                                                          max_size=30)).map("".join))


@given(_USERINFO, _HOST, _REST, st.sampled_from(["http", "https", "HTTPS"]))
def test_a_url_s_userinfo_is_never_shown_and_the_rest_is(userinfo: str, host: str, rest: str, scheme: str) -> None:
    assert shown_url(f"{scheme}://{userinfo}@{host}{rest}") == f"{scheme}://***@{host}{rest}"


@given(_HOST, _REST)
def test_a_url_without_userinfo_is_shown_as_it_is(host: str, rest: str) -> None:
    assert shown_url(f"https://{host}{rest}") == f"https://{host}{rest}"
    assert shown_url(f"{host}{rest}") == f"{host}{rest}"  # no authority (a file's path): as it is


class Refusing(http.server.BaseHTTPRequestHandler):
    """404 with a problem naming nothing, for any path."""

    def do_GET(self) -> None:
        body = b'{"title": "not found", "detail": "no such thing here"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/problem+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class NotKeys(http.server.BaseHTTPRequestHandler):
    """200 with a body that is no JWK set."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"{bad}")

    def log_message(self, *args: object) -> None:
        pass


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _with_secret(base: str, path: str) -> tuple[str, str]:
    """``base``'s URL of ``path`` with a user and :data:`SECRET` in it, and that URL as it may be shown."""
    host = base.split("://", 1)[1]
    return f"http://reader:{SECRET}@{host}{path}", f"http://***@{host}{path}"


def test_a_fetch_s_refusals_name_the_url_without_its_password() -> None:
    from pdi.federation.authorities import fetch_bounded, load_keys

    with handler_server(Refusing) as base:
        url, shown = _with_secret(base, ".well-known/pdi-registry")
        with pytest.raises(PDIError) as refused:
            fetch_bounded(url, 1000, "the registry")
        assert SECRET not in str(refused.value) and f"the registry {shown}" in str(refused.value)
    with handler_server(NotKeys) as base:
        url, shown = _with_secret(base, "api/keys")
        with pytest.raises(PDIError) as unread:
            load_keys(url)
        assert SECRET not in str(unread.value) and shown in str(unread.value)
    url = f"http://reader:{SECRET}@127.0.0.1:{_closed_port()}/api/keys"
    with pytest.raises(PDIError) as unreached:
        fetch_bounded(url, 1000, "the key set")
    assert SECRET not in str(unreached.value) and "cannot fetch the key set http://***@127.0.0.1:" in str(unreached.value)


def test_a_registry_url_s_password_is_in_no_refusal_or_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """Loaded, then failing at a reload (logged, the one held kept), then refused at a first load."""
    from pdi.federation.authorities import RegistrySource
    from pdi.federation.registry import Registry, sign_registry

    key = SigningKey.generate()
    jws = sign_registry(key, Registry({"a.example.us": ("https://a.example/",)}), "2026-11-27T00:00:00Z").encode()
    answers = [200]

    class Registered(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(answers[-1])
            self.send_header("Content-Type", "application/jose")
            self.send_header("Content-Length", str(len(jws)))
            self.end_headers()
            self.wfile.write(jws)

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Registered) as base:
        url, shown = _with_secret(base, ".well-known/pdi-registry")
        source = RegistrySource(url, [key.public])
        answers.append(502)
        source._next = 0.0  # its time is up: loaded again now
        with caplog.at_level(logging.WARNING, logger="pdi.federation"):
            assert source.current().resolvers("a.example.us") == ("https://a.example/",)
        said = [record.getMessage() for record in caplog.records]
        assert said and all(SECRET not in line for line in said) and any(shown in line for line in said), said
        answers.append(200)
        with pytest.raises(PDIError) as refused:
            RegistrySource(url, [SigningKey.generate().public])  # signed with another key
        assert SECRET not in str(refused.value) and shown in str(refused.value)


@pytest.mark.parametrize("where", ["registry", "mirroring"])
def test_a_base_url_refused_for_its_user_does_not_say_the_password(where: str) -> None:
    from pdi.archive.mirroring import base_url as mirror_base_url
    from pdi.federation.registry import base_url

    check = base_url if where == "registry" else mirror_base_url
    with pytest.raises(PDIError) as refused:
        check(f"https://reader:{SECRET}@a.example/")
    assert SECRET not in str(refused.value) and "https://***@a.example/" in str(refused.value)


def test_pdi_serve_refusing_a_registry_key_url_does_not_print_its_password(tmp_path: Path) -> None:
    from pdi.archive import Archive

    Archive.init(str(tmp_path / "a")).close()
    port = _closed_port()
    done = subprocess.run(
        [sys.executable, "-m", "pdi", "serve", "--archive", str(tmp_path / "a"), "--port", "0",
         "--registry", f"http://reader:{SECRET}@127.0.0.1:{port}/.well-known/pdi-registry",
         "--registry-key", f"http://reader:{SECRET}@127.0.0.1:{port}/api/keys"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert SECRET not in done.stderr + done.stdout and f"http://***@127.0.0.1:{port}/api/keys" in done.stderr, done.stderr


@given(_USERINFO, _HOST, _REST)
def test_a_url_listed_to_anyone_has_no_userinfo_at_all(userinfo: str, host: str, rest: str) -> None:
    from pdi._wording import public_url

    assert public_url(f"https://{userinfo}@{host}{rest}") == f"https://{host}{rest}"
    assert public_url(f"https://{host}{rest}") == f"https://{host}{rest}"
