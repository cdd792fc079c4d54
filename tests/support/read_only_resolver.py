"""``pdi serve`` of an archive this user may only read (a member of its group, or read-only media), started for a
test: its first line checked to say so (docs/reference/backup.md, "A member of the group, running pdi")."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def read_only_resolver(argv: list[str], env: dict[str, str], root: Path) -> Iterator[str]:
    """The base URL of the ``pdi serve`` that ``argv`` starts on the archive at ``root``, once its first line has
    said that it serves it read-only; stopped at the end."""
    server = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    try:
        assert server.stderr is not None
        line = server.stderr.readline().decode()
        assert line.startswith(f"pdi: serving {root} at http://127.0.0.1:"), line + server.stderr.read().decode()
        assert line.endswith(f"; read-only: this user may read {root}, not write it (a member of its group, or a"
                             " read-only file system), so each write is refused (503)\n"), line
        yield "http://127.0.0.1:" + line.split("http://127.0.0.1:", 1)[1].split("/", 1)[0]
    finally:
        server.terminate()
        server.communicate(timeout=60)
