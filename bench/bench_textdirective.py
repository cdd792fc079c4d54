"""Text directives on a large HTML page: pdi's page text and match beside lxml's parse and text search.

Generates an HTML page (about 4 MB by default; ``PDI_BENCH_PAGE_MB``
changes it) of paragraphs with inline markup and character references, and
times, in the same run, finding the text of ``#:~:text=`` near its end:

* the peer, lxml (libxml2's HTML parser, in C): parse the page, take its
  ``text_content()``, fold it with ``casefold()`` and ``str.find`` the
  phrase: text search with no word boundaries, no blocks and no map back
  to the source;
* pdi: :func:`pdi.fragments.pagetext.markup_page_text` (the rendered text,
  its blocks and its map to the source) and
  :func:`pdi.fragments.textdirective.find_text_directive` (the WICG
  algorithm), then the ``char`` range of the source.

Prints the medians and the ratio, and checks that both find the phrase.
Run with ``python3 bench/run_all.py textdirective``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import lxml.html  # noqa: E402

import readme  # noqa: E402
from pdi.fragments.pagetext import markup_page_text  # noqa: E402
from pdi.fragments.textdirective import find_text_directive, parse_fragment_directive  # noqa: E402

SIZE_MB = float(os.environ.get("PDI_BENCH_PAGE_MB", "4"))
RUNS = 3


def page(size_mb: float) -> tuple[str, str]:
    """A CRLF-canonical page of about ``size_mb`` MB, and a phrase that stands once, near its end."""
    paragraphs = []
    total = 0
    i = 0
    while total < size_mb * 1_000_000:
        p = (f"<p>Paragraph {i} of the archive: <b>words</b> in <i>markup</i>, caf&eacute; &amp; "
             f"<a href='#n{i}'>links</a>, and plain text that runs on.</p>\r\n")
        paragraphs.append(p)
        total += len(p)
        i += 1
    paragraphs.insert(len(paragraphs) - 3, "<p>The needle stands here, once.</p>\r\n")
    return "<html><head><title>Bench</title></head><body>\r\n" + "".join(paragraphs) + "</body></html>\r\n", "needle stands here"


def median(work: object) -> tuple[float, object]:
    assert callable(work)
    times = []
    result = None
    for _ in range(RUNS):
        t = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> None:
    global SIZE_MB, RUNS
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                            markdown=True).parse_args()
    if args.small:
        SIZE_MB, RUNS = 0.1, 1
    source, phrase = page(SIZE_MB)
    directive = parse_fragment_directive("text=" + phrase.replace(" ", "%20"))[0]

    def peer() -> int:
        text = lxml.html.document_fromstring(source).text_content()
        return text.casefold().find(phrase.casefold())

    def ours() -> tuple[int, int] | None:
        text = markup_page_text(source, "html")
        found = find_text_directive(directive, text)
        return None if found is None else text.document_range(*found)

    peer_time, peer_at = median(peer)
    our_time, our_range = median(ours)
    assert isinstance(peer_at, int) and peer_at >= 0, "lxml did not find the phrase"
    assert isinstance(our_range, tuple) and source[our_range[0] : our_range[1]] == phrase, our_range
    mb = len(source.encode()) / 1e6
    print(f"page: {mb:.1f} MB, phrase near the end")
    print(f"lxml parse + text_content + find:       {peer_time * 1000:8.0f} ms")
    print(f"pdi page text + text directive + char:  {our_time * 1000:8.0f} ms")
    print(f"ratio pdi / lxml: {our_time / peer_time:.1f}")
    readme.write(args.markdown, f"A {mb:.1f} MB page of paragraphs with inline markup and character references, the phrase near its end; medians of {RUNS}:\n\n" + readme.table(
        ["what", "time"],
        [["lxml: parse, `text_content()`, `casefold()`, `str.find` (C, no word boundaries, no blocks,"
          " no map to the source)", f"{peer_time * 1000:,.0f} ms"],
         ["pdi: the page text with its blocks and source map, the WICG matching, the `char` range",
          f"{our_time * 1000:,.0f} ms"],
         ["ratio pdi / lxml", f"**{our_time / peer_time:.1f}×**"]]))


if __name__ == "__main__":
    main()
