"""A resolver's base URL has no query and no fragment, not even an empty one, wherever it is learnt.

``http://h/?`` and ``http://h/#`` are URLs whose query or fragment is empty
(RFC 3986 §3.4, §3.5): ``urlsplit`` gives them as ``""``, as it does when
there is none, so a check of what follows the ``?`` or ``#`` let them
through. The resolver puts ``uri-res/N2R?NAME`` after the base: after a
``#`` that is a fragment (the reader lands on the other host's ``/``), after
a ``?`` part of a query. Found from ``pdi registry add`` (which then wrote
``http://h/?/``, a registry.json that no later ``pdi registry`` command, nor
``/.well-known/pdi-registry``, could read) and from a signed registry's entry, over real processes (the CLI,
``pdi serve``). (A NAPTR ``U`` rule's output was never one: it is cut at its
``?`` and ``#``, or before its ``/uri-res/``.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.archive import Archive


def pdi(*args: str, archive: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *args, "--archive", str(archive)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8310/?", "http://127.0.0.1:8310/#", "http://127.0.0.1:8310?"])
def test_registry_add_refuses_an_empty_query_or_fragment_and_the_registry_stays_readable(
        tmp_path: Path, url: str) -> None:
    archive = tmp_path / "a"
    assert pdi("init", archive=archive).returncode == 0
    assert pdi("registry", "add", "a.example.us", "http://127.0.0.1:8310/", archive=archive).returncode == 0
    refused = pdi("registry", "add", "b.example.us", url, archive=archive)
    assert refused.returncode == 1, refused
    assert "no user, query or fragment" in refused.stderr
    shown = pdi("registry", "show", archive=archive)
    assert (shown.returncode, shown.stdout) == (0, "a.example.us\thttp://127.0.0.1:8310/\n"), shown


@pytest.mark.parametrize(("host", "why"), [("1.2.3.256", "its last part is more than 255"),
                                             ("1.2.3.4.5", "5 parts, at most 4"), ("08", "'08' is no decimal")])
def test_registry_add_refuses_a_host_that_ends_in_a_number_and_is_no_address(
        tmp_path: Path, host: str, why: str) -> None:
    """A browser refuses such a URL (WHATWG URL Standard §3.5: a host whose last label is a number is parsed as
    IPv4, and fails), and no connection reaches it: refused, and the registry is as it was."""
    archive = tmp_path / "a"
    assert pdi("init", archive=archive).returncode == 0
    assert pdi("registry", "add", "a.example.us", "http://127.0.0.1:8310/", archive=archive).returncode == 0
    refused = pdi("registry", "add", "a.example.us", f"http://{host}:8310/", archive=archive)
    assert refused.returncode == 1, refused
    assert f"the host '{host}' ends in a number but is no IPv4 address: {why}" in refused.stderr, refused.stderr
    shown = pdi("registry", "show", archive=archive)
    assert (shown.returncode, shown.stdout) == (0, "a.example.us\thttp://127.0.0.1:8310/\n"), shown


def test_registry_add_and_remove_know_one_resolver_however_its_host_is_spelt(tmp_path: Path) -> None:
    """``127.1`` and ``0x7f.0.0.1`` are 127.0.0.1 (as ``inet_aton`` and a browser read them), ``EXAMPLE.org.`` is
    example.org (RFC 1034 §3.1, case aside): added again, one takes the other's place, never listed twice; removed
    by any spelling."""
    import socket

    assert socket.inet_aton("127.1") == socket.inet_aton("0x7f.0.0.1") == socket.inet_aton("127.0.0.1")
    archive = tmp_path / "a"
    assert pdi("init", archive=archive).returncode == 0
    for url in ("http://127.0.0.1:8310/", "http://127.1:8310/", "http://0x7f.0.0.1:8310/"):
        assert pdi("registry", "add", "a.example.us", url, archive=archive).returncode == 0
    assert pdi("registry", "add", "a.example.us", "http://example.org/", "--mirror", archive=archive).returncode == 0
    assert pdi("registry", "add", "a.example.us", "http://EXAMPLE.org./", "--mirror", archive=archive).returncode == 0
    shown = pdi("registry", "show", archive=archive)
    assert shown.stdout == "a.example.us\thttp://0x7f.0.0.1:8310/\thttp://EXAMPLE.org./\n", shown
    assert pdi("registry", "remove", "a.example.us", "http://127.0.0.1:8310/", archive=archive).returncode == 0
    shown = pdi("registry", "show", archive=archive)
    assert shown.stdout == "a.example.us\thttp://EXAMPLE.org./\n", shown


def test_a_signed_registry_naming_a_base_with_an_empty_fragment_is_refused_at_start(tmp_path: Path) -> None:
    from pdi.signing import SigningKey, jwk_set_text, sign_compact

    key = SigningKey.generate()
    payload = (b'{"issued":"2026-11-25T10:00:00Z","series":{"x.example.us":["http://127.0.0.1:8310/#"]},'
               b'"type":"pdi-registry+jws"}')
    jws = tmp_path / "registry.jws"
    jws.write_text(sign_compact(key, payload, {"alg": "EdDSA", "kid": key.public.thumbprint,
                                               "typ": "pdi-registry+jws"}))
    keys = tmp_path / "keys.json"
    keys.write_text(jwk_set_text([key.public]))
    archive = tmp_path / "c"
    Archive.init(str(archive)).close()
    serve = subprocess.Popen([sys.executable, "-m", "pdi", "serve", "--port", "0", "--archive", str(archive),
                              "--registry", str(jws), "--registry-key", str(keys)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, said = serve.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # it served (its workers too: the whole session is stopped)
        os.killpg(serve.pid, signal.SIGTERM)
        serve.communicate(timeout=30)
        raise AssertionError("pdi serve started with a registry naming http://127.0.0.1:8310/#") from None
    assert serve.returncode == 1, said
    assert "'http://127.0.0.1:8310/#'" in said and "no user, query or fragment" in said

