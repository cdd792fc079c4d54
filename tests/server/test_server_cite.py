"""What the viewer's select → cite needs from the server: ``/api/rfc5147``, waveform peaks, image frames."""

from __future__ import annotations

import hashlib
import html
import io
import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from server_helpers import ELSEWHERE, TEXT, Served

from pdi.server.pages.cite import SAMPLES_PER_COLUMN, waveform

#: RFC 5147 checks of the served text: 55 characters (every LF one), the MD5 of its 58 octets.
CHECKS = f";length=55,UTF-8;md5={hashlib.md5(TEXT).hexdigest()},UTF-8"


def _rfc5147(served: Served, name: str, fragment: str) -> httpx.Response:
    return httpx.get(f"{served.url}/api/rfc5147", params={"pdi": name, "fragment": fragment}, timeout=30)



def test_rfc5147_fragment_is_evaluated_on_the_n2r_entity_with_its_checks(served: Served) -> None:
    # "Hello, world.\nSecond 𝕚 line.\n": RFC 5147 §2.1 counts the LF as one character, so 7,20 is "world.\nSecond"
    answer = _rfc5147(served, served.text, "char=7,20" + CHECKS)
    assert answer.status_code == 200
    got = answer.json()
    assert (got["text"], got["start"], got["end"], got["integrity"]) == ("world.\nSecond", 7, 20, "ok")
    assert [c["status"] for c in got["checks"]] == ["ok", "ok"]
    # line=1,2 is the second line, its line ending included (§2.2)
    assert _rfc5147(served, served.text, "line=1,2").json()["text"] == "Second 𝕚 line.\n"


def test_rfc5147_a_failed_check_is_a_problem_not_a_selection(served: Served) -> None:
    answer = _rfc5147(served, served.text, "char=7,20;length=54,UTF-8")
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert "length is 55" in answer.json()["detail"]


def test_rfc5147_applies_to_plain_text_only_and_needs_both_parameters(served: Served) -> None:
    assert _rfc5147(served, served.page, "char=0,3").status_code == 400  # text/html
    assert _rfc5147(served, served.text + "#char=1,2", "char=0,3").status_code == 400
    assert httpx.get(f"{served.url}/api/rfc5147", params={"pdi": served.text}).status_code == 400
    assert _rfc5147(served, served.text, "char=5,3").status_code == 400  # §4.4: not properly ordered


def test_rfc5147_numbers_with_thousands_of_leading_zeros_are_their_number(served: Served) -> None:
    # int() alone counted the zeros against its 4,300 digits: a ValueError, answered 500
    zeros = "0" * 5000
    answer = _rfc5147(served, served.text, f"char={zeros}7,{zeros}20;length={zeros}55,UTF-8")
    assert answer.status_code == 200 and (answer.json()["text"], answer.json()["integrity"]) == ("world.\nSecond", "ok")
    refused = _rfc5147(served, served.text, "char=" + "1" * 4001)  # 4,001 digits that are not zeros: a limit
    assert refused.status_code == 400 and "more than 4000 digits" in refused.json()["detail"]


def _page(served: Served, name: str, **more: str) -> str:
    answer = httpx.get(f"{served.url}/view", params={"pdi": name, **more}, timeout=30)
    assert answer.status_code == 200
    return answer.text


def test_the_waveform_is_the_lowest_and_highest_sample_of_each_column(served: Served) -> None:
    # served.sound: 250 unsigned 8-bit samples 0, 1, … 249 at 100 Hz; 250 frames make 250 columns of one
    # sample each, and an unsigned sample s is (s - 128) / 128 in [-1, 1].
    data = json.loads(re.search(r'<script type="application/json" id="peaks">(.*?)</script>', _page(served, served.sound)).group(1))
    assert (data["duration"], data["rate"], data["frames"]) == (2.5, 100, 250)
    assert data["peaks"] == [[round((s - 128) / 128, 3)] * 2 for s in range(250)]


def test_a_long_recording_is_sampled_not_read_whole() -> None:
    # 600 columns of 10,000 frames each: every column reads its first SAMPLES_PER_COLUMN frames only.
    # The samples are a ramp k mod 10,000 scaled: a column's first frames run from 0 up, never to its end.
    import wave

    frames = 600 * 10_000
    samples = (((k % 10_000) * 3).to_bytes(2, "little", signed=True) for k in range(frames))
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setparams((1, 2, 48_000, 0, "NONE", "not compressed"))
        w.writeframes(b"".join(samples))
    wave_form = waveform(out.getvalue(), "audio/wav")
    assert wave_form.frames == frames and wave_form.duration == frames / 48_000
    highest = (SAMPLES_PER_COLUMN - 1) * 3 / 32768  # the last frame read of each column
    assert all(lo == 0.0 and abs(hi - highest) < 1e-6 for lo, hi in wave_form.peaks)


def _gif() -> bytes:
    frames = [Image.new("RGB", (20, 10), colour) for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def test_a_multi_frame_image_offers_its_frames_each_shown_alone(served: Served) -> None:
    gif = str(served.archive.add(ELSEWHERE, _gif(), format="gif"))
    page = _page(served, gif + "#rect=(1,1),(5,5),2")
    options = re.findall(r'<option value="(\d+)" data-src="([^"]+)"( selected)?>', page)
    assert [(value, bool(chosen)) for value, _, chosen in options] == [("0", False), ("1", False), ("2", True)]
    shown = re.search(r'<img id="image" src="([^"]+)"', page).group(1)
    assert shown == options[2][1]
    # each frame's source is that whole frame as an image: frame 2 is the blue one
    for (_, source, _), colour in zip(options, ((255, 0, 0), (0, 255, 0), (0, 0, 255)), strict=True):
        answer = httpx.get(served.url + html.unescape(source), timeout=30)
        assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(answer.content)) as image:
            assert image.size == (20, 10) and image.convert("RGB").getpixel((10, 5)) == colour
    cited = re.search(r'<div class="box" id="cited" style="([^"]+)"', page).group(1)
    assert cited == "left:5.0000%;top:10.0000%;width:20.0000%;height:40.0000%"  # (1,1)-(5,5) of 20×10


def test_a_text_names_its_rfc5147_entity_and_checks_in_the_page(served: Served) -> None:
    pre = re.search(r'<pre id="text"[^>]*>', _page(served, served.text)).group(0)
    assert f'data-rfc-url="/uri-res/N2R?{html.escape(served.text)}"' in pre
    assert f'data-rfc-checks="{CHECKS}"' in pre and 'data-rfc-offset="0"' in pre
    # HTML source is not text/plain: RFC 5147 does not apply, only the PDI is offered
    page = _page(served, served.page, view="source")
    assert 'id="rfc5147"' not in page and "data-rfc-url" not in page and 'id="name"' in page


def test_an_image_or_recording_pdi_cannot_read_is_shown_with_a_note_and_nothing_to_name(served: Served) -> None:
    picture = str(served.archive.add(ELSEWHERE, b"these are not the octets of a PNG", format="png", force=True))
    page = _page(served, picture)
    assert "Regions of this image cannot be named here" in page and 'id="figure"' not in page
    recording = str(served.archive.add(ELSEWHERE, b"ID3 these are not the octets of an MP3", format="audio+mpeg", force=True))
    page = _page(served, recording)
    assert "Stretches of this recording cannot be named here" in page and 'id="wave"' not in page
    assert '<audio id="player" controls' in page


def test_a_window_never_starts_between_the_cr_and_the_lf_of_a_line_break(served: Served) -> None:
    # Every line of the long text is 29 characters CRLF-canonical ("0000000 line of a long text" CR LF):
    # a passage at 20,028 opens a window 20,000 characters before it, at 28, between the CR and the LF
    # of line 0's break. The window starts after it instead: at 29 (RFC 5147: 28, the LF one character).
    page = _page(served, served.long + "#char=20028,20030")
    pre = re.search(r'<pre id="text"[^>]*>\n(.{27})', page)
    assert pre is not None and pre.group(1) == "0000001 line of a long text"
    assert 'data-offset="29"' in pre.group(0) and 'data-rfc-offset="28"' in pre.group(0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-32768, 32767), min_size=1, max_size=3000), st.integers(1, 700))
def test_waveform_peaks_are_the_extremes_of_each_columns_first_samples(samples: list[int], columns: int) -> None:
    # Column c of n frames in k = min(columns, n) columns covers frames [c·n//k, (c+1)·n//k), of which at most
    # SAMPLES_PER_COLUMN are read; a 16-bit sample s is s / 32768.
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setparams((1, 2, 8000, 0, "NONE", "not compressed"))
        w.writeframes(b"".join(s.to_bytes(2, "little", signed=True) for s in samples))
    got = waveform(out.getvalue(), "audio/wav", columns)
    n = len(samples)
    k = min(columns, n)
    expected = []
    for c in range(k):
        part = samples[c * n // k : min((c + 1) * n // k, c * n // k + SAMPLES_PER_COLUMN)]
        expected.append((min(part) / 32768, max(part) / 32768))
    assert got.frames == n and got.duration == n / 8000
    assert got.peaks == expected


def test_the_waveform_of_a_wav_written_to_a_pipe_lasts_as_long_as_its_samples(tmp_path: Path) -> None:
    # ffmpeg writing a WAV to a pipe cannot go back to its header: its RIFF and data sizes are 0xFFFFFFFF there, and
    # the standard module's frame count believed them (268,435 s of 8 kHz 16-bit mono, for one second of sound)
    made = subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-ar", "8000",
                           "-f", "wav", "-"], capture_output=True, check=True, timeout=60)
    data = made.stdout
    assert data[4:8] == b"\xff\xff\xff\xff"
    (tmp_path / "piped.wav").write_bytes(data)
    probed = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                             str(tmp_path / "piped.wav")], capture_output=True, check=True, timeout=60)
    seconds = float(probed.stdout)
    wave_form = waveform(data, "audio/wav")
    assert (wave_form.rate, wave_form.frames, wave_form.duration) == (8000, round(seconds * 8000), seconds) == (8000, 8000, 1.0)
    assert all(hi - lo > 0.05 for lo, hi in wave_form.peaks)  # every column holds sound (ffmpeg's tone: 1/8 scale)


def test_the_waveform_of_a_wav_is_of_the_samples_its_data_chunk_holds_within_a_bound_of_chunks() -> None:
    """Found by an attack (2026-11-27): the waveform walked a WAV's chunks with the wave module once per column (20,000
    empty chunks before the samples: 33 s), and read no further than its RIFF size (100 octets said, 8,000 frames
    held: a waveform of the first 11 frames' peaks, the rest zero). The samples are those of its data chunk, as
    libsndfile reads them; past MAX_WAV_CHUNKS chunks before them, a LimitError."""
    import wave

    import soundfile

    from pdi.errors import LimitError
    from pdi.fragments.audio import MAX_WAV_CHUNKS

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setparams((1, 2, 8000, 0, "NONE", "not compressed"))
        w.writeframes(b"".join((k * 4).to_bytes(2, "little", signed=True) for k in range(8000)))
    whole = out.getvalue()
    lying = whole[:4] + (100).to_bytes(4, "little") + whole[8:]
    with soundfile.SoundFile(io.BytesIO(lying)) as recording:
        frames = recording.frames
        samples = recording.read(dtype="int16")
    got = waveform(lying, "audio/wav", 10)
    assert got.frames == frames == 8000
    assert got.peaks == [(samples[c * 800] / 32768, samples[c * 800 + 799] / 32768) for c in range(10)]
    body = whole[12:36] + b"junk\0\0\0\0" * MAX_WAV_CHUNKS + whole[36:]
    with pytest.raises(LimitError, match="chunks before its samples"):
        waveform(b"RIFF" + (4 + len(body)).to_bytes(4, "little") + b"WAVE" + body, "audio/wav")
