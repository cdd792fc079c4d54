"""The viewer's pages of documents of hundreds of megabytes, through a real ``pdi serve``, in bounded memory.

A depositor may keep a map scan of a gigabyte or a recording of hours (``pdi add`` streams them): each page of
the viewer that any reader asks for must not hold the document in the resolver's worker. Here a 256 MB TIFF (its
directory at the end of the file, after the pixels), a 256 MB WAV and a 128 MB file of another family are
deposited, and their pages asked for, plain and with a fragment, and the image's preview; the worker's peak
resident set (``VmHWM``, read from the kernel) may grow by :data:`BOUND`, a quarter of one of them. What the
pages say is checked against values worked out here: the TIFF's size and the region outlined, and the
waveform's peaks computed by numpy from the WAV file itself (a column: the lowest and highest sample of at most
2,048 frames from its start, :mod:`pdi.server.pages.cite`).
"""

from __future__ import annotations

import html
import json
import urllib.parse
import wave
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from server_helpers import S, start_serve, stop, wait_answering

from pdi.archive import Archive
from support.big_image import write_grey_tiff
from support.procnet import peak_kib

MIB = 1 << 20
#: How much the worker's peak resident set may grow while it answers every page of the big documents: a quarter
#: of one of them (before the fix, each page read its document whole: 256 MB and more).
BOUND = 64 * MIB
SIDE = 16_000  # a 16,000 × 16,000 grey TIFF: 256 million pixels, 256 MB of them
RATE, FRAMES = 44_100, 64 << 20  # 64 Mi stereo 16-bit frames: 256 MiB of samples, 25 minutes
OTHER = 128 * MIB


def _samples(first: int, count: int) -> np.ndarray:
    """Frames ``first`` to ``first + count`` of the WAV: left a saw tooth growing every 4 Mi frames, right its negation."""
    k = np.arange(first, first + count, dtype=np.int64)
    left = ((k % 1000) - 500) * (k // (4 << 20) + 1)
    return np.stack([left, -left], axis=1).astype("<i2")


def _write_wav(path: Path) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for first in range(0, FRAMES, 1 << 22):
            w.writeframes(_samples(first, min(1 << 22, FRAMES - first)).tobytes())


def _peaks_of(path: Path) -> list[list[float]]:
    """The waveform's 600 columns worked out from the file by numpy: the lowest and highest sample of each column's
    first 2,048 frames (at most), in [-1, 1], rounded to three places."""
    with wave.open(str(path), "rb") as w:
        frames = w.getnframes()
    samples = np.memmap(path, dtype="<i2", mode="r", offset=44).reshape(-1, 2)
    peaks = []
    for c in range(600):
        start = c * frames // 600
        block = samples[start:min((c + 1) * frames // 600, start + 2048)].astype(np.float32) / 32768
        peaks.append([round(float(block.min()), 3), round(float(block.max()), 3)])
    return peaks


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str | Path]]:
    root = tmp_path_factory.mktemp("viewbig")
    tiff, wav, other = root / "map.tif", root / "talk.wav", root / "data.bin"
    write_grey_tiff(str(tiff), SIDE, SIDE)
    _write_wav(wav)
    with open(other, "wb") as out:
        for _ in range(OTHER // MIB):
            out.write(bytes(range(256)) * 4096)
    location = root / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        names: dict[str, str | Path] = {"location": location, "wav": wav}
        for key, path, token in (("tiff", tiff, "tiff"), ("wav_name", wav, "wav"), ("other", other, "octet-stream")):
            with open(path, "rb") as f:
                names[key] = str(archive.add(S, f, format=token))
        # small ones, asked for first: the modules a page of each family imports are loaded before the peak is read
        tiff_small, wav_small = root / "small.tif", root / "small.wav"
        write_grey_tiff(str(tiff_small), 300, 200)
        with wave.open(str(wav_small), "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(_samples(0, 50_000).tobytes())
        names["tiff_small"] = str(archive.add(S, tiff_small.read_bytes(), format="tiff"))
        names["wav_small"] = str(archive.add(S, wav_small.read_bytes(), format="wav"))
        names["other_small"] = str(archive.add(S, b"\0" * 1000, format="octet-stream"))
    for path in (tiff, other, tiff_small, wav_small):
        path.unlink()
    yield names


def _view(base: str, name: str) -> str:
    page = httpx.get(f"{base}/view", params={"pdi": name}, timeout=120)
    assert page.status_code == 200, page.text[:500]
    return page.text


def test_the_viewer_shows_big_documents_in_bounded_memory(big: dict[str, str | Path]) -> None:
    process, port, _ = start_serve(big["location"], "--workers", "1", "--replay-port", "0", drain=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_answering(process, f"{base}/api/series")
        for key in ("tiff_small", "wav_small", "other_small"):
            _view(base, str(big[key]))
            _view(base, str(big[key]) + ("#sec=0,1" if key == "wav_small" else "#rect=(0,0),(10,10)"
                                         if key == "tiff_small" else "#byte=0,10"))
        before = peak_kib(process.pid)

        tiff = str(big["tiff"])
        plain = _view(base, tiff)
        assert f'data-width="{SIDE}" data-height="{SIDE}" data-frames="1"' in plain
        preview = f"/api/image/preview?pdi={urllib.parse.quote(tiff, safe='')}"
        assert f'<img id="image" src="{html.escape(preview)}"' in plain  # 256 million pixels: the server's preview
        # a quarter from the left, a tenth from the top, half wide, a fifth high
        for scheme in ("rect", "crop"):
            cited = _view(base, f"{tiff}#{scheme}=(4000,1600),(12000,4800)")
            assert 'style="left:25.0000%;top:10.0000%;width:50.0000%;height:20.0000%"' in cited
            # the name opened at, for the Cite panel's PDI box (test_server_viewer_opened_at.py)
            assert f'data-cited="{html.escape(tiff)}#{scheme}=(4000,1600),(12000,4800)"' in cited
        shrunk = httpx.get(f"{base}{preview}", timeout=120)
        assert shrunk.status_code == 200 and shrunk.headers["content-type"] == "image/jpeg"

        wav = str(big["wav_name"])
        duration = FRAMES / RATE
        for name in (wav, f"{wav}#sec=600,900"):
            page = _view(base, name)
            peaks = json.loads(page.split('<script type="application/json" id="peaks">', 1)[1].split("</script>", 1)[0])
            assert peaks["frames"] == FRAMES and peaks["rate"] == RATE and peaks["duration"] == duration
            assert peaks["peaks"] == _peaks_of(Path(big["wav"]))
        assert f'style="left:{100 * 600 / duration:.4f}%;width:{100 * 300 / duration:.4f}%"' in page
        assert f'data-cited="{html.escape(wav)}#sec=600,900"' in page

        other = str(big["other"])
        pages = [_view(base, name) for name in (other, f"{other}#byte=1000,2000")]

        grown = (peak_kib(process.pid) - before) * 1024
        assert grown < BOUND, f"the worker's peak grew by {grown / MIB:.0f} MiB for pages of 256 MB documents"
        for page in pages:  # not read: its facts, a note saying why, and a link to its octets
            note = page.split('<p class="note" id="not-read">', 1)[1].split("</p>", 1)[0]
            assert "134,217,728 bytes (128.0 MiB)" in note and f'<a href="/uri-res/N2R?{other}">the bytes</a>' in note
        assert f'<a href="/uri-res/N2R?{other}%23byte=1000,2000">N2R resolves it</a>' in pages[1]
    finally:
        stop(process)
