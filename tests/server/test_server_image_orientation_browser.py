"""An image whose EXIF orientation a browser turns it by, in Chromium: what the reader sees, the region a box dragged
on it names, and the pixels ``#crop=`` of that name cuts.

A region is of the image's stored pixels, whatever its EXIF says (PDI-GRAMMAR.md's reading of images). Chromium
shows a JPEG, and a PNG with an ``eXIf`` chunk, turned as its ``Orientation`` says (CSS ``image-orientation:
from-image``, the initial value), and a WebP as stored: measured here from a screenshot, against Pillow's
``ImageOps.exif_transpose`` (what the image looks like turned) and the stored pixels. A box is dragged over the
quarter the reader sees at the bottom right; the region expected is found by Pillow alone: each stored pixel is
given its own number, the numbered image turned by ``exif_transpose``, and the stored pixels under the box dragged
read back from it. Before, the viewer scaled what the reader saw onto the stored width and height: on a JPEG of
orientation 6 a box over one quarter named a region across two.
"""

from __future__ import annotations

import base64
import io
import json
import time
import urllib.parse
from typing import Any

import httpx
import pytest
from PIL import Image, ImageOps
from server_helpers import S, Served

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools

#: The image stored: 40×20, four quarters of four colours (top left, top right, bottom left, bottom right).
WIDTH, HEIGHT = 40, 20
QUARTERS = ((220, 30, 30), (30, 200, 40), (40, 60, 220), (230, 210, 20))
#: The box dragged, in fractions of the image as shown: inside its bottom-right quarter, no end half-way between pixels.
START, END = (0.61, 0.62), (0.89, 0.91)


def _stored() -> Image.Image:
    image = Image.new("RGB", (WIDTH, HEIGHT))
    for y in range(HEIGHT):
        for x in range(WIDTH):
            image.putpixel((x, y), QUARTERS[(x >= WIDTH // 2) + 2 * (y >= HEIGHT // 2)])
    return image


def _file(fmt: str, orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    options: dict[str, Any] = {"JPEG": {"quality": 100, "subsampling": 0}, "PNG": {}, "WEBP": {"lossless": True}}[fmt]
    out = io.BytesIO()
    _stored().save(out, format=fmt, exif=exif.tobytes(), **options)
    return out.getvalue()


def _under(orientation: int, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The stored pixels seen under ``box`` (pixels of the image shown turned by ``orientation``), by Pillow alone."""
    numbered = Image.new("I", (WIDTH, HEIGHT))
    numbered.putdata([y * WIDTH + x for y in range(HEIGHT) for x in range(WIDTH)])
    exif = numbered.getexif()
    exif[0x0112] = orientation
    shown = ImageOps.exif_transpose(numbered).crop(box)
    seen = [(n % WIDTH, n // WIDTH) for n in shown.get_flattened_data()]
    xs, ys = [x for x, _ in seen], [y for _, y in seen]
    assert len(seen) == (max(xs) - min(xs) + 1) * (max(ys) - min(ys) + 1)  # a rectangle of stored pixels
    return min(xs), min(ys), max(xs) + 1, max(ys) + 1


def _js(pipe: Pipe, session: str, expression: str) -> Any:
    answer = pipe.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                       session, time.monotonic() + 30)
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def _box(pipe: Pipe, session: str, key: str) -> list[float]:
    return list(_js(pipe, session, f"(() => {{ const r = document.getElementById({json.dumps(key)})"
                                   ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()"))


def _mouse(pipe: Pipe, session: str, kind: str, x: float, y: float, buttons: int) -> None:
    params = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1}
    pipe.call("Input.dispatchMouseEvent", params, session, time.monotonic() + 30)


def _drag(pipe: Pipe, session: str, start: tuple[float, float], end: tuple[float, float]) -> None:
    _mouse(pipe, session, "mouseMoved", *start, 0)
    _mouse(pipe, session, "mousePressed", *start, 1)
    for i in range(1, 9):
        _mouse(pipe, session, "mouseMoved", start[0] + (end[0] - start[0]) * i / 8,
               start[1] + (end[1] - start[1]) * i / 8, 1)
    _mouse(pipe, session, "mouseReleased", *end, 0)


def _screenshot(pipe: Pipe, session: str) -> Image.Image:
    shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    return Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")


def _quarters(image: Image.Image) -> list[tuple[int, ...]]:
    """The colour at the middle of each quarter of ``image`` (top left, top right, bottom left, bottom right)."""
    w, h = image.size
    return [tuple(image.getpixel((int(w * fx), int(h * fy)))[:3]) for fy in (0.25, 0.75) for fx in (0.25, 0.75)]


def _near(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return max(abs(p - q) for p, q in zip(a, b, strict=True)) <= 6


OFFERED = """(async () => {
  const input = document.getElementById("name"), until = performance.now() + 20000;
  await new Promise((resolve) => setTimeout(resolve, 300));
  while (input.dataset.state !== "verified" && input.dataset.state !== "error" && performance.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 25));
  return input.dataset.state === "verified" ? input.value : "error: " + input.dataset.error;
})()"""

CASES = [("JPEG", o) for o in range(1, 9)] + [("PNG", o) for o in range(1, 9)] + [("WEBP", 6), ("WEBP", 2)]


@pytest.fixture(scope="module")
def oriented(served: Served) -> dict[tuple[str, int], str]:
    return {(fmt, o): str(served.archive.add(S, _file(fmt, o), format={"JPEG": "image+jpeg"}.get(fmt, fmt.lower()))) for fmt, o in CASES}


def test_a_box_dragged_on_a_turned_image_names_the_stored_pixels_seen_and_crop_cuts_them(
    served: Served, oriented: dict[tuple[str, int], str]
) -> None:
    with devtools() as pipe:
        for (fmt, orientation), name in oriented.items():
            turned = fmt != "WEBP"  # Chromium turns a JPEG and a PNG, and shows a WebP as stored
            shown_as = orientation if turned else 1
            session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
            size = {"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": False}
            pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
            _js(pipe, session, "document.getElementById('image').scrollIntoView({block: 'center'})")
            left, top, width, height = _box(pipe, session, "image")
            # what the reader sees: the stored image turned as exif_transpose turns it (a WebP: as stored)
            seen = _screenshot(pipe, session).crop((round(left), round(top), round(left + width), round(top + height)))
            numbered = _stored()
            exif = numbered.getexif()
            exif[0x0112] = shown_as
            expected_look = ImageOps.exif_transpose(numbered)
            assert all(_near(a, b) for a, b in zip(_quarters(seen), _quarters(expected_look), strict=True)), (fmt, orientation)
            shown_width, shown_height = expected_look.size
            assert abs(width / height - shown_width / shown_height) < 0.05, (fmt, orientation)
            # a box dragged over the bottom-right quarter the reader sees
            _drag(pipe, session, (left + START[0] * width, top + START[1] * height),
                  (left + END[0] * width, top + END[1] * height))
            box = (round(START[0] * shown_width), round(START[1] * shown_height),
                   round(END[0] * shown_width), round(END[1] * shown_height))
            x1, y1, x2, y2 = _under(shown_as, box)
            rect = f"{name}#rect=({x1},{y1}),({x2},{y2})"
            assert _js(pipe, session, OFFERED) == rect, (fmt, orientation)
            # its crop: the stored pixels under the box, one colour, the one the reader saw there
            crop = Image.open(io.BytesIO(httpx.get(f"{served.url}/uri-res/N2R?{rect.replace('#rect=', '%23crop=')}").content))
            colours = crop.convert("RGB").getcolors()
            assert colours is not None and len(colours) == 1, (fmt, orientation, colours)
            assert _near(colours[0][1], tuple(seen.getpixel((int(width * 0.75), int(height * 0.75))))), (fmt, orientation)
            # a browser shows the crop turned as it shows the whole (its eXIf says the orientation the whole's does)
            assert ImageOps.exif_transpose(crop).size == (box[2] - box[0], box[3] - box[1]), (fmt, orientation)
            # the name opened outlines the box where it was dragged
            opened = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(rect, safe='')}")
            pipe.call("Emulation.setDeviceMetricsOverride", size, opened, time.monotonic() + 30)
            left, top, width, height = _box(pipe, opened, "image")
            cited = _box(pipe, opened, "cited")
            drawn = [left + width * box[0] / shown_width, top + height * box[1] / shown_height,
                     width * (box[2] - box[0]) / shown_width, height * (box[3] - box[1]) / shown_height]
            assert all(abs(a - b) < 1.5 for a, b in zip(cited, drawn, strict=True)), (fmt, orientation, cited, drawn)


#: A JPEG larger than the viewer asks a browser to decode (more than MAX_SHOWN_PIXELS): shown by the server's preview.
BIG_WIDTH, BIG_HEIGHT = 14_000, 7_500
#: What one pixel of the numbered image the regions expected are read from stands for (it is BIG / STEP pixels).
STEP = 100


def _big_file(orientation: int) -> bytes:
    """The four quarters at ``BIG_WIDTH`` × ``BIG_HEIGHT``, made by libvips (a few megabytes), its EXIF saying
    ``orientation`` (an APP1 segment after the start of the image, as a camera writes it)."""
    import struct

    import pyvips

    image = pyvips.Image.black(BIG_WIDTH, BIG_HEIGHT, bands=3)
    for n, colour in enumerate(QUARTERS):
        x, y = (n % 2) * BIG_WIDTH // 2, (n // 2) * BIG_HEIGHT // 2
        image = image.draw_rect(list(colour), x, y, BIG_WIDTH // 2, BIG_HEIGHT // 2, fill=True)
    plain = image.cast("uchar").jpegsave_buffer(Q=90, strip=True)
    exif = Image.Exif()
    exif[0x0112] = orientation
    payload = exif.tobytes()
    return plain[:2] + b"\xff\xe1" + struct.pack(">H", 2 + len(payload)) + payload + plain[2:]


def _under_scaled(orientation: int, box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    """The stored pixels seen under ``box`` (fractions of the image shown turned by ``orientation``), by Pillow alone
    on a numbered image of a pixel a ``STEP`` × ``STEP`` block, in pixels of the big image."""
    width, height = BIG_WIDTH // STEP, BIG_HEIGHT // STEP
    numbered = Image.new("I", (width, height))
    numbered.putdata([y * width + x for y in range(height) for x in range(width)])
    numbered.getexif()[0x0112] = orientation
    shown = ImageOps.exif_transpose(numbered)
    cut = shown.crop((round(box[0] * shown.width), round(box[1] * shown.height),
                      round(box[2] * shown.width), round(box[3] * shown.height)))
    seen = [(n % width, n // width) for n in cut.get_flattened_data()]
    xs, ys = [x for x, _ in seen], [y for _, y in seen]
    return min(xs) * STEP, min(ys) * STEP, (max(xs) + 1) * STEP, (max(ys) + 1) * STEP


@pytest.mark.parametrize("orientation", [6, 8])
def test_a_box_dragged_on_the_preview_of_a_large_turned_jpeg_names_the_stored_pixels_seen(
    served: Served, orientation: int
) -> None:
    """A JPEG too large for the viewer to have a browser decode is shown by the server's preview: drawn turned as
    Chromium shows the JPEG itself (the quarters where ``exif_transpose`` puts them), and a box dragged on it names
    the stored pixels seen under it (within a numbered block's size: the preview is some 4,000 pixels a side), whose
    crop is the one colour the reader saw there and says the orientation."""
    from pdi.server.pages.media_view import MAX_SHOWN_PIXELS

    assert BIG_WIDTH * BIG_HEIGHT > MAX_SHOWN_PIXELS
    name = str(served.archive.add(S, _big_file(orientation), format="image+jpeg"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        size = {"width": 1100, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, time.monotonic() + 30)
        assert "/api/image/preview?" in _js(pipe, session, "document.getElementById('image').src")
        loaded = ("(async () => { const i = document.getElementById('image'), until = performance.now() + 60000;"
                  " while (!(i.complete && i.naturalWidth) && performance.now() < until)"
                  " await new Promise((r) => setTimeout(r, 50)); return i.naturalWidth; })()")
        assert _js(pipe, session, loaded) > 0
        _js(pipe, session, "document.getElementById('image').scrollIntoView({block: 'center'})")
        left, top, width, height = _box(pipe, session, "image")
        seen = _screenshot(pipe, session).crop((round(left), round(top), round(left + width), round(top + height)))
        small = Image.new("RGB", (BIG_WIDTH // STEP, BIG_HEIGHT // STEP))
        for n, colour in enumerate(QUARTERS):
            small.paste(colour, ((n % 2) * small.width // 2, (n // 2) * small.height // 2,
                                 (n % 2 + 1) * small.width // 2, (n // 2 + 1) * small.height // 2))
        small.getexif()[0x0112] = orientation
        expected_look = ImageOps.exif_transpose(small)
        assert all(_near(a, b) for a, b in zip(_quarters(seen), _quarters(expected_look), strict=True)), orientation
        assert abs(width / height - BIG_HEIGHT / BIG_WIDTH) < 0.05  # drawn turned: as tall as the JPEG is wide
        _drag(pipe, session, (left + START[0] * width, top + START[1] * height),
              (left + END[0] * width, top + END[1] * height))
        named = _js(pipe, session, OFFERED)
        assert named.startswith(name + "#rect="), named
        corners = [int(v) for v in named.split("#rect=", 1)[1].replace("(", "").replace(")", "").split(",")]
        expected = _under_scaled(orientation, (*START, *END))
        assert all(abs(a - b) <= STEP for a, b in zip(corners, expected, strict=True)), (corners, expected)
        crop = Image.open(io.BytesIO(httpx.get(f"{served.url}/uri-res/N2R?{named.replace('#rect=', '%23crop=')}",
                                               timeout=120).content))
        assert crop.getexif().get(0x0112) == orientation
        colours = crop.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is not None
        most = max(colours)[1]
        assert _near(most, tuple(seen.getpixel((int(width * 0.75), int(height * 0.75))))), (most, orientation)


def test_a_png_whose_exif_follows_its_image_data_is_shown_and_mapped_as_stored(served: Served) -> None:
    """Chromium reads a PNG's ``eXIf`` only before its image data: one after it is shown as stored (measured here),
    and the viewer maps a box on it as stored (``data-orientation`` 1), whatever Pillow, reading the whole file,
    finds."""
    import struct
    import zlib

    png = _file("PNG", 1)
    exif = Image.Exif()
    exif[0x0112] = 6
    payload = exif.tobytes()[6:]
    chunk = struct.pack(">I", len(payload)) + b"eXIf" + payload
    chunk += struct.pack(">I", zlib.crc32(chunk[4:]) & 0xFFFFFFFF)
    end = png.index(b"IEND") - 4
    name = str(served.archive.add(S, png[:end] + chunk + png[end:], format="png"))
    with devtools() as pipe:
        session = open_page(pipe, f"{served.url}/view?pdi={urllib.parse.quote(name, safe='')}")
        loaded = ("(async () => { const i = document.getElementById('image'), until = performance.now() + 20000;"
                  " while (!(i.complete && i.naturalWidth) && performance.now() < until)"
                  " await new Promise((r) => setTimeout(r, 25));"
                  " return [i.naturalWidth, i.naturalHeight, document.getElementById('figure').dataset.orientation]; })()")
        assert _js(pipe, session, loaded) == [WIDTH, HEIGHT, "1"]
