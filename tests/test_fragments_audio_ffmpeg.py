"""Audio fragments against ffmpeg, an independent decoder: the samples a ``sec``/``msec`` citation names.

A recording is written by ffmpeg from random samples, decoded whole by ffmpeg (``-f f64le``: every integer and
float format converts to 64-bit floats exactly), and the frames ``[ceil(a × rate), ceil(b × rate))`` of that
decoding (exact fractions, the rule of ``pdi.fragments.audio``'s docstring) are compared with the WAV pdi answers,
read by a reader written here, sample for sample.
"""

from __future__ import annotations

import math
import struct
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.fragments.audio import evaluate_audio
from support.ogg import ogg_crc


def ffmpeg_write(path: Path, samples: np.ndarray, rate: int, codec: str, container: str, *extra: str) -> bytes:
    """``samples`` (frames × channels, int32 or float64) written by ffmpeg as ``codec`` in ``container``."""
    raw = "f64le" if samples.dtype == np.float64 else "s32le"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", raw, "-ar", str(rate), "-ac", str(samples.shape[1]), "-i", "-",
         "-c:a", codec, *extra, "-f", container, str(path)],
        input=samples.astype("<f8" if raw == "f64le" else "<i4").tobytes(), check=True, capture_output=True, timeout=60,
    )
    return path.read_bytes()


def ffmpeg_decode(path: Path, channels: int) -> np.ndarray:
    """The whole recording as ffmpeg decodes it, frames × channels of 64-bit floats (integers over 2**(bits-1))."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "f64le", "-c:a", "pcm_f64le", "-"],
                         capture_output=True, check=True, timeout=60)
    return np.frombuffer(out.stdout, "<f8").reshape(-1, channels)


def wav_samples(data: bytes) -> tuple[np.ndarray, int, int]:
    """A WAV's samples as 64-bit floats (integers over 2**(bits-1), 8-bit ones unsigned), its rate and format tag:
    read here from its chunks, not by the module under test nor by libsndfile."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    at, fmt, body = 12, None, b""
    while at + 8 <= len(data):
        size = int.from_bytes(data[at + 4:at + 8], "little")
        if data[at:at + 4] == b"fmt ":
            fmt = struct.unpack("<HHIIHH", data[at + 8:at + 24])
        elif data[at:at + 4] == b"data":
            body = data[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    assert fmt is not None
    tag, channels, rate, _, _, bits = fmt
    if tag == 3:
        values = np.frombuffer(body, f"<f{bits // 8}").astype(np.float64)
    elif bits == 8:
        values = (np.frombuffer(body, np.uint8).astype(np.float64) - 128) / 128
    elif bits == 24:
        octets = np.frombuffer(body, np.uint8).reshape(-1, 3).astype(np.int64)
        wide = octets[:, 0] | octets[:, 1] << 8 | octets[:, 2] << 16
        values = np.where(wide >= 1 << 23, wide - (1 << 24), wide) / float(1 << 23)
    else:
        values = np.frombuffer(body, f"<i{bits // 8}").astype(np.float64) / float(1 << (bits - 1))
    return values.reshape(-1, channels), rate, tag


def frames(start: int, end: int, per_second: int, rate: int, length: int) -> tuple[int, int]:
    """The frames k with start ≤ k / rate < end (times in 1/per_second s), clamped to the length."""
    return (min(math.ceil(Fraction(start, per_second) * rate), length),
            min(math.ceil(Fraction(end, per_second) * rate), length))


def test_a_w64_of_floats_is_its_floats_not_their_octets_read_as_integers(tmp_path: Path) -> None:
    """Found against ffmpeg (2026-12-01): ffmpeg writes a W64 of 32-bit floats, of more than two channels or not,
    with a ``WAVE_FORMAT_EXTENSIBLE`` ``fmt`` chunk; libsndfile reads its SubFormat as PCM (``PCM_32``), and a
    passage of it came back as 32-bit integers: the floats' octets, a full-scale noise. It is the floats ffmpeg
    decodes, as 32-bit floats."""
    rng = np.random.default_rng(11)
    for channels in (1, 3):
        samples = rng.uniform(-1, 1, (16_000, channels))
        path = tmp_path / f"floats{channels}.w64"
        data = ffmpeg_write(path, samples, 16_000, "pcm_f32le", "w64")
        assert int.from_bytes(data[64:66], "little") == 0xFFFE  # WAVE_FORMAT_EXTENSIBLE
        decoded = ffmpeg_decode(path, channels)
        for scheme, times in (("msec", (250, 750)), ("sec", (0, 1)), ("msec", (900, 2000))):
            result = evaluate_audio(scheme, times, data, "audio/x-w64", None)
            got, rate, tag = wav_samples(result.data)
            a, b = frames(*times, 1 if scheme == "sec" else 1000, 16_000, len(decoded))
            assert (rate, tag, result.interval.start, result.interval.end) == (16_000, 3, a, b)
            assert np.array_equal(got, decoded[a:b])


def test_the_waveform_of_a_w64_of_floats_is_of_its_floats(tmp_path: Path) -> None:
    from pdi.server.pages.cite import waveform

    samples = np.linspace(-0.25, 0.5, 1000)[:, None]
    data = ffmpeg_write(tmp_path / "ramp.w64", samples, 8000, "pcm_f32le", "w64")
    shape = waveform(data, "audio/x-w64", columns=1)
    assert shape.frames == 1000 and shape.peaks == [(-0.25, 0.5)]


@pytest.mark.parametrize("codec", ["pcm_alaw", "pcm_mulaw"])
def test_a_w64_of_companded_samples_libsndfile_reads_as_pcm_is_refused(tmp_path: Path, codec: str) -> None:
    """Of three channels ffmpeg writes A-law and µ-law in W64 as ``WAVE_FORMAT_EXTENSIBLE``; libsndfile reads them as
    8-bit PCM, not the samples ffmpeg decodes: refused, saying why, not answered with other samples."""
    data = ffmpeg_write(tmp_path / "law.w64", np.zeros((800, 3), np.int32), 8000, codec, "w64")
    with pytest.raises(UnsupportedError, match=r"Wave64 file whose samples are of format 0x000[67]"):
        evaluate_audio("msec", (0, 50), data, "audio/x-w64", None)


#: Lossless formats, as ffmpeg writes them: (container, codec, its options, media type).
LOSSLESS = [
    ("wav", "pcm_u8", (), "audio/wav"), ("wav", "pcm_s16le", (), "audio/wav"), ("wav", "pcm_s24le", (), "audio/wav"),
    ("wav", "pcm_s32le", (), "audio/wav"), ("wav", "pcm_f32le", (), "audio/wav"), ("wav", "pcm_f64le", (), "audio/wav"),
    ("wav", "pcm_s16le", ("-rf64", "always"), "audio/wav"), ("wav", "pcm_mulaw", (), "audio/wav"),
    ("flac", "flac", ("-sample_fmt", "s16"), "audio/flac"),
    ("flac", "flac", ("-sample_fmt", "s32", "-bits_per_raw_sample", "24"), "audio/flac"),
    ("aiff", "pcm_s16be", (), "audio/aiff"), ("aiff", "pcm_s24be", (), "audio/aiff"), ("aiff", "pcm_s8", (), "audio/aiff"),
    ("aiff", "pcm_s16le", (), "audio/aiff"), ("aiff", "pcm_f64be", (), "audio/aiff"),  # AIFF-C: sowt, fl64
    ("au", "pcm_s16be", (), "audio/basic"), ("au", "pcm_s32be", (), "audio/basic"), ("au", "pcm_f32be", (), "audio/basic"),
    ("caf", "pcm_s24le", (), "audio/x-caf"), ("caf", "pcm_f32le", (), "audio/x-caf"),
    ("w64", "pcm_s16le", (), "audio/x-w64"), ("w64", "pcm_s24le", (), "audio/x-w64"), ("w64", "pcm_f32le", (), "audio/x-w64"),
]


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(LOSSLESS),
    st.sampled_from([8000, 11025, 22050, 44100, 48000, 96000, 192000, 7919]),
    st.sampled_from([1, 2, 3]),
    st.integers(1, 12_000),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["sec", "msec"]),
    st.tuples(st.integers(0, 3000), st.integers(0, 3000)),
)
def test_a_passage_of_a_lossless_recording_is_the_frames_ffmpeg_decodes(
    tmp_path_factory: pytest.TempPathFactory, kind: tuple[str, str, tuple[str, ...], str], rate: int,
    channels: int, length: int, seed: int, scheme: str, times: tuple[int, int],
) -> None:
    container, codec, extra, media_type = kind
    rng = np.random.default_rng(seed)
    floats = "_f" in codec
    samples = (rng.uniform(-1, 1, (length, channels)) if floats
               else rng.integers(-(2**31), 2**31, (length, channels), dtype=np.int64).astype(np.int32))
    path = tmp_path_factory.mktemp("lossless") / f"recording.{container}"
    data = ffmpeg_write(path, samples, rate, codec, container, *extra)
    decoded = ffmpeg_decode(path, channels)
    start, end = sorted(times)
    if scheme == "sec":
        start, end = start % 3, start % 3 + end % 2
    a, b = frames(start, end, 1 if scheme == "sec" else 1000, rate, len(decoded))
    result = evaluate_audio(scheme, (start, end), data, media_type, None)
    got, got_rate, _ = wav_samples(result.data)
    assert (got_rate, result.interval.channels, result.interval.length) == (rate, channels, len(decoded))
    assert (result.interval.start, result.interval.end) == (a, b)
    assert np.array_equal(got, decoded[a:b])


def ffmpeg_mp3(path: Path, rate: int, seconds: float, *options: str) -> bytes:
    """Noise made and encoded by ffmpeg (LAME) as an MP3 without a Xing header (no length, no delay said)."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"anoisesrc=r={rate}:d={seconds}:seed=5",
                    "-c:a", "libmp3lame", *options, "-write_xing", "0", str(path)], check=True, capture_output=True,
                   timeout=60)
    return path.read_bytes()


@pytest.mark.parametrize("rate", [8000, 11025, 22050, 32000, 44100, 48000])
def test_an_mp3_without_a_xing_header_lasts_as_long_as_its_frames(tmp_path: Path, rate: int) -> None:
    """Found against ffmpeg (2026-12-01): an MP3 of constant bit rate without a Xing header (which says its length)
    lasted what libsndfile reckons from its size, not what its frames hold (at 44.1 kHz, 1.344 s for 51 frames of
    1,152 samples, 1.332 s): its last milliseconds were "shorter than its header says", and the end said depended
    on the time asked. It lasts as ffmpeg decodes it, its last passage is its last samples, and past them it is past
    its end."""
    from pdi.server.pages.cite import waveform

    path = tmp_path / "cbr.mp3"
    data = ffmpeg_mp3(path, rate, 1.3)
    decoded = ffmpeg_decode(path, 1)
    length = len(decoded)
    end_ms = length * 1000 // rate  # the last whole millisecond before the end: frames from it on are the last
    last = evaluate_audio("msec", (end_ms - 5, end_ms + 50), data, "audio/mpeg", None)
    a = math.ceil(Fraction(end_ms - 5, 1000) * rate)
    assert (last.interval.start, last.interval.end, last.interval.length) == (a, length, length)
    assert last.clamped and not last.past_end
    got, _, _ = wav_samples(last.data)
    assert np.allclose(got, decoded[a:], atol=1e-4)  # two decoders: to rounding
    past = evaluate_audio("msec", (end_ms + 1, end_ms + 50), data, "audio/mpeg", None)
    assert past.past_end and past.interval.length == length
    first = evaluate_audio("msec", (0, 100), data, "audio/mpeg", None)
    assert first.interval.length == length and not first.clamped
    assert waveform(data, "audio/mpeg").frames == length


def test_a_variable_rate_mp3_without_a_xing_header_is_not_cut_where_libsndfile_reckons_it_ends(tmp_path: Path) -> None:
    """Found against ffmpeg (2026-12-01): a variable-bit-rate MP3 of 3.1 s without a Xing header lasted 1.3 s,
    libsndfile's reckoning from its first frame's bit rate: a citation of its third second was past its end. It
    lasts as ffmpeg decodes it; libsndfile decodes no further than it reckons, so a passage past that is refused,
    saying why, and one before it is its samples."""
    path = tmp_path / "vbr.mp3"
    data = ffmpeg_mp3(path, 44_100, 3.1, "-q:a", "2")
    decoded = ffmpeg_decode(path, 1)
    early = evaluate_audio("msec", (200, 700), data, "audio/mpeg", None)
    assert early.interval.length == len(decoded) > 3 * 44_100
    got, _, _ = wav_samples(early.data)
    assert np.allclose(got, decoded[8820:30870], atol=1e-4)
    with pytest.raises(UnsupportedError, match="an MP3 without a Xing header"):
        evaluate_audio("sec", (2, 3), data, "audio/mpeg", None)
    beyond = evaluate_audio("sec", (4, 5), data, "audio/mpeg", None)
    assert beyond.past_end and beyond.interval.length == len(decoded)
    from pdi.server.pages.cite import waveform

    with pytest.raises(UnsupportedError, match=r"an MP3 without a Xing header, .* no further than 1\.\d+ s of its 3\.1"):
        waveform(data, "audio/mpeg")  # not a waveform of its first 1.3 s as of the whole, nor "psf_fseek() failed"


@pytest.mark.parametrize("size", [0x7FFFFFF0, 0x80000000, 0xFFFFFFFE])
def test_an_au_whose_header_says_2_gib_of_samples_is_not_an_empty_recording(tmp_path: Path, size: int) -> None:
    """Found against ffmpeg (2026-12-01): an AU of one second whose header's data size said 2 GiB or more (not
    0xFFFFFFFF, "unknown") was read by libsndfile as no sample at all, and every citation of it was past the end of an
    empty recording; ffmpeg reads the second the file holds below 2**31 octets, and refuses the file from there on (a
    negative size). Refused, saying so, as pdi cannot read those samples."""
    path = tmp_path / "second.au"
    data = bytearray(ffmpeg_write(path, np.zeros((8000, 1), np.int32), 8000, "pcm_s16be", "au"))
    assert data[:4] == b".snd"
    data[8:12] = struct.pack(">I", size)
    path.write_bytes(data)
    if size < 1 << 31:
        assert len(ffmpeg_decode(path, 1)) == 8000
    else:
        with pytest.raises(subprocess.CalledProcessError):
            ffmpeg_decode(path, 1)
    for times in ((0, 500), (2000, 3000)):
        with pytest.raises(UnsupportedError, match=r"libsndfile reads none of them"):
            evaluate_audio("msec", times, bytes(data), "audio/basic", None)
    data[8:12] = struct.pack(">I", 0xFFFFFFFF)  # unknown: the samples to the end of the file, as ffmpeg reads them
    assert evaluate_audio("msec", (0, 2000), bytes(data), "audio/basic", None).interval.length == 8000


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from([8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000]),
    st.sampled_from([1, 2]),
    st.sampled_from(["libmp3lame", "mp2"]),
    st.booleans(),
    st.sampled_from([b"", b"TAG" + bytes(125), b"APETAGEX" + bytes(24), b"\x00junk" * 40]),
)
def test_an_mpeg_audio_file_without_a_xing_header_is_as_long_as_ffmpeg_decodes_it(
    tmp_path_factory: pytest.TempPathFactory, rate: int, channels: int, codec: str, id3v2: bool, tail: bytes
) -> None:
    """Constant-rate MP3 and MPEG layer II without a Xing header, with or without an ID3v2 tag before their frames
    and an ID3v1 or APE tag or junk after them: as long as ffmpeg decodes them."""
    if codec == "mp2" and rate < 16_000:
        rate *= 2  # layer II has no MPEG-2.5 rates
    path = tmp_path_factory.mktemp("mpeg") / "recording.mp3"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"anoisesrc=r={rate}:d=0.7:seed=1",
                    "-ac", str(channels), "-c:a", codec, "-b:a", "64k",
                    *(("-write_xing", "0", "-id3v2_version", "0", "-f", "mp3") if codec == "libmp3lame" else ("-f", "mp2")),
                    str(path)], check=True, capture_output=True, timeout=60)
    # an ID3v2.3 tag (ID3v2 §3.1: its size in four 7-bit octets, the header not counted) of one TIT2 frame, padded
    title = b"TIT2" + (6).to_bytes(4, "big") + b"\0\0" + b"\0title" + bytes(300)
    tag = b"ID3\x03\x00\x00" + bytes((len(title) >> 21 & 127, len(title) >> 14 & 127, len(title) >> 7 & 127,
                                        len(title) & 127)) + title
    data = (tag if id3v2 else b"") + path.read_bytes() + tail
    path.write_bytes(data)
    length = len(ffmpeg_decode(path, channels))
    whole = evaluate_audio("msec", (0, 10_000), data, "audio/mpeg", None)
    assert (whole.interval.end, whole.interval.length) == (length, length)
    # the length said is the same whatever the time asked: of a passage at the start, and of one just past the end
    assert evaluate_audio("msec", (0, 100), data, "audio/mpeg", None).interval.length == length
    after = -(-length * 1000 // rate)  # the first millisecond at or after the end
    past = evaluate_audio("msec", (after, after + 20), data, "audio/mpeg", None)
    assert past.past_end and past.interval.length == length


def test_a_flac_whose_streaminfo_says_fewer_samples_than_its_frames_is_as_long_as_it_says(tmp_path: Path) -> None:
    """The documented reading of a FLAC whose STREAMINFO total (RFC 9639 §8.2: the 36 bits ending its octet 17)
    is less than its frames hold: as long as the total says, its samples the first ones ffmpeg decodes (ffmpeg,
    which decodes every frame, finds more)."""
    path = tmp_path / "recording.flac"
    samples = np.random.default_rng(3).integers(-(2**31), 2**31, (16_000, 1), dtype=np.int64).astype(np.int32)
    data = bytearray(ffmpeg_write(path, samples, 8000, "flac", "flac", "-sample_fmt", "s16"))
    word = int.from_bytes(data[18:26], "big")
    assert word & ((1 << 36) - 1) == 16_000
    data[18:26] = (word & ~((1 << 36) - 1) | 12_345).to_bytes(8, "big")
    path.write_bytes(data)
    decoded = ffmpeg_decode(path, 1)
    assert len(decoded) == 16_000
    result = evaluate_audio("sec", (1, 3), bytes(data), "audio/flac", None)
    assert (result.interval.start, result.interval.end, result.interval.length) == (8000, 12_345, 12_345)
    assert result.clamped
    assert np.array_equal(wav_samples(result.data)[0], decoded[8000:12_345])



@pytest.mark.parametrize("kind", ["mp3", "vorbis", "opus", "opus-gain-preskip"])
def test_a_lossy_recording_begins_and_ends_where_its_format_says_as_ffmpeg_reads_it(tmp_path: Path, kind: str) -> None:
    """PDI-GRAMMAR.md's reading of a recording's time: an MP3's LAME header (encoder delay and padding), an Opus
    stream's pre-skip and output gain (RFC 7845 §5.1: the first page's OpusHead, octets 10-11 and 16-17), Ogg's
    granule positions. Frame 0 and the length are those of ffmpeg's decoding; samples equal to rounding."""
    codec, suffix = {"mp3": ("libmp3lame", "mp3"), "vorbis": ("libvorbis", "ogg")}.get(kind, ("libopus", "opus"))
    path = tmp_path / f"recording.{suffix}"
    rate = 48_000 if suffix == "opus" else 44_100
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"anoisesrc=r={rate}:d=1.37:seed=9:a=0.3",
                    "-c:a", codec, str(path)], check=True, capture_output=True, timeout=60)
    data = bytearray(path.read_bytes())
    if kind == "opus-gain-preskip":  # 1,000 samples more skipped, 6 dB quieter
        head = data.index(b"OpusHead")
        data[head + 10:head + 12] = struct.pack("<H", struct.unpack("<H", data[head + 10:head + 12])[0] + 1000)
        data[head + 16:head + 18] = struct.pack("<h", -6 * 256)
        size = 27 + data[26] + sum(data[27:27 + data[26]])
        page = bytearray(data[:size])
        page[22:26] = bytes(4)
        data[22:26] = struct.pack("<I", ogg_crc(bytes(page)))
        path.write_bytes(data)
    decoded = ffmpeg_decode(path, 1)
    assert abs(len(decoded) - round(1.37 * rate) + (1000 if kind == "opus-gain-preskip" else 0)) <= 1
    result = evaluate_audio("msec", (0, 400), bytes(data), f"audio/{suffix}", None)
    assert result.interval.length == len(decoded)
    got, _, _ = wav_samples(result.data)
    assert np.allclose(got, decoded[: len(got)], atol=1e-4) and len(got) == math.ceil(0.4 * rate)
    end = evaluate_audio("msec", (1000, 2000), bytes(data), f"audio/{suffix}", None)
    assert np.allclose(wav_samples(end.data)[0], decoded[rate:], atol=1e-4)
