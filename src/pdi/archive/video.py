"""A video deposit's check: ``ffprobe`` (Debian's ffmpeg) reads it as its declared container, and what it reads is kept.

WebM (``video/webm``), MP4 (``video/mp4``) and Ogg (``video/ogg``) deposits
are streamed to a temporary file beside the blob as they are staged (an MP4's
index may sit at its end), and ``ffprobe`` reads that file with the demuxer
of the declared container forced (``-f matroska``, ``mov`` or ``ogg``: a
stranger's file is never read as a playlist that names other files or
URLs) and no protocol but ``file`` allowed. What it finds (duration, frame size, codecs:
:class:`pdi.fragments.video.VideoInfo`) is kept as the video's fragment
index, which ``sec``/``msec`` fragments and ``pdi get --info`` read.

A container that states no duration (a browser's MediaRecorder writes WebM
so) is timed by the end of its last packet, read by a second ffprobe run
whose lines are consumed as they come (bounded memory, the same time
limit). A file ffprobe cannot read as that container, or whose video
stream has no frame size, or with no timed packet, is refused (an
:class:`~pdi.errors.FormatCheckError` naming what is wrong), and the deposit
leaves nothing; ``--force`` deposits it as declared, unread (its time
fragments are then unsupported). ffprobe runs as a subprocess with a time
limit (:data:`PROBE_SECONDS`; past it, it is killed and the deposit is a
:class:`~pdi.errors.LimitError`), its output goes to temporary files and at
most :data:`PROBE_OUTPUT` octets of it are read. Without ffprobe, a video
deposit is :class:`~pdi.errors.UnsupportedError` (install Debian's ffmpeg,
or ``--force``).

:func:`frame_region` answers ``rect`` and ``crop`` on a video, the region of
one frame: ffmpeg decodes that frame, under the same bounds.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from typing import IO

from pdi.archive.blobs import BlobInfo
from pdi.errors import FormatCheckError, LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.fragments.results import FragmentResult
from pdi.fragments.video import CONTAINERS, VideoInfo, info_from_ffprobe, states_duration

__all__ = ["FRAME_SECONDS", "PROBE_OUTPUT", "PROBE_SECONDS", "VideoCheck", "frame_region", "probe"]

#: The longest ffprobe may take to read a video at deposit (seconds).
PROBE_SECONDS = 30.0
#: The address space ffprobe and ffmpeg may take (octets), set by ``prlimit`` before they start: what they need
#: with their libraries and one thread's decoder, and for ffmpeg 16 octets a pixel of the frame size ffprobe read
#: at deposit on top (found by an attack, 2026-11-27: a 2,786-octet MP4 whose sample tables claim 80 million
#: samples took each child 1.9 GB, and a WebM whose frames grow from 64×48 to 16000×16000 took ffmpeg 2 GB for a
#: crop the first frame's size allowed).
CHILD_MEMORY = 1 << 30
FRAME_OCTETS_A_PIXEL = 16
#: The most of ffprobe's output read (octets): its JSON for a few streams is a few KiB.
PROBE_OUTPUT = 1 << 20


def limited(command: list[str], memory: int) -> list[str]:
    """``command`` run under ``prlimit`` (util-linux, in every Debian) with at most ``memory`` octets of address
    space and no core file: the limit is the child's from its first instruction, and the resolver's threads make
    ``preexec_fn`` unsafe. Without ``prlimit`` the command as it is."""
    wrapper = shutil.which("prlimit")
    if wrapper is None:
        return command
    return [wrapper, f"--as={memory}", "--core=0", "--", *command]


def out_of_memory(said: list[str]) -> bool:
    """Whether a child under :func:`limited` failed for want of memory, as its last lines say (ffmpeg's and
    ffprobe's own words for ``ENOMEM``, the loader's for a library it could not map)."""
    text = " ".join(said[-3:]).lower()
    return any(word in text for word in ("cannot allocate memory", "failed to map", "out of memory"))


def probe(path: str, media_type: str, *, seconds: float = PROBE_SECONDS, pass_fds: Sequence[int] = ()) -> VideoInfo:
    """What ffprobe reads of the file at ``path`` as the container ``media_type`` names.

    ``pass_fds``: descriptors ffprobe inherits, for a ``path`` of ``/proc/self/fd/N`` (a stored blob's file as a
    reader opened and checked it: :meth:`pdi.archive.record_facts.RecordFacts.fragment_index`).

    Raises :class:`ParseError` (the reason) when ffprobe cannot read it so,
    :class:`LimitError` past ``seconds`` or :data:`PROBE_OUTPUT`, and
    :class:`UnsupportedError` when there is no ffprobe.
    """
    program = shutil.which("ffprobe")
    if program is None:
        raise UnsupportedError("videos are read with ffprobe, which is not installed (Debian's ffmpeg)")
    demuxer, _ = CONTAINERS[media_type]
    command = limited([
        program, "-v", "error", "-hide_banner", "-protocol_whitelist", "file", "-f", demuxer,
        "-show_entries", "format=format_name,duration,start_time"
        ":stream=codec_type,codec_name,width,height,start_time,duration"
        ":stream_disposition=attached_pic",
        "-of", "json", "file:" + path,
    ], CHILD_MEMORY)
    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                  timeout=seconds, check=False, pass_fds=tuple(pass_fds))
        except subprocess.TimeoutExpired as exc:  # run() kills it
            raise LimitError(f"ffprobe took longer than {seconds:g} s to read the video") from exc
        if out.tell() > PROBE_OUTPUT:
            raise LimitError(f"ffprobe said more than {PROBE_OUTPUT} octets of this video")
        if done.returncode != 0:
            err.seek(max(0, err.tell() - 2000))
            said = err.read().decode("utf-8", "replace").strip().splitlines()
            reason = _unplaced(said[-1], path) if said else f"exit status {done.returncode}"
            if out_of_memory(said):
                raise LimitError(f"ffprobe needs more than {CHILD_MEMORY >> 20} MiB to read this video: {reason}")
            raise ParseError(f"ffprobe cannot read it as {demuxer}: {reason}", rule="video")
        out.seek(0)
        report = out.read()
    if states_duration(report):
        info = info_from_ffprobe(report, media_type)
        left = seconds - (time.monotonic() - started)
        end = _cut_short_at(program, demuxer, path, report, info.duration_ms, left, pass_fds)
        if isinstance(end, Decimal):  # packets past the end it states: it lasts until they end, as a player plays it
            return info_from_ffprobe(report, media_type, duration=end)
        return info if end is None else dataclasses.replace(info, end_ms=end)
    # no duration in the container (a browser's recording): the end of its last packet, found by reading them all
    left = seconds - (time.monotonic() - started)
    return info_from_ffprobe(report, media_type, duration=_last_packet_end(program, demuxer, path, left, pass_fds))


def _unplaced(line: str, path: str) -> str:
    """A line ffmpeg or ffprobe wrote about the file at ``path`` without the path: it is this process's own temporary
    copy (or the archive's blob file), which is nothing to the reader the message is for, and not theirs to know
    where the server keeps its files. ``file:PATH: reason`` is ``reason``; a path elsewhere is ``the video``."""
    return line.removeprefix(f"file:{path}: ").replace(f"file:{path}", "the video").replace(path, "the video")


#: How far before its stated end :func:`_cut_short_at` starts reading a video's packets (seconds).
TAIL_SECONDS = 10


def _cut_short_at(program: str, demuxer: str, path: str, report: bytes, duration_ms: int, seconds: float,
                  pass_fds: Sequence[int] = ()) -> int | Decimal | None:
    """Where a video whose container states ``duration_ms`` really ends, if it is cut short (milliseconds, an
    ``int``) or runs past it (seconds, a :class:`~decimal.Decimal`); else ``None``.

    ffprobe reads the packets of the last :data:`TAIL_SECONDS` of the stated duration (``-read_intervals``: a
    seek, then what follows); the file is cut short when it says the file is damaged there (``File ended
    prematurely``, ``partial file``) and its packets end before the stated duration. A whole file's packets reach
    it (a last frame shown for long is no damage: ffprobe says nothing of it). Then the end of its last packet,
    from the container's start, in milliseconds rounded down. A packet that begins past the stated duration
    is one the container leaves out (a WebM whose ``Duration`` says 1 s of 5: a browser's player plays, and its
    timeline grows to, all 5; found by a new user's trial, 2026-12-02, where no passage past 1 s could be cited):
    then the end of its last packet from the container's start, in seconds, as a WebM that states no duration is
    timed. Best effort: past ``seconds``, or when ffprobe cannot seek and read, ``None`` (the file is read as its
    container states, as before).
    """
    try:
        start = Decimal(str(json.loads(report)["format"].get("start_time", "0")))
    except (ValueError, KeyError, TypeError, ArithmeticError):
        start = Decimal(0)
    if not start.is_finite():
        start = Decimal(0)
    begin = max(Decimal(duration_ms) / 1000 - TAIL_SECONDS, Decimal(0)) + start
    command = limited([program, "-v", "error", "-hide_banner", "-protocol_whitelist", "file", "-f", demuxer,
                       "-read_intervals", f"{begin:.6f}%", "-show_entries", "packet=pts_time,duration_time",
                       "-of", "csv=p=0", "file:" + path], CHILD_MEMORY)
    with tempfile.TemporaryFile() as err:
        read = _read_packets(command, seconds, pass_fds, err)
        damaged = err.tell() > 0
    if read is not None and read[3] is not None and read[1] is not None and (read[3] - start) * 1000 > duration_ms:
        return read[1] - start
    if read is None or not damaged:
        return None
    last = read[1]
    reached = int(((last - start) * 1000).to_integral_value(rounding=ROUND_FLOOR)) if last is not None else 0
    return max(reached, 0) if reached < duration_ms else None


def _read_packets(
    command: list[str], seconds: float, pass_fds: Sequence[int], stderr: IO[bytes] | int = subprocess.DEVNULL
) -> tuple[Decimal | None, Decimal | None, int, Decimal | None] | None:
    """ffprobe's packet lines (``pts_time,duration_time``) of ``command``, read as it writes them: the earliest
    ``pts``, the latest ``pts + duration`` (``None`` when no packet has one), its exit status and the latest
    ``pts``; ``None`` when it ran past ``seconds`` (killed). Only three numbers are kept, so memory stays bounded
    however many packets there are."""
    first: Decimal | None = None
    last: Decimal | None = None
    latest: Decimal | None = None
    killed = threading.Event()
    with subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
                          pass_fds=tuple(pass_fds)) as process:

        def stop() -> None:
            killed.set()
            process.kill()

        timer = threading.Timer(max(seconds, 0.0), stop)
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                packet = _packet(line)
                if packet is None:
                    continue  # N/A
                at, end = packet[0], packet[0] + packet[1]
                first = at if first is None or at < first else first
                last = end if last is None or end > last else last
                latest = at if latest is None or at > latest else latest
            process.wait()  # it has closed its output: its exit status says whether it read every packet
        except BaseException:
            process.kill()
            raise
        finally:
            timer.cancel()
    return None if killed.is_set() else (first, last, process.returncode, latest)


def _last_packet_end(program: str, demuxer: str, path: str, seconds: float,
                     pass_fds: Sequence[int] = ()) -> Decimal | None:
    """The latest ``pts + duration`` of any packet less the earliest ``pts`` (seconds); ``None`` if no packet has one.

    ffprobe's lines are read as it writes them and only two numbers kept, so
    memory stays bounded however many packets there are; past ``seconds`` it is
    killed (a :class:`LimitError`).
    """
    command = limited([program, "-v", "error", "-hide_banner", "-protocol_whitelist", "file", "-f", demuxer,
                       "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", "file:" + path],
                      CHILD_MEMORY)
    read = _read_packets(command, seconds, pass_fds)
    if read is None:
        raise LimitError(f"ffprobe took longer than {seconds:g} s to read the video's packets")
    first, last, status, _ = read
    if status != 0:  # the packets read so far would make the duration too short (found in review)
        raise ParseError(f"ffprobe could not read every packet of the video (exit status {status})", rule="video")
    if first is None or last is None:
        return None
    return last - first


def _packet(line: bytes) -> tuple[Decimal, Decimal] | None:
    """A packet's ``pts_time`` and ``duration_time`` (0 when it has none) from ffprobe's CSV line, or ``None`` when it
    has no time. The line may go on past the two (``2.994000,0.020000,``: a packet with side data), which is not
    part of the duration (found in review, 2026-11-30: each such packet's duration was read as none)."""
    pts, _, rest = line[:200].decode("ascii", "replace").strip().partition(",")
    if not _number(pts):
        return None
    length = rest.split(",", 1)[0]
    return Decimal(pts), Decimal(length) if _number(length) else Decimal(0)


def _number(text: str) -> bool:
    """Whether ``text`` is a finite decimal number (ffprobe writes ``N/A`` for none)."""
    try:
        return Decimal(text).is_finite()
    except InvalidOperation:
        return False


class VideoCheck:
    """The check a WebM, MP4 or Ogg video deposit gets (a :class:`BlobObserver`): see the module docstring.

    Memory: one piece; the video is spooled to a temporary file, removed at
    :meth:`finish` or :meth:`abandon`.
    """

    def __init__(self, media_type: str, *, force: bool = False, source: str | None = None) -> None:
        self.media_type = media_type
        self.force = force
        self.source = source
        #: the video's index (:meth:`VideoInfo.to_bytes`), once read
        self.index: bytes | None = None
        # closed and removed by finish or abandon, not by a with block: it lives across the deposit's pass
        self._file: IO[bytes] | None = tempfile.NamedTemporaryFile(prefix="pdi-video-", delete=False)  # noqa: SIM115

    def update(self, piece: bytes) -> None:
        if self._file is not None:
            self._file.write(piece)

    def finish(self, info: BlobInfo) -> None:
        if self._file is None:
            return
        self._file.close()
        try:
            self.index = probe(self._file.name, self.media_type).to_bytes()
        except (ParseError, LimitError, UnsupportedError) as exc:
            if self.force:
                return  # deposited as declared, unread
            where = f"{self.source}: " if self.source else ""
            if isinstance(exc, LimitError) and where:  # which file of a deposit, as a PDF's limit says it
                raise exc.within(where) from exc
            if not isinstance(exc, ParseError):
                raise
            raise FormatCheckError(
                f"{where}the content is not a {self.media_type} video pdi can read: {exc.reason}",
                note=" (unread: no time fragments)",
            ) from exc
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Remove the spooled copy (after :meth:`finish`, or when the deposit failed)."""
        if self._file is not None:
            self._file.close()
            try:
                os.unlink(self._file.name)
            except FileNotFoundError:
                pass
            self._file = None


#: The longest ffmpeg may take to decode one frame for a region (seconds).
FRAME_SECONDS = 30.0


def frame_region(path: str, media_type: str, scheme: str, positions: Sequence[object], index: bytes | None,
                 *, seconds: float = FRAME_SECONDS, pass_fds: Sequence[int] = ()) -> FragmentResult:
    """``rect`` or ``crop`` on a video: the region of the frame at a time, cut out as PNG (PDI-GRAMMAR.md §3).

    ``#rect=(x1,y1),(x2,y2),t`` selects the pixels ``x1 ≤ x < x2``,
    ``y1 ≤ y < y2`` of the first frame whose presentation time is at or
    after ``t`` milliseconds (default 0; the rule of sound's samples); ``rect``
    and ``crop`` both answer the cut-out pixels as PNG (:mod:`pdi.fragments.image`'s
    crop: corners past the edge clamped). The result's
    :class:`~pdi.fragments.Region` has the time in ``frame`` and the
    duration in milliseconds in ``frames``. ffmpeg decodes the frame (a
    subprocess, the demuxer of ``media_type`` forced, ``seconds`` at most,
    its output bounded by the frame size ffprobe read at deposit); a time at
    or past the last frame is :class:`~pdi.errors.NotFoundError`. ``pass_fds``: descriptors ffmpeg inherits, for a
    ``path`` of ``/proc/self/fd/N``, as :func:`probe`'s.
    """
    from pdi.fragments.image import MAX_CROP_PIXELS, evaluate_image, rectangle
    from pdi.fragments.results import Region

    x1, y1, x2, y2, at = rectangle(scheme, positions)
    if index is None:
        raise UnsupportedError(f"{scheme} on this {media_type}: ffprobe cannot read it")
    info = VideoInfo.from_bytes(index)
    if not info.width:
        raise UnsupportedError(f"{scheme} on this {media_type}: it has no picture, only sound")
    if info.width * info.height > MAX_CROP_PIXELS:
        raise LimitError(f"{scheme} on a {info.width}×{info.height} video: a frame of more than"
                         f" {MAX_CROP_PIXELS:,} pixels is not decoded")
    if at >= info.duration_ms:
        raise NotFoundError(f"no frame at {at} ms: the video lasts {info.duration_ms} ms")
    if info.end_ms is not None and at >= info.end_ms:
        raise info.cut_short(at, f"{scheme} at {at} ms")
    program = shutil.which("ffmpeg")
    if program is None:
        raise UnsupportedError("frames of a video are read with ffmpeg, which is not installed (Debian's ffmpeg)")
    demuxer, _ = CONTAINERS[media_type]
    memory = CHILD_MEMORY + info.width * info.height * FRAME_OCTETS_A_PIXEL
    # -seek_timestamp: t is a presentation time, as ffprobe's duration counts it; plain -ss counts from the file's
    # first timestamp (found end to end: an MP4 whose pictures start at 10 s gave its frame at 11.5 s for t=1500)
    # "V": the first video stream that is no attached picture (an MP4's cover may come first), the one ffprobe's
    # reading at deposit describes (found by an attack: "v" answered a region of the cover)
    command = limited([program, "-v", "error", "-hide_banner", "-nostdin", "-protocol_whitelist", "file",
                       "-f", demuxer, "-threads", "1", "-seek_timestamp", "1", "-ss", f"{at / 1000:.3f}",
                       "-i", "file:" + path, "-map", "0:V:0", "-frames:v", "1", "-f", "image2pipe", "-c:v", "png",
                       "-pix_fmt", "rgb24", "-"], memory)
    most = info.width * info.height * 4 + (1 << 20)  # a PNG of rgb24 is never much larger than its raw pixels
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=seconds,
                                  check=False, pass_fds=tuple(pass_fds))
        except subprocess.TimeoutExpired as exc:
            raise LimitError(f"ffmpeg took longer than {seconds:g} s to decode the frame at {at} ms") from exc
        if out.tell() > most:
            raise LimitError(f"ffmpeg gave more than {most} octets for one {info.width}×{info.height} frame")
        if done.returncode != 0:
            err.seek(max(0, err.tell() - 2000))
            said = err.read().decode("utf-8", "replace").strip().splitlines()
            if out_of_memory(said):
                raise LimitError(f"ffmpeg needs more than {memory >> 20} MiB to decode the frame at {at} ms of this"
                                 f" {info.width}×{info.height} video (its frames may be larger than its first)")
            raise UnsupportedError(f"ffmpeg cannot decode the frame at {at} ms: "
                                   f"{_unplaced(said[-1], path) if said else f'exit status {done.returncode}'}")
        out.seek(0)
        png = out.read()
    if not png:  # its last frame is before `at` (one shown for long; or a file cut short, read before end_ms)
        raise NotFoundError(f"no frame at or after {at} ms: the video's last frame begins before it, though its"
                            f" container states a duration of {info.duration_ms} ms")
    cut = evaluate_image("crop", ((x1, y1), (x2, y2)), png, "image/png", None)
    assert cut.region is not None
    r = cut.region
    return dataclasses.replace(cut, scheme=scheme,
                               region=Region(r.x1, r.y1, r.x2, r.y2, at, r.width, r.height, info.duration_ms))
