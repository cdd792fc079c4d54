"""A throw-away nginx for tests: Debian's nginx as one unprivileged process, with a configuration of the test's.

:func:`nginx` writes the main ``nginx.conf`` in a working directory of
the test's — its pid file, error log and every temporary directory there,
``daemon off`` and ``master_process off`` (one process, of whoever runs the
test: nothing switches to a user who cannot write the directory) — around
the ``http { }`` content given (servers, upstreams: a site file as
``/etc/nginx/sites-enabled`` holds), checks it with ``nginx -t``, starts it
and waits until ``probe`` answers; on exit it stops it (``SIGQUIT``:
finish and stop). Needs the Debian package ``nginx`` (``scripts/bootstrap --dev``).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pdi.errors import StoreError

#: The temporary directories nginx's http modules write (each set to one in the working directory).
TEMP_PATHS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


def find_nginx() -> str:
    """The nginx program (``/usr/sbin`` is not on every user's ``PATH``)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/bin")
    if not found:
        raise StoreError("nginx is missing: scripts/bootstrap --dev installs Debian's nginx")
    return found


@dataclass(frozen=True)
class NginxNode:
    """A running nginx: its working directory (``error.log`` there) and process."""

    work: Path
    process: subprocess.Popen[bytes]

    @property
    def error_log(self) -> str:
        return (self.work / "error.log").read_text(errors="replace")


@contextmanager
def nginx(http: str, work: Path, probe: Callable[[], object], *, log_level: str = "warn") -> Iterator[NginxNode]:
    """nginx serving the ``http { }`` content ``http`` from ``work`` (made now), once ``probe()`` returns without an
    ``OSError`` (30 s at most); stopped on exit. Its errors at ``log_level`` and above go to ``work/error.log``."""
    program = find_nginx()
    work.mkdir(parents=True)
    temp = "\n".join(f"    {kind}_temp_path {work}/{kind};" for kind in TEMP_PATHS)
    conf = work / "nginx.conf"
    conf.write_text(f"""daemon off;
master_process off;
pid {work}/nginx.pid;
error_log {work}/error.log {log_level};
events {{ worker_connections 256; }}
http {{
    access_log off;
{temp}
{http}
}}
""")
    argv = [program, "-p", str(work), "-e", str(work / "error.log"), "-c", str(conf)]
    checked = subprocess.run([*argv, "-t"], capture_output=True, text=True, timeout=30, check=False)
    if checked.returncode != 0:
        raise StoreError(f"nginx -t refused {conf}: {checked.stderr.strip()}")
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    node = NginxNode(work, process)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise StoreError(f"nginx exited ({process.returncode}) before it answered: {node.error_log[-2000:]}")
            try:
                probe()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise StoreError(f"nginx did not answer within 30 s: {node.error_log[-2000:]}") from None
                time.sleep(0.05)
        yield node
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGQUIT)  # nginx: finish and stop
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
