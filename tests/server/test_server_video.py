"""N2R and N2C of a video's time fragments (issue 25), through Starlette's TestClient.

A clip's answer is the whole video, its octets exactly (the fixity of
record), with ``Content-Location`` naming the whole version and a ``Link``
to it with the Media Fragments URI 1.0 ``#t=npt:`` of the interval; why,
with the figures, is in :mod:`pdi.fragments.video` and docs/benchmarks.md.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"


def webm(tmp_path: Path) -> bytes:
    path = tmp_path / "clip.webm"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3",
                    "-c:v", "libvpx-vp9", str(path)], check=True, timeout=120)
    return path.read_bytes()


def test_n2r_of_a_clip_is_the_whole_video_with_the_interval_in_a_link(archive: Archive, tmp_path: Path) -> None:
    data = webm(tmp_path)
    name = str(archive.add(S, data, format="webm"))
    client = TestClient(create_app(archive.location, archive=archive))
    clip = client.get(f"/uri-res/N2R?{name}%23msec=1250,2500")
    assert clip.status_code == 200
    assert clip.headers["content-type"] == "video/webm"
    assert hashlib.sha256(clip.content).hexdigest() == hashlib.sha256(data).hexdigest()
    location = clip.headers["content-location"]
    assert location.startswith("/uri-res/N2R?") and "%23" not in location and "#" not in location
    assert client.get(location).content == data  # the whole version, as named
    links = clip.headers["link"]
    assert f'<{location}#t=npt:1.250,2.500>; rel="alternate"; type="video/webm"' in links
    # the alias, answered as the native name it equals
    alias = client.get(f"/uri-res/N2R?{name}%23t=1.25,2.5")
    assert alias.status_code == 200 and alias.content == data
    # a range of the answer, for a player that seeks
    part = client.get(f"/uri-res/N2R?{name}%23sec=1,2", headers={"Range": "bytes=0-99"})
    assert part.status_code == 206 and part.content == data[:100]
    past = client.get(f"/uri-res/N2R?{name}%23sec=7,8")
    assert past.status_code == 416 and "wholly past the end" in past.text
    # an empty interval, an instant: Media Fragments cannot say it (t=a,b needs a before b: W3C test case TC0002
    # "t=3,3" is invalid), so no clip is linked, and the answer is the whole video still
    moment = client.get(f"/uri-res/N2R?{name}%23msec=1500,1500")
    assert moment.status_code == 200 and moment.content == data
    assert moment.headers["content-location"] == location
    assert "#t=" not in moment.headers.get("link", "")


def test_n2c_describes_the_video_and_the_interval(archive: Archive, tmp_path: Path) -> None:
    data = webm(tmp_path)
    name = str(archive.add(S, data, format="webm"))
    probed = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                             str(tmp_path / "clip.webm")], check=True, capture_output=True, text=True).stdout
    client = TestClient(create_app(archive.location, archive=archive))
    about = client.get(f"/uri-res/N2C?{name}%23sec=1,2").json()
    video = about["video"]
    assert (video["width"], video["height"], video["video_codec"], video["audio_codecs"]) == (64, 48, "vp9", [])
    assert abs(video["duration"] - float(probed)) < 0.001
    assert about["fragment"]["interval"]["start"] == 1000 and about["fragment"]["interval"]["end"] == 2000


def test_n2r_of_a_region_at_a_time_is_a_png(archive: Archive, tmp_path: Path) -> None:
    import io

    from PIL import Image

    data = webm(tmp_path)
    name = str(archive.add(S, data, format="webm"))
    client = TestClient(create_app(archive.location, archive=archive))
    cut = client.get(f"/uri-res/N2R?{name}%23rect=(0,0),(16,12),1000")
    assert cut.status_code == 200 and cut.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(cut.content)).size == (16, 12)
    assert "content-location" not in cut.headers
    assert client.get(f"/uri-res/N2R?{name}%23rect=(0,0),(16,12),9000").status_code == 404


def test_a_clip_of_a_large_video_is_streamed_with_the_same_headers(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pdi.server.protocol.resolver as resolver

    data = webm(tmp_path)
    name = str(archive.add(S, data, format="webm"))
    client = TestClient(create_app(archive.location, archive=archive))
    held = client.get(f"/uri-res/N2R?{name}%23msec=1250,2500")
    monkeypatch.setattr(resolver, "STREAM_FROM", 1000)  # this video is "large": streamed, never held
    streamed = client.get(f"/uri-res/N2R?{name}%23msec=1250,2500")
    assert streamed.status_code == 200 and streamed.content == data
    for field in ("content-type", "content-location", "link", "etag", "x-pdi-sha256"):
        assert streamed.headers[field] == held.headers[field], field
    late = client.get(f"/uri-res/N2R?{name}%23sec=2,9")
    assert late.status_code == 200 and "past the end" in late.headers["warning"]
    assert client.get(f"/uri-res/N2R?{name}%23sec=7,8").status_code == 416
    part = client.get(f"/uri-res/N2R?{name}%23sec=1,2", headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == data[100:200]


def test_the_reader_names_a_clip_and_a_region_of_a_video(archive: Archive, tmp_path: Path) -> None:
    from urllib.parse import quote

    name = str(archive.add(S, webm(tmp_path), format="webm"))
    client = TestClient(create_app(archive.location, archive=archive))
    for fragment in ("#sec=1,2", "#msec=500,1500", "#rect=(0,0),(8,8),500"):
        page = client.get("/view?pdi=" + quote(name + fragment, safe=""))
        assert page.status_code == 200, page.text[:500]


def test_the_readers_page_of_a_video_never_reads_the_video(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the player fetches it from N2R (by Range); the page reads the catalog and what ffprobe read at deposit
    from urllib.parse import quote

    name = str(archive.add(S, webm(tmp_path), format="webm"))
    client = TestClient(create_app(archive.location, archive=archive))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the video was read whole for its page")

    monkeypatch.setattr(Archive, "read", refuse)
    for fragment, said in (("", "Mark in (I)"), ("#sec=1,2", "The clip cited: from 1.000 s up to 2.000 s (1.000 s of 3.000 s)."),
                           ("#t=0.5,1.25", "The clip cited: from 0.500 s up to 1.250 s"),
                           ("#msec=2000,9000", "The fragment reaches past the end: it is cut there.")):
        page = client.get("/view?pdi=" + quote(name + fragment, safe=""))
        assert page.status_code == 200 and said in page.text, (fragment, page.text[:300])
    page = client.get("/view?pdi=" + quote(name + "#t=0.5,1.25", safe=""))
    assert "<code>#t=0.5,1.25</code> is <code>#msec=500,1250</code>" in page.text
    assert '#t=0.500,1.250"' in page.text  # the player's source: the clip's Media Fragments URI
    past = client.get("/view?pdi=" + quote(name + "#sec=7,8", safe=""))
    assert past.status_code == 200 and "#sec=7,8 lies wholly past the end" in past.text, past.text[:2000]
