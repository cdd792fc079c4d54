"""The viewer's page of an image a stranger deposited: a damaged image is a note, not a 500.

A GIF whose signature libmagic accepts (so it is deposited without ``--force``) may be cut inside a frame:
Pillow's frame count then trips over it with an ``IndexError`` or a ``struct.error`` (the two files found by
fuzzing the image evaluator, tests/data/crashers/, which its crop refuses as unsupported).
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.errors import UnsupportedError
from pdi.server import create_app
from pdi.server.pages.cite import image_facts

S = "library.example.us"
CRASHERS = Path(__file__).resolve().parent.parent / "data" / "crashers"


@pytest.mark.parametrize("name", ["crash_1734c2416e81a57c.gif", "crash_c0db7a61cd6d1b36.gif"])
def test_a_gif_cut_inside_a_frame_is_shown_with_a_note_not_a_500(location: str, name: str) -> None:
    data = (CRASHERS / name).read_bytes()
    with pytest.raises(UnsupportedError, match="cannot read this image"):
        image_facts(data, "image/gif")
    with Archive.init(location) as archive:
        archive.add_series(S)
        pdi = str(archive.add(S, data, format="gif"))  # a GIF's signature: deposited as it is
        client = TestClient(create_app(location, archive=archive), raise_server_exceptions=False)
        page = client.get(f"/view?pdi={urllib.parse.quote(pdi, safe='')}")
        assert page.status_code == 200, page.text[:300]
        assert "Regions of this image cannot be named here" in page.text and 'id="figure"' not in page.text
        whole = client.get(f"/uri-res/N2R?{pdi}")
        assert whole.status_code == 200 and whole.content == data
