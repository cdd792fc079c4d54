"""A peer or origin recorded with a user and password in its base URL (``https://user:pass@host``, RFC 3986 §3.2.1:
an earlier pdi recorded such URLs; ``pdi mirror add`` refuses them now) is named everywhere without its password:
``pdi mirror ls``, ``pdi mirror remove``, the audit log, and the resolver's ``N2Ls`` list and ``Link`` header, which
carry the peer's URL with no userinfo at all (a reader's client would send it as Basic credentials)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from server_helpers import Clock
from starlette.testclient import TestClient

from pdi.archive import Archive, Content
from pdi.cli import cli as main
from pdi.signing import SigningKey

SECRET = "s3cr3t-Pa55"
OWN = "own.example.us"
MIRRORED = "mirrored.example.us"
PEER = f"https://user:{SECRET}@peer.example.org"
ORIGIN = f"https://me:{SECRET}@origin.example.org"


@pytest.fixture()
def location(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "a"
    clock = Clock(datetime.datetime(2026, 11, 20, 9, tzinfo=datetime.UTC))
    jwk = json.dumps({"keys": [SigningKey.generate().public.jwk()]})
    with Archive.init(str(where), clock=clock) as archive:
        archive.add_series(OWN)
        archive.deposit(OWN, [Content(b"held here\n", "text")])
        archive.add_mirror(OWN, PEER, "peer", jwk)  # as an earlier pdi recorded it
        archive.add_mirror(MIRRORED, ORIGIN, "origin", jwk)
    yield where


def _pdi(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_mirror_ls_names_no_password(location: Path) -> None:
    code, out = _pdi("mirror", "ls", "--archive", str(location))
    assert code == 0, out
    assert SECRET not in out
    assert "https://***@peer.example.org" in out and "https://***@origin.example.org" in out


def test_mirror_remove_names_no_password_and_forgets_it(location: Path) -> None:
    code, out = _pdi("mirror", "remove", ORIGIN, "--series", MIRRORED, "--archive", str(location))
    assert code == 0, out
    assert SECRET not in out and "https://***@origin.example.org" in out
    with Archive.open(str(location)) as archive:
        assert [m.series for m in archive.mirrors()] == [OWN]


def test_the_audit_log_names_no_password(location: Path) -> None:
    _pdi("mirror", "remove", PEER, "--series", OWN, "--archive", str(location))
    with Archive.open(str(location)) as archive:
        lines = [json.dumps(line.to_json()) for line in archive.audit()]
    mirrored = [line for line in lines if "mirror-" in line]
    assert len(mirrored) == 3, lines  # the peer and the origin added, the peer removed
    assert not any(SECRET in line for line in lines), mirrored


def test_n2ls_and_the_canonical_link_carry_no_userinfo(location: Path) -> None:
    from pdi.server import create_app

    name = f"urn:pdi://{OWN}/2026/11/20/1.text.1"
    with TestClient(create_app(str(location)), base_url="http://testserver") as client:
        listed = client.get(f"/uri-res/N2Ls?{name}")
        assert listed.status_code == 200, listed.text
        assert SECRET not in listed.text and "@" not in listed.text.split("\r\n", 1)[1]
        assert f"https://peer.example.org/uri-res/N2R?{name}\r\n" in listed.text


def test_the_link_of_a_mirrored_name_carries_no_userinfo(location: Path) -> None:
    from pdi.server.protocol.mirrored import Locations

    name = f"urn:pdi://{MIRRORED}/2026/11/20/1.text.1"
    with Archive.open(str(location)) as archive:
        locations = Locations(archive)
        said = locations.headers(MIRRORED, name, {"Link": f'<{name}>; rel="canonical"'})
        assert SECRET not in said["Link"] and "@" not in said["Link"].split(">", 1)[0]
        assert said["Link"].startswith(f'<https://origin.example.org/uri-res/N2R?{name}>; rel="canonical", ')
        assert locations.origin_at_once(MIRRORED) == "https://origin.example.org"
