"""Benchmark: pdi.uri parse and resolve against urllib.parse and rfc3986, side by side.

The mix (fixed seed) has 1,200 reference/base pairs and 1,200 URIs to parse:
http(s) URIs with queries, relative references of every shape (``g``,
``./g``, ``../g``, ``../../g``, ``/g``, ``//g``, ``?y``, ``#s``, ``""``,
``g;x?y#s``, dot segments inside), URNs, ``pdi:``/``urn:pdi:`` names,
``thismessage:`` and ``cid:`` bases. Each operation is timed over the whole
mix, ``REPEATS`` times; the figure is the median of the per-pass µs per
operation. Run: ``python3 bench/run_all.py uri``.

Notes for reading the figures: ``urllib.parse.urlsplit`` keeps an LRU cache
of 128 results, so the bases of ``urljoin`` are mostly cache hits (pdi and
rfc3986 have no such cache); ``urlsplit`` and ``rfc3986.uri_reference`` only
split, while ``pdi.uri.parse`` also checks the full RFC 3986 grammar (the
lenient ``pdi.uri.split`` is the like-for-like comparison).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import rfc3986

import readme
from pdi.errors import PDIError
from pdi.uri import normalize, parse, resolve, split

REPEATS = 31
SIZE = 1200


def build_mix(seed: int = 3986) -> tuple[list[tuple[str, str]], list[str]]:
    rng = random.Random(seed)
    words = ["a", "b", "docs", "img", "index.html", "style.css", "x-y", "2024", "p;q=1", "~u", "%7E", "g"]

    def word() -> str:
        return rng.choice(words)

    def path(depth: int) -> str:
        return "/".join(word() for _ in range(depth))

    def query() -> str:
        return "&".join(f"{word()}={rng.randint(0, 999)}" for _ in range(rng.randint(1, 3)))

    def http() -> str:
        host = rng.choice(["example.com", "www.EXAMPLE.org:8080", "a", "[2001:db8::7]", "user@h.example"])
        out = f"{rng.choice(['http', 'https'])}://{host}/{path(rng.randint(0, 4))}"
        if rng.random() < 0.7:
            out += "?" + query()
        if rng.random() < 0.2:
            out += "#" + word()
        return out

    def pdi() -> str:
        date = f"{rng.randint(1990, 2030)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}"
        name = f"pdi://{rng.choice(['oma.eop.gov.us', 'court.nd.us', 'lib.fr'])}/{date}/{rng.randint(1, 99)}"
        name += rng.choice(["", ".txt", ".html.2", ".txt.1#line=10,20"])
        return ("urn:" if rng.random() < 0.5 else "") + name

    def urn() -> str:
        return rng.choice(
            [
                f"urn:isbn:{rng.randint(10**9, 10**10)}",
                f"urn:ietf:rfc:{rng.randint(1, 9999)}",
                f"urn:uuid:{rng.getrandbits(128):032x}",
                f"cid:part{rng.randint(1, 99)}@example.net",
                f"mailto:{word()}@example.org",
            ]
        )

    def relative() -> str:
        shape = rng.randrange(12)
        if shape == 0:
            return word()
        if shape == 1:
            return "./" + path(rng.randint(1, 3))
        if shape == 2:
            return "../" + path(rng.randint(1, 2))
        if shape == 3:
            return "../../" + path(1)
        if shape == 4:
            return "/" + path(rng.randint(1, 4))
        if shape == 5:
            return f"//{rng.choice(['g', 'cdn.example.com'])}/{path(2)}"
        if shape == 6:
            return "?" + query()
        if shape == 7:
            return "#" + word()
        if shape == 8:
            return ""
        if shape == 9:
            return f"{word()};x?{query()}#s"
        if shape == 10:
            return f"{word()}/./{word()}/../{word()}"
        return "../../../" + word()

    bases = [http() for _ in range(12)] + [pdi() for _ in range(4)] + [
        "thismessage:/",
        "thismessage:/pages/index.html",
        "http://a/b/c/d;p?q",
        "file:///home/user/doc/page.html",
    ]
    pairs: list[tuple[str, str]] = []
    for _ in range(SIZE):
        kind = rng.random()
        if kind < 0.65:
            ref = relative()
        elif kind < 0.80:
            ref = http()
        elif kind < 0.90:
            ref = pdi()
        else:
            ref = urn()
        pairs.append((rng.choice(bases), ref))
    uris = [rng.choice([http, pdi, urn, relative])() for _ in range(SIZE)]
    return pairs, uris


def per_op_us(functions: Sequence[Callable[[], object]], n: int) -> list[float]:
    """Median µs per operation of each function; passes are interleaved so that
    all of them see the same machine load (the machine is shared)."""
    samples: list[list[float]] = [[] for _ in functions]
    for _ in range(REPEATS):
        for index, function in enumerate(functions):
            start = time.perf_counter_ns()
            function()
            samples[index].append((time.perf_counter_ns() - start) / n / 1000)
    return [statistics.median(s) for s in samples]


def row(label: str, figures: Sequence[tuple[str, float]]) -> list[float]:
    ours = figures[0][1]
    parts = [f"{name} {us:6.2f} µs" for name, us in figures]
    ratios = [f"{name}/pdi {us / ours:5.1f}×" for name, us in figures[1:]]
    print(f"{label:<8} " + " | ".join(parts) + "  ||  ratio " + "  ".join(ratios))
    return [us for _, us in figures]


#: The README's names of the operations timed.
OPERATIONS = {
    "resolve": "resolve (`resolve` / `urljoin` / `uri_reference().resolve_with().unsplit()`)",
    "parse": "parse (`parse`, strict grammar / `urlsplit` / `uri_reference`)",
    "split": "split (`split`, lenient / `urlsplit` / `uri_reference`)",
}


def markdown(figures: dict[str, list[float]], differ: str, pairs: int) -> str:
    def us(value: float) -> str:
        return f"{value:.2f}" if value < 10 else f"{value:.1f}"

    def ratio(value: float) -> str:
        return f"{value:.1f}×" if value >= 1 else f"{value:.2f}×"

    rows = [[OPERATIONS[op], us(p), us(u), us(r), ratio(u / p), ratio(r / p)]
            for op, (p, u, r) in figures.items()]
    return (f"Medians of {REPEATS} interleaved passes, µs per operation:\n\n"
            + readme.table(["operation", "pdi", "urllib.parse", f"rfc3986 {rfc3986.__version__}",
                            "urllib/pdi", "rfc3986/pdi"], rows)
            + f"\nResults that differ from pdi's RFC 3986 §5.2 resolution of the {pairs:,} pairs"
            f" (as strings / after `pdi.uri.normalize` of both): {differ}.\n")


def main() -> None:
    global REPEATS, SIZE
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                            markdown=True).parse_args()
    if args.small:
        REPEATS, SIZE = 3, 100
    pairs, uris = build_mix()
    print(f"mix: {len(pairs)} (base, reference) pairs, {len(uris)} URIs; median of {REPEATS} passes")

    def pdi_resolve() -> None:
        for base, ref in pairs:
            resolve(base, ref)

    def urllib_resolve() -> None:
        for base, ref in pairs:
            urllib.parse.urljoin(base, ref)

    def rfc3986_resolve() -> None:
        for base, ref in pairs:
            rfc3986.uri_reference(ref).resolve_with(base, strict=True).unsplit()

    def pdi_parse() -> None:
        for text in uris:
            parse(text)

    def pdi_split() -> None:
        for text in uris:
            split(text)

    def urllib_parse() -> None:
        for text in uris:
            urllib.parse.urlsplit(text)

    def rfc3986_parse() -> None:
        for text in uris:
            rfc3986.uri_reference(text)

    for function in (pdi_resolve, urllib_resolve, rfc3986_resolve, pdi_parse, urllib_parse, rfc3986_parse):
        function()  # warm up
    figures: dict[str, list[float]] = {}
    names = ("pdi", "urljoin", "rfc3986")
    figures["resolve"] = row("resolve", list(zip(names, per_op_us([pdi_resolve, urllib_resolve, rfc3986_resolve], len(pairs)), strict=True)))
    names = ("pdi", "urlsplit", "rfc3986")
    figures["parse"] = row("parse", list(zip(names, per_op_us([pdi_parse, urllib_parse, rfc3986_parse], len(uris)), strict=True)))
    figures["split"] = row("split", list(zip(names, per_op_us([pdi_split, urllib_parse, rfc3986_parse], len(uris)), strict=True)))
    ours = [resolve(b, r) for b, r in pairs]
    joined = [urllib.parse.urljoin(b, r) for b, r in pairs]
    theirs = [rfc3986.uri_reference(r).resolve_with(b, strict=True).unsplit() for b, r in pairs]
    differ = f"urljoin {_differ(ours, joined)}, rfc3986 {_differ(ours, theirs)}"
    print(f"results that differ from pdi's RFC 3986 §5.2 (as strings / after pdi.uri.normalize of both): "
          f"{differ} of {len(pairs)}")
    readme.write(args.markdown, markdown(figures, differ, len(pairs)))


def _differ(ours: list[str], theirs: list[str]) -> str:
    raw = sum(a != b for a, b in zip(ours, theirs, strict=True))
    normalized = 0
    for a, b in zip(ours, theirs, strict=True):
        try:
            normalized += normalize(a) != normalize(b)
        except PDIError:
            normalized += 1
    return f"{raw} / {normalized}"


if __name__ == "__main__":
    main()
