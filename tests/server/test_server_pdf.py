"""N2R and N2C of a PDF's names (issue 25), through Starlette's TestClient.

A ``char`` or ``line`` passage answers the passage's text (text/plain; charset=utf-8),
counted by hand on docs/pdf-text-layer.md's rules; ``page=N`` (RFC 8118 §3) answers the
whole PDF, its octets exactly (a browser opens it at that page); a page past the
last is past the end, as other fragments are (416).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pdf_helpers import pages_pdf, tounicode_pdf
from pdi.archive import Archive
from pdi.server import create_app

S = "library.example.us"
CORPUS = Path(__file__).resolve().parents[1] / "data" / "pdf"


def test_n2r_of_a_pdf_passage_is_its_text_and_of_a_page_the_whole_pdf(archive: Archive) -> None:
    data = (CORPUS / "paragraph_and_link.pdf").read_bytes()
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    # D = "The first paragraph." CR LF "Link to the second page." CR LF FF "First paragraph on the second page." CR LF
    start = len("The first paragraph.\r\nLink to the second page.\r\n\f")
    passage = client.get(f"/uri-res/N2R?{name}%23char={start},{start + len('First paragraph')}")
    assert passage.status_code == 200
    assert passage.headers["content-type"] == "text/plain; charset=utf-8"
    assert passage.content == b"First paragraph"
    lines = client.get(f"/uri-res/N2R?{name}%23line=0,2")
    assert lines.content == b"The first paragraph.\r\nLink to the second page.\r\n"
    page = client.get(f"/uri-res/N2R?{name}%23page=2")
    assert page.status_code == 200 and page.headers["content-type"] == "application/pdf" and page.content == data
    past = client.get(f"/uri-res/N2R?{name}%23page=3")
    assert past.status_code == 416
    assert "the PDF has 2 pages" in past.text


def test_n2c_describes_the_text_layer_and_the_page(archive: Archive) -> None:
    import hashlib

    name = str(archive.add(S, (CORPUS / "sizes.pdf").read_bytes(), format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    about = client.get(f"/uri-res/N2C?{name}%23page=2").json()
    layer = "Normal\r\n\fEnvelope\r\n\fLandscape\r\n"  # pdftotext's words, joined as docs/pdf-text-layer.md §2 says
    assert about["text_layer"]["characters"] == len(layer) and about["text_layer"]["pages"] == 3
    assert about["text_layer"]["sha256"] == hashlib.sha256(layer.encode()).hexdigest()
    assert about["text_layer"]["empty"] is False
    assert about["fragment"]["page"] == {"number": 2, "pages": 3, "width": 649.0, "height": 323.0}  # pdfinfo: 649 x 323 pts


def test_rfc5147_checks_of_a_pdf_are_those_of_its_text_layer(archive: Archive) -> None:
    import hashlib

    name = str(archive.add(S, (CORPUS / "sizes.pdf").read_bytes(), format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    layer = "Normal\r\n\fEnvelope\r\n\fLandscape\r\n"  # pdftotext's words, joined as docs/pdf-text-layer.md §2 says
    # RFC 5147 §2.1: a CRLF is one character, so the layer has len(layer) - 3 of them
    length, md5 = len(layer) - 3, hashlib.md5(layer.encode()).hexdigest()
    start = len("Normal\n\f")
    fragment = f"char={start},{start + 8};length={length},UTF-8;md5={md5},UTF-8"
    ok = client.get("/api/rfc5147", params={"pdi": name, "fragment": fragment})
    assert ok.status_code == 200, ok.text
    assert ok.json()["text"] == "Envelope" and ok.json()["integrity"] == "ok"
    wrong = client.get("/api/rfc5147", params={"pdi": name, "fragment": f"char=0,6;md5={'0' * 32},UTF-8"})
    assert wrong.status_code == 422


def test_accept_chooses_a_pdf_fragments_answer_and_each_has_its_own_tag(archive: Archive) -> None:
    import io

    from PIL import Image

    data = (CORPUS / "paragraph_and_link.pdf").read_bytes()
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    passage = f"/uri-res/N2R?{name}%23char=0,19"  # "The first paragraph" (page 1)
    text = client.get(passage)
    assert text.headers["content-type"] == "text/plain; charset=utf-8" and text.content == b"The first paragraph"
    browser = client.get(passage, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert browser.content == text.content and browser.headers["etag"] == text.headers["etag"]
    whole = client.get(passage, headers={"Accept": "application/pdf"})
    assert whole.headers["content-type"] == "application/pdf" and whole.content == data
    png = client.get(passage, headers={"Accept": "image/png"})
    assert png.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(png.content))
    assert image.height < 60 and image.width > 100  # one line, at 144 dpi
    # the resolver's cache (on here) keeps the default answer only: asked again plainly, the text
    assert client.get(passage).content == b"The first paragraph"
    tags = {text.headers["etag"], whole.headers["etag"], png.headers["etag"]}
    assert len(tags) == 3
    assert all(r.headers["vary"] == "Accept" for r in (text, whole, png))
    refused = client.get(passage, headers={"Accept": "audio/ogg"})
    assert refused.status_code == 200  # names none of the three: the default, as for any other name
    refused = client.get(passage, headers={"Accept": "image/png;q=0, text/plain;q=0, application/pdf;q=0"})
    assert refused.status_code == 406 and "text/plain, image/png, application/pdf" in refused.json()["detail"]
    assert "Accept" in refused.headers["vary"]  # chosen by Accept, as the answers it chose among (RFC 9110 §12.5.5)
    # a passage over two pages has no one image: 406 naming a passage per page
    both = client.get(f"/uri-res/N2R?{name}%23char=0,60", headers={"Accept": "image/png"})
    assert both.status_code == 406 and f"{name}#char=0,48" in both.json()["detail"]


def test_a_page_and_a_region_answer_as_the_table_says(archive: Archive) -> None:
    import io

    from PIL import Image

    data = (CORPUS / "sizes.pdf").read_bytes()
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    page = f"/uri-res/N2R?{name}%23page=2"
    assert client.get(page).content == data
    assert client.get(page, headers={"Accept": "text/plain"}).content == b"Envelope\r\n"
    rendered = Image.open(io.BytesIO(client.get(page, headers={"Accept": "image/png"}).content))
    assert rendered.size == (649 * 2, 323 * 2)  # pdfinfo: 649 x 323 pts, at 144 dpi
    region = f"/uri-res/N2R?{name}%23rect=(0,0),(649,323),1"
    cut = client.get(region)
    assert cut.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(cut.content)).size == (1298, 646)
    assert client.get(region, headers={"Accept": "text/plain"}).content == b"Envelope"


def test_api_pdf_page_is_the_kept_layers_page_with_pdfiums_boxes(archive: Archive) -> None:
    import pypdfium2 as pdfium

    from pdi.fragments.pdf import text_layer

    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    name = str(archive.add(S, data, format="pdf"))
    text = str(archive.add(S, b"plain words\n", format="text"))
    client = TestClient(create_app(archive.location, archive=archive))
    got = client.get("/api/pdf/page", params={"pdi": name + "#char=0,5", "page": "2"})
    assert got.status_code == 200, got.text
    page = got.json()
    layer = text_layer(data)
    start, end = layer.page_range(2)
    assert (page["page"], page["pages"], page["start"], page["text"]) == (2, 14, start, layer.text[start:end])
    assert len(page["boxes"]) == len(page["text"]) and page["crop"] == [0, 0, 612, 792] and page["rotation"] == 0
    # each box is PDFium's own for that glyph (pypdfium2's get_charbox, asked independently), to 1/100 point;
    # the generated spaces and line breaks have none
    document = pdfium.PdfDocument(data)
    textpage = document[1].get_textpage()
    raw = textpage.get_text_range()
    assert raw.startswith(page["text"][:40])
    for i in range(40):
        box = page["boxes"][i]
        if box is None:
            assert page["text"][i] in " \r\n"
            continue
        left, bottom, right, top = textpage.get_charbox(i)
        assert box == [round(left, 2), round(bottom, 2), round(right, 2), round(top, 2)]
    assert client.get("/api/pdf/page", params={"pdi": name, "page": "15"}).status_code == 404
    assert client.get("/api/pdf/page", params={"pdi": name, "page": "0"}).status_code == 400
    assert client.get("/api/pdf/page", params={"pdi": text, "page": "1"}).status_code == 400


def test_viewrect_is_the_region_of_rect_and_answers_as_a_region(archive: Archive) -> None:
    """RFC 8118 §3 ``viewrect=left,top,width,height`` (points): the region ``rect=(l,t),(l+w,t+h)`` names, its
    corners rounded outward; a fifth position is the page (``page=n&viewrect=…`` in one scheme)."""
    import io

    from PIL import Image

    data = (CORPUS / "sizes.pdf").read_bytes()
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    view = f"/uri-res/N2R?{name}%23viewrect=0,0,649,323,2"  # pdfinfo: page 2 is 649 x 323 pts
    cut = client.get(view)
    assert cut.status_code == 200 and cut.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(cut.content)).size == (1298, 646)  # at 144 dpi, as rect's
    assert client.get(view, headers={"Accept": "text/plain"}).content == b"Envelope"
    assert cut.content == client.get(f"/uri-res/N2R?{name}%23rect=(0,0),(649,323),1").content
    about = client.get(f"/uri-res/N2C?{name}%23viewrect=0%2E5,0,10%2E25,20").json()["fragment"]
    assert about["scheme"] == "viewrect"
    assert (about["region"]["x1"], about["region"]["y1"], about["region"]["x2"], about["region"]["y2"],
            about["region"]["frame"]) == (0, 0, 11, 20, 0)  # 0.5 + 10.25 = 10.75, rounded up
    assert client.get(f"/uri-res/N2R?{name}%23viewrect=0,0,0,10").status_code == 400  # no width
    assert client.get(f"/uri-res/N2R?{name}%23viewrect=0,0,10,10,4").status_code == 404  # no page 4


def test_search_is_the_first_occurrence_of_any_word_folded(archive: Archive) -> None:
    """RFC 8118 §3 ``search="w1 w2"``: the first place in *D* where any word stands, compared after NFKC, case
    folding and removing marks, a hyphen at a line end joined (docs/pdf-text-layer.md §5); offsets by hand."""
    hand = (CORPUS / "hand-overprint-hyphens.pdf").read_bytes()
    name = str(archive.add(S, hand, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    text = ("Bold by overprinting\r\nA word broken by a soft hy-\r\nphen and one by a hard hy-\r\n"
            "phen, then the end.\r\ngap after kern ed\r\nRotated ninety degrees\r\n\f")
    got = client.get(f"/uri-res/N2R?{name}%23search=%22HARD%20broken%22")
    assert got.status_code == 200 and got.headers["content-type"] == "text/plain; charset=utf-8"
    assert got.content == b"broken"  # "broken" stands before "hard"
    about = client.get(f"/uri-res/N2C?{name}%23search=%22hyphen%22").json()["fragment"]
    start = text.index("hy-\r\nphen")
    assert about["scheme"] == "search"
    assert about["ranges"][0]["start"] == start and about["ranges"][0]["end"] == start + len("hy-\r\nphen")
    assert client.get(f"/uri-res/N2R?{name}%23search=%22nowhere%22").status_code == 404
    french = str(archive.add(S, (CORPUS / "french_diacritics.pdf").read_bytes(), format="pdf"))
    # the layer starts "à À â Â ä Ä ç Ç é É …" (pdftotext: the same letters): "ç" is the seventh letter, at 2 * 6
    found = client.get(f"/uri-res/N2C?{french}%23search=%22C%22").json()["fragment"]["ranges"][0]
    assert (found["start"], found["end"]) == (12, 13)
    assert client.get(f"/uri-res/N2R?{french}%23search=%22E%CC%81%22").content == "é".encode()  # E and U+0301
    # a parenthesised position holds no words: it was searched for as the Python text "('phen', 'end')"
    refused = client.get(f"/uri-res/N2R?{name}%23search=(phen,end)")
    assert refused.status_code == 400 and "parenthesised" in refused.json()["detail"]
    pages = client.get(f"/uri-res/N2R?{name}%23page=(1,2)")
    assert pages.status_code == 400 and "'(1,2)'" in pages.json()["detail"]  # as written, not "(1, 2)"


def test_the_406_of_a_passage_over_many_pages_names_the_first_few(archive: Archive) -> None:
    from pdf_helpers import pages_pdf
    from pdi.server.protocol.pdf_answers import MOST_NAMED

    pages = 2_000
    name = str(archive.add(S, pages_pdf(pages), format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    refused = client.get(f"/uri-res/N2R?{name}%23char=0,9999999", headers={"Accept": "image/png"})
    assert refused.status_code == 406
    detail = refused.json()["detail"]
    # pages_pdf draws "ab" on every page: the layer is "ab\r\n\f" a page, 5 characters
    named = [f"{name}#char={5 * n},{5 * n + 4}" for n in range(MOST_NAMED + 1)]
    assert f"lies on pages 1 to {pages}" in detail
    assert all(one in detail for one in named[:MOST_NAMED]) and named[MOST_NAMED] not in detail
    assert detail.endswith(f", and so on to page {pages}")
    assert len(refused.content) < 2_000


def test_a_glyph_drawn_past_a_floats_range_is_no_500(archive: Archive) -> None:
    """Reported: a glyph drawn under a matrix scaling by 1e38 has an infinite box: the passage's rendering was an
    OverflowError and /api/pdf/page a ValueError (JSON has no infinity), both 500. Such a glyph has no box now."""
    scale = b"1000000000 0 0 1000000000 0 0 cm " * 4 + b"100 0 0 100 0 0 cm "
    data = pages_pdf(1, b"q " + scale + b"BT /F1 12 Tf (Hi) Tj ET Q BT /F1 12 Tf 10 10 Td (Hello) Tj ET")
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    text = client.get(f"/uri-res/N2R?{name}%23page=1", headers={"Accept": "text/plain"}).text
    hi, hello = text.index("Hi"), text.index("Hello")
    page = client.get("/api/pdf/page", params={"pdi": name, "page": "1"})
    assert page.status_code == 200, page.text
    assert page.json()["boxes"][hi] is None and page.json()["boxes"][hello] is not None
    alone = client.get(f"/uri-res/N2R?{name}%23char={hi},{hi + 2}", headers={"Accept": "image/png"})
    assert alone.status_code == 406 and "no character drawn on the page" in alone.json()["detail"]
    both = client.get(f"/uri-res/N2R?{name}%23char={min(hi, hello)},{max(hi, hello) + 2}",
                      headers={"Accept": "image/png"})
    assert both.status_code == 200 and both.headers["content-type"] == "image/png"


def test_api_pdf_page_bounds_the_characters_it_gives_boxes_for(
        archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reported: a 20 KB PDF can draw two million characters on a page; their boxes as JSON took 24 s, 58 MB, and
    were kept (64 such pages: gigabytes). A page past MAX_PAGE_CHARACTERS is a limit; the pages read ahead stop
    before it; what is kept is bounded by KEPT_CHARACTERS too."""
    from pdi.server.pages import pdf_view

    data = (CORPUS / "tracemonkey.pdf").read_bytes()
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    monkeypatch.setattr(pdf_view, "_PAGES", type(pdf_view._PAGES)())
    monkeypatch.setattr(pdf_view, "_KEPT_CHARACTERS", {})
    first = client.get("/api/pdf/page", params={"pdi": name, "page": "1"}).json()
    monkeypatch.setattr(pdf_view, "MAX_PAGE_CHARACTERS", len(first["text"]) - 1)
    refused = client.get("/api/pdf/page", params={"pdi": name, "page": "5"})
    assert refused.status_code in (400, 413), refused.text
    assert "characters, more than the" in refused.json()["detail"]
    assert client.get("/api/pdf/page", params={"pdi": name, "page": "1"}).json() == first  # kept from before
    monkeypatch.setattr(pdf_view, "MAX_PAGE_CHARACTERS", 200_000)
    monkeypatch.setattr(pdf_view, "KEPT_CHARACTERS", 2 * len(first["text"]))
    pdf_view._PAGES.clear()
    pdf_view._KEPT_CHARACTERS.clear()
    assert client.get("/api/pdf/page", params={"pdi": name, "page": "1"}).json() == first
    assert sum(pdf_view._KEPT_CHARACTERS.values()) <= pdf_view.KEPT_CHARACTERS
    assert set(pdf_view._PAGES) == set(pdf_view._KEPT_CHARACTERS) and len(pdf_view._PAGES) < 1 + pdf_view.AHEAD


def test_a_small_region_of_a_huge_page_renders_and_too_large_a_one_is_refused_as_pdfiums_limits_are(
        archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of 14,400 points square (28,800 pixels square at 144 dpi): the bound on pixels is on the region
    rendered, and past it the refusal is a limit as PDFium's deadline is (the same status, type and title)."""
    import io

    from PIL import Image

    import pdi.fragments.pdf as pdf
    from pdf_helpers import huge_page_pdf, operators_pdf

    name = str(archive.add(S, huge_page_pdf(14_400, [((7_000, 7_000, 7_050, 7_050), (255, 0, 0))]), format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    small = client.get(f"/uri-res/N2R?{name}%23viewrect=7000,7000,100,50")
    assert small.status_code == 200, small.text
    image = Image.open(io.BytesIO(small.content)).convert("RGB")
    assert image.size == (200, 100)  # red on points 7000-7050 square: pixels 0-100 across, all 100 down
    assert image.getpixel((99, 99)) == (255, 0, 0) and image.getpixel((100, 0)) == (255, 255, 255)
    large = client.get(f"/uri-res/N2R?{name}%23rect=(0,0),(14400,14400)")
    assert "28,800×28,800 pixels" in large.json()["detail"] and "40,000,000" in large.json()["detail"]
    slow = str(archive.add(S, operators_pdf(100_000), format="pdf"))
    monkeypatch.setattr(pdf, "LIMITS", pdf.PdfiumLimits(page_seconds=0.05))
    deadline = client.get(f"/uri-res/N2R?{slow}%23rect=(0,0),(10,10)")
    assert "pdi.fragments.pdf.LIMITS.page_seconds" in deadline.json()["detail"]
    assert (large.status_code, large.json()["type"], large.json()["title"]) == (
        deadline.status_code, deadline.json()["type"], deadline.json()["title"]) == (
        400, "/api#problem-limit-exceeded", "limit exceeded")  # a GET sends no content: 400 (problems.status_of)


def test_n2c_of_a_page_wider_than_a_float_holds_is_json(archive: Archive) -> None:
    # PDFium's page width, a float, is infinite for a MediaBox from -3e38 to 3e38: N2C's JSON of it was a 500
    from pdf_helpers import pdf_of

    edge = b"3" + b"0" * 38 + b".0"
    data = pdf_of([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                   b"<< /Type /Page /Parent 2 0 R /MediaBox [-" + edge + b" 0 " + edge + b" 20] >>"])
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive), raise_server_exceptions=False)
    about = client.get(f"/uri-res/N2C?{name}%23page=1")
    assert about.status_code == 200, about.text
    assert about.json()["fragment"]["page"]["width"] == pytest.approx(6e38, rel=1e-6)
    assert about.json()["fragment"]["page"]["height"] == 20


def test_the_viewers_count_of_pages_is_said_for_one_page_and_for_many(archive: Archive) -> None:
    # found following the reader's app (2026-12-01): a one-page PDF's viewer said "1 page, drawn by pdf.js as they
    # come into view"; the pages are counted here as pages_pdf makes them, one page object each
    import html5lib

    client = TestClient(create_app(archive.location, archive=archive))
    said = {}
    for pages in (1, 3):
        name = str(archive.add(S, pages_pdf(pages), format="pdf"))
        page = html5lib.parse(client.get("/view", params={"pdi": name}).text, namespaceHTMLElements=False)
        [count] = [s for s in page.iter("span") if s.get("class") == "pdf-count"]
        said[pages] = "".join(count.itertext())
    assert said == {1: "1 page, drawn by pdf.js as it comes into view",
                    3: "3 pages, drawn by pdf.js as they come into view"}


def test_api_pdf_page_gives_a_page_whose_later_pages_are_refused(
        archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a hunt: /api/pdf/page reads the page asked and the next few in one PDFium child, and a refusal of
    any of them (a later page PDFium now reads otherwise than the kept layer, past its time limit) refused the page
    asked too: page 1's boxes were a 4xx because of page 2. Page 1 is given; page 2 alone is refused."""
    from pdi.fragments import pdf
    from pdi.server.pages import pdf_view

    data = pages_pdf(3)  # each page draws "ab"
    name = str(archive.add(S, data, format="pdf"))
    layer = pdf.text_layer(data)
    assert layer.text == "ab\r\n\fab\r\n\fab\r\n"  # docs/pdf-text-layer.md §2: three pages of "ab"
    # a layer kept by a build that read page 2 as "xy" (same length: its pages start where they do now)
    kept = pdf.TextLayer("ab\r\n\fxy\r\n\fab\r\n", layer.page_starts, layer.boxes, "an earlier build",
                         layer.page_sizes).to_bytes(len(data))
    monkeypatch.setattr(archive, "fragment_index", lambda record: kept)
    monkeypatch.setattr(pdf_view, "_PAGES", type(pdf_view._PAGES)())
    monkeypatch.setattr(pdf_view, "_KEPT_CHARACTERS", {})
    client = TestClient(create_app(archive.location, archive=archive))
    first = client.get("/api/pdf/page", params={"pdi": name, "page": "1"})
    assert first.status_code == 200, first.text
    assert first.json()["text"] == "ab\r\n" and first.json()["boxes"][0] is not None
    second = client.get("/api/pdf/page", params={"pdi": name, "page": "2"})
    assert second.status_code != 200 and "otherwise than the build" in second.json()["detail"]
    assert client.get("/api/pdf/page", params={"pdi": name, "page": "3"}).json()["text"] == "ab\r\n"


def test_a_refusal_of_a_pdf_read_for_a_name_begins_with_the_name(
        archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a probe (2026-12-01): the resolver's refusal of a PDF PDFium cannot read, and /api/pdf/page's of a
    page it reads otherwise than the kept layer, named no document. Each begins with the name, as a deposit's
    refusal begins with its file's; PDFium's reason follows."""
    from pdi.fragments import pdf
    from pdi.server.pages import pdf_view

    broken = str(archive.add(S, b"%PDF-1.4\n%%EOF\n", format="pdf", force=True))
    client = TestClient(create_app(archive.location, archive=archive))
    for fragment in ("page=1", "char=0,5", "rect=(0,0),(10,10)"):
        refused = client.get(f"/uri-res/N2R?{broken}%23{fragment}")
        assert refused.status_code == 400, refused.text  # unsupported: a GET sends no content (problems.status_of)
        assert refused.json()["detail"] == (
            f"{broken}: not a PDF PDFium can open (PDFium: Data format error): kept as it came (deposited with"
            " --force), it has no page, text or region pdi can cite; cite the whole PDF")
    viewer = client.get("/api/pdf/page", params={"pdi": broken, "page": "1"})  # the viewer's: no contrary advice
    assert viewer.status_code == 400, viewer.text
    assert viewer.json()["detail"] == (
        f"{broken} has no text layer (PDFium could not read it when it was deposited): it has no page, text or region"
        " pdi can cite; cite the whole PDF")
    data = pages_pdf(2)  # each page draws "ab"
    name = str(archive.add(S, data, format="pdf"))
    layer = pdf.text_layer(data)
    kept = pdf.TextLayer("ab\r\n\fxy\r\n", layer.page_starts, layer.boxes, "an earlier build",
                         layer.page_sizes).to_bytes(len(data))  # page 2 read as "xy" by a build before
    monkeypatch.setattr(archive, "fragment_index", lambda record: kept)
    monkeypatch.setattr(pdf_view, "_PAGES", type(pdf_view._PAGES)())
    monkeypatch.setattr(pdf_view, "_KEPT_CHARACTERS", {})
    asked = name + "#char=0,1"
    second = client.get("/api/pdf/page", params={"pdi": asked, "page": "2"})
    assert second.status_code == 400, second.text
    assert second.json()["detail"].startswith(f"{asked}: PDFium ")
    assert second.json()["detail"].endswith(
        " reads page 2 otherwise than the build that made the kept text layer (an earlier build): no boxes for its"
        " characters")


@pytest.mark.parametrize(("rotate", "turn"), [(b"2147483700", 0), (b"2147483700.0", 90), (b"-2147483648", 270)])
def test_api_pdf_page_gives_the_viewer_a_rotate_past_a_c_int_as_pdfium_reads_it(
        archive: Archive, rotate: bytes, turn: int) -> None:
    """The viewer turns pdf.js's drawing of a page with text by /api/pdf/page's rotation: a /Rotate past a C int is
    PDFium's reading of it, worked out from its source (tests/test_fragments_pdf_rotate.py: 2147483700 wraps to
    -2147483596, 0 turns; the real 2147483700.0 is the float 2147483648, held at INT_MAX, 90; INT_MIN, 270),
    as pdi's N2C gives the page's size turned (200 × 400 points unturned)."""
    from pdf_helpers import turned_pdf

    name = str(archive.add(S, turned_pdf(rotate), format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    page = client.get("/api/pdf/page", params={"pdi": name, "page": "1"})
    assert page.status_code == 200, page.text
    assert page.json()["rotation"] == turn and page.json()["crop"] == [0, 0, 200, 400]
    size = client.get(f"/uri-res/N2C?{name}%23page=1").json()["fragment"]["page"]
    assert (size["width"], size["height"]) == ((400, 200) if turn in (90, 270) else (200, 400))


def test_a_character_outside_the_bmp_is_served_as_one_utf8_character(archive: Archive) -> None:
    """Found by a hunt: a glyph mapped by its font's ToUnicode to U+1F600 (a surrogate pair) was kept in the text
    layer as two lone surrogates: N2R of a passage was refused ("not valid utf-8") and /api/pdf/page could not
    write its JSON as UTF-8. Both answer the one character, as pdftotext reads it."""
    data = tounicode_pdf([b"\xd8\x3d\xde\x00", b"\x00B"])
    name = str(archive.add(S, data, format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    passage = client.get(f"/uri-res/N2R?{name}%23char=0,2")
    assert passage.status_code == 200, passage.text
    assert passage.content == "\U0001F600B".encode()
    page = client.get("/api/pdf/page", params={"pdi": name, "page": "1"})
    assert page.status_code == 200, page.text
    assert page.json()["text"] == "\U0001F600B\r\n" and len(page.json()["boxes"]) == 4
