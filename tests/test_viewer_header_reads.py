"""What the viewer reads of a document too large to read whole: a blob by verified chunks (``VerifiedOctets``), an
image's size and region from its header, a sound's stretch from its header and its waveform from a few samples a
column. Each answer is compared with the same reading of the whole octets in hand (the viewer's reading of a small
document, unchanged) and, where it can be, with values worked out here (numpy on the samples, Pillow on the
image); a damaged chunk read is refused.
"""

from __future__ import annotations

import hashlib
import io
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile
from hypothesis import example, given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.archive.blobs import BlobInfo, ChunkedReader, VerifiedOctets
from pdi.errors import DamagedError, LimitError, NotFoundError, UnsupportedError
from pdi.fragments.audio import evaluate_audio, interval_from_header
from pdi.fragments.image import evaluate_image, region_from_header
from pdi.fragments.image_size import image_size
from pdi.server.pages.cite import header_facts, image_facts, waveform
from support.big_image import grey_png, write_grey_tiff


def _octets(data: bytes, chunk_size: int = 64, *, damaged: int | None = None) -> tuple[VerifiedOctets, list[int]]:
    """``data`` as a blob of ``chunk_size``-octet chunks read by ``VerifiedOctets``, and the offsets read raw (the
    chunk at offset ``damaged`` holding another octet than its digest says)."""
    digests = b"".join(hashlib.sha256(data[i:i + chunk_size]).digest() for i in range(0, len(data), chunk_size))
    info = BlobInfo(hashlib.sha256(data).hexdigest(), len(data), chunk_size, digests)
    reads: list[int] = []

    def read_raw(offset: int, length: int) -> bytes:
        reads.append(offset)
        piece = data[offset:offset + length]
        return b"\0" + piece[1:] if offset == damaged and piece[:1] != b"\0" else piece

    return VerifiedOctets(ChunkedReader(info, read_raw, name="a test blob")), reads


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=700), st.integers(1, 90), st.lists(st.tuples(st.integers(-800, 800), st.integers(-800, 800)),
       max_size=8), st.binary(min_size=1, max_size=4), st.integers(-10, 800))
@example(b"\0" * 4, 1, [], b"\0" * 4, 0)  # a needle longer than two chunks: the carry was cut short (found by hypothesis)
def test_verified_octets_slice_index_and_find_as_bytes_do(data: bytes, chunk: int, slices: list[tuple[int, int]],
                                                          sub: bytes, start: int) -> None:
    octets, _ = _octets(data, chunk)
    assert len(octets) == len(data)
    for a, b in slices:
        assert octets[a:b] == data[a:b]
        if -len(data) <= a < len(data):
            assert octets[a] == data[a]
        else:
            with pytest.raises(IndexError):
                octets[a]
    assert octets.find(sub, start) == data.find(sub, max(0, start))


def test_verified_octets_hold_a_few_chunks_and_refuse_a_damaged_one() -> None:
    data = bytes(range(256)) * 64  # 16 KiB, 256 chunks of 64
    octets, reads = _octets(data)
    for at in range(0, 640):  # ten chunks octet by octet: each read once
        assert octets[at] == data[at]
    assert reads == list(range(0, 640, 64))
    assert octets[-1] == data[-1] and len(octets._held) <= VerifiedOctets.KEPT
    damaged, _ = _octets(data, damaged=128)
    assert damaged[0:128] == data[:128]
    with pytest.raises(DamagedError, match="chunk 2"):
        damaged[130]


def test_image_size_reads_a_tiff_whose_directory_is_at_its_end_by_chunks(tmp_path: Path) -> None:
    path = tmp_path / "map.tif"
    size = write_grey_tiff(str(path), 3000, 700)
    data = path.read_bytes()
    octets, reads = _octets(data, 4096)
    found = image_size(octets)
    assert found is not None and (found.format, found.width, found.height, found.frames) == ("TIFF", 3000, 700, 1)
    with Image.open(path) as image:  # Pillow's reading, the oracle
        assert image.size == (3000, 700)
    assert len(set(reads)) <= 3 and max(reads) >= size - 4096  # its header and its directory, at the end
    assert header_facts(octets, "image/tiff") == image_facts(data, "image/tiff")


def _images() -> list[tuple[str, bytes]]:
    shown = []
    for fmt, mode in (("PNG", "RGB"), ("JPEG", "RGB"), ("GIF", "P"), ("BMP", "RGB"), ("WEBP", "RGB"), ("TIFF", "L")):
        out = io.BytesIO()
        Image.new(mode, (37, 23)).save(out, format=fmt)
        shown.append((fmt, out.getvalue()))
    gif = io.BytesIO()
    frames = [Image.new("P", (20, 10), k) for k in range(3)]
    frames[0].save(gif, format="GIF", save_all=True, append_images=frames[1:])
    return [*shown, ("GIF", gif.getvalue()), ("PNG", grey_png(300, 200))]


@pytest.mark.parametrize(("fmt", "data"), _images())
def test_header_facts_are_pillows_facts(fmt: str, data: bytes) -> None:
    octets, _ = _octets(data, 97)
    assert header_facts(octets, f"image/{fmt.lower()}") == image_facts(data, f"image/{fmt.lower()}")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["rect", "crop"]), st.integers(0, 60), st.integers(0, 40), st.integers(0, 60),
       st.integers(0, 40), st.sampled_from([None, 0, 1, 3]))
def test_a_region_from_the_header_is_the_evaluators(scheme: str, x1: int, y1: int, w: int, h: int,
                                                    frame: int | None) -> None:
    gif = io.BytesIO()
    frames = [Image.new("P", (37, 23), k) for k in range(3)]
    frames[0].save(gif, format="GIF", save_all=True, append_images=frames[1:])
    data = gif.getvalue()
    positions: list[object] = [(x1, y1), (x1 + w, y1 + h)] + ([] if frame is None else [frame])
    octets, _ = _octets(data, 50)
    try:
        expected = evaluate_image(scheme, positions, data, "image/gif", None)
    except (UnsupportedError, NotFoundError, LimitError) as refused:
        with pytest.raises(type(refused)):
            region_from_header(scheme, positions, octets, "image/gif")
        return
    found = region_from_header(scheme, positions, octets, "image/gif")
    assert (found.region, found.clamped, found.past_end) == (expected.region, expected.clamped, expected.past_end)
    assert found.data == b""


def _recordings(tmp_path: Path) -> list[tuple[str, bytes]]:
    rng = np.random.default_rng(7)
    made = []
    for width in (1, 2, 3, 4):  # PCM WAV of 8 to 32 bits, through the wave module
        out = io.BytesIO()
        with wave.open(out, "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(width)
            w.setframerate(8000)
            w.writeframes(rng.integers(0, 256, size=9001 * 2 * width, dtype=np.uint8).tobytes())
        made.append(("audio/wav", out.getvalue()))
    noise = rng.uniform(-0.9, 0.9, size=(20_000, 1))
    for fmt, media_type in (("FLAC", "audio/flac"), ("OGG", "audio/ogg"), ("WAV", "audio/wav")):  # libsndfile
        path = tmp_path / f"noise.{fmt.lower()}"
        soundfile.write(path, noise, 16_000, format=fmt, subtype="FLOAT" if fmt == "WAV" else None)
        made.append((media_type, path.read_bytes()))
    return made


def test_a_waveform_read_by_chunks_is_the_waveform_of_the_octets(tmp_path: Path) -> None:
    for media_type, data in _recordings(tmp_path):
        octets, _ = _octets(data, 1000)
        assert waveform(octets, media_type).to_json() == waveform(data, media_type).to_json(), media_type


def test_a_waveform_is_numpys_peaks_of_each_column() -> None:
    samples = ((np.arange(50_000) % 700) - 350).astype("<i2") * (1 + np.arange(50_000) // 10_000).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(samples.tobytes())
    octets, _ = _octets(out.getvalue(), 4096)
    shown = waveform(octets, "audio/wav", columns=100)
    expected = [[round(float(samples[c * 500:c * 500 + 500].min()) / 32768, 3),
                 round(float(samples[c * 500:c * 500 + 500].max()) / 32768, 3)] for c in range(100)]
    assert shown.to_json()["peaks"] == expected and shown.frames == 50_000 and shown.rate == 8000


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["sec", "msec"]), st.integers(0, 3000), st.integers(0, 3000))
def test_a_stretch_from_the_header_is_the_evaluators(scheme: str, a: int, length: int) -> None:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(1000)
        w.writeframes(b"\1\2" * 2500)  # 2.5 s
    data = out.getvalue()
    positions = [a, a + length] if scheme == "msec" else [a // 1000, (a + length) // 1000]
    octets, _ = _octets(data, 512)
    expected = evaluate_audio(scheme, positions, data, "audio/wav", None)
    found = interval_from_header(scheme, positions, octets, "audio/wav")
    assert (found.interval, found.clamped, found.past_end) == (expected.interval, expected.clamped, expected.past_end)
