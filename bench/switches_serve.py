"""``pdi serve`` and nginx at several connection counts: CPU a request split into user and system time, and
the context switches a request (issue 24's question of why the ratio to nginx grows from 1 to 64 connections;
not a ``bench_*`` file: run by hand).

    python3 bench/switches_serve.py DIR KIND [CONNECTIONS [NAMES [ROUNDS [SECONDS]]]]

``DIR`` is a catalog kept by ``bench/bench_serve_cold.py --catalog DIR`` (its ``archive``, ``www`` and
``names.tsv``); ``KIND`` is ``n2l``, ``304`` or ``n2r``; ``CONNECTIONS`` a comma-separated list (``1,64``);
``NAMES`` how many names of the catalog wrk draws from at random (``1000``: each worker's cache soon holds them
all; ``0``: every name). One ``pdi serve`` (its defaults) and one nginx as ``bench_serve.py --cold`` runs them,
warmed for 3 s, then each connection count of each round runs pdi and nginx in turn for ``SECONDS`` (3). For
each server's processes it prints the requests a second, the user and system CPU a request (``/proc/PID/stat``)
and the voluntary switches (the process slept: waiting for a request) and involuntary ones (it was preempted) a
request (``/proc/PID/status``).
"""
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_serve as serve


def times(pids: list[int]) -> tuple[float, float, int, int]:
    """User and system CPU seconds, voluntary and involuntary context switches of ``pids``' main threads so far."""
    user = system = 0.0
    slept = preempted = 0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        user, system = user + int(fields[11]) / tick, system + int(fields[12]) / tick
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                slept += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                preempted += int(line.split()[1])
    return user, system, slept, preempted


def run(url: str, script: Path, connections: int, seconds: int, pids: list[int]) -> str:
    before = times(pids)
    out = subprocess.run(["wrk", f"-t{min(connections, 2)}", f"-c{connections}", f"-d{seconds}s", "-s", str(script),
                          url], capture_output=True, text=True, check=True).stdout
    after = times(pids)
    count = re.search(r"(\d+) requests in", out)
    if count is None or "Non-2xx" in out:
        raise SystemExit(f"wrk: {out}")
    n = int(count[1])
    user, system, slept, preempted = (b - a for a, b in zip(before, after, strict=True))
    return (f"{n / seconds:>9,.0f}/s  user {user * 1e6 / n:5.1f} µs  system {system * 1e6 / n:5.1f} µs  "
            f"slept {slept / n:.3f}  preempted {preempted / n:.3f} a request")


def main() -> None:
    serve.usage(__doc__, 2)
    home, kind = Path(sys.argv[1]), sys.argv[2]
    counts = [int(c) for c in (sys.argv[3] if len(sys.argv) > 3 else "1,64").split(",")]
    names = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    seconds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    rows = [line.split("\t") for line in (home / "names.tsv").read_text().splitlines()]
    drawn = random.Random(5).sample(range(len(rows)), names) if names else list(range(len(rows)))
    mine = {"n2l": lambda i: f"/uri-res/N2L?{rows[i][0]}", "304": lambda i: f"/uri-res/N2R?{rows[i][0]}\t{rows[i][1]}",
            "n2r": lambda i: f"/uri-res/N2R?{rows[i][0]}"}[kind]
    theirs = {"n2l": lambda i: f"/n2l/{i}.txt", "n2r": lambda i: f"/d/{i}.txt",
              "304": lambda i: f"/d/{i}.txt\t{serve.nginx_tag(home / 'www' / 'd' / f'{i}.txt')}"}[kind]
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        root.chmod(0o755)  # nginx's workers may run as another user
        scripts = {}
        for server, path in (("pdi", mine), ("nginx", theirs)):
            listed = root / f"{server}.paths"
            listed.write_text("\n".join(path(i) for i in drawn) + "\n")
            scripts[server] = serve.random_paths_script(listed, root)
        location = "location ~ ^/n2l/(.+)$ { return 302 /d/$1; }"
        with serve.nginx("nginx", root, home / "www", location) as peer, \
                serve.pdi_serve(home / "archive", [], str(root / "serve.log")) as ours:
            workers = serve.children(ours.pid)
            peers = serve.children(serve.peer_pid(root))
            serve.wrk_cpu("wrk", ours.url, scripts["pdi"], 8, 3, 2, ours.pid)
            for _ in range(rounds):
                for connections in counts:
                    for server, url, pids in (("pdi", ours.url, workers), ("nginx", peer, peers)):
                        print(f"{server:<5} {kind} c={connections:<3} {run(url, scripts[server], connections, seconds, pids)}"
                              f"  (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
