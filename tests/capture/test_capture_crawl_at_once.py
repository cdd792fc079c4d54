"""A crawl whose parts are fetched one at a time and run without an event loop (a WARC import's, issue 24) is the
crawl the concurrent tasks make with the same fetch: the same parts, labels and failures in the same order, the
same URLs asked in the same order (up to the first error of the whole capture, the same error),  for sites drawn by hypothesis
(pages, frames and style sheets naming each other, parts missing, parts past a limit of the whole capture)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.capture import Limits
from pdi.capture.crawl import Crawl, crawl, run_at_once
from pdi.capture.fetch import Fetched
from pdi.errors import NotFoundError, PDIError, WholeCaptureLimit

BASE = "http://site.example/"
NAMES = [f"r{n}" for n in range(8)]
KINDS = st.sampled_from(["html", "css", "png", "missing", "whole-limit"])


@st.composite
def sites(draw: st.DrawFn) -> dict[str, tuple[str, list[str]]]:
    """Each resource's kind and the resources it names (by name; a page names parts, a sheet @imports and url()s)."""
    site = {name: (draw(KINDS), draw(st.lists(st.sampled_from(NAMES), max_size=4))) for name in NAMES}
    site["r0"] = ("html", site["r0"][1])
    return site


def _body(kind: str, names: list[str]) -> bytes:
    if kind == "html":
        return "".join(f'<img src="{n}.x#f{i}"><iframe src="{n}.x"></iframe>' for i, n in enumerate(names)).encode()
    if kind == "css":
        return "".join(f'@import "{n}.x"; p {{ background: url({n}.x) }}\n' for n in names).encode()
    return b"\x89PNG\r\n\x1a\n" + bytes(40)


def _fetcher(site: dict[str, tuple[str, list[str]]], asked: list[str]):  # type: ignore[no-untyped-def]
    async def fetch(url: str) -> Fetched:
        asked.append(url)
        name = url.removeprefix(BASE).removesuffix(".x").partition("#")[0]
        kind, names = site.get(name, ("missing", []))
        if kind == "missing":
            raise NotFoundError(f"{url} is not in the WARC")
        if kind == "whole-limit":
            raise WholeCaptureLimit(f"{url} passed a limit of the whole capture")
        media = {"html": "text/html", "css": "text/css", "png": "image/png"}[kind]
        return Fetched(url, url, 200, media, "utf-8" if kind != "png" else None, _body(kind, names))
    return fetch


def _outcome(run: object) -> Crawl | tuple[type, str]:
    try:
        return run()  # type: ignore[operator,no-any-return]
    except PDIError as exc:
        return type(exc), str(exc)


@settings(max_examples=200, deadline=None)
@given(sites(), st.integers(min_value=0, max_value=3), st.integers(min_value=1, max_value=12))
def test_a_crawl_run_at_once_is_the_crawl_of_the_concurrent_tasks(
    site: dict[str, tuple[str, list[str]]], depth: int, resources: int
) -> None:
    limits = Limits(max_depth=depth, max_resources=resources)
    asked_tasks: list[str] = []
    asked_at_once: list[str] = []
    by_tasks = _outcome(lambda: asyncio.run(crawl(BASE + "r0.x", _fetcher(site, asked_tasks), limits=limits)))
    at_once = _outcome(lambda: run_at_once(crawl(BASE + "r0.x", _fetcher(site, asked_at_once), limits=limits,
                                                 one_at_a_time=True)))
    assert at_once == by_tasks
    if isinstance(by_tasks, Crawl):
        assert asked_at_once == asked_tasks
    else:  # the tasks of the failing level all ran before the first failure cancelled them: at once, none after it
        assert asked_at_once == asked_tasks[:len(asked_at_once)]


def test_a_crawl_that_waits_is_refused_when_run_at_once() -> None:
    async def fetch(url: str) -> Fetched:
        await asyncio.sleep(0)
        return Fetched(url, url, 200, "text/html", "utf-8", b"<p>x</p>")

    with pytest.raises(RuntimeError, match="a crawl run at once waited"):
        run_at_once(crawl(BASE, fetch, limits=Limits(), one_at_a_time=True))
