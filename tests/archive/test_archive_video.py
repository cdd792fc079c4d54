"""Video deposits (issue 25): WebM, MP4 and Ogg read by ffprobe at deposit, and refused when it cannot read them.

The videos are made here by ffmpeg (``testsrc`` at 64×48, 10 frames a
second, 3 s, with a 440 Hz tone), so what a deposit reports is checked
against the values they were made with and against ffprobe's own report of
the file, asked here in its default form (not the command pdi runs).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from archive_helpers import snapshot

from pdi.archive import Archive, Content
from pdi.errors import IntegrityError
from pdi.fragments.video import VideoInfo

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
                                reason="needs Debian's ffmpeg (scripts/bootstrap installs it)")

S = "oma.eop.gov.us"

#: token, file suffix, video and audio encoders, the codec names ffprobe gives them
KINDS = {
    "webm": ("webm", "libvpx-vp9", "libopus", "vp9", "opus"),
    "video+mp4": ("mp4", "libx264", "aac", "h264", "aac"),
    "video+ogg": ("ogv", "libtheora", "libvorbis", "theora", "vorbis"),
}


def make_video(path: Path, video: str, audio: str | None, *, seconds: int = 3, size: str = "64x48",
               rate: int = 10, extra: tuple[str, ...] = ()) -> bytes:
    """A test video made by ffmpeg: ``testsrc`` (and a sine tone) of ``seconds``."""
    command = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc=size={size}:rate={rate}:duration={seconds}"]
    if audio is not None:
        command += ["-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}", "-c:a", audio, "-shortest"]
    command += ["-c:v", video, *extra, str(path)]
    subprocess.run(command, check=True, timeout=120)
    return path.read_bytes()


def ffprobe_report(path: Path) -> dict[str, object]:
    done = subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
                          check=True, capture_output=True, timeout=60)
    report: dict[str, object] = json.loads(done.stdout)
    return report


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, dict[str, object]]]:
    where = tmp_path_factory.mktemp("videos")
    out = {}
    for token, (suffix, video, audio, _, _) in KINDS.items():
        path = where / f"clip.{suffix}"
        out[token] = (make_video(path, video, audio), ffprobe_report(path))
    return out


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    opened = Archive.init(str(tmp_path / "archive"))
    opened.add_series(S)
    try:
        yield opened
    finally:
        opened.close()


def info_of(archive: Archive, name: object) -> VideoInfo:
    resolved = archive.get(str(name))
    index = archive.fragment_index(resolved.record)
    assert index is not None
    return VideoInfo.from_bytes(index)


@pytest.mark.parametrize("token", list(KINDS))
def test_a_video_deposit_keeps_what_ffprobe_reads(archive: Archive, videos: dict[str, tuple[bytes, dict[str, object]]],
                                                  token: str) -> None:
    data, report = videos[token]
    _, _, _, video_codec, audio_codec = KINDS[token]
    name = archive.add(S, data, format=token)
    assert archive.get(str(name)).data == data  # kept exactly
    info = info_of(archive, name)
    assert (info.width, info.height) == (64, 48)
    assert (info.video_codec, info.audio_codecs) == (video_codec, (audio_codec,))
    fmt = report["format"]
    assert isinstance(fmt, dict)
    assert info.duration_ms == math.ceil(Decimal(fmt["duration"]) * 1000)
    assert info.container == fmt["format_name"]
    assert abs(info.duration - 3) < 0.1  # made 3 s long


@pytest.mark.parametrize(
    ("token", "made_as", "reason"),
    [
        ("video+mp4", "webm", "cannot read it as mov"),
        ("webm", "video+mp4", "cannot read it as matroska"),
        # Ogg has a signature: libmagic tells it first
        ("video+ogg", "webm", "is video/webm \\(WebM\\), but the format video\\+ogg"),
    ],
)
def test_a_video_that_is_not_its_declared_container_is_refused_and_leaves_nothing(
    archive: Archive, videos: dict[str, tuple[bytes, dict[str, object]]], token: str, made_as: str, reason: str
) -> None:
    data, _ = videos[made_as]
    before = snapshot(archive)
    with pytest.raises(IntegrityError, match=f"clip: the content (is not a video/.* video pdi can read: ffprobe )?{reason}"):
        archive.deposit(S, [Content(data, token, source="clip")])
    assert snapshot(archive) == before
    # --force keeps it as declared, unread
    forced = archive.add(S, data, format=token, force=True)
    assert archive.get(str(forced)).data == data
    assert archive.fragment_index(archive.get(str(forced)).record) is None


def test_text_declared_as_a_video_is_refused(archive: Archive) -> None:
    before = snapshot(archive)
    with pytest.raises(IntegrityError, match="not a video/mp4 video pdi can read: ffprobe cannot read it as mov"):
        archive.add(S, b"these are words, not frames\n" * 10, format="video+mp4")
    assert snapshot(archive) == before


def test_a_truncated_mp4_is_refused(archive: Archive, videos: dict[str, tuple[bytes, dict[str, object]]]) -> None:
    data, _ = videos["video+mp4"]
    with pytest.raises(IntegrityError, match="not a video/mp4 video pdi can read"):
        archive.add(S, data[: len(data) // 2], format="video+mp4")


def test_ffprobe_is_given_a_time_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import pdi.archive.video as video
    from pdi.errors import LimitError

    slow = tmp_path / "ffprobe"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    with pytest.raises(LimitError, match=r"longer than 0\.5 s"):
        video.probe(str(slow), "video/mp4", seconds=0.5)


def test_an_ogg_of_sound_alone_declared_video_ogg_has_no_frame_size(archive: Archive, tmp_path: Path) -> None:
    data = subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "libvorbis",
                           "-f", "ogg", "-"], check=True, capture_output=True, timeout=60).stdout
    info = info_of(archive, archive.add(S, data, format="video+ogg"))
    assert (info.width, info.height, info.video_codec, info.audio_codecs) == (0, 0, "", ("vorbis",))
