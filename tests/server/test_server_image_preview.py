"""The viewer shows an image too large for a browser (more than ``MAX_SHOWN_PIXELS``) by the server's preview.

A real 12,000×9,000 grey PNG (108 million pixels, ``support.big_image.pattern_png``: a checkerboard of
5,000-pixel squares) is shown by ``/api/image/preview``: libvips shrinks it in a bounded child to 4,096 pixels on
its longer side, kept per SHA-256 so the page shown again does not make it again, and answered ``immutable`` with
an entity tag. A file whose header claims more than libvips is given to stream (100,000 × 100,000) keeps the
blank stand-in (tests/server/test_server_image_bomb.py).
"""

from __future__ import annotations

import html
import io
import urllib.parse
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps
from server_helpers import pixel_bomb
from starlette.testclient import TestClient

import pdi.fragments.image_streamed as streamed
import pdi.server.pages.cite as cite
from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.pages.media_view import MAX_SHOWN_PIXELS
from support.big_image import pattern_png
from support.stored_blobs import blob_file, rewrite_blob

S = "maps.library.example.us"
WIDTH, HEIGHT = 12_000, 9_000


@pytest.fixture(scope="module")
def scan() -> bytes:
    assert WIDTH * HEIGHT > MAX_SHOWN_PIXELS
    return pattern_png(WIDTH, HEIGHT)


def _figure_image(page: str) -> str:
    return html.unescape(page.split('<img id="image" src="', 1)[1].split('"', 1)[0])


def test_the_viewer_shows_the_servers_preview_with_the_region_outlined(location: str, scan: bytes,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real = streamed.preview

    def counted(*args: object, **kwargs: object) -> tuple[bytes, str]:
        made.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(streamed, "preview", counted)
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())  # none kept from another test's archive
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, scan, format="png"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name + '#rect=(3000,4500),(9000,9000)', safe='')}")
        assert page.status_code == 200, page.text[:300]
        shown = _figure_image(page.text)
        assert shown == f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}"
        # the region in the image's own pixels, outlined in proportion on whatever size the preview is drawn at
        assert 'style="left:25.0000%;top:50.0000%;width:50.0000%;height:50.0000%"' in page.text
        assert f'data-width="{WIDTH}" data-height="{HEIGHT}"' in page.text
        note = page.text.split('id="not-drawn">', 1)[1].split("</p>", 1)[0]
        assert "108,000,000 pixels" in note and "preview" in note and f'href="/uri-res/N2R?{name}"' in note
        answer = client.get(shown)
        assert answer.status_code == 200 and answer.headers["content-type"] == "image/jpeg"
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        with Image.open(io.BytesIO(answer.content)) as preview:
            assert preview.size == (4096, 3072) and preview.mode == "L"
            pixels = np.asarray(preview).astype(float)
        # the checkerboard's squares: dark at the top left, light to its right (40 or 200, and the ramp's 7.5)
        side = 5000 * 4096 / WIDTH
        assert abs(pixels[int(side / 2), int(side / 2)] - 47.5) < 6
        assert abs(pixels[int(side / 2), int(side * 1.5)] - 207.5) < 6
        again = client.get(shown)
        assert again.content == answer.content and len(made) == 1  # kept: not made again
        unchanged = client.get(shown, headers={"If-None-Match": answer.headers["etag"]})
        assert unchanged.status_code == 304 and not unchanged.content


def test_a_preview_is_of_an_image_and_of_a_format_libvips_is_given(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        text = str(archive.add(S, b"not a picture\n", format="text"))
        gif = io.BytesIO()
        Image.new("L", (4, 4)).save(gif, format="GIF")
        small_gif = str(archive.add(S, gif.getvalue(), format="gif"))
        client = TestClient(create_app(location, archive=archive))
        assert client.get("/api/image/preview").status_code == 400
        refused = client.get(f"/api/image/preview?pdi={urllib.parse.quote(text, safe='')}")
        assert refused.status_code == 400 and "not an image" in refused.json()["detail"]
        refused = client.get(f"/api/image/preview?pdi={urllib.parse.quote(small_gif, safe='')}")
        assert refused.status_code == 400 and "PNG, JPEG or TIFF" in refused.json()["detail"]


def test_a_header_claiming_more_than_libvips_streams_keeps_the_stand_in(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, pixel_bomb(100_000, 100_000), format="png"))
        client = TestClient(create_app(location, archive=archive))
        page = client.get(f"/view?pdi={urllib.parse.quote(name, safe='')}")
        assert _figure_image(page.text).startswith("data:image/svg+xml,")
        refused = client.get(f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}")
        assert refused.status_code == 400 and refused.json()["title"] == "limit exceeded"
        assert "MAX_STREAMED_PIXELS" in refused.json()["detail"]


def _jpeg(width: int = 64, height: int = 48) -> bytes:
    out = io.BytesIO()
    ramp = np.add.outer(np.arange(height), np.arange(width)).astype(np.uint8)
    Image.fromarray(ramp, "L").save(out, format="JPEG", quality=90)
    return out.getvalue()


def test_a_preview_read_with_a_token_is_private_and_one_withdrawn_is_gone(location: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """As N2R's answer of the same image (RFC 9111 §5.2.2.7): a private series' preview read with a token is never
    marked for shared caches (found in review, 2026-11-29: it was ``public, immutable`` for any reader, so a proxy
    kept it and gave it to anyone); without the token it is refused, kept or not; withdrawn, it is gone."""
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, _jpeg(), format="image+jpeg"))
        _, reader = archive.add_token("reader", role="read", series=[S])
        shown = f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}"
        client = TestClient(create_app(location, archive=archive))
        public = client.get(shown)
        assert public.status_code == 200 and public.headers["cache-control"] == "public, max-age=31536000, immutable"
        archive.set_series_access(S, "private")
        token = {"Authorization": f"Bearer {reader}"}
        read = client.get(shown, headers=token)
        assert read.status_code == 200 and read.content == public.content
        assert read.headers["cache-control"] == "private, no-store"
        unchanged = client.get(shown, headers={**token, "If-None-Match": read.headers["etag"]})
        assert unchanged.status_code == 304 and unchanged.headers["cache-control"] == "private, no-store"
        assert client.get(shown).status_code == 403  # kept by the process, all the same not given without the token
        archive.set_series_access(S, "public")
        archive.withdraw(name, "recalled")
        assert client.get(shown).status_code == 410


def test_a_preview_is_made_of_octets_checked_against_their_digests(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The octets given to libvips are the ones deposited: a blob file damaged on disk is a ``500`` naming the damage,
    never a preview of other pixels (found in review, 2026-11-29: its file was memory-mapped and decoded unchecked,
    and the altered JPEG answered ``200``)."""
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    noise = np.random.default_rng(7).integers(0, 256, (600, 800), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(noise, "L").save(out, format="JPEG", quality=90)
    deposited = out.getvalue()
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, deposited, format="image+jpeg"))
        sha256 = archive.locate(name).sha256
        assert blob_file(location, sha256).exists()  # a file, not a catalog row: what was memory-mapped
        where = len(deposited) - 400  # one bit of the entropy-coded data, near the end: still a JPEG
        rewrite_blob(location, sha256, deposited[:where] + bytes([deposited[where] ^ 0x04]) + deposited[where + 1:])
        client = TestClient(create_app(location, archive=archive), raise_server_exceptions=False)
        answer = client.get(f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}")
        assert answer.status_code == 500, answer.content[:200]
        assert answer.json()["title"] == "stored octets damaged" and "damaged" in answer.json()["detail"]


def test_a_preview_the_client_holds_is_304_without_being_made(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its entity tag is the image's digest's: a client revalidating it (another worker's answer, or this one's before
    a restart) is answered ``304`` before libvips is started (it was made again, seconds for a map scan, then
    dropped)."""
    made = []

    def counted(*args: object, **kwargs: object) -> tuple[bytes, str]:
        made.append(1)
        return b"", "image/jpeg"

    monkeypatch.setattr(streamed, "preview", counted)
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, _jpeg(), format="image+jpeg"))
        tag = f'"{archive.locate(name).sha256[:32]}-preview-{streamed.PREVIEW_SIDE}-turned"'
        client = TestClient(create_app(location, archive=archive))
        shown = f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}"
        for held in (tag, f'"other", W/{tag}', "*"):
            unchanged = client.get(shown, headers={"If-None-Match": held})
            assert unchanged.status_code == 304 and unchanged.headers["etag"] == tag
        assert made == []


def test_the_previews_kept_are_bounded_by_count_and_by_octets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each process keeps at most ``_PREVIEWS_KEPT`` previews and ``_PREVIEWS_HELD`` octets, the least recently made
    let go first: an archive of many small images previewed one by one holds a bounded map (it had no bound on
    their count, and summed every kept preview again at each one made)."""
    monkeypatch.setattr(cite, "_PREVIEWS", OrderedDict())
    for n in range(cite._PREVIEWS_KEPT + 10):
        cite._keep_preview((f"{n:064x}", 4096), b"x" * 100, "image/jpeg")
    assert len(cite._PREVIEWS) == cite._PREVIEWS_KEPT
    assert next(iter(cite._PREVIEWS)) == (f"{10:064x}", 4096)
    quarter = cite._PREVIEWS_HELD // 4
    for n in range(6):
        cite._keep_preview((f"big{n}", 4096), b"y" * quarter, "image/jpeg")
    held = sum(len(body) for body, _ in cite._PREVIEWS.values())
    assert held <= cite._PREVIEWS_HELD and [key for key, _ in cite._PREVIEWS if key.startswith("big")] == [
        "big2", "big3", "big4", "big5"]
    cite._keep_preview(("too large", 4096), b"z" * (quarter + 1), "image/jpeg")
    assert ("too large", 4096) not in cite._PREVIEWS


def test_a_preview_of_a_turned_jpeg_is_drawn_as_a_browser_shows_it(location: str) -> None:
    """A JPEG whose EXIF says orientation 6 (a phone held upright) is shown by a browser a quarter turn clockwise:
    its preview is drawn so (Pillow's ``exif_transpose`` the oracle), saying no orientation of its own (a browser
    would turn it again); a TIFF saying the same is drawn as stored, as Chromium shows no TIFF turned."""
    stored = Image.new("RGB", (80, 40), (20, 20, 200))
    stored.paste((230, 30, 30), (0, 0, 20, 20))  # a red square at the stored top left
    exif = Image.Exif()
    exif[0x0112] = 6
    files = {}
    for fmt in ("JPEG", "TIFF"):
        out = io.BytesIO()
        stored.save(out, format=fmt, exif=exif.tobytes(), **({"quality": 95} if fmt == "JPEG" else {}))
        files[fmt] = out.getvalue()
    with Archive.init(location) as archive:
        archive.add_series(S)
        client = TestClient(create_app(location, archive=archive))
        for fmt, data in files.items():
            name = str(archive.add(S, data, format={"JPEG": "image+jpeg"}.get(fmt, "tiff")))
            answer = client.get(f"/api/image/preview?pdi={urllib.parse.quote(name, safe='')}")
            assert answer.status_code == 200, answer.text[:300]
            with Image.open(io.BytesIO(answer.content)) as preview:
                assert preview.getexif().get(0x0112) is None
                turned = stored.copy()
                turned.getexif()[0x0112] = 6
                expected = ImageOps.exif_transpose(turned) if fmt == "JPEG" else stored
                assert preview.size == expected.size, fmt
                got = preview.convert("RGB")
                for x, y in ((5, 5), (expected.width - 5, 5), (5, expected.height - 5)):
                    assert max(abs(a - b) for a, b in zip(got.getpixel((x, y)), expected.getpixel((x, y)),
                                                          strict=True)) < 40, (fmt, x, y)
