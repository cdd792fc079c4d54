"""A transport in memory for feeding a connection's protocol reads by hand and reading back what it wrote.

``MemoryTransport`` keeps every octet written while it is open in :attr:`written` (one ``bytearray``: the
boundaries between writes are not kept), says whether the protocol paused its reading (:attr:`paused`) and
whether it closed or aborted the connection (:attr:`closed`). It cannot half-close (``can_write_eof`` is false, as
a TLS transport's is), so a refusal closes at once instead of lingering.
"""

from __future__ import annotations

import asyncio
from typing import Any


class MemoryTransport(asyncio.Transport):
    """The octets a protocol wrote, and whether it paused its reading or closed."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False
        self.paused = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def write(self, data: Any) -> None:
        if not self.closed:
            self.written += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def can_write_eof(self) -> bool:
        return False

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass
