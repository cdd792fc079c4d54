"""A sound's ``sec``/``msec`` fragment checks the chunks it reads, not the whole blob (fixity by chunk digests).

Every stored blob of more than one chunk has a SHA-256 for each of its chunks (1 MiB), as a byte range's answer is
checked by (``verify_range``). A second of a recording reads its header and that second's samples: those chunks
are checked as they are read, and a damaged octet in them is still refused; one in a chunk the fragment never
reads does not keep the second from being answered (it hashed the whole recording for each fragment: a minute of
a 2 GB recording cost 2 GB of hashing). The samples are worked out (:func:`_sample`), not decoded by pdi.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest

from pdi.archive import Archive, Generic
from pdi.errors import DamagedError
from support.stored_blobs import flip_octet

S = "sound.library.example.us"
RATE = 44_100
SECONDS = 60  # 16-bit mono: 5.3 MB, six chunks of 1 MiB
HEADER = 44  # the canonical WAV header the wave module writes: RIFF, fmt (16 octets), data


def _sample(k: np.ndarray) -> np.ndarray:
    """Sample frame k's value: a sawtooth whose every frame differs from its neighbours."""
    return ((k * 7919) % 65_536 - 32_768).astype("<i2")


def _recording() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(_sample(np.arange(RATE * SECONDS)).tobytes())
    return out.getvalue()


@pytest.fixture
def stored(tmp_path: Path) -> tuple[str, str, str]:
    """A SQLite archive holding the recording as a blob file: its location, versioned name and SHA-256."""
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = archive.add(S, _recording(), format="wav")
        record = archive.resolve(name)
        assert not isinstance(record, Generic)
        return location, str(name), record.record.sha256


def _second(location: str, name: str) -> np.ndarray:
    with Archive.open(location) as archive:
        answer = archive.resolve(f"{name}#sec=1,2")
    assert not isinstance(answer, Generic) and answer.media_type == "audio/wav"
    with wave.open(io.BytesIO(answer.data), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, RATE)
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")


def test_the_second_is_its_samples(stored: tuple[str, str, str]) -> None:
    location, name, _ = stored
    assert (_second(location, name) == _sample(np.arange(RATE, 2 * RATE))).all()


def test_a_damaged_octet_in_a_chunk_the_fragment_does_not_read_does_not_block_it(stored: tuple[str, str, str]
                                                                                 ) -> None:
    location, name, sha256 = stored
    flip_octet(location, sha256, 4 * (1 << 20) + 12_345)  # in chunk 4: 47 s in
    assert (_second(location, name) == _sample(np.arange(RATE, 2 * RATE))).all()
    with Archive.open(location) as archive, pytest.raises(DamagedError, match="chunk 4"):
        archive.resolve(f"{name}#sec=47,48")  # which reads it


@pytest.mark.parametrize("offset", [
    HEADER + 2 * RATE + 1_001,  # a sample of the second asked for
    22,  # the header's channel count (fmt ): every fragment reads it
])
def test_a_damaged_octet_in_a_chunk_the_fragment_reads_is_refused(stored: tuple[str, str, str], offset: int) -> None:
    location, name, sha256 = stored
    flip_octet(location, sha256, offset)
    with Archive.open(location) as archive, pytest.raises(DamagedError, match="chunk 0"):
        archive.resolve(f"{name}#sec=1,2")
