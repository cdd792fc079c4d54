"""The three readings of HTML side by side, on the real pages of tests/data/corpus/mhtml: time and peak memory.

The pages are the HTML parts of the MHTML corpus (Chrome captures of Stack
Overflow, MarketWatch, MDN, Wikipedia, Hacker News …), CRLF-canonical, and
one page made of all of them joined (``PDI_BENCH_PAGE_MB`` megabytes, 4 by
default); pages with a ``<template>`` are left out, as html5lib 1.1
refuses them. Each reader is timed (the median of three runs) and its peak of
Python allocations measured (``tracemalloc``, one more run):

* html5lib, the HTML5 tree builder watched for source offsets
  (:func:`pdi.fragments.markup.html_elements`: ``elt`` and ``name``);
* html.parser, the standard library's tokenizer driven for attribute
  offsets (:func:`pdi.mhtml.refs.html_references`: RFC 2557 references);
* the scanner of :mod:`pdi.passages.scan`, as the full-text index reads a
  page (:func:`pdi.passages.fulltext.markup_passages`) and as the page text
  does (:func:`pdi.fragments.pagetext.markup_page_text`).

Prints megabytes a second and peak megabytes per reader, and each one's
ratio to the scanner's. Run with ``python3 bench/run_all.py html_readers``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import readme  # noqa: E402
from pdi.fragments.markup import html_elements  # noqa: E402
from pdi.fragments.pagetext import markup_page_text  # noqa: E402
from pdi.mhtml import Aggregate  # noqa: E402
from pdi.mhtml.limits import Budget  # noqa: E402
from pdi.mhtml.refs import html_references  # noqa: E402
from pdi.passages.fulltext import markup_passages  # noqa: E402

CORPUS = HERE.parent / "tests" / "data" / "corpus" / "mhtml"
SIZE_MB = float(os.environ.get("PDI_BENCH_PAGE_MB", "4"))
RUNS = 3


def corpus_pages() -> list[tuple[str, str]]:
    """(label, CRLF-canonical text) of every HTML part of the MHTML corpus."""
    pages = []
    for path in sorted(CORPUS.glob("*.mhtml")):
        try:
            aggregate = Aggregate.parse(path.read_bytes())
        except Exception:  # the malformed files of the corpus: no page to read
            continue
        for number, part in enumerate(p for p in aggregate.parts if p.is_html):
            text = part.text().replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
            if "<template" not in text.lower():  # html5lib 1.1 refuses it (elt and name say so)
                pages.append((f"{path.stem}#{number}", text))
    return pages


READERS: dict[str, Callable[[str], object]] = {
    "html5lib (elt, name)": lambda text: html_elements(text, seconds=600.0),
    "html.parser (references)": lambda text: html_references(text, Budget("a page", seconds=600.0, references=None)),
    "scan: full-text passages": lambda text: markup_passages(text, "html"),
    "scan: page text": lambda text: markup_page_text(text, "html", seconds=600.0),
}


def measure(read: Callable[[str], object], text: str) -> tuple[float, float]:
    """(median seconds, peak MB of Python allocations) of reading ``text``."""
    times = []
    for _ in range(RUNS):
        began = time.perf_counter()
        read(text)
        times.append(time.perf_counter() - began)
    tracemalloc.start()
    read(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak / 1e6


def main() -> None:
    global SIZE_MB, RUNS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0])).parse_args()
    if args.small:
        SIZE_MB, RUNS = 0.2, 1
    pages = corpus_pages()
    largest = max(pages, key=lambda page: len(page[1]))
    joined = ""
    while len(joined) < SIZE_MB * 1e6:
        joined += "".join(text for _, text in pages)
    cases = [(f"largest corpus page ({largest[0]})", largest[1]), (f"{SIZE_MB:g} MB of corpus pages", joined)]
    for label, text in cases:
        mb = len(text.encode()) / 1e6
        print(f"{label}: {mb:.2f} MB")
        results = {name: measure(read, text) for name, read in READERS.items()}
        base = results["scan: full-text passages"][0]
        for name, (seconds, peak) in results.items():
            print(f"  {name:28} {mb / seconds:8.2f} MB/s  peak {peak:8.1f} MB  {seconds / base:6.1f}x the scanner's time")


if __name__ == "__main__":
    main()
