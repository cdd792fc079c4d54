"""``pdi serve`` imports what its answers use before it forks its workers (:mod:`pdi.server.process.warm`).

A fresh interpreter (as a forked worker would be, but for the preload)
answers one request of every kind — a whole text, ``char=``, ``line=``,
``elt=``, a whole page, an image and a region of it, a sound and an interval
of it, a browser text directive — and reports, for each, which modules the
answer imported. After :func:`~pdi.server.process.warm.preload` none may
import a module of pdi, numpy or Pillow; without it the first ``char=``
does (so the check can fail, and the list is what the answers use).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import wave
from pathlib import Path

import pytest
from PIL import Image

from pdi.archive import Archive

S = "warm.example.us"
TEXT = b"line one\nline two\nline three\n" * 50

PROBE = """
import json, sys
from pathlib import Path
if sys.argv[2] == "preload":
    from pdi.server.process.warm import preload
    preload()
from pdi.server import create_app
from starlette.testclient import TestClient
client = TestClient(create_app(location=Path(sys.argv[1])))
client.get("/api/series")
out = []
for query in sys.argv[3:]:
    before = set(sys.modules)
    answer = client.get("/uri-res/N2R?" + query)
    new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("pdi", "numpy", "PIL"))
    out.append([query, answer.status_code, answer.content.decode("latin-1"), new])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    location = tmp_path_factory.mktemp("warm") / "archive"
    png = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(png, format="PNG")
    sound = io.BytesIO()
    with wave.open(sound, "wb") as w:
        w.setparams((1, 2, 8000, 0, "NONE", "not compressed"))
        w.writeframes(bytes(16000))
    with Archive.init(location) as opened:
        opened.add_series(S)
        text = str(opened.add(S, TEXT, format="text"))
        page = str(opened.add(S, b"<html><body><p>Hi <b>there</b></p><p id=x>two</p></body></html>", format="html"))
        image = str(opened.add(S, png.getvalue(), format="png"))
        audio = str(opened.add(S, sound.getvalue(), format="wav"))
    queries = [text, f"{text}%23char=10,20", f"{text}%23line=3,5", f"{page}%23elt=1,1", page,
               image, f"{image}%23xywh=1,1,5,5", audio, f"{audio}%23t=0.1,0.5", f"{text}%23:~:text=two"]
    return location, queries


def probe(location: Path, queries: list[str], mode: str) -> list[tuple[str, int, str, list[str]]]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(location), mode, *queries],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [tuple(row) for row in json.loads(done.stdout)]  # type: ignore[misc]


def test_after_preload_no_answer_imports_an_evaluator(archive: tuple[Path, list[str]]) -> None:
    location, queries = archive
    answers = probe(location, queries, "preload")
    assert [status for _, status, _, _ in answers] == [200] * len(queries)
    by_query = {query: body for query, _, body, _ in answers}
    # the answers are the passages themselves: positions count the CRLF-canonical text (PDI-GRAMMAR)
    assert by_query[queries[1]] == TEXT.decode().replace("\n", "\r\n")[10:20]
    assert by_query[queries[2]] == "line one\r\nline two\r\n"
    assert [(query, new) for query, _, _, new in answers if new] == []


def test_without_preload_the_first_char_fragment_imports_its_evaluator(archive: tuple[Path, list[str]]) -> None:
    location, queries = archive
    answers = probe(location, queries, "none")
    imported = {query: new for query, _, _, new in answers}
    assert "pdi.fragments.text.index" in imported[queries[1]] and "numpy" in imported[queries[1]]
