"""Concurrent ``/api/image/preview`` requests for one image not yet previewed start one libvips child, not one each.

The viewer's page asks for the preview as it is shown: a page shown to several readers at once (or reloaded) while
a map scan's preview is being made (seconds) started a child for each, each reading the whole blob. The second
request waits for the first's answer, at most the child's own deadline (``LIMITS.seconds``), and is answered the
same octets. The children are counted where they are started (``image_streamed.run_child``).
"""

from __future__ import annotations

import io
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable
from typing import cast

import httpx
import pytest
from PIL import Image
from starlette.testclient import TestClient

import pdi.fragments.image_streamed as streamed
import pdi.server.pages.cite as cite
from pdi._bounded import ChildLimit, Outcome
from pdi.archive import Archive
from pdi.errors import LimitError
from pdi.server import create_app

S = "maps.library.example.us"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (10, 200, 30)).save(out, format="PNG")
    return out.getvalue()


def _counting(monkeypatch: pytest.MonkeyPatch, hold: float, *, fake: bool = False, refuse: bool = False
              ) -> list[float]:
    """Count the children started (the times they were), each held ``hold`` seconds or until a second is started,
    then run (or, ``fake``, not run: a blank answer after ``hold``; ``refuse``: past its memory after ``hold``)."""
    started: list[float] = []
    real: Callable[..., Outcome] = streamed.run_child
    lock = threading.Lock()

    def counted(*args: object, **kwargs: object) -> Outcome:
        with lock:
            started.append(time.monotonic())
        until = time.monotonic() + hold
        while time.monotonic() < until and (fake or len(started) < 2):
            time.sleep(0.01)
        if refuse:
            raise ChildLimit("memory", "needed more than its 1536 MiB of memory")
        return Outcome(b"", 0) if fake else real(*args, **kwargs)

    monkeypatch.setattr(streamed, "run_child", counted)
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())  # none kept from another test
    return started


def _both(calls: list[Callable[[], object]]) -> list[object]:
    """Run the calls at once, each on a thread of its own: what each returned or raised."""
    results: list[object] = [None] * len(calls)

    def run(at: int) -> None:
        try:
            results[at] = calls[at]()
        except Exception as exc:  # given back to the test to look at
            results[at] = exc

    threads = [threading.Thread(target=run, args=(at,)) for at in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_two_requests_at_once_start_one_child_and_get_the_same_preview(tmp_path: object,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    started = _counting(monkeypatch, hold=2.0)  # long enough for the second request to arrive
    location = f"{tmp_path}/archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, _png(), format="png"))
        client = TestClient(create_app(location, archive=archive))
        shown = f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}"
        # the app's middleware is built at its first request: one first, answered 304 without making a preview
        assert client.get(shown, headers={"If-None-Match": "*"}).status_code == 304 and not started
        answers = _both([lambda: client.get(shown), lambda: client.get(shown)])
    assert all(getattr(a, "status_code", None) == 200 for a in answers), answers
    first, second = cast(list[httpx.Response], answers)
    assert len(started) == 1, f"{len(started)} children started"
    assert first.content == second.content and first.headers["content-type"] == "image/jpeg"  # no alpha: JPEG
    with Image.open(io.BytesIO(first.content)) as image:
        assert image.size == (64, 48)  # never enlarged
        pixel = image.convert("RGB").getpixel((5, 5))
    assert isinstance(pixel, tuple) and all(abs(a - b) <= 4 for a, b in zip(pixel, (10, 200, 30), strict=True))


def test_a_request_waiting_for_anothers_preview_waits_no_longer_than_the_childs_deadline(
        tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first request's child is held 5 s (a stand-in, not killed at the deadline as a real one is); the second
    waits the deadline, 0.5 s, and is refused naming the limit, as its own child would have been."""
    started = _counting(monkeypatch, hold=5.0, fake=True)
    monkeypatch.setattr(streamed, "LIMITS", streamed.StreamedLimits(seconds=0.5))
    location = f"{tmp_path}/archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, _png(), format="png"))

        def second() -> object:
            while not started:
                time.sleep(0.01)
            began = time.monotonic()
            try:
                cite.image_preview(archive, name)
            except LimitError as exc:
                return exc, time.monotonic() - began
            return None

        first, waited = _both([lambda: cite.image_preview(archive, name), second])
    assert isinstance(first, cite.ImagePreview) and len(started) == 1
    assert isinstance(waited, tuple), waited
    refusal, seconds = waited
    assert "took longer than 0.5 s" in str(refusal) and "LIMITS.seconds" in str(refusal)
    assert 0.5 <= seconds < 4


def test_a_refusal_is_given_to_the_request_that_waited_for_it(tmp_path: object, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """The child started for the first request passes its memory: both requests are refused with the same words,
    and no second child is started for the second."""
    started = _counting(monkeypatch, hold=1.0, fake=True, refuse=True)
    location = f"{tmp_path}/archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, _png(), format="png"))

        def second() -> object:
            while not started:
                time.sleep(0.01)
            return cite.image_preview(archive, name)

        refusals = _both([lambda: cite.image_preview(archive, name), second])
    assert len(started) == 1
    assert all(isinstance(r, LimitError) for r in refusals), refusals
    first, other = (str(r) for r in refusals)
    assert first == other and "libvips needed more than its 1536 MiB of memory to shrink" in first
    assert refusals[0] is not refusals[1]


def test_a_refusal_waited_for_never_names_another_name_of_the_same_octets(tmp_path: object,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review (2026-11-29): previews are kept by the image's SHA-256, and a request waiting for another's
    was given a copy of its refusal, whose words name the image as the other request named it: the same scan
    deposited in a private series and a public one, a stranger asking for the public one's preview while a clerk's
    request for the private one was refused read the private name in its ``detail``. A request waits only for
    another's preview of the same name; each is refused in words of its own name."""
    started = _counting(monkeypatch, hold=1.0, fake=True, refuse=True)
    location = f"{tmp_path}/archive"
    sealed = "sealed.library.example.us"
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.add_series(sealed)
        public = str(archive.add(S, _png(), format="png"))
        private = str(archive.add(sealed, _png(), format="png"))
        archive.set_series_access(sealed, "private")

        def stranger() -> object:
            while not started:
                time.sleep(0.01)
            return cite.image_preview(archive, public)

        clerks, strangers = _both([lambda: cite.image_preview(archive, private), stranger])
    assert isinstance(clerks, LimitError) and private in str(clerks)
    assert isinstance(strangers, LimitError), strangers
    assert private not in str(strangers) and public in str(strangers), str(strangers)
