"""A live resolver (uvicorn on a free loopback port, in a thread) over an archive the tests fill."""

from __future__ import annotations

import io
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from PIL import Image
from server_helpers import LONG_LINES, TEXT, S, Served, deposit_versions, long_line

from pdi.archive import Archive
from pdi.server import create_app


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("served")
    archive = Archive.init(root / "archive")
    archive.add_series(S)
    text = str(archive.add(S, TEXT, format="text"))
    archive.annotate(text, "title", "A letter")
    page = str(archive.add(S, b"<p id=a>one<p>two</p>", format="html"))
    image = Image.new("RGB", (40, 30))
    image.putdata([(x, y, 0) for y in range(30) for x in range(40)])
    png = io.BytesIO()
    image.save(png, format="PNG")
    picture = str(archive.add(S, png.getvalue(), format="png"))
    sound = io.BytesIO()
    with wave.open(sound, "wb") as w:
        w.setparams((1, 1, 100, 0, "NONE", "not compressed"))
        w.writeframes(bytes(range(250)))
    recording = str(archive.add(S, sound.getvalue(), format="wav"))
    foreign = str(archive.add(S, b"<html>then</html>", format="html", foreign_id="http://www.example.com/a b"))
    versioned = deposit_versions(str(root / "archive"))
    long = str(archive.add(S, "".join(long_line(i) for i in range(LONG_LINES)).encode(), format="text"))
    server = uvicorn.Server(uvicorn.Config(create_app(str(root / "archive")), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(f"http://127.0.0.1:{port}", archive, text, page, picture, recording, foreign, versioned, long)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        archive.close()
