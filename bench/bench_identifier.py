"""Benchmark: PDI parse + canonicalize throughput on 100,000 mixed identifiers.

Times ``str(PDI.parse(text))`` (parse, then print the canonical form) and,
beside it on the same strings, ``pdi.uri.parse`` (the strict RFC 3986 parser,
which only splits the URI into components). Prints the median over several
rounds of microseconds per identifier, and the ratio.

    python3 bench/run_all.py identifier
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import readme
from pdi import uri
from pdi.identifier import PDI

N = 100_000
ROUNDS = 5

SERIES = [
    "oma.eop.gov.us",
    "images.satellite.nasa.gov.us",
    "lib.example.de",
    "Court.Justice.FR",
    "a.b.c.d.e.jp",
]
TOKENS = ["text", "html", "xml", "gif", "png", "pdf", "wav", "audio+mpeg", "utf-8", "svg%2Bxml"]


def make_identifiers(n: int, seed: int = 1997) -> list[str]:
    """A reproducible mix of the identifier shapes the draft and the grammar page use."""
    rnd = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        prefix = "urn:pdi://" if i % 3 else "pdi://"
        series = rnd.choice(SERIES)
        date = f"{rnd.randint(1994, 2030)}/{rnd.randint(1, 12):02d}/{rnd.randint(1, 28):02d}"
        kind = i % 10
        token = rnd.choice(TOKENS)
        version = rnd.randint(1, 9)
        if kind in (0, 1, 2):  # plain daily serial
            text = f"{prefix}{series}/{date}/{rnd.randint(1, 5000)}.{token}.{version}"
        elif kind == 3:  # encapsulated URL
            host = rnd.choice(["www%2ewhitehouse%2egov", "example%2Eorg", "w3%2eorg"])
            text = (
                f"{prefix}{series}/{date}/http%3a%2f%2f{host}%2f{rnd.randint(1, 99)}.html.{version}"
            )
        elif kind == 4:  # DOI
            text = f"{prefix}{series}/{date}/10%2E{rnd.randint(1000, 9999)}%2F{rnd.randint(1, 10**6)}.pdf.1"
        elif kind == 5:  # text fragment, scheme written or not
            a = rnd.randint(0, 10000)
            scheme = rnd.choice(["char=", "", "line="])
            text = f"{prefix}{series}/{date}/{rnd.randint(1, 500)}.text.{version}#{scheme}{a},{a + rnd.randint(0, 500)}"
        elif kind == 6:  # image fragment
            x, y = rnd.randint(0, 500), rnd.randint(0, 500)
            frame = rnd.choice(["", ",0", ",2"])
            text = f"{prefix}{series}/{date}/{rnd.randint(1, 500)}.gif.1#({x},{y}),({x + 10},{y + 20}){frame}"
        elif kind == 7:  # html element / name fragment
            if rnd.random() < 0.5:
                text = f"{prefix}{series}/{date}/{rnd.randint(1, 500)}.html.1#elt={rnd.randint(0, 9)},{rnd.randint(10, 20)}"
            else:
                text = f"{prefix}{series}/{date}/{rnd.randint(1, 500)}.html.1#name=intro,sec%2D{rnd.randint(1, 9)}"
        elif kind == 8:  # pattern
            text = f"{prefix}{series}/{date[:4]}/*/*/*.{token}.*"
        else:  # citation
            text = (
                f"{prefix}{series}/{date}/5.html.1@{rnd.randint(0, 9999)}="
                f"pdi://oma.eop.gov.us/1997/09/01/1.text.1#char=37,51"
            )
        out.append(text)
    return out


def per_item_us(fn: Callable[[str], object], items: list[str]) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items) * 1e6


def markdown(medians: dict[str, float]) -> str:
    full = medians["pdi.identifier parse + canonical str"]
    peer = medians["pdi.uri.parse (RFC 3986 components)"]
    rows = [
        ["`str(PDI.parse(text))`, parse and print the canonical form", f"{full:.1f}"],
        ["`PDI.parse(text)` only", f"{medians['pdi.identifier parse only']:.1f}"],
        ["`pdi.uri.parse(text)`, the RFC 3986 parser on the same strings", f"{peer:.1f}"],
    ]
    return (f"{N:,} mixed identifiers, median of {ROUNDS} rounds:\n\n"
            + readme.table(["what", "µs per identifier"], rows)
            + f"\nParsing and printing the canonical form takes **{full / peer:.1f}×** as long as"
            " the plain RFC 3986 parse.\n")


def main() -> None:
    global N, ROUNDS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                            markdown=True).parse_args()
    if args.small:
        N, ROUNDS = 2_000, 1
    items = make_identifiers(N)

    def pdi_parse_canonical(text: str) -> object:
        return str(PDI.parse(text))

    def pdi_parse(text: str) -> object:
        return PDI.parse(text)

    contenders: list[tuple[str, Callable[[str], object]]] = [
        ("pdi.identifier parse + canonical str", pdi_parse_canonical),
        ("pdi.identifier parse only", pdi_parse),
        ("pdi.uri.parse (RFC 3986 components)", uri.parse),
    ]
    for _, fn in contenders:  # every string is valid for every contender; warm up
        for item in items[:2000]:
            fn(item)
    results: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for _ in range(ROUNDS):
        for name, fn in contenders:
            results[name].append(per_item_us(fn, items))
    print(f"{N} mixed identifiers, median of {ROUNDS} rounds (µs per identifier):")
    medians = {name: statistics.median(times) for name, times in results.items()}
    for name, med in medians.items():
        print(f"  {name:<40} {med:8.2f} µs   ({1e6 / med:,.0f} per second)")
    peer = medians["pdi.uri.parse (RFC 3986 components)"]
    full = medians["pdi.identifier parse + canonical str"]
    print(f"  ratio parse+canonical / uri.parse: {full / peer:.2f}")
    readme.write(args.markdown, markdown(medians))


if __name__ == "__main__":
    main()
