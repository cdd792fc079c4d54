"""Media Fragments aliases (``#t=``, ``#xywh=``) on archived recordings and videos: named without reading the whole.

:func:`pdi.interop.aliases.native_names` names the native fragment a Media
Fragment equals; its answer is then read as the native name's is. Naming it
needs nothing of the document for ``t=a,b``, the duration for ``t=a`` (a
video's from its index, a recording's from its header) and the size for
``xywh=percent:`` (an image's header).
"""

from __future__ import annotations

import struct
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from peak_memory import run_with_peak


def _pdi(location: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv, "--archive", str(location)], capture_output=True,
                          text=True, timeout=300)


def _long_wav(path: Path, octets: int) -> None:
    """A 16-bit mono 8 kHz WAV of three seconds of numbered samples, then zeros to ``octets`` of samples (sparse)."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(np.arange(3 * 8000, dtype="<i2").tobytes())
    with path.open("r+b") as f:
        f.seek(4)
        f.write(struct.pack("<I", 36 + octets))
        f.seek(40)
        f.write(struct.pack("<I", octets))
        f.truncate(44 + octets)


def _padded_mp4(path: Path, octets: int) -> None:
    """A 3 s 64×48 H.264 MP4 (no sound) and a ``free`` box of zeros making it ``octets`` long."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3",
                    "-c:v", "libx264", str(path)], check=True, timeout=120)
    size = path.stat().st_size
    with path.open("ab") as f:  # ISO/IEC 14496-12 §8.1.2: a free box, which a reader skips
        f.write((octets - size).to_bytes(4, "big") + b"free")
        f.truncate(octets)


@pytest.mark.parametrize(("kind", "alias", "native"), [
    ("wav", "t=1,2", "sec=1,2"),
    ("wav", "t=4194", "msec=4194000,4194304"),  # 64 MiB of 16-bit samples at 8 kHz: 33,554,432 frames, 4,194.304 s
    ("mp4", "t=1,2", "sec=1,2"),
    ("mp4", "t=npt:1.5", "msec=1500,3000"),
])
def test_a_time_alias_is_named_without_reading_the_whole(tmp_path: Path, kind: str, alias: str,
                                                         native: str) -> None:
    """Found by an attack: ``pdi get NAME#t=1,2`` (and the resolver's N2R, which redirects it to the native name)
    read the whole document into memory to name ``#sec=1,2``: 419 MB resident for a 200 MB WAV, 573 MB for a
    279 MB MP4, where the native name takes 34 MB and 32 MB. Here 64 MiB: the alias takes no more memory than
    its native name, and answers the same octets."""
    location = tmp_path / "archive"
    assert _pdi(location, "init").returncode == 0
    assert _pdi(location, "series", "add", "example.us").returncode == 0
    path = tmp_path / f"long.{kind}"
    if kind == "wav":
        _long_wav(path, 64 << 20)
    else:
        _padded_mp4(path, 64 << 20)
    done = _pdi(location, "add", str(path), "--series", "example.us")
    assert done.returncode == 0, done.stderr
    name = done.stdout.strip()

    def run(target: str) -> tuple[int, bytes, str]:
        out = tmp_path / "out"
        status, peak, said = run_with_peak([sys.executable, "-m", "pdi", "get", target, "-o", str(out),
                                            "--archive", str(location)], stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT)
        assert status == 0
        return peak, out.read_bytes(), said.decode()

    native_peak, native_answer, _ = run(f"{name}#{native}")
    alias_peak, alias_answer, said = run(f"{name}#{alias}")
    assert f"is {name}#{native}" in said
    assert alias_answer == native_answer
    assert alias_peak < native_peak + 16 * 1024, f"the alias took {alias_peak // 1024} MiB, its native name" \
                                                f" {native_peak // 1024} MiB"
