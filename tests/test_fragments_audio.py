"""Audio fragments ``sec`` and ``msec`` (draft lines 725–749, PDI-GRAMMAR.md §3) on recordings made here.

Each test recording carries its own sample numbers as sample values, so a
cut can be checked sample by sample against the frames the spec's rule
names: sample frame ``k`` sounds at time ``k / rate`` and belongs to
``[a, b)`` when ``a ≤ k / rate < b``, worked out in the tests with exact
fractions, not with the code under test.
"""

from __future__ import annotations

import io
import math
import struct
import subprocess
import wave
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import soundfile
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi import fragments
from pdi.errors import ParseError, UnsupportedError
from pdi.fragments import Interval
from pdi.fragments.audio import evaluate_audio
from pdi.identifier import PDI
from support.ogg import ogg_crc


def pcm_wav(frames: int, rate: int, channels: int = 1, width: int = 2) -> bytes:
    """A PCM WAV whose sample ``k`` of channel ``c`` is ``k * channels + c`` (wrapped to the width)."""
    count = frames * channels
    if width == 1:
        samples = bytes(k % 256 for k in range(count))
    else:
        modulus = 1 << (8 * width)
        samples = b"".join(
            ((k % modulus) - (modulus >> 1)).to_bytes(width, "little", signed=True) for k in range(count)
        )
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(samples)
    return out.getvalue()


def frames_of(data: bytes) -> tuple[wave._wave_params, bytes]:
    with wave.open(io.BytesIO(data), "rb") as w:
        return w.getparams(), w.readframes(w.getnframes())


def selected(start: int, end: int, per_second: int, rate: int, length: int) -> tuple[int, int]:
    """The frames k with start ≤ k / rate < end (times in 1/per_second s), clamped to the length."""
    first = math.ceil(Fraction(start, per_second) * rate)
    stop = math.ceil(Fraction(end, per_second) * rate)
    return min(first, length), min(stop, length)


def test_sec_selects_the_samples_from_a_up_to_b_excluded() -> None:
    data = pcm_wav(3 * 8000, 8000)
    result = evaluate_audio("sec", (1, 2), data, "audio/wav", None)
    params, samples = frames_of(result.data)
    _, everything = frames_of(data)
    assert (params.nchannels, params.sampwidth, params.framerate, params.nframes) == (1, 2, 8000, 8000)
    assert samples == everything[8000 * 2 : 16000 * 2]
    assert result.interval == Interval(8000, 16000, 8000, 1, 24000)
    assert result.interval.seconds == (1.0, 2.0)
    assert result.media_type == "audio/wav" and not result.clamped


def test_msec_boundaries_fall_on_the_first_sample_at_or_after_the_time() -> None:
    # at 44 100 Hz one millisecond is 44.1 frames: frame 44 sounds at 0.9977 ms, before 1 ms
    data = pcm_wav(44100, 44100, channels=2)
    result = evaluate_audio("msec", (1, 2), data, "audio/wav", None)
    assert result.interval is not None and (result.interval.start, result.interval.end) == (45, 89)
    # fragments that meet share no sample and miss none
    joined = b"".join(frames_of(evaluate_audio("msec", (a, a + 1), data, "audio/wav", None).data)[1] for a in range(10))
    assert joined == frames_of(evaluate_audio("msec", (0, 10), data, "audio/wav", None).data)[1]


def test_the_default_scheme_on_audio_is_sec() -> None:
    fragment = PDI.parse("urn:pdi://radio.gov.us/2026/11/22/1.wav.1#2,3").fragment
    assert fragment is not None and fragment.effective_scheme("wav") == "sec"
    data = pcm_wav(4 * 100, 100)
    result = fragments.evaluate("sec", fragment.positions, data, media_type="audio/x-wav")
    assert result.interval == Interval(200, 300, 100, 1, 400)


def test_times_past_the_end_are_the_end_and_say_so() -> None:
    data = pcm_wav(250, 100)  # 2.5 s
    result = evaluate_audio("sec", (2, 9), data, "audio/wav", None)
    assert result.clamped and result.interval == Interval(200, 250, 100, 1, 250)
    empty = evaluate_audio("sec", (5, 9), data, "audio/wav", None)
    assert empty.clamped and frames_of(empty.data)[0].nframes == 0
    # wholly past the end: no sample, and asking for time after the last one
    assert empty.past_end and not result.past_end
    assert evaluate_audio("msec", (2500, 2600), data, "audio/wav", None).past_end
    at_end = evaluate_audio("msec", (2500, 2500), data, "audio/wav", None)  # the empty range at the end
    assert not at_end.past_end and not at_end.clamped
    assert not evaluate_audio("msec", (2490, 2600), data, "audio/wav", None).past_end  # frame 249 is in it


def test_the_wav_written_is_the_one_the_standard_library_writes() -> None:
    data = pcm_wav(1000, 1000, channels=3, width=3)
    result = evaluate_audio("msec", (100, 350), data, "audio/wav", None)
    params, samples = frames_of(result.data)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setparams(params)
        w.writeframes(samples)
    assert result.data == out.getvalue()
    assert frames_of(data)[1][100 * 9 : 350 * 9] == samples


def test_flac_24_bit_keeps_its_samples() -> None:
    rate, n = 16000, 20000
    values = (np.arange(n * 2, dtype=np.int64).reshape(n, 2) * 97 % (1 << 23) - (1 << 22)).astype(np.int32)
    out = io.BytesIO()
    soundfile.write(out, values << 8, rate, format="FLAC", subtype="PCM_24")  # int32 scale: 24 bits on top
    result = evaluate_audio("msec", (250, 1000), out.getvalue(), "audio/flac", None)
    params, samples = frames_of(result.data)
    assert (params.sampwidth, params.nchannels, params.framerate) == (3, 2, rate)
    a, b = selected(250, 1000, 1000, rate, n)
    got = [int.from_bytes(samples[i : i + 3], "little", signed=True) for i in range(0, len(samples), 3)]
    assert got == values[a:b].reshape(-1).tolist()


def test_float_wav_ogg_and_mp3_come_back_as_float_wav() -> None:
    rate = 8000
    tone = np.sin(np.arange(rate * 2) / 10).astype(np.float32)
    out = io.BytesIO()
    soundfile.write(out, tone, rate, format="WAV", subtype="FLOAT")  # the wave module cannot read it
    result = evaluate_audio("sec", (1, 2), out.getvalue(), "audio/wav", None)
    assert result.data[20:22] == struct.pack("<H", 3)  # WAVE_FORMAT_IEEE_FLOAT
    back, back_rate = soundfile.read(io.BytesIO(result.data), dtype="float32")
    assert back_rate == rate and np.array_equal(back, tone[rate : 2 * rate])
    for fmt, subtype, media_type in (("OGG", "VORBIS", "audio/ogg"), ("MP3", "MPEG_LAYER_III", "audio/mpeg")):
        compressed = io.BytesIO()
        soundfile.write(compressed, tone, rate, format=fmt, subtype=subtype)
        lossy = evaluate_audio("msec", (500, 1500), compressed.getvalue(), media_type, None)
        decoded, _ = soundfile.read(io.BytesIO(lossy.data), dtype="float32")
        assert lossy.interval is not None and len(decoded) == lossy.interval.end - lossy.interval.start == 8000


def test_the_same_fragment_is_the_same_bytes() -> None:
    out = io.BytesIO()
    soundfile.write(out, np.zeros((800, 2), dtype=np.int16), 800, format="FLAC")
    first = evaluate_audio("sec", (0, 1), out.getvalue(), "audio/flac", None).data
    assert evaluate_audio("sec", (0, 1), out.getvalue(), "audio/flac", None).data == first


@pytest.mark.parametrize(
    ("positions", "message"),
    [((1,), "two times"), ((2, 1), "ends before it starts"), ((-1, 2), "two times"), ((0, True), "two times")],
)
def test_bad_times_are_syntax_errors(positions: tuple[object, ...], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        evaluate_audio("sec", positions, pcm_wav(10, 10), "audio/wav", None)


def test_bytes_that_are_no_recording_are_unsupported() -> None:
    with pytest.raises(UnsupportedError, match="not a recording pdi can read"):
        evaluate_audio("sec", (0, 1), b"ID3 this is not audio at all", "audio/mpeg", None)
    # a chunk that runs past the RIFF size: the wave module raises RuntimeError, libsndfile says why
    damaged = b"RIFF" + struct.pack("<I", 100) + b"WAVE" + b"LIST" + struct.pack("<I", 200) + bytes(10)
    with pytest.raises(UnsupportedError, match=r"not a recording pdi can read \(.*data"):
        evaluate_audio("sec", (0, 1), damaged, "audio/wav", None)
    # a header whose rate times frame size cannot be written again: 4 000 000 000 frames a second of 2 octets
    fmt = struct.pack("<HHIIHH", 1, 1, 4_000_000_000, 0, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", 8) + bytes(8)
    with pytest.raises(UnsupportedError, match="do not fit a WAV header"):
        evaluate_audio("sec", (0, 1), b"RIFF" + struct.pack("<I", len(body)) + body, "audio/wav", None)
    # a video is evaluated from what ffprobe read of it at deposit (tests/archive/test_archive_video.py): none here
    with pytest.raises(UnsupportedError, match="no ffprobe reading of it"):
        fragments.evaluate("sec", (0, 1), b"", media_type="video/mp4")


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 4000),
    st.integers(0, 3000),
    st.sampled_from([1, 2]),
    st.sampled_from([1, 2, 3, 4]),
    st.sampled_from(["sec", "msec"]),
    st.tuples(st.integers(0, 5000), st.integers(0, 5000)),
)
def test_any_range_selects_the_frames_the_rule_names(
    rate: int, length: int, channels: int, width: int, scheme: str, times: tuple[int, int]
) -> None:
    start, end = sorted(times)
    if scheme == "sec":
        start, end = start % 5, end % 5 + start % 5
    data = pcm_wav(length, rate, channels, width)
    per_second = 1 if scheme == "sec" else 1000
    result = evaluate_audio(scheme, (start, end), data, "audio/wav", None)
    a, b = selected(start, end, per_second, rate, length)
    assert result.interval == Interval(a, b, rate, channels, length)
    assert result.clamped == (math.ceil(Fraction(end, per_second) * rate) > length)
    first_wanted = math.ceil(Fraction(start, per_second) * rate)
    assert result.past_end == (result.clamped and first_wanted >= length)
    block = channels * width
    assert frames_of(result.data)[1] == frames_of(data)[1][a * block : b * block]


def test_a_truncated_wav_gives_whole_frames_only() -> None:
    # 100 stereo 16-bit frames promised, 10.5 frames (42 octets) present: frames are 4 octets,
    # so the cut holds the 10 whole ones, and a time from frame 20 on holds none
    # (tests/data/fuzz/fragment_audio/crash-8aa0737b4eabcb62, crash-453cade300c99c57).
    whole = pcm_wav(100, 1000, channels=2)
    cut = whole[: len(whole) - 400 + 42]
    result = evaluate_audio("msec", (0, 50), cut, "audio/wav", None)
    assert result.interval == Interval(0, 10, 1000, 2, 10)
    assert result.clamped
    params, data = frames_of(result.data)
    assert (params.nchannels, params.nframes) == (2, 10)
    assert data == frames_of(whole)[1][:40]
    assert len(result.data) == 44 + 40  # RIFF, fmt and data headers, then the 40 octets: no half frame
    # the recording is the 10 frames it holds, not the 100 its header promised: a time from frame 20 is past its
    # end, and the end said is 10 (found by an attack, 2026-11-27: a 1.6 KB WAV claiming 4 GB "lasted" as long as
    # the time asked, 5.000 s for sec=5,6)
    late = evaluate_audio("msec", (20, 50), cut, "audio/wav", None)
    assert (late.interval, late.past_end) == (Interval(10, 10, 1000, 2, 10), True)
    assert evaluate_audio("msec", (0, 50), cut, "audio/wav", None).interval.length == 10


def test_a_wav_whose_riff_size_is_less_than_its_samples_is_the_samples_its_data_chunk_holds() -> None:
    """Found by an attack (2026-11-27): a WAV whose RIFF size said 100 octets, its ``data`` chunk and the file 8,000
    frames, was 8,000 frames long for ``msec=0,1`` and 4,000 for ``msec=500,600`` (past its end, no sample), as the
    wave module read no further than the RIFF size. libsndfile (and ffprobe) read the 8,000 frames the data chunk
    holds, and so does every fragment of it."""
    whole = pcm_wav(8000, 8000)
    lying = whole[:4] + struct.pack("<I", 100) + whole[8:]
    with soundfile.SoundFile(io.BytesIO(lying)) as recording:
        length = recording.frames
        recording.seek(4000)
        expected = recording.read(800, dtype="<i2").tobytes()
    assert length == 8000
    for start, end in ((0, 1), (500, 600), (0, 5000)):
        result = evaluate_audio("msec", (start, end), lying, "audio/wav", None)
        a, b = selected(start, end, 1000, 8000, length)
        assert result.interval == Interval(a, b, 8000, 1, length)
        assert frames_of(result.data)[1] == frames_of(whole)[1][2 * a:2 * b]
    assert frames_of(evaluate_audio("msec", (500, 600), lying, "audio/wav", None).data)[1] == expected


def with_chunks_before_samples(wav: bytes, count: int) -> bytes:
    """``wav`` (the wave module's: RIFF, ``fmt ``, ``data``) with ``count`` empty ``junk`` chunks before its data."""
    body = wav[12:36] + b"junk\0\0\0\0" * count + wav[36:]
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WAVE" + body


def test_a_wav_of_more_chunks_before_its_samples_than_the_bound_is_a_limit_error() -> None:
    """Found by an attack (2026-11-27): 8 MB of empty chunks before a WAV's samples took a fragment 14 s (the wave
    module walked them twice), the viewer's waveform of 20,000 of them 33 s. Up to MAX_WAV_CHUNKS chunks before its
    samples a WAV is read, past them a LimitError saying so, whichever reader would read it."""
    from pdi.errors import LimitError
    from pdi.fragments.audio import MAX_WAV_CHUNKS

    whole = pcm_wav(100, 1000)
    most = with_chunks_before_samples(whole, MAX_WAV_CHUNKS - 1)  # fmt, then the junk: MAX_WAV_CHUNKS chunks
    assert frames_of(evaluate_audio("msec", (0, 50), most, "audio/wav", None).data)[1] == frames_of(whole)[1][:100]
    too_many = with_chunks_before_samples(whole, MAX_WAV_CHUNKS)
    with pytest.raises(LimitError, match=f"more than {MAX_WAV_CHUNKS:,} chunks before its samples"):
        evaluate_audio("msec", (0, 50), too_many, "audio/wav", None)
    floats = io.BytesIO()  # a float WAV, which libsndfile reads: counted too
    soundfile.write(floats, np.zeros(100, dtype=np.float32), 1000, format="WAV", subtype="FLOAT")
    body = floats.getvalue()[12:]
    many = b"junk\0\0\0\0" * MAX_WAV_CHUNKS + body
    with pytest.raises(LimitError, match="chunks before its samples"):
        evaluate_audio("msec", (0, 50), b"RIFF" + struct.pack("<I", 4 + len(many)) + b"WAVE" + many, "audio/wav", None)


@pytest.mark.parametrize("bits", [40, 64, 65535])
def test_pcm_of_more_than_32_bits_a_sample_is_unsupported_as_libsndfile_finds_it(bits: int) -> None:
    """Found by an attack (2026-11-27): a WAV of 65,535 bits a sample (the wave module's width: 8,192 octets) was a
    ``struct.error`` where its answer's header was packed, a traceback. libsndfile reads PCM of 8 to 32 bits; of
    more, as it does, the fragments say it is not a recording pdi reads."""
    data = bytearray(pcm_wav(100, 8000))
    data[34:36] = struct.pack("<H", bits)  # the fmt chunk's bits a sample
    with pytest.raises(RuntimeError, match="unimplemented format"):
        soundfile.info(io.BytesIO(bytes(data)))
    with pytest.raises(UnsupportedError, match="not a recording pdi can read"):
        evaluate_audio("msec", (0, 10), bytes(data), "audio/wav", None)


def test_a_wav_of_two_fmt_chunks_is_not_read_as_its_second_says(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): a WAV with a second ``fmt `` chunk (44.1 kHz stereo) after its first (8 kHz
    mono) was read by the wave module as the second says, where ffprobe reads it as the first says and libsndfile
    refuses it. pdi refuses it as libsndfile does: no time of it contradicts ffprobe's."""
    whole = pcm_wav(8000, 8000)
    second = b"fmt " + struct.pack("<IHHIIHH", 16, 1, 2, 44100, 44100 * 4, 4, 16)
    body = whole[12:36] + second + whole[36:]
    twice = b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WAVE" + body
    (tmp_path / "twice.wav").write_bytes(twice)
    probed = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=sample_rate,channels,duration_ts",
                             "-of", "csv=p=0", str(tmp_path / "twice.wav")], capture_output=True, check=True, timeout=60)
    assert probed.stdout.decode().split() == ["8000,1,8000"]
    with pytest.raises(RuntimeError, match="No 'data' chunk"):
        soundfile.info(io.BytesIO(twice))
    with pytest.raises(UnsupportedError, match="not a recording pdi can read"):
        evaluate_audio("msec", (500, 600), twice, "audio/wav", None)


def test_a_flac_of_unknown_length_is_unsupported_saying_so() -> None:
    """Found by an attack (2026-11-27): a FLAC written to a pipe (``ffmpeg -f lavfi -i sine=… -f flac -``) says its
    total samples are 0, unknown (RFC 9639 §8.2: the 36 bits ending STREAMINFO's octet 18). Its first second was
    answered as of a recording 2**63 - 1 frames long (36 million years), its whole was "more sound than a WAV file
    holds", and from its second second on "Internal psf_fseek() failed"; each, and the viewer's waveform, now says
    its length is unknown."""
    from pdi.server.pages.cite import waveform

    made = subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=2",
                           "-f", "flac", "-"], capture_output=True, check=True, timeout=60)
    piped = made.stdout
    assert piped[:4] == b"fLaC" and int.from_bytes(piped[18:26], "big") & ((1 << 36) - 1) == 0
    for times in ((0, 1), (0, 2), (1, 10**6)):
        with pytest.raises(UnsupportedError, match="does not say how many samples it holds"):
            evaluate_audio("sec", times, piped, "audio/flac", None)
    with pytest.raises(UnsupportedError, match="does not say how many samples it holds"):
        waveform(piped, "audio/flac")


def test_a_flac_cut_short_says_which_frames_it_cannot_decode() -> None:
    """Found by an attack (2026-11-27): of a FLAC one octet short of its end (ffmpeg decodes all but its last
    block), any fragment reaching that block was "cannot decode this recording: … lost sync", naming no place.
    libsndfile still cannot read that block (its seek to the end fails), but the error says which frames, at what
    time, of how many promised; a passage before them is read."""
    rate = 8000
    signal = (np.arange(10 * rate) % 2000 - 1000).astype(np.int16)
    flac = io.BytesIO()
    soundfile.write(flac, signal, rate, format="FLAC", subtype="PCM_16")
    cut = flac.getvalue()[:-1]
    with pytest.raises(UnsupportedError, match=r"decode sample frames 65,536 to 80,000 \(8\.192 s on\) of this"
                                               r" recording, of the 80,000 its header promises: it may be cut short"):
        evaluate_audio("sec", (0, 10), cut, "audio/flac", None)
    early = evaluate_audio("sec", (1, 2), cut, "audio/flac", None)
    assert frames_of(early.data)[1] == signal[rate:2 * rate].astype("<i2").tobytes()



def test_an_ogg_claiming_more_than_it_holds_does_not_last_as_long_as_the_time_asked() -> None:
    """Found by an attack (2026-11-27): an Ogg Vorbis of 1 s whose last page's granule position (RFC 3533 §6, the
    octets 6 to 13 of its header) claims 10**6 samples, 125 s. ``msec=5000,5100`` was wholly past the end of a
    recording that "lasts 5.000 s", where ``msec=500,600`` said it lasted 125 s: as a WAV claiming more than it
    holds did before its frames were counted. Where the recording ends is not known: said so, naming the frame."""
    rate = 8000
    made = subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate={rate}:duration=1",
                           "-c:a", "libvorbis", "-f", "ogg", "-"], capture_output=True, check=True, timeout=60)
    data = made.stdout
    last = data.rindex(b"OggS")
    page = bytearray(data[last:])
    page[6:14] = struct.pack("<q", 10**6)
    page[22:26] = bytes(4)
    page[22:26] = struct.pack("<I", ogg_crc(page))
    lying = data[:last] + bytes(page)
    with soundfile.SoundFile(io.BytesIO(lying)) as recording:
        assert recording.frames == 10**6  # libsndfile believes the claim
    assert evaluate_audio("msec", (500, 600), lying, "audio/ogg", None).interval == Interval(4000, 4800, rate, 1, 10**6)
    with pytest.raises(UnsupportedError, match=r"promises 1,000,000 sample frames \(125\.000 s\), but it holds none"
                                               r" from frame 40,000 \(5\.000 s\) on"):
        evaluate_audio("msec", (5000, 5100), lying, "audio/ogg", None)


def test_a_compressed_recording_is_decoded_to_no_more_than_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported: a 954 KB FLAC of ten minutes of 8-channel 192 kHz silence: sec=0,600 asked for 1.8 GB of WAV
    (a 500, MemoryError). The octets a fragment decodes to are known from the header before any is decoded:
    past MAX_DECODED_OCTETS (here lowered to 1 MiB, on ten seconds of stereo FLAC), a LimitError saying them;
    under it, the samples as before. A PCM WAV's fragment is a slice of what is stored: never refused so."""
    from pdi.errors import LimitError
    from pdi.fragments import audio

    monkeypatch.setattr(audio, "MAX_DECODED_OCTETS", 1 << 20)
    rate = 44_100
    signal = (np.sin(np.arange(10 * rate) / 20)[:, None] * [8000, -8000]).astype(np.int16)
    flac = io.BytesIO()
    soundfile.write(flac, signal, rate, format="FLAC", subtype="PCM_16")
    with pytest.raises(LimitError, match=f"decodes to {10 * rate * 2 * 2:,} octets of samples"):
        evaluate_audio("sec", (0, 10), flac.getvalue(), "audio/flac", None)
    aiff = io.BytesIO()  # uncompressed: its fragment is no larger than what is stored, and never refused so
    soundfile.write(aiff, signal, rate, format="AIFF", subtype="PCM_16")
    assert len(evaluate_audio("sec", (0, 10), aiff.getvalue(), "audio/aiff", None).data) > 1 << 20
    half = evaluate_audio("sec", (0, 5), flac.getvalue(), "audio/flac", None)  # 882,000 octets: under it
    with wave.open(io.BytesIO(half.data)) as out:
        decoded = np.frombuffer(out.readframes(out.getnframes()), "<i2").reshape(-1, 2)
    assert np.array_equal(decoded, signal[: 5 * rate])  # every block of it, in order
    pcm = io.BytesIO()
    with wave.open(pcm, "wb") as recording:
        recording.setnchannels(2)
        recording.setsampwidth(2)
        recording.setframerate(rate)
        recording.writeframes(signal.tobytes())
    whole = evaluate_audio("sec", (0, 10), pcm.getvalue(), "audio/wav", None)
    assert len(whole.data) > 1 << 20


@pytest.mark.parametrize("kind", ["wav", "flac"])
def test_a_second_of_a_mapped_recording_reads_that_second_not_the_whole(tmp_path: Path, kind: str) -> None:
    """Found by an attack: ``pdi get NAME#sec=0,1`` of a 200 MB WAV peaked at 422 MB resident (N2R the same), as
    ``io.BytesIO`` copies a memory map whole before the wave module or libsndfile reads a header. Given a map of a
    recording of 9 to 64 MiB, a second of it takes little more memory than the second itself, and is the samples
    that second holds (as libsndfile, reading the file itself, says)."""
    import mmap
    import tracemalloc

    rate = 8000
    path = tmp_path / f"long.{kind}"
    if kind == "wav":  # 16-bit mono: three seconds of numbered samples, then a hole of zeros to 64 MiB
        octets = 64 << 20
        with wave.open(str(path), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(np.arange(3 * rate, dtype="<i2").tobytes())
        with path.open("r+b") as f:  # the header's sizes say 64 MiB of samples, and the file holds them (sparse)
            f.seek(4)
            f.write(struct.pack("<I", 36 + octets))
            f.seek(40)
            f.write(struct.pack("<I", octets))
            f.truncate(44 + octets)
    else:  # ten minutes of noise: a FLAC that cannot shrink it much
        noise = np.random.default_rng(7).integers(-30000, 30000, size=(rate * 600, 1), dtype=np.int16)
        soundfile.write(str(path), noise, rate, format="FLAC", subtype="PCM_16")
        assert path.stat().st_size > 8 << 20
    with soundfile.SoundFile(str(path)) as recording:
        recording.seek(2 * rate)
        expected = recording.read(rate, dtype="<i2").tobytes()
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        tracemalloc.start()
        try:
            result = evaluate_audio("sec", (2, 3), mapped, f"audio/{kind}", None)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert frames_of(result.data)[1] == expected
    assert peak < 1 << 20, f"a second of 16 KB took {peak:,} octets"


@pytest.mark.parametrize(("subtype", "dtype"), [("FLOAT", "float32"), ("DOUBLE", "float64")])
def test_a_passage_of_a_float_recording_holds_its_samples_exactly(subtype: str, dtype: str) -> None:
    # A recording of 64-bit floats came back as 32-bit ones, each sample rounded; the passage's samples are the
    # recording's own, as libsndfile reads them from the file, at the file's own width.
    rng = np.random.default_rng(7)
    samples = (rng.standard_normal((16_000, 2)) * 0.3).astype(dtype) + np.asarray(1e-12, dtype=dtype)
    stored = io.BytesIO()
    soundfile.write(stored, samples, 8000, subtype=subtype, format="WAV")
    result = fragments.evaluate("msec", (250, 500), stored.getvalue(), media_type="audio/wav")
    cut, rate = soundfile.read(io.BytesIO(result.data), dtype=dtype, always_2d=True)
    assert rate == 8000 and soundfile.info(io.BytesIO(result.data)).subtype == subtype
    assert np.array_equal(cut, samples[2000:4000])  # frames ceil(0.25 × 8000) to ceil(0.5 × 8000)


def _chunk(ident: bytes, payload: bytes) -> bytes:
    return ident + struct.pack("<I", len(payload)) + payload + b"\0" * (len(payload) % 2)


@st.composite
def wav_layouts(draw: st.DrawFn) -> bytes:
    """A 16-bit PCM WAV with other chunks before and after its samples, and perhaps a RIFF or data size that lies, or
    its end cut off."""
    channels = draw(st.integers(1, 2))
    frames = draw(st.integers(0, 200))
    samples = draw(st.binary(min_size=frames * channels * 2, max_size=frames * channels * 2))
    fmt = _chunk(b"fmt ", struct.pack("<HHIIHH", 1, channels, 8000, 8000 * channels * 2, channels * 2, 16))
    other = st.builds(_chunk, st.sampled_from([b"LIST", b"junk", b"bext", b"fact"]), st.binary(max_size=9))
    before = draw(st.lists(other, max_size=3))
    size = draw(st.sampled_from([len(samples), len(samples) + 7, max(0, len(samples) - 7), 0xFFFFFFFF]))
    body = b"".join(before[:1]) + fmt + b"".join(before[1:]) + b"data" + struct.pack("<I", size) + samples
    if size == len(samples):
        body += b"\0" * (len(samples) % 2) + b"".join(draw(st.lists(other, max_size=2)))
    riff = draw(st.sampled_from([4 + len(body), 0xFFFFFFFF, draw(st.integers(0, 4 + len(body)))]))
    whole = b"RIFF" + struct.pack("<I", riff) + b"WAVE" + body
    return whole[: draw(st.integers(12, len(whole)))] if draw(st.booleans()) else whole


@given(wav_layouts())
@settings(max_examples=300, deadline=None)
def test_a_wav_is_the_recording_libsndfile_reads(data: bytes) -> None:
    """Whatever chunks surround a WAV's samples and whatever its sizes claim, its fragments are of the recording
    libsndfile reads: its length, rate and channels, and its samples (found by an attack, 2026-11-27: 453 of 3,000
    such layouts differed, most of them RIFF sizes less than the file)."""
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as recording:
            expected = (recording.frames, recording.samplerate, recording.channels)
            samples = recording.read(dtype="<i2", always_2d=True).tobytes()
    except RuntimeError:
        return  # libsndfile does not read it: nothing to compare with
    result = evaluate_audio("msec", (0, 10**6), data, "audio/wav", None)
    assert result.interval is not None
    assert (result.interval.length, result.interval.rate, result.interval.channels) == expected
    assert frames_of(result.data)[1] == samples
