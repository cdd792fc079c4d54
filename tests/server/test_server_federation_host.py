"""Whether a name is this resolver's to send on is never a stranger's ``Host`` to say (issue 27 §4), over real processes.

Found by a review (2026-11-30): ``pdi serve`` without ``--base-url`` took the
origin a request's ``Host`` names for one of its own base URLs, and never
sent a name there. A client naming the authority of a series in ``Host``
made the resolver skip it (``404`` for a name its registry sends to A, a
mirror instead of the authority), and one naming anything else made it take
its own base URL for another resolver's (a ``302`` to itself). Worse, the
legacy rescue then remembered for everyone, for 60 s, that no resolver
held a capture it had only not asked. Now the resolver knows itself by its
``--base-url``, the address a connection reached it at, and, for any other
spelling or alias (``http://localhost:PORT/``), by its own ``PDI-Resolver``
token in the answer to its probe (pdi.federation.authorities): the same answer
whatever ``Host`` says.

Two SQLite archives: A holds ``a.example.us`` and a capture of
``http://www.whitehouse.gov/``; C holds nothing and names, in its own
registry, A for ``a.example.us``, and itself (by its address, or by
``localhost``) in front of A, or alone, for the other series.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest
from server_helpers import Clock, serving

from pdi.archive import Archive, Content
from pdi.federation.registry import Registry, write_registry_file

A_SERIES = "a.example.us"
HOME = "http://www.whitehouse.gov/"
#: A 1990s name of the capture A holds (PDI-GRAMMAR §2.4, §2.11): its series known to no registry.
LEGACY_HOME = "urn:pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1"


@dataclass
class Pair:
    a_url: str
    c_url: str
    c_port: int
    a_name: str


def _name(series: str) -> str:
    return f"urn:pdi://{series}/2026/11/20/1.text.1"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    root = tmp_path_factory.mktemp("host")
    clock = Clock(datetime.datetime(2026, 11, 20, 9, tzinfo=datetime.UTC))
    with Archive.init(str(root / "a"), clock=clock) as a:
        a.add_series(A_SERIES)
        a_name = str(a.deposit(A_SERIES, [Content(b"the minutes of A\n", "text")])[0])
        clock.now = datetime.datetime(2026, 11, 21, 10, tzinfo=datetime.UTC)
        a.deposit(A_SERIES, [Content(b"<h1>The White House, 2026</h1>", "html")], foreign_id=HOME)
    Archive.init(str(root / "c")).close()
    with ExitStack() as stack:
        _, a_port = stack.enter_context(serving(root / "a"))
        _, c_port = stack.enter_context(serving(root / "c"))  # no --base-url: it knows itself as it can
        a_url, c_url = f"http://127.0.0.1:{a_port}/", f"http://127.0.0.1:{c_port}/"
        alias = f"http://localhost:{c_port}/"  # the same resolver by another name (loopback: /etc/hosts)
        # C's own registry.json, re-read when it changes
        write_registry_file(root / "c" / "registry.json", Registry({
            A_SERIES: (a_url,),
            "self.example.us": (c_url, a_url),
            "itself.example.us": (c_url,),
            "alias.example.us": (alias, a_url),
            "aliasonly.example.us": (alias,),
            # C's own address as a browser and inet_aton read it (WHATWG URL §3.5), then A by a name no other test
            # probes (so A is not known up when its turn comes); alone, with one a connection never reaches
            "spelt.example.us": (f"http://127.1:{c_port}/", f"http://0x7f.0.0.1:{c_port}/",
                                 f"http://2130706433:{c_port}/", f"http://localhost:{a_port}/"),
            "speltonly.example.us": (f"http://127.0.0.1.:{c_port}/", f"http://0x7F000001:{c_port}/"),
        }))
        yield Pair(a_url, c_url, c_port, a_name)


def get(url: str, host: str | None = None, **headers: str) -> httpx.Response:
    if host is not None:
        headers["Host"] = host
    return httpx.get(url, headers=headers, timeout=30, follow_redirects=False)


def _listed(answer: httpx.Response) -> list[str]:
    return [line for line in answer.text.splitlines() if line and not line.startswith("#")]


#: Hosts a stranger may send: A's own origin (C then took A for itself), another name, another port of C's.
FORGED = ["{a}", "elsewhere.example:8000", "127.0.0.1:1", "LOCALHOST:{c}"]


@pytest.mark.parametrize("forged", FORGED)
def test_a_forged_host_does_not_keep_a_name_from_its_authority(pair: Pair, forged: str) -> None:
    host = forged.format(a=pair.a_url.removeprefix("http://").rstrip("/"), c=pair.c_port)
    for asked in (None, host):  # the honest request and the forged one: the same answer
        answer = get(f"{pair.c_url}uri-res/N2R?{pair.a_name}", asked)
        assert answer.status_code == 302, (asked, answer.status_code, answer.text)
        assert answer.headers["location"] == f"{pair.a_url}uri-res/N2R?{pair.a_name}", asked
        listed = get(f"{pair.c_url}uri-res/N2Ls?{pair.a_name}", asked)
        assert listed.status_code == 200 and _listed(listed) == [f"{pair.a_url}uri-res/N2R?{pair.a_name}"], asked
        shown = get(f"{pair.c_url}view?pdi={quote(pair.a_name, safe='')}", asked)
        assert shown.status_code == 302 and shown.headers["location"].startswith(f"{pair.a_url}view?pdi="), asked


@pytest.mark.parametrize("forged", FORGED)
def test_a_forged_host_does_not_make_the_resolver_send_a_name_to_itself(pair: Pair, forged: str) -> None:
    host = forged.format(a=pair.a_url.removeprefix("http://").rstrip("/"), c=pair.c_port)
    name = _name("self.example.us")
    for asked in (host, None):
        # itself first, then A: A, never C's own address (a 302 to itself, and the reader back here)
        answer = get(f"{pair.c_url}uri-res/N2L?{name}", asked)
        assert answer.status_code == 302, (asked, answer.status_code, answer.text)
        assert answer.headers["location"] == f"{pair.a_url}uri-res/N2L?{name}", asked
        assert _listed(get(f"{pair.c_url}uri-res/N2Ls?{name}", asked)) == [f"{pair.a_url}uri-res/N2R?{name}"]
        # itself alone: known nowhere else
        alone = _name("itself.example.us")
        for service in ("N2R", "N2L", "N2Ls"):
            refused = get(f"{pair.c_url}uri-res/{service}?{alone}", asked)
            assert refused.status_code == 404 and "location" not in refused.headers, (asked, service, refused.text)


def test_a_forged_host_leaves_the_rescue_of_a_legacy_name_to_everyone_else(pair: Pair) -> None:
    """The rescue remembers a URL no resolver holds for 60 s: it must not be told so by a Host that made it skip
    the one that does (A, the only other archive C knows)."""
    forged = pair.a_url.removeprefix("http://").rstrip("/")
    for asked in (forged, None):  # the forged request first: what it leaves behind, the next reader meets
        answer = get(f"{pair.c_url}uri-res/I2R?{LEGACY_HOME}", asked)
        assert answer.status_code == 302, (asked, answer.status_code, answer.text)
        assert answer.headers["location"].startswith(f"{pair.a_url}uri-res/N2R?urn:pdi://a.example.us/2026/11/21/")
        assert answer.headers["pdi-capture"].startswith("later; asked=1994-10-20;")


def test_an_alias_of_itself_costs_no_redirect(pair: Pair) -> None:
    """The registry names C as http://localhost:PORT/ (C is reached at 127.0.0.1): C is not sent the name again
    (one 302 more, to itself), it sends it to A at once; alone, the name is known nowhere else (404)."""
    name = _name("alias.example.us")
    for service in ("N2R", "N2L"):
        answer = get(f"{pair.c_url}uri-res/{service}?{name}")
        assert answer.status_code == 302, (service, answer.text)
        assert answer.headers["location"] == f"{pair.a_url}uri-res/{service}?{name}"
    assert _listed(get(f"{pair.c_url}uri-res/N2Ls?{name}")) == [f"{pair.a_url}uri-res/N2R?{name}"]
    shown = get(f"{pair.c_url}view?pdi={quote(name, safe='')}")
    assert shown.status_code == 302 and shown.headers["location"].startswith(f"{pair.a_url}view?pdi=")
    alone = _name("aliasonly.example.us")
    for service in ("N2R", "N2L", "N2Ls"):
        refused = get(f"{pair.c_url}uri-res/{service}?{alone}")
        assert refused.status_code == 404 and "location" not in refused.headers, (service, refused.text)


def test_its_own_address_in_the_spellings_a_browser_reads_is_itself(pair: Pair) -> None:
    """Found by a review: C's registry names C as 127.1, 0x7f.0.0.1 and 2130706433 (C is reached at 127.0.0.1: each
    is that address, to a browser and to a connection), then A. C took each for another resolver and probed it (its
    token said it was C), and the three spent the three probes one answer may make: A, not known, was taken to be
    down and the reader answered 503. Now they are C's own address: C sends the name to A at once. Alone (with
    127.0.0.1., C's address to a browser, which a connection does not read), the name is known nowhere else: 404,
    not 503."""
    name = _name("spelt.example.us")
    a_by_name = f"http://localhost:{pair.a_url.rsplit(':', 1)[1]}"
    answer = get(f"{pair.c_url}uri-res/N2R?{name}")
    assert answer.status_code == 302, answer.text
    assert answer.headers["location"] == f"{a_by_name}uri-res/N2R?{name}"
    assert _listed(get(f"{pair.c_url}uri-res/N2Ls?{name}")) == [f"{a_by_name}uri-res/N2R?{name}"]
    alone = _name("speltonly.example.us")
    for service in ("N2R", "N2L", "N2Ls"):
        refused = get(f"{pair.c_url}uri-res/{service}?{alone}")
        assert refused.status_code == 404 and "location" not in refused.headers, (service, refused.text)


def test_the_resolver_says_who_it_is_only_to_a_probe(pair: Pair) -> None:
    """The token C knows itself by is in its answer to a request with PDI-Route-Probe (the probes of
    pdi.federation), the same from every worker and at every address; not in a reader's answers."""
    probed = {httpx.head(f"{base}", headers={"PDI-Route-Probe": "1"}, timeout=30).headers.get("pdi-resolver")
              for base in (pair.c_url, f"http://localhost:{pair.c_port}/") for _ in range(4)}
    assert len(probed) == 1 and None not in probed, probed
    assert httpx.head(pair.a_url, headers={"PDI-Route-Probe": "1"}, timeout=30).headers["pdi-resolver"] not in probed
    assert "pdi-resolver" not in httpx.head(pair.c_url, timeout=30).headers
