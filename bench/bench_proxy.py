"""``pdi serve --trusted-proxy``: N2R asked with a proxy's ``X-Forwarded-*`` fields against the same asked without.

What reading the fields costs (:mod:`pdi.server.http.forwarded`), where it
costs most: the answers the connection writes itself, from the cache of whole
answers (:mod:`pdi.server.process.connection`). One ``pdi serve
--trusted-proxy 127.0.0.1`` over an archive of a 1 KB and a 20 KB text; wrk
asks for each name's N2R with the five fields nginx sends
(``docs/deploy/nginx.conf``: ``Host``, ``X-Forwarded-Proto``, ``-Host``,
``-Port``, ``-For``) and with the same fields under names pdi does not read
(``X-Other-Proto``…: the floor, the same server, the same answers, the same
octets for the parser to go through), taking turns, at 1 and 64 connections, ``--runs`` times of
``--seconds``: the medians and their ratio. Each answer is first checked to
be the same bytes both ways, and its ``Link`` to name the forwarded
``https://`` host when asked with the fields.

    python3 bench/run_all.py proxy          # or: python3 bench/bench_proxy.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import readme
from bench_serve import SERIES, Figures, _tools, _version, deposit, pdi, pdi_serve, text_of, wrk

#: What nginx sends with each request (docs/deploy/nginx.conf), for a client of https://pdi.example.org:8443.
FORWARDED = ("Host: pdi.example.org", "X-Forwarded-Proto: https", "X-Forwarded-Host: pdi.example.org",
             "X-Forwarded-Port: 8443", "X-Forwarded-For: 203.0.113.9")
#: The same fields under names pdi does not read: the floor.
OTHER = tuple(field.replace("X-Forwarded-", "X-Otherwise-") for field in FORWARDED)
CONNECTIONS = (1, 64)
SIZES = (("1 KB text", 1_000), ("20 KB text", 20_000))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement (medians are printed)")
    parser.add_argument("--seconds", type=int, default=5, help="seconds of each wrk run")
    parser.add_argument("--workers", type=int, default=1, help="pdi serve --workers")
    args = readme.arguments(parser, markdown=True).parse_args(argv)
    if args.small:
        args.runs, args.seconds = 1, 1
    tools = _tools(["wrk"])
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores, load average {os.getloadavg()[0]:.1f}; {_version([tools['wrk'], '--version']).split(' [')[0]}")
    rows: list[tuple[str, int, Figures, Figures]] = []
    with tempfile.TemporaryDirectory(prefix="pdi-bench-proxy-") as tmp:
        root = Path(tmp)
        archive = root / "archive"
        pdi(["init", "--archive", str(archive)])
        pdi(["series", "add", SERIES, "--archive", str(archive)])
        names = [(label, deposit(archive, root / f"{size}.txt", text_of(size, size))) for label, size in SIZES]
        extra = ["--trusted-proxy", "127.0.0.1", "--workers", str(args.workers)]
        with pdi_serve(archive, extra) as ours:
            print(f"pdi serve --trusted-proxy 127.0.0.1 with {ours.workers} workers; {args.runs} runs of "
                  f"{args.seconds} s each, medians\n")
            print(f"{'request':<14} {'conns':>5} {'forwarded req/s':>16} {'p50':>9}   {'unread req/s':>13} {'p50':>9}"
                  f"   {'ratio req/s':>11} {'p50':>6}")
            for label, name in names:
                url = f"{ours.url}/uri-res/N2R?{name}"
                _check(url, name)
                for headers in (FORWARDED, OTHER):  # warm: the cache, the remembered readings
                    wrk(tools["wrk"], url, 8, 1, min(8, cores), headers)
                for connections in CONNECTIONS:
                    forwarded, direct = [], []
                    threads = min(connections, cores)
                    for _ in range(args.runs):
                        forwarded.append(wrk(tools["wrk"], url, connections, args.seconds, threads, FORWARDED))
                        direct.append(wrk(tools["wrk"], url, connections, args.seconds, threads, OTHER))
                    row = (label, connections, Figures.median(forwarded), Figures.median(direct))
                    rows.append(row)
                    _print(*row)
    readme.write(args.markdown, (
            f"`pdi serve --trusted-proxy 127.0.0.1` ({args.workers} worker), N2R of a name asked again and again"
            f" with nginx's `X-Forwarded-*` fields and with the same under names pdi does not read, wrk taking turns, {args.seconds} s a run, medians"
            f" of {args.runs} runs.\n\n"
            + readme.table(["request", "connections", "forwarded", "unread", "req/s ratio", "p50 ratio"],
                           [[f"`N2R` of a {label}", str(c), f"{f.rate:,.0f}/s, p50 {f.p50 * 1e3:.2f} ms",
                             f"{d.rate:,.0f}/s, p50 {d.p50 * 1e3:.2f} ms", f"{f.rate / d.rate:.2f}×",
                             f"{f.p50 / d.p50:.2f}×"] for label, c, f, d in rows])))
    return 0


def _check(url: str, name: str) -> None:
    """The same bytes either way, and only the forwarded answer's ``Link`` naming the client's URL."""
    answers = []
    for headers in (FORWARDED, OTHER):
        request = urllib.request.Request(url, headers=dict(h.split(": ", 1) for h in headers))
        with urllib.request.urlopen(request, timeout=30) as answer:
            answers.append((answer.read(), answer.headers.get("Link", "")))
    (forwarded, link), (direct, plain) = answers
    assert forwarded == direct, f"{name}: other bytes with the forwarded fields"
    assert "https://pdi.example.org:8443/" in link and "https://pdi.example.org" not in plain, (link, plain)


def _print(label: str, connections: int, forwarded: Figures, direct: Figures) -> None:
    print(f"{label if connections == CONNECTIONS[0] else '':<14} {connections:>5} {forwarded.rate:>16,.0f} "
          f"{forwarded.p50 * 1e3:>7.2f}ms   {direct.rate:>13,.0f} {direct.p50 * 1e3:>7.2f}ms   "
          f"{forwarded.rate / direct.rate:>10.2f}× {forwarded.p50 / direct.p50:>5.2f}×", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
