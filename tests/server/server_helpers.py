"""What the resolver tests share: the archive's series, the text deposited, the names."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from pdi.archive import Archive, Content

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
    versioned: str
    long: str


def long_line(i: int) -> str:
    """Line ``i`` of the long text (``Served.long``), its LF included: 160,000 lines, about 2 MB."""
    return f"{i:07d} line of a long text\n"


LONG_LINES = 160_000


class Clock:
    """A settable clock, so deposit times are known to the test."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now


#: The document ``Served.versioned`` names (generic): version 1 in HTML and text, version 2 in text.
VERSIONS_ID = "versions"
#: When each version of it was deposited, as the catalog records it (ISO 8601, UTC).
VERSION_TIMES = ("2026-11-22T14:30:00.000000Z", "2026-11-23T09:05:07.000000Z")


def deposit_versions(location: str) -> str:
    """Deposit the two versions of ``VERSIONS_ID`` at the times of ``VERSION_TIMES``; returns its generic name."""
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    with Archive.open(location, clock=clock) as archive:
        first = archive.deposit(
            S, [Content(b"<p>first</p>", "html"), Content(b"first\n", "text")], foreign_id=VERSIONS_ID
        )
        generic = str(first[0]).rsplit(".", 2)[0]
        clock.now = datetime.datetime(2026, 11, 23, 9, 5, 7, tzinfo=datetime.UTC)
        archive.add_version(generic, [Content(b"second\n", "text")])
    return generic
