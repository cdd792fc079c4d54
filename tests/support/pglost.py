"""A relay to a :class:`~support.pgcluster.TemporaryCluster` that loses the answer to a deposit's commit.

The other half of a commit of unknown outcome (tests/archive/test_archive_postgres_commit_lost.py ends the
backend before it commits): here the server *has* committed, and the client never hears it, as when the
network or a failover takes the connection between the server's commit and its answer. The relay listens on
a unix socket of its own and passes every octet both ways; armed, it watches for a connection that sends
``INSERT INTO versions`` (a deposit minting a version; or the statement :meth:`LostAnswer.arm` is given), and at
that connection's next ``ReadyForQuery`` outside a transaction (``Z``, status ``I``: sent after a ``COMMIT``, or
after a statement committed on its own) it closes the connection in place of sending the answer. PostgreSQL
sends ``ReadyForQuery`` only once the transaction's commit is done (the protocol's message flow, "Simple
Query"), so what was cut was committed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

from support.pgrelay import Relay

#: A ``ReadyForQuery`` message whose transaction status is idle (PostgreSQL's protocol, "Message Formats").
IDLE = b"Z\x00\x00\x00\x05I"
#: What a deposit sends in the transaction whose answer is cut.
MINTS = b"INSERT INTO versions"


class LostAnswer(Relay):
    """A unix-socket relay to ``cluster_socket_dir``'s server; :meth:`arm` it to lose the next deposit's answer."""

    def __init__(self, cluster_socket_dir: Path) -> None:
        self._armed = threading.Event()
        self._marker = MINTS
        #: Set once an answer was cut.
        self.cut = threading.Event()
        super().__init__(cluster_socket_dir, "pglost")

    def arm(self, marker: bytes = MINTS) -> None:
        """Lose the answer to the next commit of a connection that sends ``marker`` (by default a deposit's)."""
        self._marker = marker
        self.cut.clear()
        self._armed.set()

    def relay(self, client: socket.socket, server: socket.socket) -> None:
        marked = threading.Event()
        threading.Thread(target=self._to_server, args=(client, server, marked), daemon=True).start()
        threading.Thread(target=self._to_client, args=(server, client, marked), daemon=True).start()

    def _to_server(self, client: socket.socket, server: socket.socket, marked: threading.Event) -> None:
        try:
            while data := client.recv(1 << 16):
                if self._armed.is_set() and self._marker in data:
                    marked.set()
                server.sendall(data)
        except OSError:
            pass
        _close(client, server)

    def _to_client(self, server: socket.socket, client: socket.socket, marked: threading.Event) -> None:
        try:
            while data := server.recv(1 << 16):
                if marked.is_set() and IDLE in data and self._armed.is_set():
                    self._armed.clear()
                    self.cut.set()
                    break  # committed: its answer is never sent
                client.sendall(data)
        except OSError:
            pass
        _close(client, server)


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()
