"""What strangers can send the resolver: damaged images found by fuzzing answer a problem, not 500."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from server_helpers import S, Served

CRASHERS = Path(__file__).resolve().parents[1] / "data" / "crashers"


@pytest.mark.parametrize("name", ["crash_1734c2416e81a57c.gif", "crash_c0db7a61cd6d1b36.gif"])
@pytest.mark.parametrize("fragment", ["rect=(0,0),(2,2),2", "rect=(0,0),(2,2)", "crop=(0,0),(2,2),1"])
def test_damaged_gif_with_a_rect_fragment_is_a_problem_not_a_500(served: Served, name: str, fragment: str) -> None:
    # The fuzzer's input was the fragment rect=(0,0),(2,2),2 on these bytes: Pillow raised
    # IndexError and struct.error while counting the frames, and N2R answered 500.
    gif = str(served.archive.add(S, (CRASHERS / name).read_bytes(), format="gif"))
    response = httpx.get(f"{served.url}/uri-res/N2R?{gif}%23{fragment}", timeout=30)
    assert response.status_code == 400, response.text  # a GET: no content to be of a media type (RFC 9110 §15.5.16)
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert (body["title"], body["status"]) == ("unsupported", 400)
    assert body["detail"].startswith(f"{fragment.split('=')[0]} on image/gif: cannot read this image"), body
    whole = httpx.get(f"{served.url}/uri-res/N2R?{gif}", timeout=30)
    assert whole.status_code == 200 and whole.content == (CRASHERS / name).read_bytes()


@pytest.mark.parametrize("raw", ["1734c2416e81a57c.bin", "c0db7a61cd6d1b36.bin"])
def test_the_fuzzers_raw_inputs_hold_the_same_gifs_and_fragment(raw: str) -> None:
    # The raw inputs: a byte 0x01, the fragment, a NUL, then the body (kept as found).
    data = (CRASHERS / raw).read_bytes()
    fragment, _, body = data[1:].partition(b"\0")
    assert data[:1] == b"\x01" and fragment == b"rect=(0,0),(2,2),2"
    assert body == (CRASHERS / f"crash_{raw.removesuffix('.bin')}.gif").read_bytes()
