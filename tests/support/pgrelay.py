"""A relay to a :class:`~support.pgcluster.TemporaryCluster` on a unix socket of its own: the part that
:mod:`support.pglost` (a commit's answer lost) and :mod:`support.pgcount` (round trips counted) share. It accepts
each client, connects it to the cluster's socket, and hands the pair to :meth:`Relay.relay`, which passes the
octets both ways as the subclass watches them."""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
from abc import ABC, abstractmethod
from pathlib import Path


class Relay(ABC):
    """A unix-socket relay to ``cluster_socket_dir``'s server. A subclass sets what its :meth:`relay` reads, then
    calls this ``__init__``, which begins accepting."""

    def __init__(self, cluster_socket_dir: Path, name: str) -> None:
        self.upstream = str(Path(cluster_socket_dir) / ".s.PGSQL.5432")
        self.directory = Path(tempfile.mkdtemp(prefix=f"pdi-{name}-"))
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.directory / ".s.PGSQL.5432"))
        self._listener.listen(64)
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name=f"{name}-accept").start()

    def url(self, cluster_url: str, cluster_dir: Path) -> str:
        """``cluster_url`` (a URL of the cluster, ``host=`` its socket's folder) through this relay."""
        return cluster_url.replace(f"host={cluster_dir}", f"host={self.directory}")

    def close(self) -> None:
        """Stop accepting, close every connection, and remove the socket and its folder (a relay of each test's
        left two folders in /tmp a run)."""
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.close()
        with contextlib.suppress(OSError):
            (self.directory / ".s.PGSQL.5432").unlink()
            self.directory.rmdir()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(self.upstream)
            with self._lock:
                self._sockets += [client, server]
            self.relay(client, server)

    @abstractmethod
    def relay(self, client: socket.socket, server: socket.socket) -> None:
        """Pass the octets of a new connection both ways (threads of its own): the subclass's."""
