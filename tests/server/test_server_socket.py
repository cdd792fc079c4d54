"""``pdi serve``'s socket answers small requests at once: every connection has TCP_NODELAY.

Without it, Nagle's algorithm held each small answer until the client's
delayed ACK, about 40 ms a request (issue 13). The check is on the
mechanism, not on a time: asyncio sets ``TCP_NODELAY`` on the connections it
accepts only from a socket that says it is TCP, so the test serves on the
socket ``pdi serve`` makes and reads the option on the connection the server
accepted.
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from pdi.errors import PDIError
from pdi.server.process.run import listening_socket


def test_connections_accepted_from_the_listening_socket_have_tcp_nodelay() -> None:
    listener = listening_socket("127.0.0.1", 0)
    port = listener.getsockname()[1]

    async def main() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connection, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            value = await asyncio.wait_for(accepted, 10)
            writer.close()
            return value

    assert asyncio.run(main()) != 0


def test_a_port_in_use_is_a_pdi_error() -> None:
    holder = listening_socket("127.0.0.1", 0)
    holder.listen()
    try:
        with pytest.raises(PDIError, match=r"cannot listen on 127\.0\.0\.1 port"):
            listening_socket("127.0.0.1", holder.getsockname()[1])
    finally:
        holder.close()
