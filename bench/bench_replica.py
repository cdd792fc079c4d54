"""Reads from a streaming replica (``--read-url``) beside reads from the primary alone: what the split costs.

Starts a PostgreSQL primary and a synchronous hot standby
(:class:`support.pgreplica.ReplicatedClusters`, as the tests do), deposits N
small texts, and times, in interleaved rounds (median), the same work on an
archive opened on the primary alone (the floor: one server) and on one whose
reads go to the replica:

* resolving every name (``Archive.get``): on the replica, each read
  transaction is sent there, and nothing else is asked while this process
  has written nothing new;
* depositing a text and reading it back at once: the commit's LSN comes back
  with the ``COMMIT``; the read back asks the replica how far it has replayed,
  and reads from the primary if it is not there yet.

Both archives write to the same primary, whose commits wait for the standby
(``synchronous_commit=on``): the ratio is pdi's own cost of the split.
Run: ``python3 bench/bench_replica.py [--names N] [--rounds R]`` (``--small``: a few seconds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# the throw-away clusters are a test tool (tests/support/), not part of the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from pdi.archive import Archive
from pdi.archive.content import Content
from support.pgreplica import ReplicatedClusters

S = "replica.example.us"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=300, help="names resolved a round, and deposits a round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of each (the median is printed)")
    readme.arguments(parser, markdown=True)
    args = parser.parse_args(argv)
    if args.small:
        args.names, args.rounds = 20, 1
    print(f"{args.names} names a round, median of {args.rounds} rounds, interleaved")
    print(f"{'':<28} {'--read-url':>12} {'primary alone':>14} {'ratio':>8}")
    rows: list[list[str]] = []
    with ReplicatedClusters() as pair:
        pair.primary.create_database("bench")
        primary, replica = pair.primary.url("bench"), pair.replica.url("bench")
        with Archive.init(primary) as archive:
            archive.add_series(S)
            names = [str(archive.deposit(S, [Content(f"text {i}\n".encode(), "text")])[0])
                     for i in range(args.names)]
        pair.wait_replayed()
        with Archive.open(primary, read_url=replica) as split, Archive.open(primary) as alone:
            def resolve(archive: Archive) -> Callable[[], None]:
                def run() -> None:
                    for name in names:
                        archive.get(name)
                return run

            def write_read(archive: Archive) -> Callable[[], None]:
                def run() -> None:
                    for i in range(args.names):
                        body = f"deposited and read back {i}\n".encode()
                        name = archive.deposit(S, [Content(body, "text")])[0]
                        if archive.get(str(name)).data != body:
                            raise SystemExit(f"{name} was not read back as deposited")
                return run

            for label, work in (("resolve a name", resolve), ("deposit, then read it back", write_read)):
                mine, floor = _interleaved(work(split), work(alone), args.rounds)
                per = args.names
                print(f"{label:<28} {mine / per * 1e3:>9.2f} ms {floor / per * 1e3:>11.2f} ms {mine / floor:>7.2f}×")
                rows.append([label, f"{mine / per * 1e3:.2f} ms", f"{floor / per * 1e3:.2f} ms",
                             f"**{mine / floor:.2f}×**"])
    readme.write(args.markdown, f"{args.names} names a round, median of {args.rounds} interleaved rounds, a"
                 " primary with a synchronous standby (one machine, unix sockets); time per name:\n\n"
                 + readme.table(["", "pdi, reads from the replica (`--read-url`)", "pdi on the primary alone",
                                 "ratio"], rows))
    return 0


def _interleaved(ours: Callable[[], None], floor: Callable[[], None], rounds: int) -> tuple[float, float]:
    """Medians of ``ours`` and ``floor``, run by turns (so a change in the machine's load falls on both)."""
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        for run, times in ((ours, mine), (floor, theirs)):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
    return statistics.median(mine), statistics.median(theirs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
