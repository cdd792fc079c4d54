"""A crop of a decompression bomb is never decoded whole in the resolver (issue 12).

Reported: eight parallel 2×2 crops of a 420 KB PNG of 12,000×12,000 pixels
took 3 GB. The PNG here is made with Pillow (one grey level, so it compresses
to a few hundred kilobytes); past the pixels a Pillow crop decodes, libvips
cuts it a few rows at a time in a bounded child (pdi.fragments.image_streamed),
and the process asking for the crop is measured from the kernel.
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.errors import LimitError, NotFoundError
from pdi.fragments import evaluate
from pdi.fragments.image import MAX_CROP_PIXELS, _gif_seek_pixels
from peak_memory import run_with_peak
from support.tiff import tiff_chain


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.png"
    buffer = io.BytesIO()
    Image.new("L", (12_000, 12_000), 7).save(buffer, format="PNG", optimize=True)
    path.write_bytes(buffer.getvalue())
    return path


def test_a_crop_of_a_huge_frame_is_cut_by_streaming_and_the_rect_still_names_it(bomb: Path) -> None:
    # more pixels than a Pillow crop decodes: libvips cuts it, a few rows at a time, in a bounded child
    # (tests/test_fragments_image_streamed.py)
    data = bomb.read_bytes()
    assert len(data) < 1_000_000 and MAX_CROP_PIXELS < 12_000 * 12_000
    cut = evaluate("crop", ((0, 0), (2, 2)), data, media_type="image/png", charset=None)
    with Image.open(io.BytesIO(cut.data)) as image:
        assert (cut.media_type, image.size, image.getextrema()) == ("image/png", (2, 2), (7, 7))
    region = evaluate("rect", ((0, 0), (2, 2)), data, media_type="image/png", charset=None).region
    assert region is not None and (region.width, region.height, region.x2, region.y2) == (12_000, 12_000, 2, 2)


def test_cutting_it_takes_the_resolver_no_memory_to_speak_of(bomb: Path) -> None:
    """The process that asks for the crop (a resolver) does not decode: its child does, whose own peak is bounded
    (tests/test_fragments_image_streamed.py measures it)."""
    script = (
        "import sys\n"
        "from pdi.fragments import evaluate\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "print(evaluate('crop', ((0, 0), (2, 2)), data, media_type='image/png', charset=None).media_type)\n"
    )
    small = bomb.parent / "small.png"
    Image.new("L", (40, 30), 7).save(small, format="PNG")

    def peak_kib(path: Path, expected: str) -> int:
        status, peak, out = run_with_peak([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE)
        assert status == 0
        assert out.decode().strip() == expected
        return peak

    baseline = peak_kib(small, "image/png")  # the same process cutting a 40x30 image: the interpreter and Pillow
    # no more than that and a little: one decoded frame of the bomb alone is 144 MB
    grown = peak_kib(bomb, "image/png") - baseline
    assert grown < 32 * 1024, f"{grown // 1024} MiB more than a small crop"


def test_a_gif_whose_later_frame_claims_158_million_pixels() -> None:
    # Found by fuzzing (tests/data/README.md): a 250-byte GIF whose frames 0 and 1 are 4×3
    # pixels and whose frame 2 claims 6144×25702, under Pillow's own bomb limit. Frame 2
    # is not cut; frame 1 is; rect names frame 2 from its header alone.
    raw = (Path(__file__).parent / "data" / "fuzz" / "fragment_image" / "found-gif-frame-158m-pixels").read_bytes()
    fragment, media_type, data = raw.split(b"\0", 2)
    assert (fragment, media_type, data[:6]) == (b"crop=(0,0),(2,2),2", b"image/gif", b"GIF87a")
    assert 2 * Image.MAX_IMAGE_PIXELS > 6144 * 25702  # Pillow alone would decode it
    with pytest.raises(LimitError, match="6144×25702"):
        evaluate("crop", ((0, 0), (2, 2), 2), data, media_type="image/gif", charset=None)
    region = evaluate("rect", ((0, 0), (2, 2), 2), data, media_type="image/gif", charset=None).region
    assert region is not None and (region.width, region.height, region.frame, region.frames) == (6144, 25702, 2, 3)
    cut = evaluate("crop", ((0, 0), (2, 2), 1), data, media_type="image/gif", charset=None)
    with Image.open(io.BytesIO(cut.data)) as png:
        assert (png.format, png.size) == ("PNG", (2, 2))


def _gif(
    width: int, height: int, frames: list[tuple[int, int, int, int]], *, colour_tables: bool = False,
    before: list[bytes] | None = None,
) -> bytes:
    """A GIF89a (its §§17–24, written here by hand) of a ``width``×``height`` logical screen and one-colour frames
    at ``(left, top, width, height)``, each with a graphic control extension; colour tables when asked; and
    ``before`` each frame, octets of other blocks (a comment extension) or none GIF knows (which Pillow skips)."""
    table = b"\x00\x00\x00\xff\xff\xff"
    out = bytearray(b"GIF89a" + struct.pack("<HH", width, height) + bytes([0xF0 if colour_tables else 0x70, 0, 0]))
    if colour_tables:
        out += table
    for number, (left, top, across, down) in enumerate(frames):
        out += before[number] if before else b""
        out += b"\x21\xf9\x04\x04\x00\x00\x00\x00"  # disposal: leave in place
        out += b"\x2c" + struct.pack("<HHHH", left, top, across, down) + (b"\x80" + table if colour_tables else b"\x00")
        out += b"\x02" + _sub_blocks(_lzw_of_one_colour(across * down))
    return bytes(out + b"\x3b")


def _lzw_of_one_colour(pixels: int) -> bytes:
    """GIF's LZW (minimum code size 2: codes of 3 bits, clear 4, end 5) of ``pixels`` pixels of colour 0, each a
    clear code and the colour's (so the code size never grows), then the end; bits packed least first."""
    codes = [4, 0] * pixels + [5]
    number = sum(code << (3 * at) for at, code in enumerate(codes))
    return number.to_bytes((3 * len(codes) + 7) // 8, "little")


def _sub_blocks(octets: bytes) -> bytes:
    return b"".join(bytes([len(octets[i:i + 255])]) + octets[i:i + 255] for i in range(0, len(octets), 255)) + b"\x00"


def test_a_late_frame_of_a_small_gif_on_a_huge_canvas_is_refused_before_it_is_decoded() -> None:
    """Reported: a 69 KB GIF of 3,000 one-pixel frames on an 8000×8000 canvas: rect of its last frame kept a worker
    busy for minutes (Pillow composes every frame before it on the whole canvas). Reaching frame N decodes N
    canvases: more than MAX_SEEK_PIXELS is a limit, said at once; an early frame is still answered."""
    data = _gif(8000, 8000, [(0, 0, 1, 1)] * 3000)
    assert len(data) < 70_000
    for scheme in ("rect", "crop"):
        with pytest.raises(LimitError, match=f"the 2999 frames before it, {2999 * 64_000_000:,} pixels"):
            evaluate(scheme, ((0, 0), (1, 1), 2999), data, media_type="image/gif", charset=None)
    # found in review: an octet no GIF block begins with, after the first frame, which Pillow skips
    junk = _gif(8000, 8000, [(0, 0, 1, 1)] * 3000, before=[b"", b"\x00"] + [b""] * 2998)
    with pytest.raises(LimitError, match=f"the 2999 frames before it, {2999 * 64_000_000:,} pixels"):
        evaluate("rect", ((0, 0), (1, 1), 2999), junk, media_type="image/gif", charset=None)
    region = evaluate("rect", ((0, 0), (1, 1), 2), data, media_type="image/gif", charset=None).region
    assert region is not None and (region.frame, region.frames, region.width) == (2, 3000, 8000)


@settings(max_examples=60, deadline=None)
@given(
    screen=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    frames=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(1, 30), st.integers(1, 30)),
                    min_size=1, max_size=8),
    tables=st.booleans(),
    data=st.data(),
)
def test_the_pixels_a_gif_seek_decodes_are_those_of_pillows_canvas(
    screen: tuple[int, int], frames: list[tuple[int, int, int, int]], tables: bool, data: st.DataObject,
) -> None:
    """Read from the blocks' headers, the canvas each frame is loaded onto is the one Pillow itself has after
    seeking it (its logical screen grown to hold each frame read): the sum is the cost bound's. Between frames,
    comment extensions and octets no block begins with, which Pillow skips."""
    others = st.sampled_from([b"", b"\x00", b"\x07\x99", b"\x21\xfe\x03abc\x00", b"\x21\xfe\x00"])
    before = [data.draw(others) for _ in frames]
    octets = _gif(*screen, frames, colour_tables=tables, before=before)
    with Image.open(io.BytesIO(octets)) as image:
        canvases = []
        for number in range(image.n_frames):
            image.seek(number)
            canvases.append(image.size[0] * image.size[1])
    for number in range(len(frames) + 1):
        assert _gif_seek_pixels(octets, number) == sum(canvases[:number])


@settings(max_examples=25, deadline=None)
@given(pages=st.integers(1, 12), big=st.booleans(), order=st.sampled_from(["<", ">"]))
def test_the_pages_of_a_tiff_are_those_pillow_counts(pages: int, big: bool, order: str) -> None:
    """Counted along the chain of image file directories from the header, as Pillow's n_frames counts them: of
    TIFFs Pillow writes itself (classic and BigTIFF), and of chains written here in either byte order."""
    from pdi.fragments.image import tiff_pages

    frames = [Image.new("L", (3 + k, 2), k) for k in range(pages)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:], big_tiff=big)
    for data in (out.getvalue(), tiff_chain(pages, order=order)):
        with Image.open(io.BytesIO(data)) as image:
            assert tiff_pages(data) == image.n_frames == pages


def test_a_tiff_of_more_pages_than_the_bound_is_refused_before_pillow_counts_them() -> None:
    """Found by the second attack: 100,000 one-pixel pages (7.8 MB) took 42 s of Pillow's counting for a rect of
    page 0. Past MAX_TIFF_PAGES, a LimitError before Pillow counts them; a loop in the chain ends the count."""
    from pdi.fragments.image import MAX_TIFF_PAGES, tiff_pages
    from pdi.server.pages.cite import image_facts

    many = tiff_chain(MAX_TIFF_PAGES + 10)
    for octets in (many, memoryview(many)):  # octets, or a view of them as a mapped blob gives
        with pytest.raises(LimitError, match=f"a TIFF of {MAX_TIFF_PAGES + 1:,} pages or more"):
            evaluate("rect", ((0, 0), (1, 1)), octets, media_type="image/tiff", charset=None)
    assert tiff_pages(tiff_chain(7, loop=True)) == 7
    # found in review: the headers Pillow takes anyway (and BigTIFF's big-endian, which it reads as classic)
    for magic, order in ((b"II\0*", "<"), (b"MM*\0", ">"), (b"MM\0+", ">")):
        odd = tiff_chain(MAX_TIFF_PAGES + 10, order=order, magic=magic)
        with Image.open(io.BytesIO(odd)) as image:
            assert image.format == "TIFF"
        with pytest.raises(LimitError, match="pages or more"):
            evaluate("rect", ((0, 0), (1, 1)), odd, media_type="image/tiff", charset=None)
    # the viewer's facts of an image count its pages too
    with pytest.raises(LimitError, match=f"a TIFF of {MAX_TIFF_PAGES + 1:,} pages or more"):
        image_facts(many, "image/tiff")
    region = evaluate("rect", ((0, 0), (1, 1), 2), tiff_chain(3), media_type="image/tiff", charset=None).region
    assert region is not None and (region.frame, region.frames) == (2, 3)


def test_a_jpeg_of_thousands_of_scans_is_not_cut() -> None:
    """Found by the second attack: a progressive JPEG whose one AC scan of end-of-band runs (some 60 octets) is
    repeated 17,000 times took 33 s to cut a 10x10 crop; libjpeg visits every block of the frame once a scan.
    Past MAX_JPEG_SCANS start-of-scan markers (ITU T.81 B.2.3), a crop is refused before decoding; a
    progressive JPEG as an encoder writes it is cut as before."""
    from pdi.fragments.image import MAX_JPEG_SCANS

    made = io.BytesIO()
    Image.new("L", (64, 64), 128).save(made, format="JPEG", progressive=True, quality=90)
    data = made.getvalue()
    scan = data.rindex(b"\xff\xda")  # the last scan, to its end (the end-of-image marker)
    assert data.endswith(b"\xff\xd9") and 1 < data.count(b"\xff\xda") < 20
    repeated = data[:-2] + data[scan:-2] * (MAX_JPEG_SCANS + 1) + b"\xff\xd9"
    for octets in (repeated, memoryview(repeated)):  # octets, or a view of them as a mapped blob gives
        with pytest.raises(LimitError, match=f"more than {MAX_JPEG_SCANS} scans"):
            evaluate("crop", ((0, 0), (10, 10)), octets, media_type="image/jpeg", charset=None)
    # found in review: BLP1 (Blizzard's format, which Pillow reads) of JPEG compression holds a JPEG stream: its
    # header (magic; compression 0, flags, width, height, picture type; a word; 16 mipmap offsets and 16 lengths;
    # the length of a JPEG header the mipmaps share, none), 160 octets, then mipmap 0, the stream
    blp = (b"BLP1" + struct.pack("<iIIIi", 0, 0, 64, 64, 5) + b"\0" * 4 + struct.pack("<16I", 160, *[0] * 15)
           + struct.pack("<16I", len(repeated), *[0] * 15) + struct.pack("<I", 0))
    assert len(blp) == 160
    blp += repeated
    with Image.open(io.BytesIO(blp)) as image:
        assert image.format == "BLP"
    with pytest.raises(LimitError, match=f"more than {MAX_JPEG_SCANS} scans"):
        evaluate("crop", ((0, 0), (10, 10)), blp, media_type="image/x-blp", charset=None)
    region = evaluate("rect", ((0, 0), (10, 10)), repeated, media_type="image/jpeg", charset=None).region
    assert region is not None and (region.width, region.height) == (64, 64)  # rect decodes nothing: still named
    # found in review: what follows the end of image is not the JPEG's (a phone's motion photo appends a video,
    # whose octets may spell FF DA hundreds of times): a crop of it is the JPEG's, as Pillow cuts it
    for octets in (data, data + b"\x00\xff\xda" * (MAX_JPEG_SCANS + 50)):
        cut = evaluate("crop", ((0, 0), (10, 10)), octets, media_type="image/jpeg", charset=None)
        with Image.open(io.BytesIO(cut.data)) as png, Image.open(io.BytesIO(data)) as whole:
            assert png.size == (10, 10) and png.tobytes() == whole.crop((0, 0, 10, 10)).tobytes()


def _claiming(apng: bytes, claimed: int) -> bytes:
    """``apng`` with its ``acTL`` chunk's frame count set to ``claimed`` (its CRC-32 made again, PNG §5.3)."""
    at = apng.index(b"acTL") - 4
    body = b"acTL" + struct.pack(">II", claimed, 0)
    return apng[:at] + struct.pack(">I", 8) + body + struct.pack(">I", zlib.crc32(body)) + apng[at + 20:]


def _frames_pillow_reaches(data: bytes) -> int:
    """How many frames Pillow can seek to, one after another, until it finds no more (the judge, not a count)."""
    with Image.open(io.BytesIO(data)) as image:
        reached = 1
        for frame in range(1, 64):
            try:
                image.seek(frame)
            except (EOFError, OSError, SyntaxError, ValueError):
                break
            reached += 1
        return reached


@settings(max_examples=25, deadline=None)
@given(real=st.integers(1, 6), claimed=st.one_of(st.integers(1, 12), st.just(2**31)),
       default=st.booleans())
def test_an_apngs_frames_are_those_it_holds_not_those_it_claims(real: int, claimed: int, default: bool) -> None:
    # APNG §2.1: acTL's num_frames must equal the number of fcTL chunks; Pillow believes it up to 2**31
    images = [Image.new("L", (4, 3), 40 * k) for k in range(real + 1)]
    out = io.BytesIO()
    images[0].save(out, format="PNG", save_all=True, append_images=images[1:], default_image=default)
    data = _claiming(out.getvalue(), claimed)
    with Image.open(io.BytesIO(data)) as image:
        assert image.n_frames == claimed + default  # what Pillow is told
    frames = _frames_pillow_reaches(data)
    result = evaluate("rect", ((0, 0), (1, 1)), data, media_type="image/png")
    assert result.region is not None and result.region.frames == frames
    if claimed == 2**31:
        with pytest.raises(NotFoundError, match=f"it has {frames} frame"):
            evaluate("rect", ((0, 0), (1, 1), frames), data, media_type="image/png")


def _png_claiming(width: int, height: int) -> bytes:
    """A PNG of a few dozen octets whose header claims ``width`` × ``height`` grey pixels (PNG §11.2.2: IHDR, one
    IDAT, IEND; each chunk's CRC-32)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 1000)) + chunk(b"IEND", b""))


def test_a_header_claiming_more_pixels_than_pillow_opens_is_a_limit_that_says_so() -> None:
    """Found by an attack: ``rect`` and ``crop`` of a PNG claiming 100,000×100,000 pixels said Pillow's words,
    "image too large to cut: Image size (10000000000 pixels) exceeds limit of 178956970 pixels, could be
    decompression bomb DOS attack.": "cut" of a ``rect``, which cuts nothing, and a bound no setting of pdi names.
    Pillow opens no image past twice ``Image.MAX_IMAGE_PIXELS``: a ``crop``'s refusal names what the header claims,
    that bound, and that ``rect`` names the region; ``rect`` reads the size from the header alone
    (tests/test_fragments_image_big.py)."""
    most = 2 * (Image.MAX_IMAGE_PIXELS or 0)
    data = _png_claiming(100_000, 100_000)
    with pytest.raises(LimitError) as refused:
        evaluate("crop", ((0, 0), (10, 10)), data, media_type="image/png", charset=None)
    assert most < 100_000 * 100_000
    assert str(refused.value) == (  # past what libvips is given to stream (tests/test_fragments_image_streamed.py)
        f"crop of a 100000×100000 image: its header claims {100_000 * 100_000:,} pixels, more than the"
        " 1,000,000,000 pdi decodes (pdi.fragments.image_streamed.MAX_STREAMED_PIXELS); rect= names the same region,"
        " read from the header alone, and returns the image whole"
    )
    result = evaluate("rect", ((0, 0), (10, 10)), data, media_type="image/png", charset=None)
    assert result.data is data and result.region is not None
    assert (result.region.width, result.region.height, result.region.frames) == (100_000, 100_000, 1)


def test_a_rect_of_a_header_claiming_just_under_what_pillow_opens_is_named_from_the_header() -> None:
    """Up to that bound ``rect`` names the region reading the header alone (docs/reference/fragments.md): an
    12,000×14,000 PNG (168 million pixels, past Pillow's warning and under its refusal) of 100 octets or so."""
    data = _png_claiming(12_000, 14_000)
    assert (Image.MAX_IMAGE_PIXELS or 0) < 12_000 * 14_000 <= 2 * (Image.MAX_IMAGE_PIXELS or 0) and len(data) < 200
    region = evaluate("rect", ((5, 6), (7, 8)), data, media_type="image/png", charset=None).region
    assert region is not None and (region.width, region.height, region.x1, region.y2) == (12_000, 14_000, 5, 8)


def test_a_gif_of_more_frames_than_fragments_are_evaluated_on_is_refused_at_once() -> None:
    """Reported: a 3 MB GIF of 200,000 one-pixel frames took 3 s to answer rect= of its first frame (Pillow counts
    every frame) and 12 s of its last: a file of 30 MB would keep a worker busy for minutes. Its frames are counted
    once, by the blocks' headers, and past MAX_GIF_FRAMES it is a limit, said at once; at the bound, the count is
    Pillow's own."""
    from pdi.fragments.image import region_from_header
    from pdi.fragments.image_size import MAX_GIF_FRAMES

    many = _gif(1, 1, [(0, 0, 1, 1)] * (MAX_GIF_FRAMES + 1))
    for frame in (0, MAX_GIF_FRAMES):
        for scheme in ("rect", "crop"):
            started = time.monotonic()
            with pytest.raises(LimitError, match=f"a GIF of more than {MAX_GIF_FRAMES:,} frames"):
                evaluate(scheme, ((0, 0), (1, 1), frame), many, media_type="image/gif", charset=None)
            assert time.monotonic() - started < 1
        with pytest.raises(LimitError, match=f"more than {MAX_GIF_FRAMES:,} frames"):
            region_from_header("rect", ((0, 0), (1, 1), frame), many, "image/gif")
    enough = _gif(1, 1, [(0, 0, 1, 1)] * MAX_GIF_FRAMES)
    with Image.open(io.BytesIO(enough)) as image:
        assert image.n_frames == MAX_GIF_FRAMES
    region = evaluate("rect", ((0, 0), (1, 1), MAX_GIF_FRAMES - 1), enough, media_type="image/gif",
                      charset=None).region
    assert region is not None and (region.frame, region.frames) == (MAX_GIF_FRAMES - 1, MAX_GIF_FRAMES)


@pytest.mark.parametrize("hostile", ["stray octets", "one-octet comment sub-blocks"])
def test_a_gif_of_more_blocks_than_are_stepped_over_is_refused_at_once(hostile: str) -> None:
    """Pillow reads an octet no block begins with, and each data sub-block, with a call of its own, and walks the
    file three times to seek a frame: 5 MB of stray octets before a GIF's second frame took 11 s. Past
    MAX_GIF_STEPS of them the GIF is a limit, said at once (the walk finds a run of stray octets as one)."""
    from pdi.fragments.image_size import MAX_GIF_STEPS

    over = MAX_GIF_STEPS + 10
    before = {"stray octets": b"\x00" * over, "one-octet comment sub-blocks": b"\x21\xfe" + b"\x01c" * over + b"\x00"}[hostile]
    data = _gif(1, 1, [(0, 0, 1, 1)] * 2, before=[b"", before])
    with Image.open(io.BytesIO(data)) as image:  # a GIF Pillow reads (slowly): two frames
        assert image.n_frames == 2
    started = time.monotonic()
    with pytest.raises(LimitError, match=f"more than {MAX_GIF_STEPS:,} blocks, sub-blocks and stray octets"):
        evaluate("rect", ((0, 0), (1, 1), 1), data, media_type="image/gif", charset=None)
    assert time.monotonic() - started < 2


def test_a_gif_s_blocks_are_walked_once_for_a_frame_read_from_its_header() -> None:
    """rect= of a late frame, read from the header (the viewer's way): the frames counted and the pixels reaching it
    decodes found in one walk along the blocks, where there were two (each reading every sub-block)."""
    from pdi.fragments.image import region_from_header
    from pdi.fragments.image_size import gif_frames

    data = _gif(4, 4, [(0, 0, 1, 1)] * 300, before=[b"\x21\xfe" + b"\x01c" * 50 + b"\x00"] * 300)

    class Counted:
        """The octets, read by index and slice only (as a stored blob is), each read counted."""

        def __init__(self) -> None:
            self.reads = 0

        def __len__(self) -> int:
            return len(data)

        def __getitem__(self, key: int | slice) -> int | bytes:
            self.reads += 1
            return data[key]

        def find(self, sub: bytes, start: int = 0) -> int:
            self.reads += 1
            return data.find(sub, start)

    one_walk = Counted()
    gif_frames(one_walk, 299)  # type: ignore[arg-type]
    answered = Counted()
    region = region_from_header("rect", ((0, 0), (1, 1), 299), answered, "image/gif")  # type: ignore[arg-type]
    assert region.region is not None and region.region.frames == 300
    assert one_walk.reads > 15_000 and answered.reads < one_walk.reads + 100
