"""What libsndfile asks of the recording's octets it reads (``soundfile``'s virtual I/O) is answered, never an
exception raised inside its callback.

soundfile gives libsndfile a Python file through callbacks; an exception raised in one is printed ("Exception
ignored from cffi callback", :func:`sys.unraisablehook`: a ``PytestUnraisableExceptionWarning`` under warnings as
errors) and the callback answers 0. Found by fuzzing with warnings as errors (2026-11-29): an AIFF with two stray
octets between its chunks made libsndfile seek to -1 from the start, which ``io.BytesIO`` (and pdi's reader of a
buffer, as it) refuses with a ``ValueError``. The recording is no AIFF (AIFF 1.3, EA IFF 85: chunks follow each
other, each padded to an even length only), and it is refused by name as before.
"""

from __future__ import annotations

import struct
import sys
from typing import Any

import pytest

from pdi.errors import UnsupportedError
from pdi.fragments.audio import evaluate_audio

#: 8000 Hz as an 80-bit IEEE 754 extended float (AIFF's ``sampleRate``): 2**(0x400b - 16383) * 0xfa00.../2**63.
_RATE = b"\x40\x0b\xfa" + bytes(7)


def _aiff(between: bytes) -> bytes:
    """An AIFF of 80 frames of silence (mono, 16 bits, 8000 Hz), ``between`` its COMM and SSND chunks."""
    comm = struct.pack(">hIh", 1, 80, 16) + _RATE
    ssnd = struct.pack(">II", 0, 0) + bytes(160)
    body = (b"AIFF" + b"COMM" + struct.pack(">I", len(comm)) + comm + between
            + b"SSND" + struct.pack(">I", len(ssnd)) + ssnd)
    return b"FORM" + struct.pack(">I", len(body)) + body


@pytest.fixture
def unraisable(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The exceptions raised where nothing could catch them (a C library's callback), from now on."""
    raised: list[str] = []

    def hook(unraisable: Any) -> None:
        raised.append(repr(unraisable.exc_value))

    monkeypatch.setattr(sys, "unraisablehook", hook)
    return raised


def test_an_aiff_whose_chunks_are_apart_is_refused_without_an_exception_in_libsndfiles_seek(
    unraisable: list[str],
) -> None:
    with pytest.raises(UnsupportedError, match="not a recording pdi can read"):
        evaluate_audio("msec", [1, 2], _aiff(b"\x00\x00"), "audio/aiff", None)
    assert unraisable == []


def test_the_same_aiff_with_its_chunks_together_is_read(unraisable: list[str]) -> None:
    # 1 to 2 ms of 8000 Hz: frames 8 to 16, eight 16-bit samples of silence, in a WAV of 44 octets of header
    result = evaluate_audio("msec", [1, 2], _aiff(b""), "audio/aiff", None)
    assert result.media_type == "audio/wav" and len(result.data) == 44 + 16 and result.data.endswith(bytes(16))
    assert unraisable == []
