"""A video cut short (its file ends before the duration its container states): where it ends is read at deposit,
and no passage past it can be cited (found by a probe, 2026-11-30: a WebM cut at half its octets still lasted its
stated 3 s, so ``#t=2,3`` answered "the whole video" for seconds it no longer holds, exit 0, and ``rect`` at 2 s said
"no frame at or after 2000 ms: the video lasts 3000 ms").

Where the cut file really ends is found here as ffprobe finds it reading every packet of the file (not the tail
read pdi does): the latest ``pts + duration`` of any packet, in milliseconds rounded down. As a recording cut short
is (``tests/test_fragments_audio.py``), a passage reaching past it is unsupported (exit 6), one before it is cited.
"""

from __future__ import annotations

import subprocess
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_archive_video import KINDS, make_video

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import UnsupportedError
from pdi.fragments.sealed import sealed_version
from pdi.fragments.video import VideoInfo

S = "oma.eop.gov.us"  # the series of tests/archive/conftest.py's archive (SQLite and PostgreSQL)
#: token, file suffix, ffmpeg's options beyond KINDS' (an MP4's index first, so that its half still opens)
CUT = {"webm": ("webm", ()), "video+mp4": ("mp4", ("-movflags", "+faststart"))}


def _packets_end_ms(path: Path) -> tuple[int, int]:
    """ffprobe reading every packet of ``path``: the stated duration and the end of its last packet (ms, floor)."""
    start, stated = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=start_time,duration", "-of", "csv=p=0", str(path)],
        capture_output=True, check=True, timeout=60).stdout.decode().strip().split(",")
    lines = subprocess.run(["ffprobe", "-v", "quiet", "-show_entries", "packet=pts_time,duration_time", "-of",
                            "csv=p=0", str(path)], capture_output=True, timeout=60).stdout.decode().split()
    packets = [(Decimal(p), Decimal(d) if d not in ("N/A", "") else Decimal(0))
               for p, d, *_ in (line.split(",") for line in lines) if p not in ("N/A", "")]
    # from the presentation's start (ffprobe's start_time: an AAC's priming packet before it is none of it), as
    # times are counted (PDI-GRAMMAR.md §3)
    end = max(p + d for p, d in packets) - Decimal(start)
    return int(Decimal(stated) * 1000), int((end * 1000).to_integral_value(rounding=ROUND_FLOOR))


def _index(archive: Archive, name: str) -> bytes:
    index = archive.fragment_index(archive.get(name).record)
    assert index is not None
    return index


@pytest.mark.parametrize("token", list(CUT))
def test_a_video_cut_short_is_cited_up_to_where_it_ends(archive: Archive, tmp_path: Path, token: str) -> None:
    suffix, extra = CUT[token]
    _, video, audio, _, _ = KINDS[token]
    whole = make_video(tmp_path / f"whole.{suffix}", video, audio, extra=extra)
    cut = tmp_path / f"cut.{suffix}"
    cut.write_bytes(whole[: len(whole) * 6 // 10])
    stated, ends = _packets_end_ms(cut)
    assert stated >= 3000 and 500 < ends < 2900  # (the file is what this test means: cut inside its packets)

    whole_name = str(archive.add(S, whole, format=token))
    assert sealed_version(_index(archive, whole_name)) == 3  # this reading's, a whole file's
    assert VideoInfo.from_bytes(_index(archive, whole_name)).end_ms is None

    name = str(archive.add(S, cut.read_bytes(), format=token))
    info = VideoInfo.from_bytes(_index(archive, name))
    assert info.duration_ms >= stated and info.end_ms == ends
    before = archive.resolve(f"{name}#msec=0,{ends}").fragment
    assert before is not None and before.interval is not None and (before.interval.start, before.interval.end) == (0, ends)
    for fragment in (f"msec=0,{ends + 1}", f"msec={ends},{ends + 100}", "sec=0,3", "sec=2,9"):
        with pytest.raises(UnsupportedError, match=f"packets end at {ends / 1000:.3f} s of the .* cut short"):
            archive.resolve(f"{name}#{fragment}")
    past = archive.resolve(f"{name}#sec=5,6").fragment  # wholly past the stated end: past it, as ever (exit 9)
    assert past is not None and past.past_end
    with pytest.raises(UnsupportedError, match="cut short or damaged there"):
        archive.resolve(f"{name}#rect=(0,0),(8,8),{ends}")
    assert archive.resolve(f"{name}#rect=(0,0),(8,8),0").fragment is not None

    shown = CliRunner().invoke(cli, ["get", f"{name}#msec=0,100", "--info", "--archive", archive.location])
    assert shown.exit_code == 0, shown.output
    assert f"cut short: its packets end at {ends / 1000:.3f} s)" in shown.stdout
    refused = CliRunner().invoke(cli, ["get", f"{name}#sec=0,3", "-o", str(tmp_path / "out"), "--archive",
                                       archive.location])
    assert refused.exit_code == 6 and "a passage before" in refused.stderr


def _fields(info: VideoInfo) -> bytes:
    """Layout 1's fields of ``info``: duration, frame size, then the codecs and container as counted texts."""
    import struct

    from pdi.fragments.sealed import pack_text

    payload = struct.pack("<QII", info.duration_ms, info.width, info.height)
    payload += pack_text(info.video_codec) + pack_text(info.container) + struct.pack("<I", len(info.audio_codecs))
    return payload + b"".join(pack_text(c) for c in info.audio_codecs)


def _earlier_layout(info: VideoInfo) -> bytes:
    """``info`` as an earlier reading sealed it: layout 1 (a whole file) or 2 (one cut short, its end after the
    audio codecs), without layout 3's octet saying which."""
    import struct

    from pdi.fragments.sealed import seal

    payload = _fields(info)
    if info.end_ms is None:
        return seal(b"PDIV", 1, payload)
    return seal(b"PDIV", 2, payload + struct.pack("<Q", info.end_ms))


def test_an_index_of_each_layout_is_read_and_one_whose_end_is_not_before_its_duration_is_damaged() -> None:
    from pdi.fragments.video import made_by_an_earlier_reading

    whole = VideoInfo(3000, 64, 48, "vp9", ("opus",), "matroska,webm")
    assert sealed_version(whole.to_bytes()) == 3 and VideoInfo.from_bytes(whole.to_bytes()) == whole
    cut = VideoInfo(3000, 64, 48, "vp9", ("opus",), "matroska,webm", 1100)
    assert sealed_version(cut.to_bytes()) == 3 and VideoInfo.from_bytes(cut.to_bytes()) == cut
    assert not made_by_an_earlier_reading(whole.to_bytes()) and not made_by_an_earlier_reading(cut.to_bytes())
    for info in (whole, cut):  # an earlier reading's layouts: still read, and known as an earlier reading's
        assert VideoInfo.from_bytes(_earlier_layout(info)) == info and made_by_an_earlier_reading(_earlier_layout(info))
    from pdi.errors import IntegrityError
    from pdi.fragments.sealed import seal

    with pytest.raises(IntegrityError, match="2 where 0"):  # layout 3's octet neither 0 nor 1
        VideoInfo.from_bytes(seal(b"PDIV", 3, _fields(whole) + b"\x02"))
    assert VideoInfo.from_bytes(seal(b"PDIV", 3, _fields(whole) + b"\x00")) == whole

    with pytest.raises(IntegrityError, match="not before the duration"):
        VideoInfo.from_bytes(VideoInfo(3000, 64, 48, "vp9", (), "matroska,webm", 3000).to_bytes())
