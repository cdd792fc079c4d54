"""Manifest pages, before and after: the CPU a mirror's sync spends verifying one signed manifest page of 1,000
names (:func:`pdi.signing.verify_manifest`: the JWS, then its payload read as JSON from a stranger), by two
checkouts of pdi in turn, for paired figures.

Makes a page as ``pdi serve`` does (``GET /api/manifest?series=S&limit=1000``: :meth:`Archive.manifest_page`
signed with a new key) of an origin ``bench/mirror_pairs.py`` made (``--origin``, default the 2,000-name one
in ``TMPDIR``), then, ``--rounds`` times, for each ``NAME=SRC`` in turn, a process with ``PYTHONPATH=SRC``
verifying it ten times; prints each one's CPU a page (its thread's) and the medians.
Run: ``python3 bench/manifest_pages.py [--origin DIR] [--rounds R] before=/path/to/old/src after=src``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _pairs
from bench_mirror import S

#: Run in each checkout: verify the page (given as files) ten times, print the CPU a verification in ms.
VERIFY = """
import sys, time
from pdi.signing import parse_jwks, verify_manifest
jws = open(sys.argv[1]).read()
keys = parse_jwks(open(sys.argv[2]).read(), "keys")
verify_manifest(jws, keys)
started = time.thread_time()
for _ in range(10):
    verify_manifest(jws, keys)
print(f"{(time.thread_time() - started) / 10 * 1000:.2f}")
"""


def main() -> int:
    parser = _pairs.parser(__doc__, rounds=5)
    parser.add_argument("--origin", type=Path,
                        default=Path(tempfile.gettempdir()) / "pdi-bench-mirror-pairs-2000-200" / "origin")
    args = parser.parse_args()
    variants = _pairs.variants(parser, args)
    from pdi.archive import Archive
    from pdi.signing import SigningKey, jwk_set_text, manifest_payload, sign_manifest

    key = SigningKey.generate()
    with Archive.open(args.origin) as archive:
        page = archive.manifest_page(S, limit=1000)
    jws = sign_manifest(key, manifest_payload(page.series, page.day, list(page.entries), after=page.after,
                                              next_after=page.next, access=page.access))
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "page.jws").write_text(jws)
        (Path(work) / "keys.json").write_text(jwk_set_text([key.public]))
        print(f"a page of {len(page.entries)} names, {len(jws):,} characters of JWS")
        figures: dict[str, list[float]] = {name: [] for name in variants}
        for round_ in range(args.rounds):
            for name, src in variants.items():
                done = subprocess.run([sys.executable, "-c", VERIFY, f"{work}/page.jws", f"{work}/keys.json"],
                                      env=dict(os.environ, PYTHONPATH=src), capture_output=True,
                                      text=True, check=True)
                figures[name].append(float(done.stdout))
                print(f"round {round_ + 1} {name}: {figures[name][-1]:.2f} ms, load {os.getloadavg()[0]:.2f}",
                      flush=True)
    for name, each in figures.items():
        print(f"{name}: {_pairs.spread(each)} ms of CPU a page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
