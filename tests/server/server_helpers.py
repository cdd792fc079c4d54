"""What the resolver tests share: the archive's series, the text deposited, the names."""

from __future__ import annotations

from dataclasses import dataclass

from pdi.archive import Archive

S = "library.example.us"
#: Stored CRLF-canonical: "Hello, world.\r\n" is characters 0-14, "Second 𝄞 line.\r\n" 15-30.
TEXT = "Hello, world.\nSecond 𝄞 line.\n<script>alert(1)</script>\n".encode()


@dataclass(frozen=True)
class Served:
    """The resolver's base URL, its archive and the names deposited in it."""

    url: str
    archive: Archive
    text: str
    page: str
    picture: str
    sound: str
    foreign: str
