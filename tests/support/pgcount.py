"""A relay to a :class:`~support.pgcluster.TemporaryCluster` that counts the round trips of its connections.

It listens on a unix socket of its own and passes every octet both ways, reading the messages as PostgreSQL's
protocol frames them ("Message Formats"): a client's first message (the startup packet) is its length and its
body; every other message in either direction is a type byte, a length and a body. Each ``ReadyForQuery``
(``Z``) the server sends ends one exchange: the startup's, a simple ``Query``'s (however many statements its text
holds), or an extended query's ``Sync``. What the client sent as a simple ``Query`` (``Q``) is kept, in order, for
the test to say what was asked, and so is the text of each extended query's ``Parse`` (``P``).
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from pathlib import Path

from support.pgrelay import Relay


class Counted:
    """What the connections through a :class:`CountingRelay` have exchanged so far (every connection's, together)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: ReadyForQuery messages the server sent: one a round trip (the startup's included).
        self.ready = 0
        #: The texts of the client's simple queries, in the order they were sent.
        self.queries: list[str] = []
        #: The texts of the client's extended queries (each ``Parse``), in the order they were sent.
        self.parsed: list[str] = []
        #: Connections made.
        self.connections = 0


class CountingRelay(Relay):
    """A unix-socket relay to ``cluster_socket_dir``'s server that counts what passes (:attr:`counted`)."""

    def __init__(self, cluster_socket_dir: Path) -> None:
        self.counted = Counted()
        super().__init__(cluster_socket_dir, "pgcount")

    def reset(self) -> Counted:
        """What was counted until now; counting starts again from nothing."""
        with self.counted.lock:
            was, self.counted = self.counted, Counted()
        return was

    def relay(self, client: socket.socket, server: socket.socket) -> None:
        with self.counted.lock:
            self.counted.connections += 1
        threading.Thread(target=self._relay, args=(client, server, True), daemon=True).start()
        threading.Thread(target=self._relay, args=(server, client, False), daemon=True).start()

    def _relay(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        pending = b""
        untyped = from_client  # the client's startup packet has no type byte
        try:
            while data := source.recv(1 << 16):
                pending += data
                while True:
                    head = 4 if untyped else 5
                    if len(pending) < head:
                        break
                    (length,) = struct.unpack("!I", pending[head - 4:head])
                    end = head - 4 + length
                    if len(pending) < end:
                        break
                    kind, body = (None, b"") if untyped else (pending[:1], pending[5:end])
                    pending, untyped = pending[end:], False
                    self._saw(kind, body, from_client)
                sink.sendall(data)  # counted first: the test reads the counts once the client has its answer
        except OSError:
            pass
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def _saw(self, kind: bytes | None, body: bytes, from_client: bool) -> None:
        counted = self.counted
        with counted.lock:
            if from_client and kind == b"Q":
                counted.queries.append(body.rstrip(b"\x00").decode())
            elif from_client and kind == b"P":  # a statement's name, then its text, each ended by a zero octet
                counted.parsed.append(body.split(b"\x00", 2)[1].decode())
            elif not from_client and kind == b"Z":
                counted.ready += 1
