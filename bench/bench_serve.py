"""``pdi serve`` — the command a user runs — against Debian's nginx on the same bytes, driven by wrk.

Installs nothing: it needs ``nginx`` and ``wrk`` (and ``curl`` for ``--big``),
Debian's packages of those names, which ``scripts/bootstrap --dev`` installs.
In a temporary directory it makes an archive with the ``pdi`` command
(``pdi init``, ``pdi series add``, ``pdi add``: texts of 1 KB, 10 KB, 20 KB
and 1 MB), writes the bytes ``pdi get`` gives for each name into a folder —
the whole stored texts, and the ten lines a ``#line=`` fragment of the 1 MB
text selects, cut in advance — and serves that folder with nginx (its own
configuration: ``daemon off``, ``sendfile on``, ``tcp_nopush on``, Debian's
other defaults, no access log). ``pdi serve`` runs as a subprocess on a free
port with its own defaults (``--workers`` may be passed on).

Each answer is checked to be the same bytes from both servers; then wrk
asks for each at 1, 8 and 64 connections for ``--seconds``, pdi and nginx
taking turns, ``--runs`` times. Printed: the median requests per second and
the median of the median latencies (wrk ``--latency``), and the ratios.

``--big`` instead generates a text of ``--big-mb`` MB (400), deposits it, and
has ``--clients`` curl processes (8) fetch it whole at once from each
server, ``--rounds`` times each, ``--runs`` times: the median throughput of
each, their ratio, and the peak resident memory of ``pdi serve`` meanwhile
(its processes' RSS summed, read from /proc every 20 ms). Each pdi worker
checks the text's chunks against their SHA-256 the first time it sends them
and, the file unchanged, sends it with ``sendfile`` after that (its fixity
memo, ``pdi serve --fixity-memo``; the benchmark waits for the text's file
to be older than the memo's racy window first, 45 s by default, as an
archive's files are): the first run's first round pays for the
hashing, the median is of the runs after. It also asks for a passage near
the text's start and one at its end (the first request, then the median of
15), against nginx serving the same octets cut in advance.

``--cold`` runs the cold section instead (:func:`_cold`: names drawn at
random from a catalog of ``--documents`` documents, far more than the answer
cache holds), which ``bench/bench_serve_cold.py`` runs on its own and whose
table (``--markdown FILE``) README.md keeps between its ``serve_cold`` markers.

    python3 bench/run_all.py serve          # or: python3 bench/bench_serve.py [--runs 5]
    python3 bench/run_all.py serve_big      # or: python3 bench/bench_serve.py --big
    python3 bench/run_all.py serve_cold     # or: python3 bench/bench_serve.py --cold [--catalog DIR]

``--markdown FILE`` writes the table of the section run, which README.md
keeps between its ``serve``, ``serve_big`` and ``serve_cold`` markers
(``bench/run_all.py --write-readme serve serve_big serve_cold``). ``--small``
runs the hot section and ``--big``'s code, briefly (for CI).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
sys.path.insert(0, str(SRC))

sys.path.insert(0, str(HERE))

import readme  # noqa: E402  (bench/ is not a package)
from bench_mirror import past_racy_window  # noqa: E402
from pdi._ports import free_port  # noqa: E402

SERIES = "bench.example.us"
CONNECTIONS = (1, 8, 64)
SMALL = (("1 KB text", 1_000), ("10 KB text", 10_000), ("20 KB text", 20_000))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement (medians are printed)")
    parser.add_argument("--seconds", type=int, default=5, help="seconds of each wrk run")
    parser.add_argument("--workers", type=int, help="pdi serve --workers (default: its own)")
    parser.add_argument("--big", action="store_true", help="whole-file throughput of a large text instead")
    parser.add_argument("--big-mb", type=int, default=400, help="size of the large text (MB)")
    parser.add_argument("--clients", type=int, default=8, help="clients fetching the large text at once")
    parser.add_argument("--rounds", type=int, default=2, help="times each client fetches the large text")
    parser.add_argument("--hot", action="store_true",
                        help="the hot section (a few names, from the answer cache): what runs without --cold or --big")
    parser.add_argument("--cold", action="store_true", help="only the cold section: names drawn from a large catalog")
    parser.add_argument("--documents", type=int, default=100_000, help="documents of the cold section's catalog")
    parser.add_argument("--only", action="append", metavar="ROW",
                        help="the cold section's rows to run (N2R cold, N2L hot, …; may be repeated; default: all)")
    parser.add_argument("--catalog", type=Path, metavar="DIR",
                        help="keep the cold section's archive and files in DIR, made there once and reused after")
    parser.add_argument("--small", action="store_true",
                        help="a run of a few seconds that exercises every path (CI): few documents, 1 s runs")
    parser.add_argument("--markdown", type=Path, metavar="FILE",
                        help="write the README's table of this run (the hot section, --cold or --big) to FILE")
    args = parser.parse_args(argv)
    if [args.hot, args.cold, args.big].count(True) > 1:
        parser.error("--hot, --cold and --big are sections of their own: give one")
    if args.small:
        args.runs, args.seconds, args.documents, args.big_mb, args.clients, args.rounds = 1, 1, 300, 8, 2, 1
    tools = _tools(["nginx", "wrk"] + (["curl"] if args.big or args.small else []))
    extra = ["--workers", str(args.workers)] if args.workers else []
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores, load average {os.getloadavg()[0]:.1f}; {_version([tools['nginx'], '-v'])}, "
          f"{_version([tools['wrk'], '--version']).split(' [')[0]}")
    with tempfile.TemporaryDirectory(prefix="pdi-bench-serve-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # nginx's workers may run as another user
        if args.big:
            return _big(root, tools, extra, args)
        if not args.cold:
            (root / "hot").mkdir()
            code = _small(root / "hot", tools, extra, args, cores)
            if args.small and not args.hot:  # CI's run goes through --big's code too (bench_serve_cold.py: --cold's)
                (root / "big").mkdir()
                code = code or _big(root / "big", tools, extra, args)
            return code
        (root / "cold").mkdir()
        return _cold(root / "cold", tools, extra, args, cores)


# --- the small documents ------------------------------------------------------------

def _small(root: Path, tools: dict[str, str], extra: list[str], args: argparse.Namespace, cores: int) -> int:
    archive = root / "archive"
    www = root / "www"
    www.mkdir()
    pdi(["init", "--archive", str(archive)])
    pdi(["series", "add", SERIES, "--archive", str(archive)])
    cases: list[tuple[str, str, str]] = []  # label, name, file nginx serves
    for label, size in SMALL:
        name = deposit(archive, root / f"{size}.txt", text_of(size, size))
        pdi(["get", name, "-o", str(www / f"{size}.txt"), "--archive", str(archive)])
        cases.append((label, name, f"{size}.txt"))
    large = text_of(1_000_000, 2)
    name = deposit(archive, root / "large.txt", large)
    middle = large.count(b"\n") // 2
    fragment = f"{name}#line={middle},{middle + 10}"
    pdi(["get", fragment, "-o", str(www / "lines.txt"), "--archive", str(archive)])
    cases.append(("#line= 10 lines of 1 MB", fragment, "lines.txt"))

    results: list[tuple[str, int, Figures, Figures]] = []
    with nginx(tools["nginx"], root, www) as peer, pdi_serve(archive, extra) as ours:
        print(f"pdi serve with {ours.workers} workers; nginx with worker_processes auto; "
              f"{args.runs} runs of {args.seconds} s each, medians\n")
        _head()
        for label, name, file in cases:
            mine_url, theirs_url = f"{ours.url}/uri-res/N2R?{name.replace('#', '%23')}", f"{peer}/{file}"
            expected = (www / file).read_bytes()
            for url in (mine_url, theirs_url):
                got = fetch(url)
                assert got == expected, f"{url} answered {len(got)} bytes, not the {len(expected)} of {file}"
            for url in (mine_url, theirs_url):  # warm: every worker's cache, nginx's page cache
                wrk(tools["wrk"], url, 8, 1, min(8, cores))
            for connections in (1, 64) if args.small else CONNECTIONS:
                mine, theirs = [], []
                for _ in range(args.runs):
                    threads = min(connections, cores)
                    mine.append(wrk(tools["wrk"], mine_url, connections, args.seconds, threads))
                    theirs.append(wrk(tools["wrk"], theirs_url, connections, args.seconds, threads))
                results.append((label, connections, Figures.median(mine), Figures.median(theirs)))
                _row(*results[-1])
        workers = ours.workers
    if args.markdown is not None:
        rows = [[f"`N2R` of a {label}" if first else "", str(connections),
                 f"{mine.rate:,.0f}/s, p50 {_ms(mine.p50)}", f"{theirs.rate:,.0f}/s, p50 {_ms(theirs.p50)}",
                 f"{mine.rate / theirs.rate:.2f}×", f"{mine.p50 / theirs.p50:.1f}×"]
                for (label, connections, mine, theirs), first in
                zip(results, [i == 0 or results[i - 1][0] != r[0] for i, r in enumerate(results)], strict=True)]
        args.markdown.write_text(
            f"`pdi serve` ({workers} workers, its defaults) and nginx on the same bytes, names asked for again"
            f" and again (the answer cache), wrk at {', '.join(map(str, CONNECTIONS))} keep-alive connections,"
            f" {args.seconds} s a run, taking turns, medians of {args.runs} runs.\n\n"
            + readme.table(["request", "connections", "pdi serve", "nginx", "pdi/nginx req/s", "pdi/nginx p50"], rows),
            encoding="utf-8")
    return 0


def _head() -> None:
    print(f"{'':<26} {'':>5} {'pdi serve':>21}   {'nginx':>21}   {'pdi/nginx':>17}")
    print(f"{'request':<26} {'conns':>5} {'req/s':>10} {'p50':>10}   {'req/s':>10} {'p50':>10}   "
          f"{'req/s':>7} {'p50':>9}")


def _row(label: str, connections: int, mine: Figures, theirs: Figures) -> None:
    print(f"{label if connections == CONNECTIONS[0] else '':<26} {connections:>5} "
          f"{mine.rate:>10,.0f} {_ms(mine.p50):>10}   {theirs.rate:>10,.0f} {_ms(theirs.p50):>10}   "
          f"{mine.rate / theirs.rate:>6.2f}× {mine.p50 / theirs.p50:>8.1f}×", flush=True)


@dataclass(frozen=True)
class Figures:
    """What one wrk run says: requests per second and the median latency (seconds)."""

    rate: float
    p50: float

    @staticmethod
    def median(runs: list[Figures]) -> Figures:
        return Figures(statistics.median(r.rate for r in runs), statistics.median(r.p50 for r in runs))


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def wrk(program: str, url: str, connections: int, seconds: int, threads: int, headers: tuple[str, ...] = ()) -> Figures:
    """One wrk run (each request with ``headers``, ``Name: value``); an error if any answer was not 2xx or 3xx,
    or a connection failed."""
    out = subprocess.run(
        [program, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s",
         *(f"-H{header}" for header in headers), url],
        capture_output=True, text=True, check=True,
    ).stdout
    if "Non-2xx or 3xx responses" in out:
        raise SystemExit(f"wrk: {url} answered errors:\n{out}")
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if errors and (int(errors[1]) or int(errors[3]) or int(errors[4])):
        raise SystemExit(f"wrk: connections to {url} failed:\n{out}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.MULTILINE)
    if rate is None or p50 is None:
        raise SystemExit(f"wrk: cannot read its report:\n{out}")
    return Figures(float(rate[1]), float(p50[1]) * _UNITS[p50[2]])


# --- names drawn from a large catalog --------------------------------------------------

#: Connections of the cold section's wrk runs.
COLD_CONNECTIONS = (1, 64)
#: Names of the cold section asked again and again (each worker's answer cache holds them all).
HOT_NAMES = 100
#: Documents deposited in one Archive.deposit_batch transaction.
BATCH = 2_000
#: The first-asking rows and the cold row whose requests each asks again (a name once, to a server just started).
FIRST = {"N2R first": "N2R cold", "N2L first": "N2L cold", "304 first": "304 cold"}
#: Seconds of a first-asking run at most: fewer requests than names (a first-asking N2L told without the parser,
#: up to 58,000 a second at 64 connections, walked past 100,000 names in 3 s and was then answered from facts).
FIRST_SECONDS = 1


def _cold(root: Path, tools: dict[str, str], extra: list[str], args: argparse.Namespace, cores: int) -> int:
    """``N2R``, ``N2L`` and ``304`` of names drawn at random from ``--documents`` documents, against nginx.

    Every request of a wrk run names a document drawn at random (a Lua
    script choosing among the paths of a list), so with 100,000 documents
    almost every ``N2R`` is of a name the worker's answer cache does not
    hold ("cold"); each "hot" row draws from :data:`HOT_NAMES` names asked
    before, and only that way (the ``304`` row's names were only ever
    revalidated, never fetched). nginx serves the same bytes from one file a document; its ``N2L``
    is ``return 302`` to the file, its ``304`` its own answer to its own
    entity tag. Both servers' files are read once before (in the page
    cache: "cold" is about the answer cache, not the disk). Each row also
    gives the CPU time (user and system) of the server's processes per
    request: read from ``/proc`` before and after each wrk run, over the
    requests wrk counted. The rows run in the order printed, so a cold row's
    names may have been asked by a row before it (each worker's cache of
    32 MiB holds about a fifth of 100,000 small answers, and the facts of
    some 95,000 names, which tell their ``N2L`` and ``304``).

    Then the first-asking rows (:data:`FIRST`): each run starts a ``pdi
    serve`` of its own and walks the names in a shuffled order, each asked
    once (:func:`walk_paths_script`, for at most :data:`FIRST_SECONDS`), so
    that every answer needs the catalog; nginx is asked the same walk. A row
    whose runs asked more requests than there are names says "names asked
    again".
    """
    import random

    kept = args.catalog
    home = kept.resolve() if kept is not None else root
    archive, www = home / "archive", home / "www"
    listed = home / "names.tsv"
    if kept is not None and listed.exists():
        names, tags = map(list, zip(*(line.split("\t") for line in listed.read_text().splitlines()), strict=True))
        print(f"cold: {len(names):,} documents of the catalog kept in {kept}", flush=True)
    else:
        (www / "d").mkdir(parents=True)
        home.chmod(0o755)  # nginx's workers may run as another user
        started = time.perf_counter()
        names, tags = build_catalog(archive, www / "d", args.documents)
        print(f"cold: {len(names):,} documents of 150-450 bytes deposited in {time.perf_counter() - started:.0f} s "
              f"(Archive.deposit_batch, {BATCH:,} a transaction)", flush=True)
        listed.write_text("".join(f"{n}\t{t}\n" for n, t in zip(names, tags, strict=True)))
    rng = random.Random(24)
    # three sets of hot names, each only ever asked one way: N2R, N2L, or revalidated (If-None-Match)
    drawn = rng.sample(range(len(names)), 3 * min(HOT_NAMES, len(names) // 9))
    hot_n2r, hot_n2l, hot_304 = (sorted(drawn[k::3]) for k in range(3))
    n2r = [f"/uri-res/N2R?{n}" for n in names]
    lists = {  # label: (pdi's paths [with If-None-Match], nginx's, expected status)
        "N2R cold": (n2r, [f"/d/{i}.txt" for i in range(len(names))], 200),
        "N2R hot": ([n2r[i] for i in hot_n2r], [f"/d/{i}.txt" for i in hot_n2r], 200),
        "N2L cold": ([f"/uri-res/N2L?{n}" for n in names], [f"/n2l/{i}.txt" for i in range(len(names))], 302),
        "N2L hot": ([f"/uri-res/N2L?{names[i]}" for i in hot_n2l], [f"/n2l/{i}.txt" for i in hot_n2l], 302),
        "304 cold": ([f"{p}\t{t}" for p, t in zip(n2r, tags, strict=True)],
                     [f"/d/{i}.txt\t{nginx_tag(www / 'd' / f'{i}.txt')}" for i in range(len(names))], 304),
        "304 hot": ([f"{n2r[i]}\t{tags[i]}" for i in hot_304],
                    [f"/d/{i}.txt\t{nginx_tag(www / 'd' / f'{i}.txt')}" for i in hot_304], 304),
    }
    for folder in (archive, www):  # both servers' files in the page cache: cold is the answer cache's, not the disk's
        for path in folder.rglob("*"):
            if path.is_file():
                path.read_bytes()
    location = "location ~ ^/n2l/(.+)$ { return 302 /d/$1; }"
    with nginx(tools["nginx"], root, www, location) as peer, pdi_serve(archive, extra) as ours:
        print(f"pdi serve with {ours.workers} workers; nginx with worker_processes auto; "
              f"{args.runs} runs of {args.seconds} s each, interleaved, medians; CPU: user + system time of "
              f"the server's processes per request\n")
        scripts = {}
        for label, (mine, theirs, status) in lists.items():
            for server, paths in (("pdi", mine), ("nginx", theirs)):
                listed = root / f"{label.replace(' ', '-')}-{server}.paths"
                listed.write_text("\n".join(paths) + "\n")
                scripts[label, server] = random_paths_script(listed, root)
            _check_cold(ours.url, peer, mine, theirs, status, www)
        for label in ("N2R hot", "N2L hot", "304 hot"):  # every worker's cache, each set asked its own way only
            wrk_cpu(tools["wrk"], ours.url, scripts[label, "pdi"], 8, 1, min(8, cores), ours.pid)
        _cold_head()
        rows: list[tuple[str, int, Load, Load]] = []
        for label in [label for label in lists if not args.only or label in args.only]:
            for connections in COLD_CONNECTIONS:
                mine_runs, theirs_runs = [], []
                threads = min(connections, cores)
                for _ in range(args.runs):
                    mine_runs.append(wrk_cpu(tools["wrk"], ours.url, scripts[label, "pdi"], connections,
                                             args.seconds, threads, ours.pid))
                    theirs_runs.append(wrk_cpu(tools["wrk"], peer, scripts[label, "nginx"], connections,
                                               args.seconds, threads, peer_pid(root)))
                rows.append((label, connections, Load.median(mine_runs), Load.median(theirs_runs)))
                _cold_row(*rows[-1])
        # first asking: each run a pdi serve just started, each name asked once (a walk through them all)
        order = rng.sample(range(len(names)), len(names))
        seconds = min(args.seconds, FIRST_SECONDS)
        for label in [label for label in FIRST if not args.only or label in args.only]:
            mine_paths, theirs_paths, _ = lists[FIRST[label]]
            for connections in COLD_CONNECTIONS:
                mine_runs, theirs_runs = [], []
                threads = min(connections, cores)
                walks = {server: walk_paths_script(root, f"{label.replace(' ', '-')}-{server}-{threads}",
                                                   [paths[i] for i in order], threads)
                         for server, paths in (("pdi", mine_paths), ("nginx", theirs_paths))}
                for _ in range(args.runs):
                    with pdi_serve(archive, extra, "pdi-serve-first.log") as first:
                        mine_runs.append(wrk_cpu(tools["wrk"], first.url, walks["pdi"], connections, seconds,
                                                 threads, first.pid))
                    theirs_runs.append(wrk_cpu(tools["wrk"], peer, walks["nginx"], connections, seconds, threads,
                                               peer_pid(root)))
                again = max(load.requests for load in mine_runs) > len(names)
                rows.append((label + (" (names asked again)" if again else ""), connections,
                             Load.median(mine_runs), Load.median(theirs_runs)))
                _cold_row(*rows[-1])
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    if args.markdown is not None:
        args.markdown.write_text(cold_table(rows, args, len(names)), encoding="utf-8")
    return 0


def cold_table(rows: list[tuple[str, int, Load, Load]], args: argparse.Namespace, documents: int) -> str:
    """The README's table of the cold section: each row's medians, pdi's and nginx's, and their ratios."""
    sys.path.insert(0, str(HERE))
    import readme

    def figures(load: Load) -> str:
        return f"{load.rate:,.0f}/s, p50 {_ms(load.p50)}, p99 {_ms(load.p99)}, {_us(load.cpu)} CPU"

    described = {"N2R cold": f"`N2R`, cold (drawn from {documents:,})", "N2R hot": f"`N2R`, hot ({HOT_NAMES} names)",
                 "N2L cold": "`N2L` (`302`), cold", "N2L hot": "`N2L` (`302`), hot",
                 "304 cold": "`304` for `If-None-Match`, cold", "304 hot": "`304`, hot (names only revalidated)",
                 "N2R first": "`N2R`, first asking", "N2L first": "`N2L`, first asking",
                 "304 first": "`304`, first asking"}
    body = [[described.get(label, label) if connections == COLD_CONNECTIONS[0] else "", str(connections), figures(mine),
             figures(theirs), f"{mine.rate / theirs.rate:.2f}×", f"{mine.cpu / max(theirs.cpu, 1e-9):.1f}×"]
            for label, connections, mine, theirs in rows]
    return (f"{documents:,} documents; {args.runs} runs of {args.seconds} s, pdi and nginx taking turns, medians; "
            "CPU: user and system time of each server's processes a request. A cold row's names are drawn at random, "
            "and may have been asked by a row before it (`N2L` and `304` rows are then told by the name's fact); "
            f"each first-asking run ({min(args.seconds, FIRST_SECONDS)} s) is of a `pdi serve` just started, "
            "asked each name once.\n\n"
            + readme.table(["request", "conns", "pdi serve", "nginx", "pdi/nginx req/s", "pdi/nginx CPU"], body))


def build_catalog(archive: Path, folder: Path, documents: int) -> tuple[list[str], list[str]]:
    """``documents`` small texts deposited in ``archive`` (one series), each also written to ``folder/{i}.txt``.

    Deposited with :meth:`pdi.archive.Archive.deposit_batch`, :data:`BATCH` a
    transaction (the ``pdi`` command would take a process a document).
    Returns their names and the entity tag ``pdi serve`` gives each (the
    SHA-256 of its bytes, quoted).
    """
    import hashlib
    import random

    from pdi.archive import Archive
    from pdi.archive.content import Content

    rng = random.Random(7)
    words = ["archive", "citation", "passage", "Grüße", "naïve", "document", "name", "bytes"]
    opened = Archive.init(archive)
    names: list[str] = []
    tags: list[str] = []
    try:
        opened.add_series(SERIES)
        for start in range(0, documents, BATCH):
            texts = []
            for i in range(start, min(documents, start + BATCH)):
                lines = [f"document {i}\n"] + [
                    " ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) + "\n"
                    for _ in range(rng.randint(2, 6))
                ]
                data = "".join(lines).encode()
                (folder / f"{i}.txt").write_bytes(data)
                texts.append(data)
                tags.append(f'"{hashlib.sha256(data).hexdigest()}"')
            made = opened.deposit_batch(SERIES, [([Content(t, "text")], None) for t in texts])
            names.extend(str(d.names[0]) for d in made)
    finally:
        opened.close()
    return names, tags


def nginx_tag(path: Path) -> str:
    """The entity tag nginx gives a static file: its modification time and size, in hex."""
    stat = path.stat()
    return f'"{int(stat.st_mtime):x}-{stat.st_size:x}"'


def _check_cold(mine_url: str, theirs_url: str, mine: list[str], theirs: list[str], status: int, www: Path) -> None:
    """A few of each list asked of both servers: the status expected, and for 200 the same bytes."""
    for k in sorted({0, len(mine) // 2, len(mine) - 1}):
        pdi_path, _, pdi_tag = mine[k].partition("\t")
        peer_path, _, peer_tag = theirs[k].partition("\t")
        got, body = fetch_status(mine_url + pdi_path, pdi_tag)
        peer_got, peer_body = fetch_status(theirs_url + peer_path, peer_tag)
        assert (got, peer_got) == (status, status), f"{pdi_path}: {got}, {peer_path}: {peer_got}, not {status}"
        if status == 200:
            assert body == peer_body == (www / peer_path.lstrip("/")).read_bytes(), f"{pdi_path}: other bytes"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def fetch_status(url: str, if_none_match: str = "") -> tuple[int, bytes]:
    """Status and body of a ``GET`` (redirects not followed)."""
    request = urllib.request.Request(url, headers={"If-None-Match": if_none_match} if if_none_match else {})
    try:
        with urllib.request.build_opener(_NoRedirect).open(request, timeout=30) as answer:
            return answer.status, bytes(answer.read())
    except urllib.error.HTTPError as status:
        return status.code, b""


def random_paths_script(paths: Path, root: Path) -> Path:
    """A wrk script asking for a path drawn at random from ``paths`` (one a line: a path, then a tab and an
    ``If-None-Match`` value, if any); each of wrk's threads draws its own."""
    return _paths_script(paths, root / f"{paths.stem}.lua", "math.randomseed(os.time() * 1000 + (id or 0))",
                         "local i = math.random(count)")


def walk_paths_script(root: Path, stem: str, lines: list[str], threads: int) -> Path:
    """A wrk script asking for the paths of ``lines`` (as :func:`random_paths_script` reads them) in turn, each of
    wrk's ``threads`` threads every ``threads``-th from its own first, so that no path is asked twice until all
    were."""
    paths = root / f"{stem}.paths"
    paths.write_text("\n".join(lines) + "\n")
    return _paths_script(paths, root / f"{stem}.lua", "at = (id or 1) - 1",
                         f"local i = at % count + 1\n  at = at + {threads}")


def _paths_script(paths: Path, script: Path, init: str, pick: str) -> Path:
    """A wrk script asking for the paths listed in ``paths``: each thread's Lua ``init`` once, then ``pick`` (which
    sets ``i``, the index of the next path) a request."""
    script.write_text(f"""
local paths, tags = {{}}, {{}}
for line in io.lines("{paths}") do
  local path, tag = line:match("^([^\\t]+)\\t?(.*)$")
  paths[#paths + 1] = path
  tags[#tags + 1] = tag
end
local count = #paths
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
local at = 0
function init(args)
  {init}
end
function request()
  {pick}
  if tags[i] ~= "" then
    return wrk.format("GET", paths[i], {{["If-None-Match"] = tags[i]}})
  end
  return wrk.format("GET", paths[i])
end
""")
    return script


@dataclass(frozen=True)
class Load:
    """What one wrk run of the cold section says: requests a second, median and 99th percentile latency (s),
    CPU seconds a request."""

    rate: float
    p50: float
    cpu: float
    p99: float = 0.0
    #: Requests wrk counted.
    requests: int = 0

    @staticmethod
    def median(runs: list[Load]) -> Load:
        return Load(statistics.median(r.rate for r in runs), statistics.median(r.p50 for r in runs),
                    statistics.median(r.cpu for r in runs), statistics.median(r.p99 for r in runs),
                    int(statistics.median(r.requests for r in runs)))


def wrk_cpu(program: str, base: str, script: Path, connections: int, seconds: int, threads: int, pid: int) -> Load:
    """One wrk run with ``script`` against ``base``, and the CPU time ``pid``'s processes spent a request meanwhile."""
    before = cpu_of_tree(pid)
    out = subprocess.run(
        [program, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "10s",
         "-s", str(script), base],
        capture_output=True, text=True, check=True,
    ).stdout
    spent = cpu_of_tree(pid) - before
    if "Non-2xx or 3xx responses" in out:
        raise SystemExit(f"wrk: {base} with {script.name} answered errors:\n{out}")
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if errors and (int(errors[1]) or int(errors[3]) or int(errors[4])):
        raise SystemExit(f"wrk: connections to {base} failed:\n{out}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.MULTILINE)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.MULTILINE)
    count = re.search(r"^\s*(\d+) requests in", out, re.MULTILINE)
    if rate is None or p50 is None or p99 is None or count is None:
        raise SystemExit(f"wrk: cannot read its report:\n{out}")
    return Load(float(rate[1]), float(p50[1]) * _UNITS[p50[2]], spent / max(1, int(count[1])),
                float(p99[1]) * _UNITS[p99[2]], int(count[1]))


_TICK = os.sysconf("SC_CLK_TCK")


def cpu_of_tree(pid: int) -> float:
    """User and system CPU seconds of ``pid`` and its children, so far (``/proc/…/stat``)."""
    total = 0
    for each in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it has just ended
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / _TICK


def peer_pid(root: Path) -> int:
    """nginx's master process (its pid file)."""
    return int((root / "nginx" / "nginx.pid").read_text().strip())


def _cold_head() -> None:
    print(f"{'':<10} {'':>5} {'pdi serve':>40}   {'nginx':>40}   {'pdi/nginx':>24}")
    print(f"{'request':<10} {'conns':>5} {'req/s':>8} {'p50':>10} {'p99':>10} {'CPU/req':>9}   {'req/s':>8} "
          f"{'p50':>10} {'p99':>10} {'CPU/req':>9}   {'req/s':>7} {'p50':>7} {'CPU':>8}")


def _cold_row(label: str, connections: int, mine: Load, theirs: Load) -> None:
    print(f"{label if connections == COLD_CONNECTIONS[0] else '':<10} {connections:>5} "
          f"{mine.rate:>8,.0f} {_ms(mine.p50):>10} {_ms(mine.p99):>10} {_us(mine.cpu):>9}   "
          f"{theirs.rate:>8,.0f} {_ms(theirs.p50):>10} {_ms(theirs.p99):>10} {_us(theirs.cpu):>9}   "
          f"{mine.rate / theirs.rate:>6.2f}× {mine.p50 / theirs.p50:>6.1f}× "
          f"{mine.cpu / max(theirs.cpu, 1e-9):>7.1f}×", flush=True)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


# --- the large text -----------------------------------------------------------------

def _big(root: Path, tools: dict[str, str], extra: list[str], args: argparse.Namespace) -> int:
    archive = root / "archive"
    www = root / "www"
    www.mkdir()
    pdi(["init", "--archive", str(archive)])
    pdi(["series", "add", SERIES, "--archive", str(archive)])
    source = root / "big.txt"
    t0 = time.perf_counter()
    lines = write_big_text(source, args.big_mb * 1_000_000)
    name = pdi(["add", "-s", SERIES, str(source), "--archive", str(archive)]).strip()
    deposited = time.time()  # the blob file's ctime is before this
    source.unlink()
    pdi(["get", name, "-o", str(www / "big.txt"), "--archive", str(archive)])
    size = (www / "big.txt").stat().st_size
    # passages near its start and its end, nginx serving the same octets cut in advance
    passages = [("`#char=10,20`", f"{name}#char=10,20", "start.txt"),
                (f"`#line={lines - 2},{lines}` (its last two lines)", f"{name}#line={lines - 2},{lines}", "end.txt")]
    for _, fragment, file in passages:
        pdi(["get", fragment, "-o", str(www / file), "--archive", str(archive)])
    print(f"a text of {size / 1e6:,.0f} MB ({lines:,} lines) deposited in {time.perf_counter() - t0:.0f} s; "
          f"{args.clients} clients fetch it whole at once, {args.rounds} times each; "
          f"{args.runs} runs, medians\n")
    rates: list[float] = []
    peer_rates: list[float] = []
    peak = 0
    asked: list[tuple[str, float, float, float]] = []  # label, pdi's first answer, pdi's median after, nginx's median
    past_racy_window(deposited)
    with nginx(tools["nginx"], root, www) as peer, pdi_serve(archive, extra) as ours:
        for label, fragment, file in passages:  # asked first, each worker's first evaluation
            mine_url = f"{ours.url}/uri-res/N2R?{fragment.replace('#', '%23')}"
            expected = (www / file).read_bytes()
            first = timed_fetch(mine_url, expected)
            again = statistics.median(timed_fetch(mine_url, expected) for _ in range(15))
            theirs = statistics.median(timed_fetch(f"{peer}/{file}", expected) for _ in range(15))
            asked.append((label, first, again, theirs))
        mine_url, theirs_url = f"{ours.url}/uri-res/N2R?{name}", f"{peer}/big.txt"
        for _ in range(args.runs):
            peer_rates.append(fetch_whole(tools["curl"], theirs_url, size, args.clients, args.rounds, None)[0])
            rate, run_peak = fetch_whole(tools["curl"], mine_url, size, args.clients, args.rounds, ours.pid)
            rates.append(rate)
            peak = max(peak, run_peak)
        workers = ours.workers
    mine, theirs = statistics.median(rates), statistics.median(peer_rates)
    print(f"{'':<12} {'MB/s':>8} {'peak RSS':>10}")
    print(f"{'pdi serve':<12} {mine:>8,.0f} {peak / 2**20:>7,.0f} MiB   ({workers} workers, their RSS summed)")
    print(f"{'nginx':<12} {theirs:>8,.0f}")
    print(f"pdi/nginx: {mine / theirs:.2f}× the throughput (nginx {theirs / mine:.2f}× pdi's)")
    for label, first, again, peer_time in asked:
        print(f"N2R of {label}: first {_ms(first)}, then p50 {_ms(again)}; nginx, the same octets: p50 {_ms(peer_time)}"
              f" ({again / peer_time:.1f}×)")
    if args.markdown is not None:
        rows = [[f"the whole text, {args.clients} clients at once, {args.rounds} fetches each",
                 f"{mine:,.0f} MB/s, peak RSS {peak / 2**20:,.0f} MiB ({workers} workers)", f"{theirs:,.0f} MB/s",
                 f"{mine / theirs:.2f}× the throughput"]]
        for label, first, again, peer_time in asked:
            rows.append([f"`N2R` of {label}, the first request", _ms(first), "", ""])
            rows.append(["the same, asked again (median of 15)", _ms(again), f"{_ms(peer_time)} (the same octets)",
                         f"{again / peer_time:.1f}× the time"])
        args.markdown.write_text(
            f"A generated UTF-8 text of {size / 1e6:,.0f} MB ({lines:,} lines), deposited with `pdi add`;"
            f" `pdi serve` (its defaults) and nginx on the same bytes (for a passage, nginx serves the"
            f" octets cut in advance); medians of {args.runs} runs of the whole-text fetch (curl).\n\n"
            + readme.table(["what", "pdi serve", "nginx", "pdi/nginx"], rows), encoding="utf-8")
    return 0


def timed_fetch(url: str, expected: bytes) -> float:
    """Seconds to fetch ``url`` on a new connection, its answer checked to be ``expected``."""
    start = time.perf_counter()
    got = fetch(url)
    elapsed = time.perf_counter() - start
    if got != expected:
        raise SystemExit(f"{url} answered {len(got)} bytes, not the {len(expected)} expected")
    return elapsed


def write_big_text(path: Path, size: int) -> int:
    """``size`` bytes or a little more of lines of text (a block of 1 MB repeated, each copy numbered); its lines."""
    block = text_of(1_000_000, 7)
    with path.open("wb") as out:
        written, n, lines = 0, 0, 0
        while written < size:
            piece = f"copy {n}\n".encode() + block
            out.write(piece)
            written += len(piece)
            lines += piece.count(b"\n")
            n += 1
    return lines


def fetch_whole(curl: str, url: str, size: int, clients: int, rounds: int, pid: int | None) -> tuple[float, int]:
    """``clients`` curls fetching ``url`` ``rounds`` times each: MB/s over all, and the peak RSS of ``pid``'s processes."""
    peak = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], rss_of_tree(pid))  # type: ignore[arg-type]

    watcher = threading.Thread(target=watch, daemon=True)
    if pid is not None:
        watcher.start()
    script = (f'for i in $(seq {rounds}); do "$0" -s -o /dev/null -w "%{{http_code}} %{{size_download}}\\n" "$1"; done')
    start = time.perf_counter()
    procs = [subprocess.Popen(["sh", "-c", script, curl, url], stdout=subprocess.PIPE, text=True)
             for _ in range(clients)]
    outputs = [p.communicate()[0] for p in procs]
    elapsed = time.perf_counter() - start
    done.set()
    if pid is not None:
        watcher.join()
    for line in "".join(outputs).splitlines():
        status, got = line.split()
        if status != "200" or int(got) != size:
            raise SystemExit(f"{url}: status {status}, {got} bytes of {size}")
    return clients * rounds * size / 1e6 / elapsed, peak[0]


def rss_of_tree(pid: int) -> int:
    """Resident bytes of ``pid`` and its children, now (VmRSS from /proc)."""
    total = 0
    for each in [pid, *children(pid)]:
        try:
            status = Path(f"/proc/{each}/status").read_text()
        except OSError:
            continue  # it has just ended
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


# --- the servers ----------------------------------------------------------------------

@dataclass(frozen=True)
class Serving:
    """A running ``pdi serve``: its base URL, its number of workers, its process id."""

    url: str
    workers: int
    pid: int


@contextmanager
def pdi_serve(archive: Path, extra: list[str], log_name: str = "pdi-serve.log") -> Iterator[Serving]:
    """``pdi serve --port 0`` on the archive, until the block ends (its standard error in ``log_name`` beside it)."""
    log = archive.parent / log_name
    with log.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "pdi", "serve", "--port", "0", "--archive", str(archive), *extra],
            stderr=err, env=_env(),
        )
    try:
        deadline = time.monotonic() + 60
        said = re.compile(r"at (http://127\.0\.0\.1:\d+)/ (?:\(replay at [^)]*\) )?with (\d+) workers?")
        while (found := said.search(log.read_text())) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"pdi serve did not start:\n{log.read_text()}")
            time.sleep(0.05)
        _wait_for(f"{found[1]}/api/series")
        yield Serving(found[1], int(found[2]), process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


@contextmanager
def nginx(program: str, root: Path, www: Path, locations: str = "") -> Iterator[str]:
    """Debian's nginx serving ``www`` on a free loopback port, with a configuration of its own (and ``locations``)."""
    port = free_port()
    work = root / "nginx"
    work.mkdir()
    temp = " ".join(f"{kind}_temp_path {work}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    # Debian's nginx.conf, less what does not apply (TLS, gzip, virtual hosts), and no access log
    (work / "nginx.conf").write_text(f"""
daemon off;
worker_processes auto;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 768; }}
http {{
    sendfile on;
    tcp_nopush on;
    types {{ text/plain txt; }}
    default_type application/octet-stream;
    charset utf-8;
    access_log off;
    {temp}
    server {{
        listen 127.0.0.1:{port};
        root {www};
        {locations}
    }}
}}
""")
    process = subprocess.Popen([program, "-p", str(work), "-e", str(work / "error.log"), "-c", str(work / "nginx.conf")])
    try:
        _wait_for(f"http://127.0.0.1:{port}/", process=process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGQUIT)  # nginx: finish and stop
        process.wait(timeout=60)


def _wait_for(url: str, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url, timeout=5).read()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if time.monotonic() > deadline or (process is not None and process.poll() is not None):
                raise SystemExit(f"{url} did not answer") from None
            time.sleep(0.05)


# --- helpers --------------------------------------------------------------------------

def _tools(names: list[str]) -> dict[str, str]:
    found = {n: shutil.which(n) or shutil.which(n, path="/usr/sbin:/usr/bin") for n in names}
    missing = [n for n, path in found.items() if path is None]
    if missing:
        raise SystemExit(f"bench_serve needs {', '.join(missing)}: apt-get install {' '.join(missing)} "
                         "(scripts/bootstrap --dev installs them)")
    return {n: str(path) for n, path in found.items()}


def _version(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True)
    return (done.stdout + done.stderr).strip().splitlines()[0].replace("nginx version: ", "")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    return env


def pdi(arguments: list[str]) -> str:
    """Run the ``pdi`` command of this checkout; its standard output."""
    return subprocess.run([sys.executable, "-m", "pdi", *arguments], capture_output=True, text=True,
                          check=True, env=_env()).stdout


def deposit(archive: Path, path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return pdi(["add", "-s", SERIES, str(path), "--archive", str(archive)]).strip()


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return bytes(answer.read())


def text_of(size: int, seed: int) -> bytes:
    """``size`` bytes or a line more of lines of words (LF line ends), the same for the same seed."""
    import random

    rng = random.Random(seed)
    words = ["archive", "citation", "passage", "Grüße", "naïve", "document", "name", "bytes"]
    lines = []
    total = 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 14))) + "\n"
        lines.append(line)
        total += len(line.encode())
    return "".join(lines).encode()


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def usage(doc: str | None, needed: int) -> None:
    """For a script run by hand: print its docstring ``doc`` and exit, 0 when asked (``-h``, ``--help``), 2 when
    fewer than ``needed`` arguments (not options) are given."""
    if "-h" in sys.argv[1:] or "--help" in sys.argv[1:]:
        print(doc)
        sys.exit(0)
    if len([a for a in sys.argv[1:] if not a.startswith("-")]) < needed:
        print(doc, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
