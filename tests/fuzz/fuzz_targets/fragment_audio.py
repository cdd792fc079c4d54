"""``sec`` and ``msec`` on audio (``pdi.fragments.audio``: ``wave`` and libsndfile) through :func:`pdi.fragments.evaluate`.

Input: ``fragment NUL media-type NUL recording`` (``audio/*``). What must hold
(the module docstring): an interval inside the recording; a WAV file of
exactly the selected frames, with the recording's channels and rate (its
RIFF chunks read here by hand, from the WAV format's own layout).
"""

from __future__ import annotations

import struct

from fuzz_harness import Target

from fuzz_targets._evaluate import evaluated


def run(data: bytes) -> None:
    scheme, _, _, _, result = evaluated(
        data, default_scheme="sec", default_type="audio/wav", family=lambda m: m.startswith("audio/")
    )
    if scheme not in ("sec", "msec"):
        return
    interval = result.interval
    assert interval is not None
    assert 0 <= interval.start <= interval.end <= interval.length
    assert interval.rate > 0 and interval.channels > 0
    assert result.media_type == "audio/wav"
    channels, rate, frames = _wav_header(result.data)
    assert (frames, channels, rate) == (interval.end - interval.start, interval.channels, interval.rate)


def _wav_header(data: bytes) -> tuple[int, int, int]:
    """Channels, rate and frames of a WAV file, read from its RIFF chunks (libsndfile refuses over 1024 channels)."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    assert struct.unpack_from("<I", data, 4)[0] == len(data) - 8
    pos, fmt, frames = 12, None, None
    while pos < len(data):
        kind, size = data[pos : pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        if kind == b"fmt ":
            fmt = struct.unpack_from("<HHIIHH", data, pos + 8)
        elif kind == b"data":
            assert fmt is not None
            frames, rest = divmod(size, fmt[4])
            assert rest == 0
        pos += 8 + size + size % 2
    assert fmt is not None and frames is not None and pos == len(data)
    tag, channels, rate, per_second, block, bits = fmt
    assert tag in (1, 3) and block == channels * bits // 8 and per_second == rate * block
    return channels, rate, frames

def _wav(frames: int) -> bytes:
    """A mono 8 kHz 16-bit PCM WAV file of ``frames`` silent frames (the format written out by hand)."""
    body = b"\x00\x00" * frames
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return b"RIFF" + struct.pack("<I", 36 + len(body)) + b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(body)) + body


TARGET = Target(
    "fragment_audio",
    run,
    warmup=b"msec=1,2\x00audio/wav\x00" + _wav(16),
    tokens=(
        b"\x00", b"sec=", b"msec=", b",", b"audio/wav", b"audio/flac", b"audio/ogg", b"audio/mpeg",
        b"audio/aiff", b"RIFF", b"RIFX", b"RF64", b"WAVE", b"fmt ", b"data", b"fact", b"LIST",
        b"\x01\x00", b"\x03\x00", b"\xfe\xff", b"fLaC", b"OggS", b"FORM", b"AIFF", b"AIFC", b"COMM", b"SSND",
        b".snd", b"ID3", b"\xff\xfb",
    ),
)
