"""The peak resident memory of a command, measured so that the test process's own size does not count.

Linux keeps a process's high-water resident set across ``fork`` and ``exec``
(``signal->maxrss``): a child started straight from the test process reports,
through ``wait4`` or ``getrusage(RUSAGE_SELF)``, at least the test process's own
peak — over a gigabyte late in a whole run of the suite. Such a measurement
either fails for no fault of the command or, compared with a baseline taken
the same way, cannot fail at all. :func:`run_with_peak` starts a small
wrapper process first; the wrapper starts the command and reads the command's
own peak from ``wait4``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

#: The wrapper: runs argv[2:] with the wrapper's own standard streams and writes "<exit status> <peak KiB>" to argv[1].
_WRAPPER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "child.returncode = 0\n"
    "open(sys.argv[1], 'w').write(f'{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}')\n"
)


def run_with_peak(
    argv: Sequence[str], *, stdin: Any = subprocess.DEVNULL, stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None, env: Mapping[str, str] | None = None, timeout: float = 600,
) -> tuple[int, int, bytes]:
    """Run ``argv``: its exit status, its peak resident memory in KiB, and what it wrote to ``stdout=PIPE``."""
    with tempfile.TemporaryDirectory() as scratch:
        result = Path(scratch) / "peak"
        done = subprocess.run([sys.executable, "-c", _WRAPPER, str(result), *argv], stdin=stdin, stdout=stdout,
                              stderr=stderr, env=env, timeout=timeout, check=False)
        status, peak = result.read_text().split()
    return int(status), int(peak), done.stdout or b""
