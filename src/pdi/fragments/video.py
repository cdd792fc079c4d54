"""Video fragments: ``sec`` and ``msec`` time ranges on ``video/*`` (PDI-GRAMMAR.md §3), and what a video is.

A video is read once, at deposit, by ``ffprobe`` (:mod:`pdi.archive.video`
runs it): its container, duration, frame size and codecs are kept as the
video's fragment index (:class:`VideoInfo`, sealed ``PDIV``), and every
fragment is answered from that index, with no decoder in this process.

* **Which times.** ``#sec=a,b`` (the scheme may be omitted: ``sec`` is
  the default on video) or ``#msec=a,b`` names the half-open interval from
  time ``a`` up to and excluding time ``b``, counted from the start of the
  presentation (the container's first timestamp is 0), in milliseconds
  here: ``sec=1,2`` is milliseconds ``[1000, 2000)``.
* **Past the end.** As for sound (:mod:`pdi.fragments.audio`): a time past
  the end of the video (its duration in milliseconds, rounded up) is the
  end and the result says ``clamped``; a fragment that starts at or past the
  end and reaches past it says ``past_end`` too. A file cut short (its
  packets end before the duration its container states, and ffprobe found
  it damaged there: :attr:`VideoInfo.end_ms`) cannot be cited past where they
  end: :class:`UnsupportedError`, as a recording cut short is.
* **What comes back.** The whole video, exactly the deposited octets, with
  the interval stated beside it (``interval``: milliseconds at rate 1000):
  the resolver's ``N2R`` sends it with a ``Link`` to the same resource with
  the Media Fragments ``#t=`` of the interval, which a browser's player
  seeks to and stops at. Why not a cut clip, measured by
  ``bench/bench_video_clip.py`` on a 60 s 640×360 H.264/AAC MP4 with a
  keyframe every 10 s, clip 12.3 s to 17.8 s (docs/benchmarks.md, "Video clips"): the
  whole file is answered in 10 ms (read, every chunk checked) and is
  exact; a stream copy (``ffmpeg -c copy``, 68–115 ms) can start only at the
  keyframe before (10 s: 197 video packets for the 138 of 5.5 s, hidden by
  an edit list some players ignore); a re-encode is exact to a frame but
  costs 630 ms of CPU per request (more for a longer clip) and gives
  octets that depend on the encoder's version. The whole file's octets are
  the ones whose SHA-256 is the fixity of record.

Pure: no I/O.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Final

from pdi.errors import ParseError, UnsupportedError
from pdi.fragments.results import Buffer, FragmentResult, Interval, check_order
from pdi.fragments.sealed import Reader, pack_text, seal, sealed_version, unseal

__all__ = ["CONTAINERS", "MAGIC", "VideoInfo", "evaluate_video", "info_from_ffprobe", "made_by_an_earlier_reading",
           "states_duration"]

#: The first octets of a video's index.
MAGIC: Final = b"PDIV"
#: The reading a video's index is made by. Layout 1 (a whole file's, until this reading) holds the duration, frame size
#: and codecs; layout 2 adds :attr:`VideoInfo.end_ms` (a file cut short); layout 3, this reading's (2026-12-02: an MP4
#: lasts until its last track ends, a video until its last packet ends where that is past the duration its container
#: states, a negative duration is read from the packets), holds layout 1's fields, an octet saying whether
#: :attr:`VideoInfo.end_ms` follows, and it if so. An index of layout 1 or 2 was made by an earlier reading, whose
#: duration may not be this one's (:func:`made_by_an_earlier_reading`).
_VERSION: Final = 3
_CUT: Final = struct.Struct("<B")
_HEAD: Final = struct.Struct("<QII")
_END: Final = struct.Struct("<Q")

#: The video media types pdi checks and evaluates, with the ffmpeg demuxer each is read with (``-f``)
#: and the name ffprobe gives that container in ``format_name``.
CONTAINERS: Final = {
    "video/webm": ("matroska", "webm"),
    "video/mp4": ("mov", "mp4"),
    "video/ogg": ("ogg", "ogg"),
}


@dataclass(frozen=True)
class VideoInfo:
    """What ffprobe read of a video: duration (milliseconds, rounded up), frame size, codecs, container.

    ``video_codec`` is the first video stream's codec (``""``, and a frame
    size of 0×0, for a file with no video stream), ``audio_codecs`` those
    of its audio streams in stream order (``()`` for none); ``container`` is
    ffprobe's ``format_name`` (``"matroska,webm"``).
    """

    duration_ms: int
    width: int
    height: int
    video_codec: str
    audio_codecs: tuple[str, ...]
    container: str
    #: where the file's packets end (milliseconds from its start, rounded down) when that is before the duration its
    #: container states and ffprobe found the file damaged there (cut short): no time from it on can be cited;
    #: ``None`` for a whole file (and for one read before 2026-11-30)
    end_ms: int | None = None

    @property
    def duration(self) -> float:
        """The duration in seconds."""
        return self.duration_ms / 1000

    def to_json(self) -> dict[str, object]:
        return {
            "duration": self.duration,
            "duration_ms": self.duration_ms,
            "width": self.width,
            "height": self.height,
            "video_codec": self.video_codec,
            "audio_codecs": list(self.audio_codecs),
            "container": self.container,
            **({} if self.end_ms is None else {"cut_short_at_ms": self.end_ms}),
        }

    def to_bytes(self) -> bytes:
        """The sealed index (``PDIV``)."""
        payload = _HEAD.pack(self.duration_ms, self.width, self.height)
        payload += pack_text(self.video_codec) + pack_text(self.container)
        payload += struct.pack("<I", len(self.audio_codecs)) + b"".join(pack_text(c) for c in self.audio_codecs)
        if self.end_ms is None:
            return seal(MAGIC, _VERSION, payload + _CUT.pack(0))
        return seal(MAGIC, _VERSION, payload + _CUT.pack(1) + _END.pack(self.end_ms))

    @classmethod
    def from_bytes(cls, data: bytes) -> VideoInfo:
        reader = Reader(unseal(data, MAGIC, _VERSION, "video index", also=(1, 2)), "video index")
        duration_ms, width, height = reader.unpack(_HEAD)
        video_codec = reader.text() or ""
        container = reader.text() or ""
        (count,) = reader.unpack(struct.Struct("<I"))
        if count > 1024:
            raise reader.damaged(f"{count} audio streams")
        audio = tuple(reader.text() or "" for _ in range(count))
        end_ms: int | None = None
        version = sealed_version(data)
        cut = version == 2  # layout 2: always cut short; layout 1: never
        if version == _VERSION:
            (flag,) = reader.unpack(_CUT)
            if flag not in (0, 1):
                raise reader.damaged(f"{flag} where 0 (a whole file) or 1 (one cut short) stands")
            cut = flag == 1
        if cut:
            (end_ms,) = reader.unpack(_END)
            if end_ms >= duration_ms:
                raise reader.damaged(f"an end at {end_ms} ms, not before the duration of {duration_ms} ms")
        reader.end()
        return cls(duration_ms, width, height, video_codec, audio, container, end_ms)

    def cut_short(self, at_ms: int, what: str) -> UnsupportedError:
        """The refusal of ``what`` (a passage, a frame) reaching time ``at_ms``, at or past :attr:`end_ms`."""
        assert self.end_ms is not None
        return UnsupportedError(
            f"{what} reaches {at_ms / 1000:.3f} s, but this video's packets end at {self.end_ms / 1000:.3f} s of the"
            f" {self.duration_ms / 1000:.3f} s its container states: it is cut short or damaged there; a passage"
            f" before {self.end_ms / 1000:.3f} s can be cited")


#: The longest duration a video may have, in milliseconds: a century (found by an attack, 2026-11-27: a 5 KB WebM
#: whose second cluster was at 2**62 seconds made a duration no index could hold, and a traceback).
MAX_DURATION_MS = 100 * 366 * 86_400 * 1000



def made_by_an_earlier_reading(data: bytes) -> bool:
    """Whether the video index ``data`` was made by a reading before this one's (layout 1 or 2, :data:`_VERSION`):
    its duration may not be this pdi's, so the video is read anew instead (:mod:`pdi.archive.record_facts`), and
    ``pdi reindex --elements`` makes it anew."""
    return sealed_version(data) != _VERSION

def info_from_ffprobe(output: bytes, media_type: str, *, duration: Decimal | None = None) -> VideoInfo:
    """The :class:`VideoInfo` in ffprobe's JSON (``-show_format -show_streams -of json``) for a ``media_type`` video.

    An MP4's duration is where its last video or audio track ends (:func:`_stream_ends`), not its movie header's.
    ``duration`` (seconds) stands in for a container that states none (a
    browser's MediaRecorder writes WebM without one): the end of its last
    packet, which :mod:`pdi.archive.video` asks ffprobe for then. Raises
    :class:`ParseError` naming what is wrong: not the container the media
    type says, a video stream with no frame size, no duration.
    """
    _, name = CONTAINERS[media_type]
    try:
        probed = json.loads(output)
        fmt = probed["format"]
        streams = probed.get("streams", [])
        format_name = str(fmt["format_name"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ParseError(f"ffprobe gave no container for it ({exc})", rule="video") from exc
    if name not in format_name.split(","):
        raise ParseError(f"ffprobe reads it as {format_name}, not {name}", rule="video")
    videos = [s for s in streams if isinstance(s, dict) and s.get("codec_type") == "video"
              and s.get("disposition", {}).get("attached_pic") != 1]
    width = height = 0
    codec = ""
    if videos:  # an Ogg of sound alone declared video/ogg is still a timed Ogg: it has no frame size
        first = videos[0]
        codec = str(first.get("codec_name", "unknown"))
        w, h = first.get("width"), first.get("height")
        if not isinstance(w, int) or not isinstance(h, int) or w <= 0 or h <= 0:
            raise ParseError(f"ffprobe finds no frame size for its video stream ({codec})", rule="video")
        width, height = w, h
    try:
        seconds = Decimal(str(fmt.get("duration"))) if duration is None else duration
    except InvalidOperation:
        seconds = Decimal("NaN")
    sounds = [s for s in streams if isinstance(s, dict) and s.get("codec_type") == "audio"]
    if duration is None and name == "mp4":  # not its movie header's: where its tracks end, as a browser plays it
        seconds = max(_stream_ends([*videos, *sounds]), default=seconds)
    if not seconds.is_finite() or seconds < 0:
        raise ParseError(f"ffprobe finds no duration in this {name} file", rule="video")
    if seconds * 1000 > MAX_DURATION_MS:
        raise ParseError(f"ffprobe reads a duration of {seconds:.0f} s in this {name} file, more than a century:"
                         " no recording lasts so long", rule="video")
    duration_ms = int((seconds * 1000).to_integral_value(rounding=ROUND_CEILING))
    audio = tuple(str(s.get("codec_name", "unknown")) for s in sounds)
    return VideoInfo(duration_ms, width, height, codec, audio, format_name)


def _stream_ends(streams: Sequence[dict[str, object]]) -> list[Decimal]:
    """Where each of an MP4's ``streams`` ends (seconds: its start time, 0 if it states none, and its duration, as
    ffprobe reads them from its sample tables and edit list), of those that state a duration.

    ffprobe's duration of an MP4 (``format.duration``) is its movie header's (``mvhd``), which nothing checks
    against its tracks; a browser's player lasts as long as its longest audio or video track (Chromium's
    ``FFmpegDemuxer``): an MP4 whose ``mvhd`` says 2 s of tracks of 7 s plays 7 s, and one that says an hour of
    them plays 7 s too (found by a new user's trial, 2026-12-02: pdi read such files as 2 s, where no passage past
    2 s could be cited, and as an hour). A track's start counts, as the movie header counts it: pictures an edit
    list starts at 10 s end at 13 s. The other containers' durations are their demuxers' reading of their streams
    (an Ogg's from its pages' times, from its first; a WebM's streams state none).
    """
    found = []
    for stream in streams:
        try:
            seconds = Decimal(str(stream.get("duration")))
            start = Decimal(str(stream.get("start_time", 0)))
        except InvalidOperation:
            continue
        if seconds.is_finite() and seconds > 0:
            found.append(seconds + (start if start.is_finite() else 0))
    return found


def states_duration(output: bytes) -> bool:
    """Whether ffprobe's JSON gives the container's duration (``format.duration``), a number not below 0.

    ffprobe gives ``N/A`` for a WebM whose duration is 0, infinite or not a number, and such a file is timed by
    its packets; one whose duration is below 0 is as unreadable, and is timed so too (found by a new user's
    trial, 2026-12-02: a WebM stating -5 s of its 5 s was refused, "ffprobe finds no duration", where the same
    file stating 0 s or infinity was deposited).
    """
    try:
        fmt = json.loads(output).get("format", {})
        stated = Decimal(str(fmt.get("duration")))
    except (ValueError, AttributeError, ArithmeticError):
        return False
    return stated.is_finite() and stated >= 0


def _times(scheme: str, positions: Sequence[object]) -> tuple[int, int]:
    if len(positions) != 2 or not all(
        isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in positions
    ):
        unit = "seconds" if scheme == "sec" else "milliseconds"
        raise ParseError(
            f"{scheme}= is two times (start,end) in whole {unit}, not {tuple(positions)!r}", rule="time"
        )
    start, end = positions
    assert isinstance(start, int) and isinstance(end, int)
    check_order(f"{scheme} fragment", start, end, "time")
    return start, end


def evaluate_video(
    scheme: str, positions: Sequence[object], data: Buffer, media_type: str, charset: str | None,
    *, index: bytes | None = None,
) -> FragmentResult:  # a pdi.fragments.IndexedEvaluator
    """Evaluate ``sec`` or ``msec`` on a video whose :class:`VideoInfo` ``index`` was made at deposit.

    The result's ``data`` is the whole video (see the module docstring) and
    its ``interval`` the milliseconds selected, clamped to the duration.
    A video with no index (ffprobe cannot read it, or it is of a container
    pdi does not read) is :class:`UnsupportedError`.
    """
    if scheme not in ("sec", "msec"):
        raise UnsupportedError(f"no video fragment scheme {scheme!r}: sec or msec")
    start, end = _times(scheme, positions)
    if index is None:
        raise UnsupportedError(
            f"time fragments on this {media_type}: no ffprobe reading of it"
            f" (pdi reads {', '.join(CONTAINERS)} that ffprobe reads)"
        )
    info = VideoInfo.from_bytes(index)
    per = 1000 if scheme == "sec" else 1
    a_ms, b_ms = start * per, end * per
    length = info.duration_ms
    clamped = b_ms > length
    a, b = min(a_ms, length), min(b_ms, length)
    if info.end_ms is not None and b > info.end_ms and a < length:  # (wholly past the stated end: past_end, as ever)
        raise info.cut_short(b, f"{scheme}={start},{end}")
    return FragmentResult(
        data=data if isinstance(data, bytes) else bytes(data),
        media_type=media_type.split(";")[0].strip().lower(),
        clamped=clamped,
        ranges=(),
        scheme=scheme,
        interval=Interval(a, b, 1000, 0, length),
        past_end=clamped and a_ms >= length,
    )
