"""The viewer's page of a video in Chromium (issue 25): played from pdi's own N2R, a clip marked in and out, a box.

The video is the ``media`` archive's (tests/server/conftest.py): ffmpeg's
``testsrc`` pattern, 64×48, 10 frames a second for 3 s, VP9 in WebM. The
select → cite round trips use real key presses and mouse events; the names
the page offers are checked against the times the player was put at and the
box dragged, in the video's own pixels, and resolved: the interval against
the duration ``ffprobe`` reads, the region's pixels against the frame
Chromium itself shows, drawn to a canvas.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, ImageChops
from server_helpers import S, Served
from test_server_keyboard import _key
from test_server_viewer_browser import _box, _desktop, _drag, _js, _offered

from chromium_helpers import navigate_and_wait_for_load, new_tab, open_page
from pdi.capture.browser import Pipe, devtools
from pdi.server.protocol.rfc2169 import rfc2169_query

SHOTS = Path(os.environ.get("PDI_SCREENSHOTS") or Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")


def _shoot(pipe: Pipe, session: str, name: str) -> None:
    shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / name).write_bytes(base64.b64decode(shot["data"]))


def _seek(pipe: Pipe, session: str, seconds: float) -> float:
    """Put the player at ``seconds`` and wait until it shows that frame; the time it is at."""
    return float(_js(pipe, session, "new Promise((r) => { const v = document.getElementById('player');"
                                    " v.addEventListener('seeked', () => requestAnimationFrame(() => setTimeout(() =>"
                                    f" r(v.currentTime), 100)), {{once: true}}); v.currentTime = {seconds}; }})"))


def _ready(pipe: Pipe, session: str) -> list[object]:
    """Once the player has a frame (Chromium fetched the video by Range from N2R): its state, error, size."""
    return list(_js(pipe, session, "new Promise((r) => { const v = document.getElementById('player');"
                                   " const done = () => r([v.readyState, v.error && v.error.message, v.videoWidth, v.duration]);"
                                   " if (v.readyState >= 2) done(); else { v.addEventListener('loadeddata', done, {once: true});"
                                   " v.addEventListener('error', done, {once: true}); setTimeout(done, 20000); } })"))


def _ffprobe_duration(media: tuple[str, dict[str, str]], name: str) -> float:
    data = httpx.get(f"{media[0]}/uri-res/N2R?{rfc2169_query(urllib.parse.unquote(name))}").content
    probed = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", "-"],
                            input=data, check=True, capture_output=True, timeout=60).stdout
    return float(probed)


def test_marking_in_and_out_names_a_clip_that_plays_from_its_start_to_its_end(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    video = urllib.parse.unquote(names["video"])
    with devtools() as pipe:
        heard: list[dict[str, Any]] = []
        pipe.listeners.append(heard.append)
        session = new_tab(pipe, "Page", "Network")
        navigate_and_wait_for_load(pipe, session, f"{base}/view?pdi={names['video']}", time.monotonic() + 60)
        _desktop(pipe, session)
        state = _ready(pipe, session)
        assert state[0] >= 2 and state[1] is None and state[2] == 64, state
        # the keys I and O mark in and out at the player's time
        assert abs(_seek(pipe, session, 1.2) - 1.2) < 1e-6
        _js(pipe, session, "document.activeElement && document.activeElement.blur()")
        _key(pipe, session, "i", 73, "i")
        _seek(pipe, session, 2.4)
        _key(pipe, session, "o", 79, "o")
        name = video + "#msec=1200,2400"
        assert _offered(pipe, session) == name
        # the player fetched the video from pdi's own N2R by Range requests, answered 206 with the range asked
        asked = {e["params"]["requestId"]: e["params"]["request"] for e in heard
                 if e.get("method") == "Network.requestWillBeSent" and "/uri-res/N2R?" in e["params"]["request"]["url"]}
        answered = [(asked[e["params"]["requestId"]], e["params"]["response"]) for e in heard
                    if e.get("method") == "Network.responseReceived" and e["params"]["requestId"] in asked]
        ranged = [(q["headers"].get("Range"), r["status"], r["headers"].get("content-range") or r["headers"].get("Content-Range"))
                  for q, r in answered if r["mimeType"] == "video/webm"]
        assert ranged and all(want and want.startswith("bytes=") and status == 206 and got and got.startswith("bytes ")
                              for want, status, got in ranged), ranged
        _shoot(pipe, session, "video-clip-marked.png")
        # and the buttons do the same
        _seek(pipe, session, 1.0)
        _js(pipe, session, "document.getElementById('mark-in').click()")
        _seek(pipe, session, 2.0)
        _js(pipe, session, "document.getElementById('mark-out').click()")
        assert _offered(pipe, session) == video + "#sec=1,2"
        # a drag on the timeline, leftwards: its ends are times in proportion to its width, in milliseconds
        _js(pipe, session, "document.getElementById('wave').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "wave")
        _drag(pipe, session, (left + 0.6619 * width, top + height / 2), (left + 0.2137 * width, top + height / 3))
        assert _offered(pipe, session) == video + f"#msec={round(0.2137 * 3000)},{round(0.6619 * 3000)}"
        # the clip opened starts at its start and stops at its end
        opened = open_page(pipe, f"{base}/view?pdi={urllib.parse.quote(name, safe='')}")
        _desktop(pipe, opened)
        assert _ready(pipe, opened)[0] >= 2
        assert abs(float(_js(pipe, opened, "document.getElementById('player').currentTime")) - 1.2) < 0.01
        assert _js(pipe, opened, "document.getElementById('clip').textContent") == (
            "The clip cited: from 1.200 s up to 2.400 s (1.200 s of 3.000 s).")
        _shoot(pipe, opened, "video-clip.png")
        _js(pipe, opened, "(() => { const p = document.getElementById('player'); p.muted = true; p.play(); })()")
        deadline = time.monotonic() + 20
        while True:
            played = _js(pipe, opened, "(() => { const p = document.getElementById('player'); return [p.paused, p.currentTime]; })()")
            if played[0] is True or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert played[0] is True and 2.4 <= played[1] < 2.9, played
        timeline, band = _box(pipe, opened, "wave"), _box(pipe, opened, "cited-clip")
    assert abs(band[0] - (timeline[0] + timeline[2] * 1.2 / 3)) < 1 and abs(band[2] - timeline[2] * 1.2 / 3) < 1
    about = httpx.get(f"{base}/api/resolve", params={"pdi": name}).json()["fragment"]["interval"]
    duration = _ffprobe_duration(media, names["video"])
    assert (about["start"], about["end"], about["rate"]) == (1200, 2400, 1000)
    assert about["length"] == -(-round(duration * 1e6) // 1000)  # ffprobe's duration in milliseconds, rounded up


def _numbered_frames(tmp_path: Path) -> bytes:
    """64×48, 10 frames a second for 3 s, VP9 in WebM: ffmpeg's ``testsrc`` with its luma raised by 37 per frame
    (modulo 256), so that any two frames next to each other differ everywhere."""
    path = tmp_path / "numbered.webm"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3,"
                    "geq=lum='mod(lum(X,Y)+N*37,256)':cb='cb(X,Y)':cr='cr(X,Y)'", "-c:v", "libvpx-vp9",
                    "-pix_fmt", "yuv420p", str(path)], check=True, timeout=120)
    return path.read_bytes()


def _mean_difference(a: Image.Image, b: Image.Image) -> float:
    return sum(ImageChops.difference(a, b).tobytes()) / (3 * a.size[0] * a.size[1])


def test_a_box_dragged_on_a_paused_frame_names_its_pixels_at_its_time(served: Served, tmp_path: Path) -> None:
    video = str(served.archive.add(S, _numbered_frames(tmp_path), format="webm"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(video, safe='')}")
        _desktop(pipe, session)
        assert _ready(pipe, session)[0] >= 2
        _seek(pipe, session, 1.5)  # frame 15 of 10 a second: presented at 1.5 s exactly
        _js(pipe, session, "document.getElementById('video-box-mode').click()")
        assert _js(pipe, session, "document.getElementById('player').paused && !document.getElementById('player').controls")
        left, top, width, height = _box(pipe, session, "player")
        assert abs(width / height - 64 / 48) < 0.01
        start, end = (0.113, 0.207), (0.644, 0.781)
        _drag(pipe, session, (left + start[0] * width, top + start[1] * height), (left + end[0] * width, top + end[1] * height))
        x1, y1, x2, y2 = round(start[0] * 64), round(start[1] * 48), round(end[0] * 64), round(end[1] * 48)
        assert (x1, y1, x2, y2) == (7, 10, 41, 37)
        name = video + f"#rect=({x1},{y1}),({x2},{y2}),1500"
        assert _offered(pipe, session) == name
        _shoot(pipe, session, "video-box-selected.png")
        # the frame Chromium shows, drawn to a canvas: the region N2R cuts is the same pixels
        shown = _js(pipe, session, "(() => { const v = document.getElementById('player'), c = document.createElement('canvas');"
                                   " c.width = 64; c.height = 48; c.getContext('2d').drawImage(v, 0, 0);"
                                   " return c.toDataURL('image/png'); })()")
        opened = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        _desktop(pipe, opened)
        frame, cited = _box(pipe, opened, "player"), _box(pipe, opened, "cited")
        poster = _js(pipe, opened, "new Promise((r) => { const i = new Image(); i.onload = () => r([i.naturalWidth, i.naturalHeight]);"
                                   " i.onerror = () => r(null); i.src = document.getElementById('player').poster; })")
        _shoot(pipe, opened, "video-region.png")
    assert poster == [64, 48]  # the whole frame at 1500 ms, as N2R decodes it
    expected = [frame[0] + frame[2] * x1 / 64, frame[1] + frame[3] * y1 / 48, frame[2] * (x2 - x1) / 64, frame[3] * (y2 - y1) / 48]
    assert all(abs(a - b) < 1 for a, b in zip(cited, expected, strict=True)), (cited, expected)
    region = httpx.get(f"{served.url}/api/resolve", params={"pdi": name}).json()["fragment"]["region"]
    assert (region["x1"], region["y1"], region["x2"], region["y2"], region["frame"]) == (x1, y1, x2, y2, 1500)

    def cut(at: int) -> Image.Image:
        answer = httpx.get(f"{served.url}/uri-res/N2R?{rfc2169_query(f'{video}#rect=({x1},{y1}),({x2},{y2}),{at}')}")
        return Image.open(io.BytesIO(answer.content)).convert("RGB")

    seen = Image.open(io.BytesIO(base64.b64decode(shown.split(",", 1)[1]))).convert("RGB").crop((x1, y1, x2, y2))
    assert cut(1500).size == seen.size == (x2 - x1, y2 - y1)
    # two decoders of the same VP9 frame (ffmpeg's, Chromium's), each converting to RGB its own way: near, not equal;
    # the frames before and after (luma 37 lower, higher) are far
    near, before, after = (_mean_difference(cut(at), seen) for at in (1500, 1400, 1600))
    assert near < 6 and before > 15 and after > 15, (near, before, after)


def test_the_reader_translates_a_browser_time_fragment(media: tuple[str, dict[str, str]]) -> None:
    base, names = media
    page = httpx.get(f"{base}/view", params={"pdi": urllib.parse.unquote(names["video"]) + "#t=1.25,2.5"})
    assert page.status_code == 200, page.text[:300]
    assert "<code>#t=1.25,2.5</code> is <code>#msec=1250,2500</code>" in page.text
    assert "The clip cited: from 1.250 s up to 2.500 s" in page.text


def test_without_scripts_the_player_still_plays_the_clip_alone(media: tuple[str, dict[str, str]]) -> None:
    # the player's source carries the clip's Media Fragments #t=1.000,2.000: Chromium starts there and stops there
    from test_server_pages_without_script import _open_without_script

    base, names = media
    name = urllib.parse.unquote(names["video"]) + "#sec=1,2"
    with devtools() as pipe:
        session = _open_without_script(pipe, f"{base}/view?pdi={urllib.parse.quote(name, safe='')}")
        assert _ready(pipe, session)[0] >= 2
        assert abs(float(_js(pipe, session, "document.getElementById('player').currentTime")) - 1.0) < 0.01
        _js(pipe, session, "(() => { const p = document.getElementById('player'); p.muted = true; p.play(); })()")
        deadline = time.monotonic() + 20
        while True:
            played = _js(pipe, session, "(() => { const p = document.getElementById('player'); return [p.paused, p.currentTime]; })()")
            if played[0] is True or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert played[0] is True and 2.0 <= played[1] < 2.5, played


def test_a_video_the_browser_cannot_play_says_so_at_once_and_still_names_clips(served: Served, tmp_path: Path) -> None:
    """An MP4 of MPEG-4 Part 2 video (ffmpeg's ``mpeg4``, as old cameras and DivX wrote; a codec Chromium does not
    decode): the page says at once, beside the player, that this browser cannot play it and how its clips are still
    named, shows its first frame as pdi decodes it, and a clip typed by its start and end is offered and resolves."""
    path = tmp_path / "part2.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3",
                    "-c:v", "mpeg4", str(path)], check=True, timeout=120)
    video = str(served.archive.add(S, path.read_bytes(), format="video+mp4"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(video, safe='')}")
        _desktop(pipe, session)
        state = _ready(pipe, session)
        note = _js(pipe, session, "(() => { const n = document.getElementById('player-note');"
                                  " return [n.hidden, n.getBoundingClientRect().height, n.textContent]; })()")
        shown = _js(pipe, session, "new Promise((r) => { const v = document.getElementById('player'), i = new Image();"
                                   " i.onload = () => r([v.poster, i.naturalWidth, i.naturalHeight]); i.onerror = () =>"
                                   " r([v.poster, 0, 0]); i.src = v.poster; })")
        _shoot(pipe, session, "video-unplayable.png")
        for key, value in (("start", "0.5"), ("end", "2")):
            _js(pipe, session, f"(() => {{ const i = document.getElementById('{key}'); i.value = '{value}';"
                               " i.dispatchEvent(new Event('change')); })()")
        offered = _offered(pipe, session)
        # a time typed shows pdi's frame at it; a box dragged on it names that frame's pixels
        _js(pipe, session, "(() => { const i = document.getElementById('frame'); i.value = '1500';"
                           " i.dispatchEvent(new Event('change')); })()")
        later = _js(pipe, session, "document.getElementById('player').poster")
        _js(pipe, session, "document.getElementById('video-box-mode').click()")
        _js(pipe, session, "document.getElementById('player').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "player")
        _drag(pipe, session, (left + 8 * width / 64, top + 8 * height / 48), (left + 32 * width / 64, top + 24 * height / 48))
        boxed = _offered(pipe, session)
    assert state[1], state  # the player's error: Chromium found no stream it decodes
    assert note[0] is False and note[1] > 0, note
    assert note[2].startswith("This browser cannot play this video: its format or encoding is not one this browser"
                              " plays") and "typing their start and end" in note[2], note
    assert offered == video + "#msec=500,2000"
    # its poster is its first frame, 64×48, as N2R of the whole frame at 0 ms answers it (ffmpeg decodes it)
    assert shown[1:] == [64, 48], shown
    frame = httpx.get(shown[0] if shown[0].startswith("http") else served.url + shown[0])
    assert frame.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(frame.content)).size == (64, 48)
    assert urllib.parse.unquote(urllib.parse.urlsplit(shown[0]).query) == video + "#rect=(0,0),(64,48),0"
    assert urllib.parse.unquote(urllib.parse.urlsplit(later).query) == video + "#rect=(0,0),(64,48),1500"
    assert boxed == video + "#rect=(8,8),(32,24),1500"
    region = httpx.get(f"{served.url}/api/resolve", params={"pdi": boxed}).json()["fragment"]["region"]
    assert (region["x1"], region["y1"], region["x2"], region["y2"], region["frame"]) == (8, 8, 32, 24, 1500)
    about = httpx.get(f"{served.url}/api/resolve", params={"pdi": offered}).json()["fragment"]["interval"]
    assert (about["start"], about["end"], about["rate"]) == (500, 2000, 1000)
