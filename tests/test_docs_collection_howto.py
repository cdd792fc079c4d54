"""The collection how-to (docs/how-to/collection.md) followed as a librarian types it: every ``sh`` block run by bash
in order, on the page's directory, and what it prints is what the page's ``text`` block after it shows.

The page's glob (``pdi add … papers/*.pdf``) and loop (``while read -r url``) are shell, so the blocks run in bash with a
``pdi`` on ``PATH`` that is this checkout's command on a clock fixed to one GMT day (a run across midnight would
mint names of two days). Its two servers are this test's: ``python3 -m http.server --bind 127.0.0.1 -d examples/site 8080`` is
served on a free port (the page's ``8080`` made that port), and ``pdi serve``'s addresses are asked of the
resolver's app, as tests/test_docs_howto_recipes.py asks the viewer page's.
"""

from __future__ import annotations

import datetime
import functools
import http.server
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pdi.server import create_app

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "how-to" / "collection.md"
SERIES = "library.example.fr"
#: ``pdi`` for the page's shell: the checkout's command, every archive it opens on a clock at ``$PDI_DOCS_NOON``.
PDI = """#!{python}
import datetime, os, sys, time
from pdi.archive import Archive
start = datetime.datetime.fromisoformat(os.environ["PDI_DOCS_NOON"])
began = time.monotonic()
def clock():
    return start + datetime.timedelta(seconds=time.monotonic() - began)
for name in ("open", "init"):
    real = getattr(Archive, name).__func__
    def opened(cls, *args, _real=real, **kwargs):
        kwargs.setdefault("clock", clock)
        return _real(cls, *args, **kwargs)
    setattr(Archive, name, classmethod(opened))
from pdi.cli import cli
cli(prog_name="pdi")
"""


def _blocks() -> list[tuple[str, str]]:
    """The page's fenced blocks in order: (language, body)."""
    return re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)


@pytest.fixture
def site() -> Iterator[int]:
    """examples/site served on a free port of 127.0.0.1, as ``python3 -m http.server --bind 127.0.0.1 -d examples/site`` serves it."""
    handler = functools.partial(_Quiet, directory=str(ROOT / "examples" / "site"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_collection_pages_steps_print_what_it_shows(tmp_path: Path, site: int) -> None:
    """The page's folder (examples/pdfjs-wikipedia.pdf and tests/data/pdf's conference paper), archive and series;
    one ``pdi add`` deposits the two PDFs in the folder's order, the article as ``1.pdf.1`` and the paper as
    ``2.pdf.1``; the page's
    site captured by its address; the search for the abstract's first words hits ``#char=654,690`` of the paper,
    and ``#char=654,751`` is the abstract's first sentence (checked here on the paper's text layer as PDFium
    reads it, independently of pdi); the link answers 200 and the passage's text."""
    import pypdfium2

    today = datetime.datetime.now(datetime.UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    shown_day = re.search(rf"urn:pdi://{re.escape(SERIES)}/(\d{{4}}/\d\d/\d\d)/", PAGE.read_text("utf-8"))
    assert shown_day is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pdi").write_text(PDI.format(python=sys.executable), "utf-8")
    (bin_dir / "pdi").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PDI_DOCS_NOON": today.isoformat(),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("PDI_ARCHIVE", None)
    folder = tmp_path / "collection"

    def made_today(text: str) -> str:
        text = text.replace(shown_day.group(1), today.strftime("%Y/%m/%d"))
        return text.replace("/tmp/collection", shlex.quote(str(folder))).replace("8080", str(site))

    blocks = [(language, made_today(body)) for language, body in _blocks()]
    shells = [(i, body) for i, (language, body) in enumerate(blocks) if language == "sh"]
    assert [body.split()[0] for _, body in shells] == ["mkdir", "pdi", "pdi", "python3", "echo", "pdi", "pdi", "pdi",
                                                       "curl"], shells
    asked: list[str] = []
    for i, body in shells:
        if body.startswith(("python3 -m http.server", "pdi serve")):
            continue  # this test's servers
        if body.startswith("curl"):
            asked = re.findall(r"'http://127\.0\.0\.1:8000(/[^']+)'", body)
            continue
        # the first block is typed in the clone, the others in the folder it makes
        done = subprocess.run(["bash", "-e", "-c", body], cwd=ROOT if i == 0 else folder, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, (body, done.stdout, done.stderr)
        printed = done.stdout + done.stderr
        following = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
        if i == 0:
            assert printed == "", printed
            continue
        assert following[0] == "text", body
        ended = printed if printed.endswith("\n") else printed + "\n"  # the prompt on a line of its own
        assert ended == following[1], (body, printed)

    # the link's two answers, asked of the resolver the page starts (its first line, which this page shows as the
    # tutorial does, is tests/server/test_server_api.py's)
    served = [body for language, body in blocks if language == "text" and body.startswith("pdi: serving")]
    assert served == ["pdi: serving pdi-archive at http://127.0.0.1:8000/ (replay at http://127.0.0.1:8001/) with 2 "
                      "workers (Ctrl-C stops)\n"]
    assert len(asked) == 2, asked
    with TestClient(create_app(str(folder / "pdi-archive"))) as client:
        view, passage = client.get(asked[0]), client.get(asked[1])
        # each name holds its file: the article 1, the paper 2 (the names step 5 and 6 cite)
        for serial, path in ((1, ROOT / "examples" / "pdfjs-wikipedia.pdf"),
                             (2, ROOT / "tests" / "data" / "pdf" / "tracemonkey.pdf")):
            held = client.get(f"/uri-res/N2R?urn:pdi://{SERIES}/{today:%Y/%m/%d}/{serial}.pdf.1")
            assert held.status_code == 200 and held.content == path.read_bytes(), serial
    shown = blocks[[i for i, _ in shells][-1] + 1][1]
    # the passage's line break is CR LF, which a terminal shows as one line break
    assert f"{view.status_code}\n{passage.text}\n".replace("\r\n", "\n") == shown

    # 654 and 751 stand where the page says on the paper's text as PDFium reads it (its lines ending CR LF), the
    # hyphen PDFium marks U+FFFE at a line's end written "-" and CR LF (docs/pdf-text-layer.md)
    pdf = pypdfium2.PdfDocument(ROOT / "tests" / "data" / "pdf" / "tracemonkey.pdf")
    first = pdf[0].get_textpage().get_text_range().replace("\ufffe", "-\r\n")
    sentence = "Dynamic languages such as JavaScript are more difficult to com-\r\npile than statically typed ones."
    assert first.index(sentence) == 654
    assert 654 + len(sentence) == 751
    assert passage.text == sentence
