"""Audio fragments: ``sec`` and ``msec`` time ranges (draft lines 725–749; PDI-GRAMMAR.md §3).

``#sec=a,b`` (the scheme may be omitted on audio: ``sec`` is the default) or
``#msec=a,b`` selects the sound from time ``a`` up to and excluding time
``b``, in seconds or milliseconds; the two units are never mixed in one
fragment. The draft's text is lost after line 749; our reading of the rest:

* **Which samples.** Sample frame ``k`` sounds at time ``k / rate``. The
  fragment selects the frames with ``a ≤ k / rate < b``: from
  ``ceil(a × rate)`` up to ``ceil(b × rate)`` (milliseconds divided by
  1000), so fragments that meet (``sec=0,1`` and ``sec=1,2``) share no
  sample and miss none.
* **Past the end.** A time past the end of the recording is its end, and
  the result says ``clamped`` (as text positions past the end are). A
  fragment whose first sample would be at or past the end and that reaches
  past it selects no sample and says ``past_end`` too; ``sec=d,d`` at the
  duration ``d`` is the empty range at the end, not past it.
* **What comes back.** A WAV file (``audio/wav``) of the selected frames,
  with the recording's channels and rate: the PCM samples as stored where the
  recording is PCM (a WAV file's bytes exactly; FLAC, AIFF and other PCM
  formats at their own bit depth, 8-bit as 16-bit), floats as stored (32 or
  64 bits), and 32-bit float samples where it is compressed with loss (Ogg
  Vorbis, MP3). The
  same fragment of the same bytes gives the same WAV bytes every time (the
  header is written here, with no date or tool name in it). A fragment
  read through libsndfile that would decode to more than
  :data:`MAX_DECODED_OCTETS` and more than the recording's own octets (a
  compressed one) is a :class:`~pdi.errors.LimitError`, said before anything
  is decoded.

* **Where the recording begins and ends.** As its format defines its
  timeline (PDI-GRAMMAR.md, readings): an MP3's LAME/Xing header removes the
  encoder's delay and padding, an Opus stream's pre-skip and an Ogg stream's
  last granule position cut its start and end, as libsndfile and ffmpeg both
  read them; an MP3 without a Xing header holds every sample of its frames,
  counted here (:func:`mpeg_length`), not libsndfile's estimate from its size.

WAV (PCM) is read with the standard :mod:`wave` module; every other format
libsndfile reads (FLAC, Ogg Vorbis, MP3, AIFF, AU, CAF, W64, float and
extensible WAV …) through ``soundfile``. A format neither reads is
:class:`~pdi.errors.UnsupportedError`. ``video/*`` uses the same schemes in
the draft, but pdi has no video decoder: no evaluator is registered for it.
Pure: no I/O.
"""

from __future__ import annotations

import io
import struct
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Final, cast

from pdi._wording import plural
from pdi.errors import LimitError, ParseError, UnsupportedError
from pdi.fragments.results import (
    Buffer,
    BufferFile,
    FragmentResult,
    Interval,
    Readable,
    check_order,
)

_PCM: Final = 1
_IEEE_FLOAT: Final = 3
#: libsndfile subtypes read as integers at this many octets per sample (and written so)
_INTEGER_SUBTYPES: Final = {"PCM_S8": 2, "PCM_U8": 2, "PCM_16": 2, "PCM_24": 3, "PCM_32": 4}
#: the largest WAV file: its RIFF size field is 32 bits
_WAV_MAX: Final = 0xFFFFFFFF - 64
#: The most octets of samples a fragment read through libsndfile is decoded to, unless the recording's own octets
#: are more (an uncompressed AIFF's fragment is about a slice of what is stored): its WAV answer is made in
#: memory, and a 1 MB FLAC of silence can decode to gigabytes. 256 MiB is 25 minutes of CD-quality stereo.
MAX_DECODED_OCTETS = 256 << 20
#: Sample frames decoded at once.
_BLOCK_FRAMES: Final = 1 << 16


@dataclass(frozen=True)
class _Cut:
    """Selected samples, interleaved, little-endian: ``width`` octets each, floats or integers."""

    samples: bytes | bytearray
    width: int
    is_float: bool


def _times(scheme: str, positions: Sequence[object]) -> tuple[int, int]:
    if len(positions) != 2 or not all(
        isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in positions
    ):
        raise ParseError(
            f"{scheme}= is two times (start,end) in whole {_unit(scheme)},"
            f" not {tuple(positions)!r}",
            rule="time",
        )
    start, end = positions
    assert isinstance(start, int) and isinstance(end, int)
    check_order(f"{scheme} fragment", start, end, "time")
    return start, end


def _unit(scheme: str) -> str:
    return "seconds" if scheme == "sec" else "milliseconds"


def _frame_at(time: int, rate: int, per_second: int) -> int:
    """The first sample frame at or after ``time`` (in 1/``per_second`` seconds): ceil(time × rate / per_second)."""
    return -(-time * rate // per_second)


def evaluate_audio(
    scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None
) -> FragmentResult:
    """Evaluate ``sec`` or ``msec`` on the recording ``data`` (``bytes`` or a memory map, read as a file: only its
    header and the samples selected are touched; see the module docstring)."""
    reader, start, end, a, b, clamped = _selected(scheme, positions, data, media_type)
    rate, length = reader.rate, reader.length
    cut = reader.read(a, b)
    frame = cut.width * reader.channels
    got = len(cut.samples) // frame
    if got == 0 < a < b:
        # the header promised frames from a on and none is there: where the recording ends is not known, and a
        # length of a would be said of it (found by an attack, 2026-11-27: an Ogg whose last page claims 125 s, of
        # 1 s of sound, "lasted 5.000 s" for msec=5000,5100 and 125 s for msec=500,600)
        raise UnsupportedError(
            f"{scheme}={start},{end}: the recording's header promises {length:,} sample frames"
            f" ({length / rate:.3f} s), but it holds none from frame {a:,} ({a / rate:.3f} s) on: it is shorter than"
            " its header says, by how much is not known; a passage from its start can be cited"
        )
    if got < b - a:  # a truncated file: the header promised frames the data does not hold
        b, length, clamped = a + got, a + got, True
        cut = _Cut(cut.samples[: got * frame], cut.width, cut.is_float)  # no part of a frame
    return FragmentResult(
        data=_wav(cut, reader.channels, rate),
        media_type="audio/wav",
        clamped=clamped,
        ranges=(),
        scheme=scheme,
        interval=Interval(a, b, rate, reader.channels, length),
        past_end=clamped and a >= length,
    )


def _selected(
    scheme: str, positions: Sequence[object], data: Readable, media_type: str
) -> tuple[_WaveReader | _SoundFileReader, int, int, int, int, bool]:
    """The reader of ``data``, the times asked and the sample frames ``[a, b)`` they select (whether cut at the
    end), its limits checked before anything is decoded."""
    if scheme not in ("sec", "msec"):
        raise UnsupportedError(f"no audio fragment scheme {scheme!r}: sec or msec")
    start, end = _times(scheme, positions)
    per_second = 1 if scheme == "sec" else 1000
    reader: _WaveReader | _SoundFileReader
    try:
        reader = _WaveReader(data)
    except (wave.Error, EOFError, struct.error, RuntimeError, ValueError, OSError):
        # not PCM WAV, or a damaged header the standard module trips on: libsndfile decides
        reader = _SoundFileReader(data, media_type)
    rate, length = reader.rate, reader.length
    a = min(_frame_at(start, rate, per_second), length)
    b = min(_frame_at(end, rate, per_second), length)
    clamped = _frame_at(end, rate, per_second) > length
    octets = (b - a) * reader.channels * reader.width
    if octets > _WAV_MAX:  # before decoding anything
        raise LimitError(f"{scheme}={start},{end} selects more sound than a WAV file holds: cut it shorter")
    if isinstance(reader, _SoundFileReader) and octets > max(MAX_DECODED_OCTETS, len(data)):
        raise LimitError(
            f"{scheme}={start},{end} decodes to {octets:,} octets of samples ({b - a:,} sample frames of"
            f" {plural(reader.channels, 'channel')} at {reader.width} octets), more than the recording's own"
            f" {len(data):,} octets and the {MAX_DECODED_OCTETS >> 20} MiB a fragment is decoded to beyond them:"
            " cite a shorter passage, or the whole recording as it is stored"
        )
    return reader, start, end, a, b, clamped


def interval_from_header(scheme: str, positions: Sequence[object], data: Readable, media_type: str) -> FragmentResult:
    """``sec`` or ``msec`` on the recording ``data`` (a buffer, or octets read by slices) read from its header
    alone: the sample frames selected, ``clamped`` and ``past_end`` as :func:`evaluate_audio` says them, every
    limit it checks before decoding checked, and no sample read (the result's ``data`` is empty). For a caller that
    shows where the stretch is (the viewer) in a recording too long to be read whole for it. Where a recording
    holds fewer frames than its header promises, :func:`evaluate_audio` finds it when it reads them; this does not."""
    reader, _, _, a, b, clamped = _selected(scheme, positions, data, media_type)
    return FragmentResult(
        data=b"", media_type="audio/wav", clamped=clamped, ranges=(), scheme=scheme,
        interval=Interval(a, b, reader.rate, reader.channels, reader.length), past_end=clamped and a >= reader.length,
    )


class _WaveReader:
    """PCM WAV through the standard library (raises :class:`wave.Error` for anything else)."""

    def __init__(self, data: Readable) -> None:
        self._data = data
        wav_data_start(data)  # its chunks counted before the wave module walks them
        with wave.open(cast(IO[bytes], BufferFile(data)), "rb") as recording:
            self.rate = recording.getframerate()
            self.channels = recording.getnchannels()
            self.length = recording.getnframes()
            self.width = recording.getsampwidth()
        if self.rate <= 0 or self.channels <= 0 or self.width not in (1, 2, 3, 4):
            # PCM of 8 to 32 bits, as libsndfile reads it (found by an attack, 2026-11-27: 65,535 bits a sample
            # made a WAV header no struct packs, a traceback); anything else libsndfile decides
            raise wave.Error("no sample rate, no channels, or not 8 to 32 bits a sample")
        start = wav_data_start(data)
        if start is None:
            raise wave.Error("no data chunk")
        self._start = start
        self.length = frames_held(data, self.length, self.channels * self.width)

    def read(self, a: int, b: int) -> _Cut:
        # sliced from the data chunk, not read through the wave module, which reads no further than the RIFF
        # chunk's size says: a file whose RIFF size is less than its data (found by an attack, 2026-11-27) held
        # 8,000 frames for sec=0,1 and none from frame 4,000 on, so its length depended on the time asked
        frame = self.channels * self.width
        return _Cut(bytes(self._data[self._start + a * frame:self._start + b * frame]), self.width, False)


def frames_held(data: Readable, claimed: int, frame_octets: int) -> int:
    """The sample frames a RIFF WAVE file ``data`` holds: ``claimed`` (its header's), or fewer where its ``data``
    chunk ends sooner (a file cut short, or written to a pipe: ffmpeg's size there is 0xFFFFFFFF)."""
    start = wav_data_start(data)
    if start is None or frame_octets <= 0:
        return claimed
    return min(claimed, (len(data) - start) // frame_octets)


#: The most chunks of a RIFF WAVE file walked before its ``data`` chunk: a real one has a handful (``fmt ``,
#: ``fact``, ``LIST``, ``bext``, ``iXML``, ``cue ``, ``JUNK`` …). Found by an attack (2026-11-27): a 176 KB WAV of
#: 20,000 empty chunks before its samples took the wave module 25 ms a walk, and the viewer's waveform, a walk a
#: column, 33 s; 8 MB of them took a fragment 14 s (libsndfile gives up on such a file, ffmpeg reads it).
MAX_WAV_CHUNKS = 1024


def wav_data_start(data: Readable) -> int | None:
    """Where the samples of a RIFF WAVE file ``data`` begin: after the header of its ``data`` chunk, found by walking
    its chunks (each an ID, a 32-bit little-endian size, the content padded to an even size); ``None`` if it is no
    RIFF WAVE file or has no ``data`` chunk. More than :data:`MAX_WAV_CHUNKS` before it is a :class:`LimitError`;
    a second ``fmt `` chunk before it a :class:`wave.Error`, so libsndfile decides (it refuses such a file): the
    wave module reads the last, ffmpeg the first (found by an attack, 2026-11-27: 8 kHz mono by ffprobe's reading
    was 44.1 kHz stereo by pdi's)."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    at = 12
    formats = 0
    for _ in range(MAX_WAV_CHUNKS + 1):
        if at + 8 > len(data):
            return None
        if data[at:at + 4] == b"data":
            return at + 8
        if data[at:at + 4] == b"fmt ":
            formats += 1
            if formats > 1:
                raise wave.Error("a second fmt chunk")
        size = int.from_bytes(data[at + 4:at + 8], "little")
        at += 8 + size + (size & 1)
    raise LimitError(f"a WAV file of more than {MAX_WAV_CHUNKS:,} chunks before its samples (its data chunk):"
                     " not read; its octets are served whole by N2R")


#: Sony Wave64's GUID of its outer chunk, and the tail of each of its other chunk GUIDs (``fmt `` and the tail).
_W64_RIFF: Final = b"riff" + bytes.fromhex("2e91cf11a5d628db04c10000")
_W64_FMT: Final = b"fmt " + bytes.fromhex("f3acd3118cd100c04f8edb8a")
_EXTENSIBLE: Final = 0xFFFE


def w64_sample_format(data: Readable) -> int | None:
    """The format tag of the samples of a Sony Wave64 file ``data``: its ``fmt `` chunk's, or where that is
    ``WAVE_FORMAT_EXTENSIBLE`` the tag its SubFormat GUID begins with (1 PCM, 3 IEEE float, 6 A-law, 7 µ-law);
    ``None`` if it is no W64 or its ``fmt `` chunk is not found among its first :data:`MAX_WAV_CHUNKS` chunks (each a
    16-octet GUID, a 64-bit little-endian size that counts those 24 octets, the content padded to 8 octets)."""
    if data[:16] != _W64_RIFF:
        return None
    at = 40  # after the riff GUID, its size, and the wave GUID
    for _ in range(MAX_WAV_CHUNKS):
        if at + 24 > len(data):
            return None
        size = int.from_bytes(data[at + 16:at + 24], "little")
        if data[at:at + 16] == _W64_FMT:
            fmt = bytes(data[at + 24:at + 24 + min(max(size - 24, 0), 40)])
            if len(fmt) < 16:
                return None
            tag = int.from_bytes(fmt[:2], "little")
            if tag == _EXTENSIBLE and len(fmt) >= 26:
                tag = int.from_bytes(fmt[24:26], "little")
            return tag
        if size < 24:
            return None
        at += (size + 7) & ~7
    return None


def w64_floats_as_integers(data: Readable, container: str, subtype: str, media_type: str) -> bool:
    """Whether libsndfile, which says ``data`` is a ``container`` of ``subtype`` samples, reads 32-bit floats as 32-bit
    integers: their octets are the floats' (read as integers and taken as floats, they are the samples stored).

    libsndfile 1.2 reads a W64 whose ``fmt `` is ``WAVE_FORMAT_EXTENSIBLE`` as PCM whatever its SubFormat says, as
    ffmpeg writes one of floats (more than two channels, more than 16 bits) or of A-law and µ-law (more than two
    channels). Found against ffmpeg (2026-12-01): a W64 of 32-bit floats came back as 32-bit integers, a full-scale
    noise (a sample of 0.5 as 0.492, its octets 0x3F000000 taken for an integer over 2**31). Floats of 32 bits are read so; any other
    SubFormat libsndfile reads as PCM is an :class:`UnsupportedError`, not samples it did not decode."""
    if container != "W64" or subtype not in _INTEGER_SUBTYPES:
        return False
    tag = w64_sample_format(data)
    if tag in (None, _PCM):
        return False
    if tag == _IEEE_FLOAT and subtype == "PCM_32":
        return True
    raise UnsupportedError(
        f"time fragments on {media_type}: a Wave64 file whose samples are of format {tag:#06x} (its fmt chunk's"
        f" SubFormat), which libsndfile reads as {subtype} and does not decode; convert it to WAV or FLAC"
        " (ffmpeg -i IN OUT.wav) and deposit that"
    )


#: MPEG audio bit rates (kbit/s) by bit-rate index 1 to 14 (ISO/IEC 11172-3 and 13818-3): by (MPEG-1?, layer).
_MPEG_KBITS: Final = {
    (True, 1): (32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (True, 2): (32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (True, 3): (32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (False, 1): (32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (False, 2): (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    (False, 3): (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
#: Sample rates by sample-rate index, by version (3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5).
_MPEG_RATES: Final = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
#: What may follow an MPEG audio stream's last frame: ID3v1, APE and Lyrics3 tags.
_MPEG_TRAILERS: Final = (b"TAG", b"APETAGEX", b"LYRICSBEGIN")
#: The most octets after an MPEG audio stream's last frame searched for another frame (past them: not known).
_MPEG_TAIL: Final = 1 << 16


def _mpeg_frame(header: bytes | bytearray | memoryview) -> tuple[int, int] | None:
    """An MPEG audio frame header's frame length in octets and its sample frames; ``None`` if it is none (or of
    free bit rate, whose frames have no length in their header)."""
    h = int.from_bytes(header, "big")
    version, layer, index, rate = h >> 19 & 3, 4 - (h >> 17 & 3), h >> 12 & 15, h >> 10 & 3
    if h >> 21 != 0x7FF or version == 1 or layer == 4 or index in (0, 15) or rate == 3:
        return None
    first = version == 3
    bits = _MPEG_KBITS[(first, layer)][index - 1] * 1000
    hz = _MPEG_RATES[version][rate]
    if layer == 1:
        return (12 * bits // hz + (h >> 9 & 1)) * 4, 384
    samples = 1152 if layer == 2 or first else 576
    return samples // 8 * bits // hz + (h >> 9 & 1), samples


def mpeg_length(data: Readable) -> int | None:
    """The sample frames an MP3 (or MPEG layer I or II) file ``data`` holds that has no Xing, Info or VBRI header
    (which says its length, and the LAME encoder's delay and padding): its frames' samples, counted frame header by
    frame header from after an ID3v2 tag, complete frames only; ``None`` if it has such a header, or its frames do not
    run to its end (or to an ID3v1, APE or Lyrics3 tag there, or to octets in which no two frames follow each other),
    where the count of libsndfile stands.

    libsndfile 1.2 says such a file's length from its size and first frame's bit rate (mpg123's estimate), and
    decodes no further. Found against ffmpeg (2026-12-01): a variable-bit-rate MP3 of 3.13 s without a Xing header
    "lasted" 1.32 s, every later time past its end; a constant-rate one of 1.332 s (51 frames of 1,152 samples)
    lasted 1.344 s, and its last 12 ms were "shorter than its header says"."""
    at = 0
    if data[:3] == b"ID3" and len(data) >= 10:  # ID3v2: a synchsafe size, and a footer where flagged
        head = data[:10]
        at = 10 + ((head[6] & 0x7F) << 21 | (head[7] & 0x7F) << 14 | (head[8] & 0x7F) << 7 | head[9] & 0x7F)
        at += 10 if head[5] & 0x10 else 0
    first = _mpeg_frame(data[at:at + 4]) if at + 4 <= len(data) else None
    if first is None or any(tag in bytes(data[at:at + first[0]]) for tag in (b"Xing", b"Info", b"VBRI")):
        return None
    samples, end = 0, len(data)
    # each header read once: a file's frames repeat a few headers (bit rate and padding), and this walk is Python
    # frame by frame (0.38 s for an hour of sound at 64 kbit/s with _mpeg_frame asked of each, 0.14 s so)
    frames: dict[int, tuple[int, int]] = {}
    number = int.from_bytes
    while at + 4 <= end:
        header = number(data[at:at + 4], "big")
        frame = frames.get(header)
        if frame is None:
            frame = _mpeg_frame(data[at:at + 4])
            if frame is None:
                break
            frames[header] = frame
        if at + frame[0] > end:
            break
        samples += frame[1]
        at += frame[0]
    tail = end - at
    rest = bytes(data[at:at + min(tail, _MPEG_TAIL)])
    if tail and not rest.startswith(_MPEG_TRAILERS) and (tail > _MPEG_TAIL or _frames_follow(rest)):
        return None
    return samples


def _au_unread(data: Readable, frames: int, container: str, media_type: str) -> None:
    """An :class:`UnsupportedError` where libsndfile reads none of an AU file's samples that are there: one whose
    header's data size is 2 GiB or more (libsndfile 1.2 says 0 frames, where ffmpeg reads the samples the file holds
    up to a size of 2**31 - 1 and refuses the file past it; found against ffmpeg, 2026-12-01: a second of sound was
    an empty recording, every citation of it past its end)."""
    if container != "AU" or frames or len(data) < 24:
        return
    big = data[:4] == b".snd"  # else "dns.", little-endian
    offset = int.from_bytes(data[4:8], "big" if big else "little")
    size = int.from_bytes(data[8:12], "big" if big else "little")
    if size and len(data) > offset:
        raise UnsupportedError(
            f"time fragments on {media_type}: its header says {size:,} octets of samples, the file holds"
            f" {len(data) - offset:,} from its samples' offset on, and libsndfile reads none of them (it reads no AU"
            " whose data size is 2 GiB or more); write it to WAV or FLAC (ffmpeg -i IN OUT.flac) and deposit that"
        )


def libsndfile_length(data: Readable, frames: int, container: str, media_type: str) -> tuple[int, int]:
    """The sample frames of a recording libsndfile says is a ``container`` of ``frames`` frames, and how many of
    them libsndfile decodes: ``frames`` both (:func:`known_length`), but of an MP3 without a Xing header the frames
    it holds (:func:`mpeg_length`), of which libsndfile decodes no more than ``frames``."""
    known_length(frames, media_type)
    _au_unread(data, frames, container, media_type)
    counted = mpeg_length(data) if container == "MP3" else None
    return (frames, frames) if counted is None else (counted, min(counted, frames))


def _frames_follow(octets: bytes) -> bool:
    """Whether two MPEG audio frame headers follow each other somewhere in ``octets`` (a decoder resyncs there)."""
    at = octets.find(b"\xff")
    while at >= 0:
        frame = _mpeg_frame(octets[at:at + 4])
        if frame is not None and _mpeg_frame(octets[at + frame[0]:at + frame[0] + 4]) is not None:
            return True
        at = octets.find(b"\xff", at + 1)
    return False


#: The length libsndfile gives a recording whose header does not say it (its ``SF_COUNT_MAX``).
_UNKNOWN_LENGTH: Final = (1 << 63) - 1


def known_length(frames: int, media_type: str) -> int:
    """``frames``, libsndfile's length of a recording, unless its header did not say it: an :class:`UnsupportedError`.

    Found by an attack (2026-11-27): a FLAC that ffmpeg wrote to a pipe says 0 samples, "unknown" (RFC 9639 §8.2),
    which libsndfile gives as 2**63 - 1 frames and cannot seek in: its first second was of a recording 36 million
    years long, its whole "more sound than a WAV file holds", its second second "Internal psf_fseek() failed".
    """
    if frames >= _UNKNOWN_LENGTH:
        raise UnsupportedError(
            f"time fragments on {media_type}: its header does not say how many samples it holds (a FLAC written to"
            " a pipe says 0, unknown), and pdi reads no recording of unknown length; write it to a file again"
            " (ffmpeg -i IN OUT.flac) and deposit that"
        )
    return frames


class _Seekable(BufferFile):
    """The recording as libsndfile reads it, through ``soundfile``'s callbacks: a seek to before the start, from
    the start too, is to the start (:class:`BufferFile`, as ``io.BytesIO``, refuses that one with a ``ValueError``).
    An exception in a callback reaches no one: it is printed ("Exception ignored from cffi callback", a
    ``PytestUnraisableExceptionWarning`` where warnings are errors) and the callback answers 0, the start, to
    libsndfile, while the position stayed where it was. Found by fuzzing with warnings as errors (2026-11-29): an
    AIFF with two stray octets between its chunks made libsndfile seek to -1; it is still refused, by name."""

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return super().seek(max(offset, 0) if whence == io.SEEK_SET else offset, whence)


class _SoundFileReader:
    """Any format libsndfile reads, through ``soundfile``."""

    def __init__(self, data: Readable, media_type: str) -> None:
        import soundfile

        self._data = data
        try:
            with soundfile.SoundFile(_Seekable(data)) as recording:
                self.rate = recording.samplerate
                self.channels = recording.channels
                self.length = recording.frames
                subtype = recording.subtype
                container = recording.format
        except (RuntimeError, TypeError) as exc:  # soundfile.LibsndfileError is a RuntimeError
            reason = str(exc).rsplit(">: ", 1)[-1]  # not "Error opening <…BufferFile object at …>"
            raise UnsupportedError(f"time fragments on {media_type}: not a recording pdi can read ({reason})") from exc
        self.length, self._decodable = libsndfile_length(data, self.length, container, media_type)
        self._bits = w64_floats_as_integers(data, container, subtype, media_type)  # floats libsndfile says are PCM
        self.width = _INTEGER_SUBTYPES.get(subtype, 8 if subtype == "DOUBLE" else 4)  # 64-bit floats kept whole
        self._float = subtype not in _INTEGER_SUBTYPES or self._bits

    def read(self, a: int, b: int) -> _Cut:
        import numpy as np
        import soundfile

        if a >= b:  # nothing to decode: no seek (to the end of an MP3 libsndfile reckons shorter, it fails)
            return _Cut(b"", self.width, self._float)
        if b > self._decodable:  # frames to decode that libsndfile does not
            raise UnsupportedError(
                f"cannot decode sample frames {self._decodable:,} to {b:,} ({self._decodable / self.rate:.3f} s on)"
                f" of this recording of {self.length:,}: an MP3 without a Xing header, which says its length,"
                " libsndfile decodes no further than the length it reckons from the file's size and first frame; a"
                f" passage before {self._decodable / self.rate:.3f} s can be cited"
            )
        samples = bytearray()  # a block at a time: the samples once, not the whole selection decoded and copied
        # the octets of floats libsndfile takes for integers are read as those integers, not scaled
        integers = not self._float or self._bits
        dtype = "int16" if self.width == 2 and integers else "int32" if integers else f"float{self.width * 8}"
        doing = f"seek to sample frame {a:,} ({a / self.rate:.3f} s)"
        try:
            with soundfile.SoundFile(_Seekable(self._data)) as recording:
                recording.seek(a)
                at = a
                while at < b:
                    want = min(b - at, _BLOCK_FRAMES)
                    doing = f"decode sample frames {at:,} to {at + want:,} ({at / self.rate:.3f} s on)"
                    block = recording.read(want, dtype=dtype, always_2d=True)
                    if not len(block):
                        break  # a truncated file: the caller sees the frames it holds
                    at += len(block)
                    if self.width == 3:  # libsndfile gives 24-bit samples in the top three octets of an int32
                        samples += block.astype("<i4").view(np.uint8).reshape(-1, 4)[:, 1:].tobytes()
                    else:
                        samples += block.astype(f"<{'i' if integers else 'f'}{self.width}").tobytes()
        except (RuntimeError, ValueError) as exc:
            # where, and what the header promised (found by an attack, 2026-11-27: a FLAC one octet short of its end
            # was "cannot decode this recording: … lost sync", for any fragment reaching its last block)
            raise UnsupportedError(
                f"cannot {doing} of this recording, of the {self.length:,} its header promises: it may be cut short"
                f" or damaged there (libsndfile: {exc}); a passage before it can be cited"
            ) from exc
        return _Cut(samples, self.width, self._float)


def _wav(cut: _Cut, channels: int, rate: int) -> bytes:
    """A canonical WAV file: RIFF, ``fmt `` (PCM or IEEE float), ``fact`` for floats, ``data``."""
    block = channels * cut.width
    if block > 0xFFFF or rate * block > 0xFFFFFFFF:
        raise UnsupportedError(
            f"{plural(channels, 'channel')} of {cut.width}-octet samples at {rate} Hz do not fit a WAV header"
        )
    fmt = struct.pack(
        "<HHIIHH", _IEEE_FLOAT if cut.is_float else _PCM, channels, rate, rate * block, block, cut.width * 8
    )
    head = [b"WAVE", b"fmt " + struct.pack("<I", len(fmt)) + fmt]
    if cut.is_float:
        head.append(b"fact" + struct.pack("<II", 4, len(cut.samples) // block))
    head.append(b"data" + struct.pack("<I", len(cut.samples)))
    pad = b"\0" * (len(cut.samples) % 2)
    size = sum(map(len, head)) + len(cut.samples) + len(pad)
    return b"".join([b"RIFF" + struct.pack("<I", size), *head, cut.samples, pad])  # the samples copied once
