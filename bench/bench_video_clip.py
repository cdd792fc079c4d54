"""What a video clip's N2R could answer: the whole file (pdi's choice), a stream copy, or a re-encode (issue 25).

Made here by ffmpeg: a 60 s 640×360 H.264/AAC MP4 with x264's defaults (a
keyframe every 250 frames: 10 s at 25 frames a second). Timed interleaved
in one run (each round runs every way once, in a rotated order; medians of
the rounds), for the clip 12.3 s to 17.8 s:

* pdi: ``Archive.resolve(name#msec=12300,17800)``, what N2R answers: the
  whole video read from the archive, every chunk checked against its digest;
* stream copy: ``ffmpeg -ss 12.3 -to 17.8 -i … -c copy`` (cut at keyframes);
* re-encode: the same with ``-c:v libx264 -preset veryfast -c:a aac``.

And how exact each is, from ffprobe's count of the video packets in the
answer (the interval holds 5.5 s × 25 = 137.5 frames): a stream copy holds
the frames from the keyframe before the start. ``--small``: a 6 s 64×48
video, its clip 2.3 s to 4.1 s, one round. Run with
``python3 bench/run_all.py video_clip``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import readme


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True, timeout=600)


def packets(path: Path) -> int:
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v",
                          "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", str(path)],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    return int(out.strip())


def main() -> None:
    parser = readme.arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), markdown=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None:
        raise SystemExit("bench_video_clip needs ffmpeg and ffprobe: apt-get install ffmpeg (scripts/bootstrap installs it)")
    seconds, size, (a, b), rounds = (6, "64x48", (2.3, 4.1), 1) if args.small else (60, "640x360", (12.3, 17.8),
                                                                                      args.rounds)
    from pdi.archive import Archive

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        source = where / "big.mp4"
        ffmpeg("-f", "lavfi", "-i", f"testsrc2=size={size}:rate=25:duration={seconds}", "-f", "lavfi",
               "-i", f"sine=frequency=440:duration={seconds}", "-c:v", "libx264", "-c:a", "aac", "-shortest",
               str(source))
        archive = Archive.init(str(where / "archive"))
        archive.add_series("bench.example.us")
        name = str(archive.add("bench.example.us", source.read_bytes(), format="video+mp4"))
        clip = f"{name}#msec={round(a * 1000)},{round(b * 1000)}"
        copy, encoded = where / "copy.mp4", where / "encoded.mp4"

        def whole() -> None:
            archive.resolve(clip)

        def stream_copy() -> None:
            ffmpeg("-ss", str(a), "-to", str(b), "-i", str(source), "-c", "copy", str(copy))

        def reencode() -> None:
            ffmpeg("-ss", str(a), "-to", str(b), "-i", str(source), "-c:v", "libx264", "-preset", "veryfast",
                   "-c:a", "aac", str(encoded))

        ways: list[tuple[str, Callable[[], None]]] = [("pdi: the whole file", whole),
                                                     ("stream copy", stream_copy), ("re-encode", reencode)]
        times: dict[str, list[float]] = {label: [] for label, _ in ways}
        for r in range(rounds):
            for label, run in ways[r % 3:] + ways[: r % 3]:
                started = time.perf_counter()
                run()
                times[label].append(time.perf_counter() - started)
        frames = {"pdi: the whole file": f"all {packets(source)}", "stream copy": str(packets(copy)),
                  "re-encode": str(packets(encoded))}
        archive.close()
    floor = statistics.median(times["pdi: the whole file"])
    print(f"{seconds} s {size} H.264/AAC, clip {a} s to {b} s ({(b - a) * 25:g} frames), {rounds} rounds")
    rows = []
    for label, _ in ways:
        median = statistics.median(times[label])
        print(f"{label:22} {median * 1000:9.1f} ms  ratio {median / floor:5.1f}x  video packets {frames[label]}")
        rows.append([label, f"{median * 1000:.1f} ms", f"{median / floor:.1f}", frames[label]])
    readme.write(args.markdown, f"{seconds} s {size} H.264/AAC MP4 (a keyframe every 10 s), clip {a} s to {b} s"
                 f" ({(b - a) * 25:g} frames), medians of {rounds} rounds:\n\n"
                 + readme.table(["answer", "median", "ratio to pdi", "video packets"], rows))
    sys.stdout.flush()

if __name__ == "__main__":
    main()
