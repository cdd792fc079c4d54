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

import random
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import rfc3986

from pdi.uri import parse, resolve, split

REPEATS = 25
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


def per_op_us(run: Callable[[], object], n: int) -> float:
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / n / 1000)
    return statistics.median(samples)


def row(label: str, figures: Sequence[tuple[str, float]]) -> None:
    ours = figures[0][1]
    parts = [f"{name} {us:6.2f} µs" for name, us in figures]
    ratios = [f"{name}/pdi {us / ours:5.1f}×" for name, us in figures[1:]]
    print(f"{label:<8} " + " | ".join(parts) + "  ||  " + "  ".join(ratios))


def main() -> None:
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
    row(
        "resolve",
        [
            ("pdi", per_op_us(pdi_resolve, len(pairs))),
            ("urljoin", per_op_us(urllib_resolve, len(pairs))),
            ("rfc3986", per_op_us(rfc3986_resolve, len(pairs))),
        ],
    )
    row(
        "parse",
        [
            ("pdi", per_op_us(pdi_parse, len(uris))),
            ("urlsplit", per_op_us(urllib_parse, len(uris))),
            ("rfc3986", per_op_us(rfc3986_parse, len(uris))),
        ],
    )
    row(
        "split",
        [
            ("pdi", per_op_us(pdi_split, len(uris))),
            ("urlsplit", per_op_us(urllib_parse, len(uris))),
            ("rfc3986", per_op_us(rfc3986_parse, len(uris))),
        ],
    )
    differ_urljoin = sum(resolve(b, r) != urllib.parse.urljoin(b, r) for b, r in pairs)
    differ_rfc3986 = sum(
        resolve(b, r) != rfc3986.uri_reference(r).resolve_with(b, strict=True).unsplit() for b, r in pairs
    )
    print(
        f"results that differ from pdi (RFC 3986 §5.2): urljoin {differ_urljoin}/{len(pairs)}, "
        f"rfc3986 {differ_rfc3986}/{len(pairs)}"
    )


if __name__ == "__main__":
    main()
