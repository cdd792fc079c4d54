"""Gathering a page and everything it needs, level by level (an edge, I/O through ``fetch``).

The crawl is breadth-first: the root, then everything the root needs
(fetched concurrently, bounded by the fetcher's semaphore), then what those
need (style sheets' ``@import`` and ``url()``, frames' own resources, the
documents of ``<iframe srcdoc>``), down to ``max_depth`` levels (what the deepest
level needs is a failure, not fetched). URLs are
fetched as the browser asks for them (:class:`pdi.mhtml.write.Need`: the query
in the encoding of the page or sheet that names it, a style sheet decoded with
its referrer's encoding when it declares none, CSS Syntax §3.2); the same URL
is fetched once. A failing root is an error; a failing sub-resource is recorded
and left out (the page still refers to it; :func:`pdi.mhtml` checks report it
as unsatisfied). The result is packed with :func:`pdi.mhtml.write.build` in
first-seen order, so the same site gives the same file: one part for each
label (URL and fragment) the pages name, as Chromium labels them, and a
relative ``<base href>`` made absolute (:func:`pdi.mhtml.write.absolute_base`).

What a page can make a crawl hold is bounded by :class:`~pdi.capture.fetch.Limits`, each
past its bound a :class:`~pdi.errors.LimitError` before the cost is paid: the references
read from all its pages and sheets (``max_references``, counted as they are read), the
new URLs to fetch (``max_resources``, counted as they are found), the octets of the labels
(``max_label_octets``, counted as each is made: a long ``<base href>`` makes each short
reference a long URL), and the octets of the parts it would pack (``max_total_bytes``,
as the fetcher receives them, and again once everything is fetched and before anything
is packed: a resource once for each label, so one image named by a thousand fragments
counts a thousand times).

A crawl given a :class:`~pdi.mhtml.limits.Deadline` (a capture's ``--timeout``) stops at it:
the reading of each page and sheet looks at the clock as it goes (the reading is work on the
event loop, which no ``asyncio`` timeout can interrupt), and so does :func:`pack_crawl`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, replace
from typing import cast

from pdi._wording import plural
from pdi.capture.values import Fetched, Limits
from pdi.errors import LimitError, PDIError, WholeCaptureLimit
from pdi.mhtml.limits import Budget, Deadline
from pdi.mhtml.resolve import comparable, location_key
from pdi.mhtml.write import (
    REFERRING,
    Need,
    Resource,
    absolute_base,
    build,
    needed_references,
    part_media_type,
)

__all__ = ["PART_HEAD", "Crawl", "Failure", "crawl", "pack_crawl", "packed_octets"]


@dataclass(frozen=True)
class Failure:
    """A sub-resource that could not be had, and why."""

    url: str
    reason: str


@dataclass(frozen=True)
class Crawl:
    """The root as fetched, the sub-resources in first-seen order, and the failures.

    ``labels`` are (label, URL fetched) in first-seen order: every URL with fragment the
    pages name, and the resource that answers it.
    """

    root: Fetched
    resources: tuple[Fetched, ...]
    failures: tuple[Failure, ...]
    labels: tuple[tuple[str, str], ...] = ()


Fetch = Callable[[str], Awaitable[Fetched]]
Progress = Callable[[int, int], None]


def _media(fetched: Fetched, need: Need | None) -> str:
    """The type a resource is read and written as: the one it was served with if that is a media type
    (RFC 2045 §5.1, as :func:`pdi.mhtml.write.build` writes them); a ``multipart/*`` one is
    ``application/octet-stream`` (a body is not the parts of a multipart); and one that is no media
    type at all (``image/ png``, ``image/png/x``) counts as none given (WHATWG MIME Sniffing §5.1, as a
    browser reads it): a frame is HTML, a style sheet CSS, anything else ``application/octet-stream``."""
    media = fetched.media_type
    if media and part_media_type(media):
        return media
    if media and media.lower().startswith("multipart/"):
        return "application/octet-stream"
    if need is not None and need.as_document == "html":
        return "text/html"
    if need is not None and need.as_document == "css":
        return "text/css"
    return "application/octet-stream"


def _typed(fetched: Fetched, need: Need) -> Fetched:
    """``fetched`` with the type it is read and written as (:func:`_media`), which it keeps."""
    media = _media(fetched, need)
    return fetched if media == fetched.media_type else replace(fetched, media_type=media)


async def crawl(
    root_url: str, fetch: Fetch, *, limits: Limits, progress: Progress | None = None, deadline: Deadline | None = None,
    one_at_a_time: bool = False,
) -> Crawl:
    """Fetch ``root_url`` and, breadth-first, everything it needs (by ``deadline``, when given).

    A level's parts are fetched as concurrent tasks, or with ``one_at_a_time`` one after another in their order,
    which is what the tasks do with a ``fetch`` that never waits (a WARC import's, answered from its index,
    where the tasks were a sixth of the crawl: issue 24): the same parts, failures and first error. Such a crawl
    can be run without an event loop (:func:`run_at_once`).
    """
    root = _typed(await fetch(root_url), Need(root_url, "html"))
    total = len(root.data)
    # URIs as the reader compares them (§8.2): "a b.png" and "a%20b.png" are fetched once
    seen: set[str] = {comparable(root_url), comparable(root.final_url)}
    labels: dict[str, tuple[str, str]] = {location_key(root.final_url): (root.final_url, root.final_url)}
    resources: list[Fetched] = []
    failures: list[Failure] = []
    done = 1
    found = 0  # references read so far, every page and sheet of the capture together
    named = 0  # octets of the labels kept
    level: list[tuple[Fetched, Need | None]] = [(root, Need(root.final_url, "html"))]
    for depth in range(limits.max_depth + 1):
        deepest = depth == limits.max_depth  # what this level needs is read, to be reported, but not fetched
        wanted: list[Need] = []
        for fetched, need in level:
            if deadline is not None:
                deadline.check()
            media = _media(fetched, need)
            if media.lower() not in REFERRING:
                continue  # an image, a script: it needs nothing (needed_references), and its budget's clock is not read
            environment = need.environment if need is not None else None
            budget = Budget(
                fetched.final_url, references=limits.max_references, found_before=found, whole="the capture",
                deadline=deadline,
            )
            for item in needed_references(fetched.final_url, media, fetched.data, fetched.charset, environment,
                                          budget):
                key = location_key(item.label)
                if key not in labels:
                    labels[key] = (item.label, item.url)
                    named += len(item.label)
                    if named > limits.max_label_octets:
                        raise LimitError(
                            f"the pages name their parts by URLs of more than {limits.max_label_octets:,} octets in all"
                            " (each URL with a fragment a part; a long <base href> makes each reference a long URL)"
                        )
                if comparable(item.url) in seen:
                    continue
                seen.add(comparable(item.url))
                wanted.append(item)
                if not deepest and len(resources) + len(wanted) > limits.max_resources:
                    from pdi._wording import clipped

                    where = "" if fetched is root else f" ({clipped(fetched.final_url)}, a part of it, asked for the last)"
                    raise LimitError(f"{clipped(root.final_url)} needs more than"
                                     f" {plural(limits.max_resources, 'resource')}{where}: the one past them is"
                                     f" {clipped(item.url)}")
            found = budget.count
        if deepest:
            failures.extend(Failure(item.url, f"not fetched: {item.url} is more than {plural(limits.max_depth, 'level')}"
                                    " deep (frames within frames, @import within @import)") for item in wanted)
        if deepest or not wanted:
            break
        if progress is not None:
            progress(done, done + len(wanted))

        async def one(item: Need) -> tuple[Need, Fetched | Failure]:
            try:
                got = await fetch(item.url)
            except WholeCaptureLimit:
                raise
            except PDIError as exc:
                return item, Failure(item.url, str(exc))
            return item, _typed(got, item)

        if one_at_a_time:  # a limit of the whole capture passed by one part: the parts after it are not fetched
            results = [await one(item) for item in wanted]
        else:
            try:  # a task group: a limit of the whole capture passed by one part cancels the others' fetches
                async with asyncio.TaskGroup() as group:
                    tasks = [group.create_task(one(item)) for item in wanted]
            except* Exception as failed:  # the first, as asyncio.gather raised it (a part's PDIError is a Failure)
                raise failed.exceptions[0] from None
            results = [task.result() for task in tasks]
        level = []
        for item, result in results:
            done += 1
            if isinstance(result, Failure):
                failures.append(result)
            else:
                total += len(result.data)
                if total > limits.max_total_bytes:
                    raise LimitError(f"the capture is larger than the limit of {plural(limits.max_total_bytes, 'byte')}")
                resources.append(result)
                level.append((result, item))
        if progress is not None:
            progress(done, done)
    gathered = Crawl(root, tuple(resources), tuple(failures), tuple(list(labels.values())[1:]))
    packed = packed_octets(gathered)
    if packed > limits.max_total_bytes:
        raise LimitError(
            f"the capture would be {packed:,} bytes packed, larger than the limit of {limits.max_total_bytes:,}"
            " bytes (each URL with a fragment the pages name is a part)"
        )
    return gathered


def run_at_once(crawling: Coroutine[object, None, Crawl]) -> Crawl:
    """The crawl of a ``fetch`` that never waits (``one_at_a_time``), run to its end at once, without an event loop
    (one for every page cost more than the crawl's own reading: issue 24). A crawl that waits is closed, and is an
    error of the caller's: its ``fetch`` must answer from what it holds."""
    try:
        crawling.send(None)
    except StopIteration as finished:
        return cast(Crawl, finished.value)
    crawling.close()
    raise RuntimeError("a crawl run at once waited: its fetch must answer from what it holds, without waiting")


#: The octets a part's header fields and boundary take besides its label (Content-Type, Content-Transfer-Encoding,
#: Content-Location: and the delimiter line; :func:`pdi.mhtml.write.build`), about.
PART_HEAD = 128


def packed_octets(result: Crawl) -> int:
    """About the octets :func:`pack_crawl` would write (bodies before their encoding): the root, and a resource
    once for each label it is named by, with its label and header fields."""
    root = len(result.root.data) + len(result.root.final_url) + PART_HEAD
    return root + sum(len(fetched.data) + len(label) + PART_HEAD for label, fetched in _labelled(result))


def _labelled(result: Crawl) -> Iterator[tuple[str, Fetched]]:
    """Each part after the root: its label, and the resource fetched for it (a label once; none for
    what failed)."""
    fetched_by_url = {comparable(f.url): f for f in result.resources}
    pairs = result.labels or tuple((f.url, f.url) for f in result.resources)
    seen = {location_key(result.root.final_url)}
    for label, url in pairs:
        fetched = fetched_by_url.get(comparable(url))
        if fetched is None or location_key(label) in seen:
            continue
        seen.add(location_key(label))
        yield label, fetched


def _resource(label: str, fetched: Fetched, deadline: Deadline | None) -> Resource:
    media = _media(fetched, None)
    data = fetched.data
    if media in ("text/html", "application/xhtml+xml"):
        if deadline is not None:
            deadline.check()
        data = absolute_base(fetched.final_url, data, fetched.charset, Budget(label, deadline=deadline))
    return Resource(label, media, data, charset=_charset(fetched))


def pack_crawl(result: Crawl, *, subject: str | None = None, deadline: Deadline | None = None) -> bytes:
    """Write a crawl as MHTML: the root labelled with its final URL, each other part with the
    URL the page asked for (what its references resolve to, RFC 2557 §7, §8.2), once for
    each fragment it was asked for with (Chromium finds ``a.png#x`` only under that label).
    Past ``deadline`` it stops (:class:`~pdi.errors.LimitError`)."""
    root = result.root
    others = [_resource(label, fetched, deadline) for label, fetched in _labelled(result)]
    return build(_resource(root.final_url, root, deadline), others, subject=subject)


def _charset(fetched: Fetched) -> str | None:
    if fetched.charset is None:
        return None
    token = fetched.charset.strip()
    if token and all(c.isalnum() or c in "-_.:+" for c in token) and token.isascii():
        return token
    return None
