"""Which reading a message of at most 32 MiB takes: its lines told against ``MailLimits.max_lines`` (2,000,000).

Each shape (32 MiB of CR LF lines of 70 octets, of ``ab`` CR LF lines, of ``ab`` LF lines; 6 MB of ``ab`` CR LF
lines, where LF and CR leave the answer open), timed interleaved in one run (each round runs every way once, in a
rotated order; medians of the rounds):

* pdi, told: :func:`pdi.mail.message.more_lines_than` (LF and CR counted, CR LF only where they leave it open);
* pdi, counted: :func:`pdi.mail.message.line_count` (LF, CR and CR LF counted: what told it before);
* peer: ``len(data.splitlines())``, Python's own cut of the lines (the tests' oracle), which holds each line.

Prints each median in ms and the ratios of pdi to the peer. Run: ``python3 bench/bench_mail_lines.py [--rounds R]``
(``run_all.py mail_lines``); ``--small``: 64 KiB shapes told against 1,000 lines, one round (CI's run of each
benchmark).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from pdi.mail.message import line_count, more_lines_than

MOST = 2_000_000
MIB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--small", action="store_true", help="64 KiB shapes against 1,000 lines, one round")
    args = parser.parse_args()
    rounds, most, size, few = (1, 1_000, 64 << 10, 750) if args.small else (args.rounds, MOST, 32 * MIB, 1_500_000)
    label = "64 KiB" if args.small else "32 MiB"
    shapes = {
        f"{label}, lines of 70, CR LF": (b"a" * 70 + b"\r\n") * (size // 72),
        f"{label}, lines of ab, CR LF": b"ab\r\n" * (size // 4),
        f"{label}, lines of ab, LF": b"ab\n" * (size // 3),
        f"{few * 4:,} octets, lines of ab, CR LF": b"ab\r\n" * few,
    }
    print(f"load average {os.getloadavg()[0]:.2f}, {rounds} rounds")
    print(f"{'shape':30} {'told ms':>9} {'counted ms':>11} {'peer ms':>9} {'told/peer':>10} {'counted/peer':>13}")
    for label, data in shapes.items():
        ways: dict[str, Callable[[], object]] = {
            "told": lambda data=data: more_lines_than(data, most),
            "counted": lambda data=data: line_count(data) > most,
            "peer": lambda data=data: len(data.splitlines()) > most,
        }
        answers = {name: way() for name, way in ways.items()}
        assert len(set(answers.values())) == 1, answers
        times: dict[str, list[float]] = {name: [] for name in ways}
        names = list(ways)
        for round_ in range(rounds):
            for name in names[round_ % 3 :] + names[: round_ % 3]:
                began = time.perf_counter()
                ways[name]()
                times[name].append(time.perf_counter() - began)
        told, counted, peer = (statistics.median(times[name]) * 1e3 for name in names)
        print(f"{label:30} {told:9.1f} {counted:11.1f} {peer:9.1f} {told / peer:9.2f}x {counted / peer:12.2f}x")


if __name__ == "__main__":
    main()
