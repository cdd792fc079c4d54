"""A live resolver (uvicorn on a free loopback port, in a thread) over an archive the tests fill."""

from __future__ import annotations

import datetime
import io
import subprocess
import urllib.parse
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from server_helpers import (
    CAPTURED_URL,
    ELSEWHERE,
    LONG_LINES,
    TEXT,
    S,
    Served,
    captured_aggregate,
    deposit_captures,
    deposit_versions,
    long_line,
    pixel_bomb,
    serving,
    with_replay,
)

from pdf_helpers import tree_pdf, turned_pdf
from pdi.archive import Archive, Content
from pdi.mail.mbox import split_mbox
from pdi.mail.message import head_message_id, mid_url
from support.big_image import pattern_png
from support.tiff import tiff_chain


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("served")
    archive = Archive.init(root / "archive")
    archive.add_series(S)
    archive.add_series(ELSEWHERE)  # for tests whose deposits the listing tests must not see
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
    captured = deposit_captures(str(root / "archive"))
    archive.annotate(versioned, "title", "Two versions")
    archive.annotate(versioned, "title", "Two versions, retitled")
    long = str(archive.add(S, "".join(long_line(i) for i in range(LONG_LINES)).encode(), format="text"))
    archive.verify()  # records a fixity check of every blob, shown on the document page
    capture = str(archive.add(S, captured_aggregate(png.getvalue()), format="related", foreign_id=CAPTURED_URL))
    # the resolver and the replay origin, on two ports of one server, as pdi serve runs them
    try:
        with with_replay(str(root / "archive")) as (url, replay_url):
            yield Served(url, archive, text, page, picture, recording, foreign, versioned,
                         long, capture, replay_url, captured)
    finally:
        archive.close()


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    """A new archive with the series library.example.us, its clock at 2026-11-25 10:00 UTC (a module may define its own)."""
    opened = Archive.init(tmp_path / "archive", clock=lambda: datetime.datetime(2026, 11, 25, 10, 0, tzinfo=datetime.UTC))
    opened.add_series("library.example.us")
    try:
        yield opened
    finally:
        opened.close()


DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """``pdi serve`` of an archive of its own (the served one's pages count their documents) holding PDFs
    and an SGML document of tests/data, a video ffmpeg makes, and a mailing list's thread of three messages
    (each named by its Message-ID, as pdi add names them) and a message with an attachment, a withdrawn text
    and a text of a private series: its URL and their names."""
    root = tmp_path_factory.mktemp("media")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3",
                    "-c:v", "libvpx-vp9", str(root / "clip.webm")], check=True, timeout=120)
    with Archive.init(root / "archive") as archive:
        archive.add_series("library.example.us")
        names = {
            "pdf": archive.add("library.example.us", (DATA / "pdf" / "hand-overprint-hyphens.pdf").read_bytes(), format="pdf"),
            # the viewer's PDF pages (tests/server/test_server_pdf_viewer.py): 14 pages in two columns, and a scan
            "paper": archive.add("library.example.us", (DATA / "pdf" / "tracemonkey.pdf").read_bytes(), format="pdf"),
            "scan": archive.add("library.example.us", (DATA / "pdf" / "ccitt_EndOfBlock_false.pdf").read_bytes(), format="pdf"),
            "turned": archive.add("library.example.us", (DATA / "pdf" / "rotation.pdf").read_bytes(), format="pdf"),
            # /Rotate 91, no multiple of 90: PDFium turns it a quarter, pdf.js not at all (the viewer follows pdi's)
            "askew": archive.add("library.example.us", turned_pdf(b"91"), format="pdf"),
            # /UserUnit 2: a unit of user space is 2/72 inch; pdf.js scales its viewport by it, PDFium does not
            "large": archive.add("library.example.us", turned_pdf(b"0", entries=b"/UserUnit 2"), format="pdf"),
            # a page tree PDFium and pdf.js read differently (a /Count of 3 over 2 pages: PDFium 3, pdf.js 2)
            "tree": archive.add("library.example.us", tree_pdf(["page", "page"], counts={2: 3}), format="pdf"),
            "sgml": archive.add("library.example.us", (DATA / "sgml" / "w3c-document-notice.html").read_bytes(), format="sgml"),
            "video": archive.add("library.example.us", (root / "clip.webm").read_bytes(), format="webm"),
            "attached": archive.add("library.example.us", (DATA / "email" / "msg_07.txt").read_bytes(), format="rfc822"),
            # an XML document's source in the viewer (tests/server/test_server_pages_axe.py)
            "xml": archive.add("library.example.us", b'<?xml version="1.0"?>\n<note lang="en"><to>Tove</to>'
                               b"<body>Remember the minutes.</body></note>\n", format="xml"),
            # a pixel bomb: a PNG whose header claims 100,000 × 100,000 pixels (the viewer's limit page)
            "bomb": archive.add("library.example.us", pixel_bomb(100_000, 100_000), format="png"),
            # a map scan of 108 million pixels, more than a browser is asked to decode: shown by the server's
            # preview (the image-preview page)
            "map": archive.add("library.example.us", pattern_png(12_000, 9_000), format="png"),
            # a TIFF of more pages than the viewer counts (pdi.fragments.image.MAX_TIFF_PAGES): its limit page
            "pages": archive.add("library.example.us", tiff_chain(5_010), format="tiff"),
            # a file of 33 MiB of no kind the viewer shows, more than it reads (pdi.server.pages.viewer.MAX_READ): its
            # facts and a note (the not-read page)
            "big_file": archive.add("library.example.us", bytes(33 << 20), format="octet-stream"),
            # an e-mail of 34 MB, more than the viewer reads whole: read by its structure (the email-large page)
            "big_email": archive.add("library.example.us", _big_email(), format="rfc822"),
            # Chinese and Japanese, written without spaces: a word found inside a sentence (the search-cjk page)
            "cjk": archive.add("library.example.us", "我爱北京天安门。天安门上太阳升。\n東京大学の図書館で本を読みました。\n"
                               .encode(), format="text"),
        }
        with (DATA / "email" / "metrics-grimoire-2016-04.mbox").open("rb") as mbox:
            thread = [
                archive.deposit("library.example.us", [Content(m.data, "rfc822")],
                                foreign_id=mid_url(head_message_id(m.data) or ""))[0]
                for m in split_mbox(mbox)
            ]
        names["email"] = thread[1]  # the reply: its parent above it, its own reply below it
        # the error pages' (pdi.server.pages.problem_pages): a withdrawn name's tombstone, a private series' name
        withdrawn = archive.add("library.example.us", b"A draft deposited by mistake.\n", format="text")
        archive.annotate(str(withdrawn).rsplit(".", 2)[0], "title", "A draft deposited by mistake")
        archive.withdraw(str(withdrawn).rsplit(".", 2)[0], "deposited by mistake: a draft, not the minutes")
        names["withdrawn"] = withdrawn
        archive.add_series("closed.example.us")
        archive.set_series_access("closed.example.us", "private")
        names["private"] = archive.add("closed.example.us", b"closed minutes\n", format="text")
    with serving(root / "archive") as (_, port):
        yield f"http://127.0.0.1:{port}", {k: urllib.parse.quote(str(v), safe="") for k, v in names.items()}


def _big_email() -> bytes:
    """A message of 34 MB (more than pdi.mail.large.STREAMED_FROM): a short body and a scan of 25 MB in base64."""
    import base64

    coded = base64.b64encode(bytes(range(256)) * (25_000_000 // 256))
    return (b"From: Ann <ann@example.org>\r\nTo: Bob <bob@example.org>\r\nSubject: The survey, scanned\r\n"
            b"Date: Mon, 2 Mar 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n"
            b'Content-Type: multipart/mixed; boundary="OUT"\r\n\r\n--OUT\r\n'
            b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            b"Dear Bob,\r\n\r\nthe survey is scanned and attached: caf=C3=A9 and all.\r\n\r\nAnn\r\n--OUT\r\n"
            b'Content-Type: image/tiff\r\nContent-Disposition: attachment; filename="survey.tif"\r\n'
            b"Content-Transfer-Encoding: base64\r\n\r\n"
            + b"\r\n".join(coded[i:i + 76] for i in range(0, len(coded), 76)) + b"\r\n--OUT--\r\n")
