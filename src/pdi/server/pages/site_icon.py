"""The site's icon and ``/robots.txt``: what browsers and crawlers ask of their own accord.

``/robots.txt`` (RFC 9309) lets crawlers read the catalogue's pages, the
documents and their names, and keeps them from the routes whose every
asking costs work and finds nothing a link does not (``/search``, the JSON
API under ``/api/``, sign-in, the TimeGates and TimeMaps, OAI-PMH, which
harvesters ask on purpose). A crawler that ignores it meets the resolver's
limits as anyone does.

A browser asks every site for ``/favicon.ico`` (or for the icon a page's
``<link rel="icon">`` names) once it has shown a page; without one, each
visit cost a 404 in the access log and the browser's console. The icon is
the header's colour with a white "p": ``/favicon.svg`` as SVG (which the
pages name, :func:`pdi.server.pages.layout.page`) and ``/favicon.ico`` as
a real ICO of one 32 × 32 PNG, for browsers and feed readers that ask that
path whatever a page says. Both are drawn from one description of the
shapes (:data:`CORNER`, :data:`BOWL`, :data:`STEM`), the PNG by this module's own few lines of ``zlib``
and ``struct`` (no imaging library at start-up), made once a process. Both
are answered with a day's ``Cache-Control`` and an ``ETag`` of their octets.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from functools import cache

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pdi.server.http.conditional import tag_matches

#: The header's background (``header.site`` in :mod:`pdi.server.pages.layout`) and the letter's colour.
BACKGROUND = (0x24, 0x30, 0x3F)
LETTER = (0xFF, 0xFF, 0xFF)
SIZE = 32
#: The shapes on a 32 × 32 grid: a rounded square (corner radius), then the "p": its bowl, a ring (centre,
#: outer and inner radius), and its stem, a bar (left, top, right, bottom).
CORNER = 6
BOWL = (17.5, 14.5, 7.5, 4.0)
STEM = (8.0, 7.0, 12.0, 28.0)

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">'
    f'<rect width="32" height="32" rx="{CORNER}" fill="#{bytes(BACKGROUND).hex()}"/>'
    f'<circle cx="{BOWL[0]}" cy="{BOWL[1]}" r="{(BOWL[2] + BOWL[3]) / 2}" fill="none"'
    f' stroke="#{bytes(LETTER).hex()}" stroke-width="{BOWL[2] - BOWL[3]}"/>'
    f'<rect x="{STEM[0]}" y="{STEM[1]}" width="{STEM[2] - STEM[0]}" height="{STEM[3] - STEM[1]}"'
    f' fill="#{bytes(LETTER).hex()}"/></svg>\n'
).encode()


def _cover(x: float, y: float) -> tuple[int, int, int, int]:
    """The colour (RGBA) at the point ``(x, y)`` of the grid: transparent outside the rounded square."""
    near_x = min(max(x, CORNER), SIZE - CORNER)
    near_y = min(max(y, CORNER), SIZE - CORNER)
    if (x - near_x) ** 2 + (y - near_y) ** 2 > CORNER**2:
        return (0, 0, 0, 0)
    cx, cy, outer, inner = BOWL
    ring = inner**2 <= (x - cx) ** 2 + (y - cy) ** 2 <= outer**2
    stem = STEM[0] <= x <= STEM[2] and STEM[1] <= y <= STEM[3]
    return (*(LETTER if ring or stem else BACKGROUND), 255)


def _pixel(px: int, py: int) -> bytes:
    """One pixel, the mean of 4 × 4 samples inside it (so that the curves are smooth)."""
    samples = [_cover(px + (i + 0.5) / 4, py + (j + 0.5) / 4) for i in range(4) for j in range(4)]
    alpha = sum(s[3] for s in samples)
    if alpha == 0:
        return b"\0\0\0\0"
    return bytes([*(round(sum(s[k] * s[3] for s in samples) / alpha) for k in range(3)), round(alpha / 16)])


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@cache
def png() -> bytes:
    """The icon as a 32 × 32 RGBA PNG (PNG specification, 3rd edition: IHDR, one IDAT, IEND)."""
    rows = b"".join(b"\0" + b"".join(_pixel(x, y) for x in range(SIZE)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8 bits a sample, RGBA, no interlace
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 9)) + _chunk(b"IEND", b"")


@cache
def ico() -> bytes:
    """The icon as an ICO file of one image, the PNG (an ICONDIR, one ICONDIRENTRY, the PNG's octets)."""
    image = png()
    return struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(image), 22) + image


@cache
def _tag(body: bytes) -> str:
    """The entity tag of one of these files: its SHA-256, worked out once a process."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _answer(request: Request, body: bytes, media_type: str) -> Response:
    tag = _tag(body)
    headers = {"ETag": tag, "Cache-Control": "public, max-age=86400"}
    field = request.headers.get("if-none-match")
    if field is not None and tag_matches(field, tag):
        return Response(status_code=304, headers=headers)
    return Response(b"" if request.method == "HEAD" else body, media_type=media_type,
                    headers={**headers, "Content-Length": str(len(body))})


async def favicon_ico(request: Request) -> Response:
    return _answer(request, ico(), "image/x-icon")


async def favicon_svg(request: Request) -> Response:
    return _answer(request, SVG, "image/svg+xml")


#: The site's robots.txt (RFC 9309 §2.2: groups of a user-agent line and its rules; the longest match decides).
ROBOTS = (
    b"# pdi serve: the catalogue, the documents and their names may be read; the routes that compute,\n"
    b"# search or sign in are left to people and harvesters that ask for them.\n"
    b"User-agent: *\n"
    b"Disallow: /search\n"
    b"Disallow: /api/\n"
    b"Disallow: /signin\n"
    b"Disallow: /timegate/\n"
    b"Disallow: /timemap/\n"
    b"Disallow: /oai\n"
    b"Allow: /\n"
)


async def robots_txt(request: Request) -> Response:
    return _answer(request, ROBOTS, "text/plain; charset=utf-8")


def routes() -> list[Route]:
    """``/favicon.ico``, ``/favicon.svg`` and ``/robots.txt``, for ``GET`` and ``HEAD``."""
    return [Route("/favicon.ico", favicon_ico, methods=["GET", "HEAD"]),
            Route("/favicon.svg", favicon_svg, methods=["GET", "HEAD"]),
            Route("/robots.txt", robots_txt, methods=["GET", "HEAD"])]
