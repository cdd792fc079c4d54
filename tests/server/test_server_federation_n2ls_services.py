"""``N2Ls`` lists a resolver the DNS names when its record offers ``N2R``: the URLs it lists are N2R URLs.

RFC 3404 §4.4: a terminal NAPTR record's service field names the resolution
services its resolver offers (``THTTP+N2R``: N2R only). pdi answers ``N2Ls``
itself, with the name's N2R URL at each resolver known (RFC 2169 §4.2), so
what matters of a record is whether it offers N2R. It asked whether the
record offered N2Ls: a series whose zone says ``THTTP+N2R`` was sent on by
``N2R`` (``302``) and yet ``N2Ls`` answered ``404`` ("not in this archive"),
and one whose zone says ``THTTP+N2Ls`` was listed with an N2R URL its zone
says it does not answer. And one resolver is listed once, however a registry
and the DNS spell its base URL. Real processes: a dnsmasq on 127.0.0.1, and two
``pdi serve`` (A, which the records name, and C, which reads them).
"""

from __future__ import annotations

from pathlib import Path

import httpx
from server_helpers import serving

from pdi.archive import Archive
from support.dnsnode import dnsmasq


def test_n2ls_lists_the_resolvers_whose_records_offer_n2r(tmp_path: Path) -> None:
    a_dir, c_dir = tmp_path / "a", tmp_path / "c"
    Archive.init(str(a_dir)).close()
    Archive.init(str(c_dir)).close()
    with serving(a_dir) as (_, a_port):
        a_url = f"http://127.0.0.1:{a_port}/"
        with dnsmasq([f"--naptr-record=n2r.example.us,100,10,U,THTTP+N2R,!^.*$!{a_url}!",
                      f"--naptr-record=n2ls.example.us,100,10,U,THTTP+N2Ls,!^.*$!{a_url}!"]) as node, \
                serving(c_dir, "--dns", node.server, "--dns-private") as (_, c_port):
            c_url = f"http://127.0.0.1:{c_port}/"
            name = "urn:pdi://n2r.example.us/2026/11/25/1.text.1"
            sent = httpx.get(f"{c_url}uri-res/N2R?{name}", timeout=30)
            assert sent.status_code == 302 and sent.headers["location"] == f"{a_url}uri-res/N2R?{name}"
            listed = httpx.get(f"{c_url}uri-res/N2Ls?{name}", timeout=30)
            assert listed.status_code == 200, listed.text
            assert listed.headers["content-type"].startswith("text/uri-list")
            assert [line for line in listed.text.splitlines() if not line.startswith("#")] == [
                f"{a_url}uri-res/N2R?{name}"]
            # a record offering N2Ls only names no N2R URL: neither sent to by N2R nor listed by N2Ls
            other = "urn:pdi://n2ls.example.us/2026/11/25/1.text.1"
            assert httpx.get(f"{c_url}uri-res/N2R?{other}", timeout=30).status_code == 404
            unlisted = httpx.get(f"{c_url}uri-res/N2Ls?{other}", timeout=30)
            assert unlisted.status_code == 404 and a_url not in unlisted.text, unlisted.text


def test_one_resolver_named_by_a_registry_and_the_dns_in_two_spellings_is_listed_once(tmp_path: Path) -> None:
    """RFC 3986 §6.2.2.1, §6.2.3: ``HTTP://127.0.0.1:P/`` and ``http://127.0.0.1:P`` are one resolver; the archive's
    own registry names it one way, the DNS the other. ``N2Ls`` listed it twice, and a reader's client tried it
    twice."""
    import subprocess
    import sys

    a_dir, c_dir = tmp_path / "a", tmp_path / "c"
    Archive.init(str(a_dir)).close()
    Archive.init(str(c_dir)).close()
    with serving(a_dir) as (_, a_port):
        added = subprocess.run([sys.executable, "-m", "pdi", "registry", "add", "twice.example.us",
                                f"HTTP://127.0.0.1:{a_port}/", "--archive", str(c_dir)],
                               capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr
        with dnsmasq([f"--naptr-record=twice.example.us,100,10,U,THTTP+N2R,!^.*$!http://127.0.0.1:{a_port}!"]) \
                as node, serving(c_dir, "--dns", node.server, "--dns-private") as (_, c_port):
            name = "urn:pdi://twice.example.us/2026/11/25/1.text.1"
            listed = httpx.get(f"http://127.0.0.1:{c_port}/uri-res/N2Ls?{name}", timeout=30)
            assert listed.status_code == 200, listed.text
            # the registry's spelling, the first the resolver learnt
            assert [line for line in listed.text.splitlines() if not line.startswith("#")] == [
                f"HTTP://127.0.0.1:{a_port}/uri-res/N2R?{name}"], listed.text


def test_the_dns_is_asked_for_a_series_a_registry_lists_too_its_resolvers_after_the_registrys(tmp_path: Path) -> None:
    """docs/reference/federation.md, What the resolver answers: the registries, then the DNS. Found by a tester
    (2026-11-30): ``pdi serve --help`` and the federation how-to said ``--dns`` was asked only for a series no
    registry names; ``N2Ls`` lists the resolvers of both, the registry's first, and the help says so now."""
    import subprocess
    import sys

    c_dir = tmp_path / "c"
    Archive.init(str(c_dir)).close()
    series, listed_base, dns_base = "both.example.us", "http://127.0.0.1:9/", "http://127.0.0.1:7/"
    added = subprocess.run([sys.executable, "-m", "pdi", "registry", "add", series, listed_base,
                            "--archive", str(c_dir)], capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    with dnsmasq([f"--naptr-record={series},100,10,U,THTTP+N2R,!^.*$!{dns_base}!"]) as node, \
            serving(c_dir, "--dns", node.server, "--dns-private") as (_, c_port):
        name = f"urn:pdi://{series}/2026/11/25/1.text.1"
        listed = httpx.get(f"http://127.0.0.1:{c_port}/uri-res/N2Ls?{name}", timeout=30)
        assert listed.status_code == 200, listed.text
        assert [line for line in listed.text.splitlines() if not line.startswith("#")] == [
            f"{listed_base}uri-res/N2R?{name}", f"{dns_base}uri-res/N2R?{name}"], listed.text
    said = subprocess.run([sys.executable, "-m", "pdi", "serve", "--help"], capture_output=True, text=True,
                          timeout=60).stdout
    assert "hold: the resolvers they name come after the registries' (the only ones when no registry names the" \
           " series)" in " ".join(said.split())
