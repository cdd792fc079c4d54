"""A mirror sync from a plain ``http://`` origin makes no TLS context (loading the trusted certificates costs
some 20 to 40 ms of CPU a client; tests/test_answer_head_tls.py: one is made at a client's first ``https://``).

Each TLS context Python makes goes through :func:`ssl.create_default_context` (httpx's, httpcore's), so making
it raise (a fault injected) shows whether one was made; ``pdi serve`` (a real process, untouched) is the origin.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from server_helpers import start_serve, stop, wait_answering

from pdi.archive import Archive
from pdi.cli import cli as main

S = "plain.example.us"


def pdi(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@contextmanager
def serving(location: Path) -> Iterator[str]:
    process, port, _ = start_serve(location, "--replay-port", "0", start_new_session=True, drain=True,
                                   env=dict(os.environ))
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


class Made(Exception):
    """A TLS context was made."""


def _raising(calls: list[str]) -> Any:
    """A stand-in for :func:`ssl.create_default_context` that raises :class:`Made`, its calls counted."""
    def refused(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        calls.append("made")
        raise Made("a TLS context was made")
    return refused


def test_a_sync_from_a_plain_http_origin_makes_no_tls_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    with Archive.init(a) as archive:
        archive.add_series(S)
        texts = {str(archive.add(S, f"the minutes of meeting {n}\n".encode(), format="text")): n for n in range(3)}
    Archive.init(b).close()
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        made: list[str] = []
        monkeypatch.setattr(ssl, "create_default_context", _raising(made))
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"{S}\tfrom {a_url}: 3 names listed, 3 new" in out, out
    assert made == []
    with Archive.open(b) as archive:
        assert {str(n) for n in archive.ls(series=S)} >= set(texts)


def test_a_sync_asks_each_request_for_octets_over_the_connection_its_thread_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the eighteenth pass over the mirrors' benchmark (2026-12-01): an octets answer read to its end was
    never taken as done (:mod:`http.client` says so by ``isclosed()``, and ``closed`` stays false until ``close()``
    is called), so each request of a sync made a connection of its own, 47 for 10,000 names. One fetching thread
    and a request a name: one connection for them all."""
    import http.client

    from pdi.network import mirrors

    a, b = tmp_path / "a", tmp_path / "b"
    with Archive.init(a) as archive:
        archive.add_series(S)
        for n in range(6):
            archive.add(S, f"the minutes of meeting {n}\n".encode() * 1000, format="text")  # each a blob file
    Archive.init(b).close()
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    connects: list[tuple[str, int | None]] = []
    real = http.client.HTTPConnection.connect

    def counted(self: http.client.HTTPConnection) -> None:
        connects.append((self.host, self.port))
        real(self)

    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        monkeypatch.setattr(mirrors, "WORKERS", 1)
        monkeypatch.setattr(mirrors, "GROUP_NAMES", 1)  # six requests
        monkeypatch.setattr(http.client.HTTPConnection, "connect", counted)
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"{S}\tfrom {a_url}: 6 names listed, 6 new" in out, out
    assert len(connects) == 1, connects
