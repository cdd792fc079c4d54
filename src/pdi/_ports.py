"""A free TCP port for a server that must be told its port before it starts (Swift's rings, pywb, a benchmark's peer).

A port the kernel hands out for ``bind(("127.0.0.1", 0))`` comes from the
ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``), the range
every outgoing connection also takes its local port from. Closed and given
to another program to bind, it can meanwhile have become the local end of
some connection, and the program fails with "Address already in use"
(seen in the test suite: a resolver's own client connections took the port
a second resolver was about to listen on). A port *below* that range is
never given to an outgoing connection, so once a bind test finds it free
only another server choosing the same port can take it; :func:`free_port`
picks one at random there. Where the server can be asked for port 0 and
say which port it took (``pdi serve --port 0``), that is better still.
"""

from __future__ import annotations

import random
import socket

#: Where to look when the ephemeral range cannot be read (Linux's default range starts at 32768).
_LOW, _HIGH = 10000, 32767


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return _HIGH + 1


def free_port(host: str = "127.0.0.1", *, tries: int = 200) -> int:
    """A TCP port of ``host`` that nothing listens on now and that no outgoing connection will take."""
    high = min(_HIGH, _ephemeral_start() - 1)
    low = _LOW if high > _LOW + 1000 else 1024
    for _ in range(tries):
        port = random.randint(low, high)
        with socket.socket() as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:  # a crowded range: the kernel's choice, as before
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
