"""MHTML pack benchmark: throughput (MB/s) and peak memory of writing a large capture.

Makes a page of about 64 MB under ``bench/data/pack_site/`` (git-ignored): a
1 MB HTML root, three style sheets, 60 images of 1 MB and two fonts, all
referenced from the page. Then times, in the same run:

* ``pdi.mhtml.write.build`` on the parts already in memory (the writer alone),
* ``pdi.capture.pack_path`` on the folder (reading files, finding references, writing),
* the nearest peer, the standard library's ``email`` package writing the same
  parts: ``MIMEMultipart("related")`` with ``MIMEBase`` parts encoded by
  ``email.encoders`` (quoted-printable for text, base64 for the rest) and
  ``as_bytes()``,

and prints the median seconds, MB/s, the peak memory each needs (``tracemalloc``,
in a separate pass) as a multiple of the input size, and the ratios
(``--markdown FILE``: the README's table).

Run: ``python3 bench/run_all.py mhtml_pack`` (about a minute).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable
from email import encoders
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import readme  # noqa: E402
from bench_mhtml import peak, timed  # noqa: E402  (the parse benchmark's timers: the same measure)
from pdi.capture import pack_path  # noqa: E402
from pdi.capture.local import media_type_for_name  # noqa: E402
from pdi.mhtml.write import Resource, build, is_textual  # noqa: E402

SITE = HERE / "data" / "pack_site"
MB = 1024 * 1024
IMAGES, IMAGE_BYTES = 60, MB


def make_site() -> Path:
    marker = SITE / "index.html"
    if marker.exists():
        return SITE
    rng = random.Random(2557)
    (SITE / "img").mkdir(parents=True, exist_ok=True)
    (SITE / "css").mkdir(exist_ok=True)
    (SITE / "fonts").mkdir(exist_ok=True)
    for i in range(IMAGES):
        (SITE / "img" / f"photo{i:02d}.jpg").write_bytes(rng.randbytes(IMAGE_BYTES))
    for i in range(2):
        (SITE / "fonts" / f"font{i}.woff2").write_bytes(rng.randbytes(300 * 1024))
    words = ["archive", "persistent", "identifier", "caf\u00e9", "document", "version", "na\u00efve", "r\u00e9sum\u00e9"]
    for i in range(3):
        rules = [f".c{j} {{ margin: {j}px; font-family: f{j % 2}; }}\n" for j in range(6000)]
        rules.append(f"@font-face {{ font-family: f{i % 2}; src: url(../fonts/font{i % 2}.woff2) }}\n")
        (SITE / "css" / f"site{i}.css").write_text("".join(rules), encoding="utf-8")
    body = []
    while sum(len(x) for x in body) < MB:
        body.append(f"<p class=c{rng.randrange(6000)}>" + " ".join(rng.choice(words) for _ in range(30)) + "</p>\n")
    links = "".join(f'<link rel="stylesheet" href="css/site{i}.css">\n' for i in range(3))
    images = "".join(f'<img src="img/photo{i:02d}.jpg" alt="">\n' for i in range(IMAGES))
    marker.write_text(
        f"<!doctype html>\n<html><head><meta charset=utf-8>\n{links}</head><body>\n{images}{''.join(body)}</body></html>\n",
        encoding="utf-8",
    )
    return SITE


def resources(site: Path) -> tuple[Resource, list[Resource]]:
    files = sorted(p for p in site.rglob("*") if p.is_file())
    root = Resource("thismessage:/index.html", "text/html", (site / "index.html").read_bytes())
    others = [
        Resource("thismessage:/" + p.relative_to(site).as_posix(), media_type_for_name(p.name), p.read_bytes())
        for p in files
        if p.name != "index.html"
    ]
    return root, others


def email_pack(root: Resource, others: list[Resource]) -> bytes:
    msg = MIMEMultipart("related", type="text/html")
    for res in [root, *others]:
        main, sub = res.media_type.split("/")
        part = MIMEBase(main, sub)
        part.set_payload(res.data)
        if is_textual(res.media_type):
            encoders.encode_quopri(part)
        else:
            encoders.encode_base64(part)
        part["Content-Location"] = res.content_location or ""
        msg.attach(part)
    return msg.as_bytes()


def main() -> None:
    global SITE, IMAGES, IMAGE_BYTES
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), markdown=True).parse_args()
    if args.small:
        SITE, IMAGES, IMAGE_BYTES = HERE / "data" / "pack_site_small", 3, 64 * 1024
    runs = 1 if args.small else 5
    site = make_site()
    root, others = resources(site)
    size = len(root.data) + sum(len(r.data) for r in others)
    print(f"input: {len(others) + 1} files, {size / MB:.1f} MB  ({site})")
    cases: list[tuple[str, Callable[[], object], int]] = [
        ("pdi build (in memory)", lambda: build(root, others), runs),
        ("pdi pack_path (from disk)", lambda: pack_path(site / "index.html"), runs),
        ("email.mime + as_bytes", lambda: email_pack(root, others), min(runs, 3)),
    ]
    medians: dict[str, float] = {}
    peaks: dict[str, int] = {}
    for name, fn, count in cases:
        times = timed(fn, count)
        medians[name] = statistics.median(times)
        peaks[name] = peak(fn)
        print(
            f"{name:28s} median {medians[name]:6.3f} s  {size / MB / medians[name]:7.1f} MB/s  "
            f"peak {peaks[name] / MB:7.1f} MB = {peaks[name] / size:4.2f} x input"
        )
    peer = "email.mime + as_bytes"
    for name in ("pdi build (in memory)", "pdi pack_path (from disk)"):
        print(f"ratio {name} / email: time {medians[name] / medians[peer]:.2f}, peak memory {peaks[name] / peaks[peer]:.2f}")
    labels = {peer: "`email.mime` (`MIMEBase` + `email.encoders`) + `as_bytes()`",
              "pdi build (in memory)": "`pdi.mhtml.write.build` (parts in memory)",
              "pdi pack_path (from disk)": "`pdi.capture.pack_path` (read files, find references, write)"}
    rows = [[labels[name], f"{medians[name]:.2f} s", f"{size / MB / medians[name]:.1f}", f"{peaks[name] / size:.2f}×",
             "" if name == peer else f"**{medians[name] / medians[peer]:.2f}×** / {peaks[name] / peaks[peer]:.2f}×"]
            for name in (peer, "pdi build (in memory)", "pdi pack_path (from disk)")]
    readme.write(args.markdown, f"A generated page of {size / MB:.0f} MiB in {len(others) + 1} files, medians of"
                 f" {runs} runs ({min(runs, 3)} for `email`):\n\n"
                 + readme.table(["pack", "median", "MB/s", "peak memory / input size", "time / memory against `email`"],
                                rows))


if __name__ == "__main__":
    main()
