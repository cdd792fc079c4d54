"""A ``206`` to ``If-Range`` without the ``Content-Type`` the client holds (RFC 9110 §15.3.7), in Debian's Chromium.

RFC 9110 §15.3.7: a ``206`` to a request with ``If-Range`` "SHOULD NOT generate other representation header
fields beyond those required, because the client already has a prior response containing those header fields".
Chromium's HTTP cache is such a client: holding some of a representation's bytes (a sparse entry), it asks for the
rest with ``If-Range: <its ETag>`` and joins the ``206`` to what it holds, its stored fields updated by the new
answer's (RFC 9111 §3.4), so a reader (a script's ``fetch``, the media player) is given the stored
``Content-Type``. Checked here through ``pdi serve`` with a clip ffmpeg makes (the ``media`` fixture): Chromium
asks with ``If-Range`` for what its cache lacks, pdi serve's answer to those requests (asked again as Chromium sent
them) has no ``Content-Type``, the page reads the clip's own, and the clip, a sixth of it from the cache, plays to
its end.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

import httpx

from chromium_helpers import navigate_and_wait_for_load, new_tab
from pdi.capture.browser import devtools

#: Ranges of the clip as a script asks them, then the clip played by a video element: its first 1,000 octets are
#: in the cache, so the media player's request is joined from the cache and an If-Range request for the rest.
PLAYED = """(async () => {
  const u = %s;
  const got = [];
  for (const range of ['bytes=0-999', 'bytes=500-1499']) {
    const answer = await fetch(u, {headers: {Range: range}});
    got.push([answer.status, answer.headers.get('content-type'), answer.headers.get('content-range'),
              (await answer.arrayBuffer()).byteLength]);
  }
  const video = document.createElement('video');
  video.muted = true;
  video.src = u;
  document.body.append(video);
  const ended = await new Promise(done => {
    video.onended = () => done('ended');
    video.onerror = () => done('error: ' + (video.error && video.error.message));
    video.play().catch(e => done('play: ' + e));
  });
  return JSON.stringify({got, ended, duration: video.duration, at: video.currentTime, width: video.videoWidth});
})()"""


def test_chromium_joins_a_206_to_its_if_range_without_content_type(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    path = "/uri-res/N2R?" + urllib.parse.unquote(names["video"])  # the fixture's names are quoted for a URL
    whole = httpx.get(base + path, timeout=30)
    assert whole.status_code == 200
    size, media_type = len(whole.content), whole.headers["content-type"]
    assert size > 1500 and media_type == "video/webm"
    with devtools() as pipe:
        deadline = time.monotonic() + 90
        session = new_tab(pipe, "Page", "Network", deadline=deadline)
        seen: list[dict[str, Any]] = []
        navigate_and_wait_for_load(pipe, session, base + "/", deadline, seen.append)
        answer = pipe.call("Runtime.evaluate", {"expression": PLAYED % json.dumps(path), "awaitPromise": True,
                                                "returnByValue": True}, session, deadline)
        played = json.loads(answer["result"]["value"])
        asked: dict[str, dict[str, str]] = {}  # request id -> the request's fields as Chromium sent them

        def note(message: dict[str, Any]) -> None:
            if message.get("method") == "Network.requestWillBeSentExtraInfo":
                params = message["params"]
                asked[params["requestId"]] = {k.lower(): v for k, v in params["headers"].items()}

        for message in seen:
            note(message)
        # the events of the requests may still be on the pipe: read on until both If-Range requests are seen
        while len(ranged := [fields for fields in asked.values() if "if-range" in fields]) < 2:
            message = pipe.events.pop(0) if pipe.events else pipe.receive(deadline)
            assert message is not None, f"Chromium sent no two If-Range requests: {asked}"
            note(message)
    # the script read two ranges, the second joined from the cache (0-999) and the network (If-Range, 1000-1499)
    assert played["got"] == [[206, media_type, f"bytes 0-999/{size}", 1000],
                             [206, media_type, f"bytes 500-1499/{size}", 1000]], played
    assert played["ended"] == "ended" and played["at"] == played["duration"] and played["width"] == 64, played
    tag = whole.headers["etag"]
    assert sorted(fields["range"] for fields in ranged) == ["bytes=1000-1499", f"bytes=1500-{size - 1}"], ranged
    for fields in ranged:  # what pdi serve answers those requests, asked again as Chromium asked them
        assert fields["if-range"] == tag, fields
        again = httpx.get(base + path, headers={"Range": fields["range"], "If-Range": fields["if-range"]}, timeout=30)
        assert again.status_code == 206 and again.headers["etag"] == tag
        assert "content-type" not in again.headers, again.headers  # §15.3.7: the cache holds it
