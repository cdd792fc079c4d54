"""Writing blobs ahead as a mirror's sync does, before and after: the CPU of two checkouts of pdi in turn.

Each round, for each ``NAME=SRC`` given in turn, a child process run with
``PYTHONPATH=SRC`` writes ``--blobs`` blobs of ``--size`` octets with
:meth:`pdi.archive.blobs.files.FileBlobs.write_ahead` (each hashed: its
SHA-256 and chunk digests) from views of one 1 MiB buffer read into again,
as :class:`pdi.network.peers._Parts` gives a sync's octets, and removes each
again; it reports the user CPU of that loop (the hashing thread's too), in
a directory of ``TMPDIR``, and the system CPU beside it (the kernel's making
and writing the files, and starting their write-back), which moves most with
the load.
Run: ``python3 bench/write_ahead_pairs.py [--size N] [--blobs N] [--rounds R]
before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import _pairs

CHILD = r"""
import os, resource, shutil, sys, tempfile
from pathlib import Path
from pdi.archive.blobs.files import FileBlobs
size, blobs = int(sys.argv[1]), int(sys.argv[2])
root = Path(tempfile.mkdtemp(prefix="pdi-bench-write-ahead-"))
try:
    (root / "tmp").mkdir()
    store = FileBlobs(root)
    buffer = bytearray(os.urandom(1 << 20))
    view = memoryview(buffer)
    def octets(n):
        while n:
            take = min(n, len(buffer) - 1000)  # pieces that do not fall on chunk ends
            yield view[:take]
            n -= take
    before = resource.getrusage(resource.RUSAGE_SELF)
    for i in range(blobs):
        buffer[0], buffer[1] = i % 256, i // 256 % 256
        store.write_ahead(octets(size)).discard()
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)
finally:
    shutil.rmtree(root)
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--blobs", type=int, default=2000)
    args = parser.parse_args()
    variants = _pairs.variants(parser, args)
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for round_ in range(args.rounds):
        for name, src in variants.items():
            env = dict(os.environ, PYTHONPATH=src)
            done = subprocess.run([sys.executable, "-c", CHILD, str(args.size), str(args.blobs)], env=env,
                                  capture_output=True, text=True, check=True)
            user, system = (float(one) for one in done.stdout.split())
            figures[name].append((user, system))
            print(f"round {round_ + 1} {name}: user {user:.3f} s, system {system:.3f} s,"
                  f" load {os.getloadavg()[0]:.2f}", flush=True)
    for name, each in figures.items():
        users, systems = [one[0] for one in each], [one[1] for one in each]
        print(f"{name}: {args.blobs} blobs of {args.size:,} octets, user {_pairs.spread(users, 3)} s,"
              f" system {_pairs.spread(systems, 3)} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
