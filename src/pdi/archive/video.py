"""A video deposit's check: ``ffprobe`` (Debian's ffmpeg) reads it as its declared container, and what it reads is kept.

WebM (``video/webm``), MP4 (``video/mp4``) and Ogg (``video/ogg``) deposits
are streamed to a temporary file beside the blob as they are staged (an MP4's
index may sit at its end), and ``ffprobe`` reads that file with the demuxer
of the declared container forced (``-f matroska``, ``mov`` or ``ogg``: a
stranger's file is never read as a playlist that names other files or
URLs). What it finds (duration, frame size, codecs:
:class:`pdi.fragments.video.VideoInfo`) is kept as the video's fragment
index, which ``sec``/``msec`` fragments and ``pdi get --info`` read.

A file ffprobe cannot read as that container, or whose video stream has
no frame size, or that has no duration, is refused (an
:class:`~pdi.errors.IntegrityError` naming what is wrong), and the deposit
leaves nothing; ``--force`` deposits it as declared, unread (its time
fragments are then unsupported). ffprobe runs as a subprocess with a time
limit (:data:`PROBE_SECONDS`; past it, it is killed and the deposit is a
:class:`~pdi.errors.LimitError`), its output goes to temporary files and at
most :data:`PROBE_OUTPUT` octets of it are read. Without ffprobe, a video
deposit is :class:`~pdi.errors.UnsupportedError` (install Debian's ffmpeg,
or ``--force``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from typing import IO

from pdi.archive.blobs import BlobInfo
from pdi.errors import IntegrityError, LimitError, ParseError, UnsupportedError
from pdi.fragments.video import CONTAINERS, VideoInfo, info_from_ffprobe

__all__ = ["PROBE_OUTPUT", "PROBE_SECONDS", "VideoCheck", "probe"]

#: The longest ffprobe may take to read a video at deposit (seconds).
PROBE_SECONDS = 30.0
#: The most of ffprobe's output read (octets): its JSON for a few streams is a few KiB.
PROBE_OUTPUT = 1 << 20


def probe(path: str, media_type: str, *, seconds: float = PROBE_SECONDS) -> VideoInfo:
    """What ffprobe reads of the file at ``path`` as the container ``media_type`` names.

    Raises :class:`ParseError` (the reason) when ffprobe cannot read it so,
    :class:`LimitError` past ``seconds`` or :data:`PROBE_OUTPUT`, and
    :class:`UnsupportedError` when there is no ffprobe.
    """
    program = shutil.which("ffprobe")
    if program is None:
        raise UnsupportedError("videos are read with ffprobe, which is not installed (Debian's ffmpeg)")
    demuxer, _ = CONTAINERS[media_type]
    command = [
        program, "-v", "error", "-hide_banner", "-f", demuxer,
        "-show_entries", "format=format_name,duration:stream=codec_type,codec_name,width,height"
        ":stream_disposition=attached_pic",
        "-of", "json", "file:" + path,
    ]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                  timeout=seconds, check=False)
        except subprocess.TimeoutExpired as exc:  # run() kills it
            raise LimitError(f"ffprobe took longer than {seconds:g} s to read the video") from exc
        if out.tell() > PROBE_OUTPUT:
            raise LimitError(f"ffprobe said more than {PROBE_OUTPUT} octets of this video")
        if done.returncode != 0:
            err.seek(max(0, err.tell() - 2000))
            said = err.read().decode("utf-8", "replace").strip().splitlines()
            reason = said[-1] if said else f"exit status {done.returncode}"
            raise ParseError(f"ffprobe cannot read it as {demuxer}: {reason.removeprefix('file:' + path + ': ')}",
                             rule="video")
        out.seek(0)
        return info_from_ffprobe(out.read(), media_type)


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
            if not isinstance(exc, ParseError):
                raise
            where = f"{self.source}: " if self.source else ""
            raise IntegrityError(
                f"{where}the content is not a {self.media_type} video pdi can read: {exc.reason};"
                " --force deposits it as declared (unread: no time fragments)"
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
