"""Mirror: `pdi mirror sync` of a series from one archive's resolver to another, beside `rsync` of the same
archive over loopback.

Makes an origin (a SQLite archive directory) of ``--names`` names of
random octets, ``--mb`` MB in all, and serves it with ``pdi serve`` on
127.0.0.1; the same directory is an ``rsync --daemon`` module on
127.0.0.1 (Debian's rsync). Then, in turn (``--rounds`` times, the
machine is shared; each copy begins once ``sync`` has written back what the
one before left in the page cache): ``pdi mirror sync`` into a fresh SQLite archive (``pdi
mirror add`` made before the clock starts), each blob checked against the
origin's signed manifest, and ``rsync -a rsync://127.0.0.1/…`` of the
origin's directory (its catalog and blob files) into a fresh directory,
and the same with ``--fsync`` (each file made durable before the next, as
a pdi deposit or sync makes every blob durable). All as commands, each
timed whole.

Prints the median MB a second of each and pdi's rate over each rsync's (the
issue's target: at least 0.5 of rsync's at 10,000 names and 1 GB).
Run: ``python3 bench/bench_mirror.py [--names N] [--mb M] [--rounds R] [--small] [--markdown FILE]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "server"))

from server_helpers import start_serve, stop, wait_answering

import readme
from pdi.archive import Archive, Content

S = "mirror.example.us"
#: Names deposited in one transaction while the origin is made.
BATCH = 200


def past_racy_window(changed: float) -> None:
    """Wait until files last changed at ``changed`` (``time.time()``) are old enough for pdi serve's fixity memo
    to remember them (:func:`pdi.archive.blobs.memo.racy_window`, 45 s by default), as an archive's files are."""
    from pdi.archive.blobs.memo import racy_window

    wait = changed + racy_window() - time.time()
    if wait == float("inf"):
        print("periodic writeback is off here: pdi serve's fixity memo remembers nothing, every read hashes")
    elif wait > 0:
        print(f"waiting {wait:.0f} s for the files to be older than the fixity memo's racy window", flush=True)
        time.sleep(wait)


def make_origin(location: Path, names: int, total: int) -> None:
    """``names`` names of random octets, ``total`` octets in all, in series S; and a signing key."""
    size = max(1, total // names)
    with Archive.init(location) as archive:
        archive.add_series(S)
        for start in range(0, names, BATCH):
            items = [([Content(os.urandom(size), "octet-stream")], None) for _ in range(min(BATCH, names - start))]
            archive.deposit_batch(S, items)
    run([sys.executable, "-m", "pdi", "keys", "init", "--archive", str(location)])


def run(argv: list[str]) -> float:
    """Run a command; its seconds (an error if it fails)."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=3600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rsync_daemon(root: Path, module: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``rsync --daemon`` serving ``module`` read-only as ``origin`` on 127.0.0.1 (a free port)."""
    config = root / "rsyncd.conf"
    # as whoever runs this (a daemon started by root would read as nobody)
    config.write_text(f"use chroot = no\nuid = {os.getuid()}\ngid = {os.getgid()}\n[origin]\npath = {module}\nread only = yes\n")
    port = free_port()
    daemon = subprocess.Popen(["rsync", "--daemon", "--no-detach", f"--config={config}", "--address=127.0.0.1",
                               f"--port={port}"])
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return daemon, port
        except OSError:
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit("rsync --daemon did not start") from None
            time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=10_000, help="Names in the series (default 10,000, the issue's).")
    parser.add_argument("--mb", type=float, default=1000.0, help="Octets in all, MB (default 1000, the issue's).")
    parser.add_argument("--rounds", type=int, default=3, help="Syncs of each kind, in turn (default 3; median kept).")
    readme.arguments(parser, markdown=True)  # --small: 40 names, 2 MB, 1 round
    args = parser.parse_args(argv)
    if args.small:
        args.names, args.mb, args.rounds = 40, 2.0, 1
    total = int(args.mb * 1_000_000)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="pdi-bench-mirror-") as scratch:
        root = Path(scratch)
        where = readme.file_system(scratch)
        print(f"written under {scratch}: {where}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        make_origin(root / "origin", args.names, total)
        print(f"origin of {args.names:,} names, {total / 1e6:.0f} MB made in {time.perf_counter() - started:.1f} s",
              file=sys.stderr, flush=True)
        past_racy_window(time.time())  # the origin's later rounds send what its fixity memo holds with sendfile
        server, port, _ = start_serve(root / "origin", "--replay-port", "0", drain=True, start_new_session=True)
        daemon, rsync_port = rsync_daemon(root, root / "origin")
        times: dict[str, list[float]] = {"pdi mirror sync": [], "rsync": [], "rsync --fsync": []}
        try:
            url = f"http://127.0.0.1:{port}"
            wait_answering(server, f"{url}/api/series")
            for round_ in range(args.rounds):
                mirror = root / f"mirror-{round_}"
                Archive.init(mirror).close()
                run([sys.executable, "-m", "pdi", "mirror", "add", url, "--series", S, "--archive", str(mirror)])
                os.sync()  # each copy starts with nothing of the one before still to be written back
                times["pdi mirror sync"].append(
                    run([sys.executable, "-m", "pdi", "mirror", "sync", "--archive", str(mirror)]))
                got = 0
                with Archive.open(mirror) as archive:
                    after = None
                    while True:
                        page = archive.manifest_page(S, after=after, limit=10_000)
                        got += len(page.entries)
                        if (after := page.next) is None:
                            break
                if got != args.names:
                    raise SystemExit(f"the mirror holds {got} names, not {args.names}")
                shutil.rmtree(mirror)
                for kind, options in (("rsync", []), ("rsync --fsync", ["--fsync"])):
                    copy = root / f"rsync-{round_}"
                    os.sync()
                    times[kind].append(run(["rsync", "-a", *options, f"rsync://127.0.0.1:{rsync_port}/origin/",
                                            str(copy)]))
                    shutil.rmtree(copy)
                print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
                      file=sys.stderr, flush=True)
        finally:
            stop(server)
            daemon.terminate()
            daemon.wait(30)
    median = {kind: statistics.median(ts) for kind, ts in times.items()}
    rate = {kind: total / 1e6 / seconds for kind, seconds in median.items()}
    ratio = rate["pdi mirror sync"] / rate["rsync"]
    durable = rate["pdi mirror sync"] / rate["rsync --fsync"]
    load_after = os.getloadavg()[0]
    print(f"load average {load_before:.2f} before, {load_after:.2f} after (2 cores shared: compare ratios, not times)")
    print(f"{args.names:,} names, {total / 1e6:.0f} MB over loopback, median of {args.rounds}:")
    for kind in times:
        print(f"  {kind:<16} {median[kind]:8.2f} s {rate[kind]:8.1f} MB/s {args.names / median[kind]:8.0f} names/s")
    print(f"  pdi / rsync rate: {ratio:.2f}x (target at 10,000 names and 1 GB: >= 0.5x)")
    print(f"  pdi / rsync --fsync rate: {durable:.2f}x (each file made durable, as a pdi deposit is)")
    readme.write(args.markdown, (
        f"`pdi mirror sync` of a series of {args.names:,} names ({total / 1e6:.0f} MB of random octets) from a"
        " `pdi serve` on 127.0.0.1, every blob checked against the origin's signed manifest, beside `rsync -a`"
        f" of the origin's directory from an rsync daemon on 127.0.0.1, every copy made on {where}; median of"
        f" {args.rounds} rounds taken in turn.\n\n"
    ) + readme.table(
        ["copy", "time", "MB a second", "names a second"],
        [[kind, f"{median[kind]:.2f} s", f"{rate[kind]:.1f}", f"{args.names / median[kind]:,.0f}"] for kind in times]
        + [["**pdi / rsync**", f"**{ratio:.2f}×**", "", ""],
           ["**pdi / rsync --fsync**", f"**{durable:.2f}×**", "", ""]]))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
