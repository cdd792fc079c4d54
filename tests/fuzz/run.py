"""Coverage-guided fuzzing of one target with atheris (libFuzzer), for as long as you like.

    pip install atheris              # or: pip install -e '.[fuzz]'
    python tests/fuzz/run.py TARGET --seconds 600
    python tests/fuzz/run.py --list

The target's seeds (``tests/data/fuzz/TARGET/``) start the corpus; the inputs
libFuzzer finds that reach new code are kept in a working folder
(``--work``, by default ``.fuzz-corpus/TARGET/``, ignored by git), never in
the repository. An input that raises an exception outside pdi.errors, runs
longer than a second or needs more than ``--memory-mb`` is written into the
seed folder as ``crash-<sha1>`` (``oom-``, ``timeout-``), where the normal
test run replays it from then on: fix the code, and keep the file as its
regression test. The run stops at the first such input.

libFuzzer's own limits are used here (``-timeout=1``, ``-rss_limit_mb``),
in wall time and resident memory; the replay in ``pytest`` then checks the
input under the harness's limits (``fuzz_harness``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from fuzz_harness import CORPUS, MAX_INPUT, REPO, targets


def _dictionary(tokens: tuple[bytes, ...]) -> str:
    """A libFuzzer dictionary file of the target's tokens."""
    lines = ['"' + "".join(f"\\x{b:02x}" for b in token) + '"' for token in tokens if token]
    with tempfile.NamedTemporaryFile("w", suffix=".dict", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    return f.name


def main() -> int:
    found = targets()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", nargs="?", choices=sorted(found), help="the target to fuzz")
    parser.add_argument("--seconds", type=int, default=600, help="how long to fuzz (default 600)")
    parser.add_argument("--memory-mb", type=int, default=2048, help="resident memory limit (default 2048)")
    parser.add_argument("--work", type=Path, help="folder for the inputs found (default .fuzz-corpus/TARGET)")
    parser.add_argument("--list", action="store_true", help="list the targets and stop")
    args, extra = parser.parse_known_args()
    if args.list or args.target is None:
        for name, target in found.items():
            doc = sys.modules[target.run.__module__].__doc__ or ""
            print(f"{name:16} {doc.strip().splitlines()[0] if doc.strip() else ''}")
        return 0
    try:
        import atheris
    except ImportError:
        print("run.py needs atheris: pip install atheris (or pip install -e '.[fuzz]')", file=sys.stderr)
        return 2

    from pdi.errors import PDIError

    target = found[args.target]
    try:
        target.run(target.warmup)  # lazy imports happen now, before instrumenting
    except PDIError:
        pass
    atheris.instrument_all()

    def one_input(data: bytes) -> None:
        try:
            target.run(data)
        except PDIError:
            pass

    work = args.work or REPO / ".fuzz-corpus" / args.target
    work.mkdir(parents=True, exist_ok=True)
    seeds = CORPUS / args.target
    argv = [
        sys.argv[0],
        f"-max_total_time={args.seconds}",
        "-timeout=1",
        f"-rss_limit_mb={args.memory_mb}",
        f"-max_len={MAX_INPUT}",
        f"-artifact_prefix={seeds}/",
        f"-dict={_dictionary(target.tokens)}",
        *extra,
        str(work),
        str(seeds),
    ]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
