"""A name of another archive's series: the resolver's 302 to its authority, beside its 302 for a name it holds.

Two resolvers on loopback (``pdi serve``): A holds a text of the series
``a.example.us``; C holds a text of its own series and knows A from a
signed registry file (``--registry``, ``--registry-key``) or, in a second
process, from NAPTR records (``--dns``, ``--dns-private``: A is on loopback) served by a dnsmasq on 127.0.0.1
(:mod:`support.dnsnode`). Each round asks, interleaved, on one kept-alive
connection each:

* C's ``N2L`` of A's name through the registry (the not-found path:
  a catalog miss, the registry, the kept liveness of A) and through the
  DNS (the NAPTR answer kept for its TTL) — pdi's answers from elsewhere;
* C's ``N2L`` of its own name: the floor, the same ``302`` for a name held;

and, outside the server, one NAPTR resolution of A's series with a fresh
:class:`pdi.federation.naptr.NaptrFinder` (no answer kept: a query, the
rules read) beside one bare dnspython NAPTR query of the same domain (the
peer). Medians of the rounds; the ratios to the floor and to the peer.
Run: ``python3 bench/bench_federation.py [--requests N] [--rounds R]`` (``--markdown FILE``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))

import httpx
from server_helpers import serving

import readme
from pdi.archive import Archive
from support.dnsnode import dnsmasq


@contextmanager
def serve(location: str, *options: str) -> Iterator[str]:
    """``pdi serve`` of ``location`` with one worker on free ports, answering: its base URL; stopped after."""
    with serving(location, "--workers", "1", *options) as (_, port):
        yield f"http://127.0.0.1:{port}/"


def pdi(*args: str, archive: str) -> str:
    return subprocess.run([sys.executable, "-m", "pdi", *args, "--archive", archive], check=True,
                          capture_output=True, text=True, timeout=120).stdout


def timed(run: Callable[[], object], count: int) -> float:
    """Seconds for ``count`` calls of ``run``, a call."""
    start = time.perf_counter()
    for _ in range(count):
        run()
    return (time.perf_counter() - start) / count


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests of each kind a round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the median is printed)")
    readme.arguments(parser, markdown=True)
    args = parser.parse_args(argv)
    if args.small:
        args.requests, args.rounds = 20, 1

    from pdi.federation.naptr import NaptrFinder

    with tempfile.TemporaryDirectory(prefix="pdi-bench-federation-") as work, ExitStack() as stack:
        a_dir, c_dir = f"{work}/a", f"{work}/c"
        with Archive.init(a_dir) as a:
            a.add_series("a.example.us")
            a_name = str(a.add("a.example.us", b"the minutes of A\n", format="text"))
        with Archive.init(c_dir) as c:
            c.add_series("c.example.us")
            c_name = str(c.add("c.example.us", b"the minutes of C\n", format="text"))
        pdi("keys", "init", archive=a_dir)
        a_url = stack.enter_context(serve(a_dir))
        pdi("registry", "add", "a.example.us", a_url, archive=a_dir)
        Path(f"{work}/registry.jws").write_text(pdi("registry", "show", "--jws", archive=a_dir))
        Path(f"{work}/key.json").write_text(pdi("keys", "show", "--jwks", archive=a_dir))
        node = stack.enter_context(dnsmasq(
            [f"--naptr-record=a.example.us,100,10,U,THTTP+N2R+N2L+N2Ls,!^urn:pdi:.*$!{a_url}!"], ttl=3600))
        c_reg = stack.enter_context(serve(c_dir, "--registry", f"{work}/registry.jws",
                                          "--registry-key", f"{work}/key.json"))
        c_dns = stack.enter_context(serve(c_dir, "--dns", node.server, "--dns-private"))  # A is on 127.0.0.1
        clients = [stack.enter_context(httpx.Client(timeout=30)) for _ in range(3)]
        kinds: dict[str, Callable[[], object]] = {
            "registry": lambda: _redirect(clients[0], f"{c_reg}uri-res/N2L?{a_name}", a_url),
            "dns": lambda: _redirect(clients[1], f"{c_dns}uri-res/N2L?{a_name}", a_url),
            "held": lambda: _redirect(clients[2], f"{c_reg}uri-res/N2L?{c_name}", "/uri-res/N2R?"),
            "naptr": lambda: NaptrFinder(node.server).services("a.example.us", a_name),
            "dnspython": lambda: _bare(node.port),
        }
        for run in kinds.values():  # warm: connections made, the registry and the DNS answer kept
            run()
        rounds: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(args.rounds):
            for kind, run in kinds.items():
                rounds[kind].append(timed(run, args.requests if kind in ("registry", "dns", "held")
                                          else max(1, args.requests // 4)))
        median = {k: statistics.median(v) for k, v in rounds.items()}
    held = median["held"]
    load = os.getloadavg()[0]
    print(f"{args.requests} requests of each kind a round, median of {args.rounds} rounds; load {load:.2f}")
    rows = [
        ["N2L of another archive's name, through the registry (302)", f"{median['registry'] * 1e6:.0f} µs",
         "N2L of a name held (302)", f"{held * 1e6:.0f} µs", f"**{median['registry'] / held:.2f}×**"],
        ["N2L of another archive's name, through DNS NAPTR (302)", f"{median['dns'] * 1e6:.0f} µs",
         "N2L of a name held (302)", f"{held * 1e6:.0f} µs", f"**{median['dns'] / held:.2f}×**"],
        ["one NAPTR resolution, no answer kept (`NaptrFinder`)", f"{median['naptr'] * 1e6:.0f} µs",
         "one bare dnspython NAPTR query", f"{median['dnspython'] * 1e6:.0f} µs",
         f"**{median['naptr'] / median['dnspython']:.2f}×**"],
    ]
    for row in rows:
        print(f"{row[0]:<62} {row[1]:>9}  vs {row[2]:<34} {row[3]:>9}  {row[4].strip('*')}")
    readme.write(args.markdown, f"Two resolvers and a dnsmasq on loopback, one worker each, {args.requests} requests"
                 f" of each kind a round, interleaved, median of {args.rounds} rounds (load {load:.2f}):\n\n"
                 + readme.table(["pdi", "", "floor or peer", "", "ratio"], rows))
    return 0


def _redirect(client: httpx.Client, url: str, to: str) -> None:
    answer = client.get(url)
    assert answer.status_code == 302 and to in answer.headers["location"], (answer.status_code, answer.text[:200])


def _bare(port: int) -> None:
    import dns.resolver

    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port = ["127.0.0.1"], port
    assert len(resolver.resolve("a.example.us", "NAPTR")) == 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
