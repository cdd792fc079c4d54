"""A throw-away DNS server for tests: Debian's dnsmasq on 127.0.0.1, answering only the records it is given.

``dnsmasq --no-resolv --no-hosts``: it forwards nothing and reads no
``/etc/hosts``, so it knows exactly the ``--naptr-record``, ``--srv-host``
and ``--host-record`` lines given (dnsmasq(8)); ``--local-ttl`` gives them
a TTL (dnsmasq's default for its own records is 0: never cached). It runs
in the foreground (``--keep-in-foreground``), on a free port of 127.0.0.1
(UDP and TCP), and is stopped (SIGTERM, then waited for) on exit. Needs the
Debian package ``dnsmasq-base`` (``scripts/bootstrap --dev``).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from pdi.errors import StoreError


@dataclass(frozen=True)
class DnsNode:
    """A running dnsmasq: where it listens (``--dns`` takes :attr:`server`)."""

    port: int

    @property
    def server(self) -> str:
        return f"127.0.0.1:{self.port}"


def _free_port() -> int:
    """A port free for both UDP and TCP on 127.0.0.1 now (dnsmasq cannot say which it took, so one is chosen)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = int(udp.getsockname()[1])
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port


def _answering(port: int, process: subprocess.Popen[bytes], deadline: float) -> None:
    import dns.message
    import dns.query

    query = dns.message.make_query("ready.invalid.", "A")
    while True:
        if process.poll() is not None:
            raise StoreError(f"dnsmasq exited ({process.returncode}) before it answered on port {port}")
        try:
            dns.query.udp(query, "127.0.0.1", port=port, timeout=0.3)
            return
        except (OSError, dns.exception.Timeout):
            if time.monotonic() > deadline:
                raise StoreError(f"dnsmasq did not answer on 127.0.0.1:{port}") from None


@contextmanager
def dnsmasq(records: Sequence[str], ttl: int = 60) -> Iterator[DnsNode]:
    """dnsmasq serving ``records`` (its options, ``--naptr-record=…``, ``--srv-host=…``) with TTL ``ttl``."""
    program = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    if not shutil.which(program):
        raise StoreError("dnsmasq not found: run scripts/bootstrap --dev, which installs the Debian package dnsmasq-base")
    for attempt in range(3):
        port = _free_port()
        process = subprocess.Popen(
            [program, "--keep-in-foreground", "--no-resolv", "--no-hosts", "--conf-file=/dev/null",
             "--listen-address=127.0.0.1", "--bind-interfaces", f"--port={port}", "--pid-file=",
             f"--local-ttl={ttl}", "--log-facility=-", *records],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            _answering(port, process, time.monotonic() + 10)
        except StoreError:
            process.kill()
            process.wait(timeout=10)
            assert process.stderr is not None
            said = process.stderr.read().decode("utf-8", "replace")
            process.stderr.close()
            if attempt == 2 or "Address already in use" not in said:
                raise StoreError(f"dnsmasq did not start: {said.strip()[-500:]}") from None
            continue
        try:
            yield DnsNode(port)
        finally:
            process.terminate()
            process.wait(timeout=10)
            assert process.stderr is not None
            process.stderr.close()
        return
