"""Nine small pages that exercise how browsers write and read MHTML (issue 12).

Each page is served over HTTP on 127.0.0.1 exactly as a browser asks for it: a
resource answers only at the request target Chromium sends (its path UTF-8 and
percent-encoded, its query encoded in the page's encoding, WHATWG URL §4.4 query
state), and anything else is a 404. So a page renders in full only when every URL in
it was formed as the browser forms it; the same files are written to a folder for
``pdi mhtml pack``.

* ``cp1251``: a windows-1251 page (``<meta charset>``), queries in Cyrillic, a Cyrillic
  file name, and a style sheet without a charset whose ``url()`` holds Cyrillic
  (CSS Syntax §3.2: decoded with the page's encoding);
* ``sjis``: the same in Shift_JIS, with a character Shift_JIS cannot encode in a
  query (``‽``, sent as ``%26%238253%3B``);
* ``names``: a UTF-8 page whose files have non-ASCII names, spaces and quotes;
* ``base``: a relative ``<base href>``;
* ``font``: ``@font-face`` with ``font.eot?#iefix`` and a WOFF and a TrueType font;
* ``srcdoc``: an ``<iframe srcdoc>`` with its own style sheet and image, in a
  windows-1251 page (a srcdoc document is UTF-8 whatever its parent is);
* ``frames``: a frameset whose frames have their own resources and encodings;
* ``imports``: ``@import`` chains from a windows-1251 page, charsets nowhere (Chromium
  writes an ``@import``'s query and a ``style`` attribute's ``url()`` in UTF-8, a sheet's
  ``url()`` in the sheet's encoding);
* ``mixed``: ``srcset``, ``<picture>``, ``<style>``, inline SVG, ``<input type=image>``.

Images are PNGs of distinct widths made here; the fonts are boxes made here with
fontTools. Nothing is read from outside the repository.
"""

from __future__ import annotations

import io
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

PAGES = ("cp1251", "sjis", "names", "base", "font", "srcdoc", "frames", "imports", "mixed")


@dataclass(frozen=True)
class Served:
    """One resource: the request target a browser sends for it, its type and bytes;
    ``shown`` is False for what Chromium does not ask for (an EOT font, the candidates
    of a ``srcset`` or ``<picture>`` it does not choose)."""

    target: str
    content_type: str
    body: bytes
    shown: bool = True

    @property
    def file(self) -> str:
        """Where it lies in the folder given to ``pack``: the path, percent-decoded, no query."""
        return urllib.parse.unquote(self.target.split("?", 1)[0], errors="strict").lstrip("/")


_WIDTH = iter(range(12, 400, 3))


def png(colour: tuple[int, int, int], height: int = 20) -> bytes:
    """A PNG of one colour whose width no other image of the site has."""
    out = io.BytesIO()
    Image.new("RGB", (next(_WIDTH), height), colour).save(out, "PNG")
    return out.getvalue()


def box_font(flavor: str | None = None) -> bytes:
    """A font whose letters X, Y and Z are boxes of different widths (TrueType, or WOFF)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    def box(width: int) -> object:
        pen = TTGlyphPen(None)
        pen.moveTo((0, 0))
        pen.lineTo((0, 700))
        pen.lineTo((width, 700))
        pen.lineTo((width, 0))
        pen.closePath()
        return pen.glyph()

    names = [".notdef", "X", "Y", "Z"]
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder(names)
    fb.setupCharacterMap({ord("X"): "X", ord("Y"): "Y", ord("Z"): "Z"})
    fb.setupGlyf({".notdef": box(500), "X": box(900), "Y": box(300), "Z": box(600)})
    fb.setupHorizontalMetrics({".notdef": (600, 0), "X": (1000, 0), "Y": (400, 0), "Z": (700, 0)})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "PdiBox", "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=800, sTypoDescender=-200, usWinAscent=800, usWinDescent=200)
    fb.setupPost()
    if flavor is not None:
        fb.font.flavor = flavor
    out = io.BytesIO()
    fb.save(out)
    return out.getvalue()


def _q(text: str, encoding: str = "utf-8") -> str:
    """``text`` (a path in UTF-8, or a query in ``encoding``) percent-encoded as Chromium
    writes it: bytes above 0x7E and space, ``"``, ``<``, ``>`` (and ``'`` in a query)."""
    raw = text.encode(encoding)
    return "".join(f"%{b:02X}" if b <= 0x20 or b > 0x7E or b in b"\"<>'" else chr(b) for b in raw)


def _page(title: str, head: str, body: str, charset: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="{charset}"><title>{title}</title>\n'
        "<style>body{margin:8px;font:16px sans-serif} img{display:inline-block;margin:2px}</style>\n"
        f"{head}</head>\n<body>\n{body}\n</body></html>\n"
    )


def site() -> list[Served]:
    """Every resource of the nine pages (the pages are ``/NAME/index.html``)."""
    out: list[Served] = []

    def add(target: str, content_type: str, body: bytes, shown: bool = True) -> None:
        out.append(Served(target, content_type, body, shown))

    # 1. windows-1251: queries and a charset-less style sheet in the page's encoding.
    cp = "cp1251"
    add(
        "/cp1251/index.html",
        "text/html",
        _page(
            "cp1251",
            '<link rel="stylesheet" href="стиль.css">',
            '<img src="img.png?имя=значение&amp;b=1"> <img src="картинка.png">\n'
            '<div class="bg"></div><p class="styled">Текст</p>\n'
            '<a href="next.html?страница=2">next</a>',
            "windows-1251",
        ).encode(cp),
    )
    add("/cp1251/" + _q("стиль.css"), "text/css", (
        ".bg{width:60px;height:30px;background:url(фон.png?цвет=синий) no-repeat}\n"
        ".styled{color:rgb(10,120,30)}\n"
    ).encode(cp))
    add("/cp1251/img.png?" + _q("имя=значение", cp) + "&b=1", "image/png", png((200, 30, 30)))
    add("/cp1251/" + _q("картинка.png"), "image/png", png((30, 30, 200)))
    add("/cp1251/" + _q("фон.png") + "?" + _q("цвет=синий", cp), "image/png", png((30, 160, 160), 30))

    # 2. Shift_JIS: the same, and a character Shift_JIS has not (WHATWG URL: &#8253;).
    sj = "shift_jis"
    add(
        "/sjis/index.html",
        "text/html",
        _page(
            "sjis",
            '<link rel="stylesheet" href="s.css?名前=値">',
            '<img src="img.png?q=日本語"> <img src="two.png?x=‽&amp;y=1"> <img src="画像.png">\n'
            '<div class="bg"></div><p class="styled">テキスト</p>',
            "shift_jis",
        ).encode(sj, "xmlcharrefreplace"),
    )
    add("/sjis/s.css?" + _q("名前=値", sj), "text/css", (
        ".bg{width:60px;height:30px;background:url(背景.png?色=青) no-repeat}\n"
        ".styled{color:rgb(130,20,140)}\n"
    ).encode(sj))
    add("/sjis/img.png?q=" + _q("日本語", sj), "image/png", png((220, 120, 0)))
    add("/sjis/two.png?x=%26%238253%3B&y=1", "image/png", png((0, 120, 220)))
    add("/sjis/" + _q("画像.png"), "image/png", png((120, 0, 220)))
    add("/sjis/" + _q("背景.png") + "?" + _q("色=青", sj), "image/png", png((0, 0, 120), 30))

    # 3. non-ASCII, space and quote in names (paths are UTF-8 whatever the page's encoding).
    add(
        "/names/index.html",
        "text/html",
        _page(
            "names",
            '<link rel="stylesheet" href="スタイル 1.css">',
            '<img src="ünï côde.png"> <img src="dir%20x/caf%C3%A9.png"> <img src="it\'s.png?a=it\'s&amp;b=ü">\n'
            '<div class="bg"></div>',
            "utf-8",
        ).encode(),
    )
    add("/names/" + _q("スタイル 1.css"), "text/css", b".bg{width:60px;height:30px;background:url('fond \xc3\xa9t\xc3\xa9.png')}\n")
    add("/names/" + _q("ünï côde.png"), "image/png", png((250, 200, 0)))
    add("/names/dir%20x/caf%C3%A9.png", "image/png", png((0, 200, 90)))
    add("/names/it's.png?a=it%27s&b=%C3%BC", "image/png", png((90, 90, 90)))
    add("/names/" + _q("fond été.png"), "image/png", png((160, 60, 0), 30))

    # 4. a relative <base href>.
    add(
        "/base/index.html",
        "text/html",
        _page(
            "base",
            '<base href="assets/"><link rel="stylesheet" href="s.css">',
            '<img src="a.png"> <img src="../top.png"> <div class="bg"></div>',
            "utf-8",
        ).encode(),
    )
    add("/base/assets/s.css", "text/css", b".bg{width:60px;height:30px;background:url(bg.png)}\n")
    add("/base/assets/a.png", "image/png", png((10, 10, 10)))
    add("/base/top.png", "image/png", png((200, 0, 100)))
    add("/base/assets/bg.png", "image/png", png((100, 200, 0), 30))

    # 5. @font-face with the "?#iefix" of old IE, then WOFF and TrueType.
    add(
        "/font/index.html",
        "text/html",
        _page(
            "font",
            "<style>@font-face{font-family:Box;src:url(font/box.eot);"
            "src:url(font/box.eot?#iefix) format('embedded-opentype'),url(font/box.woff) format('woff')}\n"
            "@font-face{font-family:Box2;src:url('font/box.ttf#x') format('truetype')}\n"
            ".a{font:40px Box} .b{font:40px Box2}</style>",
            '<p class="a">XYZ</p><p class="b">ZYX</p>',
            "utf-8",
        ).encode(),
    )
    add("/font/font/box.eot", "application/vnd.ms-fontobject", b"not an EOT font", shown=False)
    add("/font/font/box.eot?", "application/vnd.ms-fontobject", b"not an EOT font", shown=False)
    add("/font/font/box.woff", "font/woff", box_font("woff"))
    add("/font/font/box.ttf", "font/ttf", box_font())

    # 6. <iframe srcdoc> in a windows-1251 page: the srcdoc document is UTF-8.
    add(
        "/srcdoc/index.html",
        "text/html",
        _page(
            "srcdoc",
            "",
            '<img src="out.png?где=снаружи">\n'
            '<iframe width="300" height="120" srcdoc="<link rel=stylesheet href=&quot;in.css?где=внутри&quot;>'
            '<img src=&quot;in.png?где=внутри&quot;><p class=x>внутри</p>"></iframe>',
            "windows-1251",
        ).encode(cp),
    )
    add("/srcdoc/out.png?" + _q("где=снаружи", cp), "image/png", png((0, 90, 0)))
    add("/srcdoc/in.css?" + _q("где=внутри"), "text/css", b".x{color:rgb(200,0,0);background:url(bg.png)}\n")
    add("/srcdoc/in.png?" + _q("где=внутри"), "image/png", png((90, 0, 90)))
    add("/srcdoc/bg.png", "image/png", png((255, 230, 200), 30))

    # 7. a frameset: one frame in windows-1251, one UTF-8 with a style sheet.
    add(
        "/frames/index.html",
        "text/html",
        (
            b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>frames</title></head>\n'
            b'<frameset cols="50%,50%"><frame src="left.html"><frame src="right page.html?p=1"></frameset></html>\n'
        ),
    )
    add(
        "/frames/left.html",
        "text/html",
        _page("left", "", '<img src="l.png?сторона=левая"><p>Левая</p>', "windows-1251").encode(cp),
    )
    add("/frames/l.png?" + _q("сторона=левая", cp), "image/png", png((180, 180, 0)))
    add(
        "/frames/right%20page.html?p=1",
        "text/html",
        _page("right", '<link rel="stylesheet" href="r.css">', '<p class="r">Right</p><div class="bg"></div>', "utf-8").encode(),
    )
    add("/frames/r.css", "text/css", b".r{color:rgb(0,0,200)} .bg{width:40px;height:30px;background:url(r%20bg.png)}\n")
    add("/frames/r%20bg.png", "image/png", png((0, 200, 200), 30))

    # 8. @import chains from a windows-1251 page: every sheet without a charset.
    add(
        "/imports/index.html",
        "text/html",
        _page(
            "imports",
            '<style>@import "a.css?я=1";</style><link rel="stylesheet" href="b.css">',
            '<div class="c"></div><div class="d"></div><p class="e">е</p>\n'
            '<div style="width:50px;height:30px;background:url(атрибут.png?а=1)"></div>',
            "windows-1251",
        ).encode(cp),
    )
    # and a url() in a style attribute as UTF-8 too
    add("/imports/" + _q("атрибут.png") + "?" + _q("а=1"), "image/png", png((90, 40, 200), 30))
    # Chromium parses an @import's URL as UTF-8 (the style sheet's encoding for url())
    add("/imports/a.css?%D1%8F=1", "text/css", "@import url(c.css?ё=2);\n.e{color:rgb(1,150,200)}\n".encode(cp))
    add("/imports/c.css?%D1%91=2", "text/css", ".c{width:50px;height:30px;background:url(фон.png?ц=1)}\n".encode(cp))
    add("/imports/b.css", "text/css", '@import "d.css";\n'.encode(cp))
    add("/imports/d.css", "text/css", ".d{width:50px;height:30px;background:url(д.png?д=д)}\n".encode(cp))
    add("/imports/" + _q("фон.png") + "?%F6=1", "image/png", png((250, 0, 250), 30))
    add("/imports/" + _q("д.png") + "?%E4=%E4", "image/png", png((0, 250, 0), 30))

    # 9. srcset, <picture>, <style>, inline SVG, <input type=image>.
    add(
        "/mixed/index.html",
        "text/html",
        _page(
            "mixed",
            "<style>.s{width:50px;height:30px;background:url(\"st yle.png?a b\")}</style>",
            '<img src="fallback.png" srcset="dense.png?d=1 1x, dense2.png 2x">\n'
            '<picture><source srcset="pic.png?p=ü" type="image/png"><img src="nopic.png"></picture>\n'
            '<div class="s"></div>\n'
            '<svg width="60" height="30"><image href="svg img.png" width="60" height="30"/></svg>\n'
            '<input type="image" src="input.png" alt="go">',
            "utf-8",
        ).encode(),
    )
    add("/mixed/fallback.png", "image/png", png((1, 1, 1)), shown=False)
    add("/mixed/dense.png?d=1", "image/png", png((100, 100, 250)))
    add("/mixed/dense2.png", "image/png", png((2, 2, 2)), shown=False)
    add("/mixed/pic.png?p=%C3%BC", "image/png", png((250, 100, 100)))
    add("/mixed/nopic.png", "image/png", png((3, 3, 3)), shown=False)
    add("/mixed/st%20yle.png?a%20b", "image/png", png((100, 250, 100), 30))
    add("/mixed/svg%20img.png", "image/png", png((250, 250, 100), 30))
    add("/mixed/input.png", "image/png", png((50, 50, 50)))
    return out


def write_folder(resources: list[Served], folder: Path) -> None:
    """Write the site as files (the query left out: one file answers every query)."""
    for r in resources:
        path = folder / r.file
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.read_bytes() != r.body:
            raise AssertionError(f"two resources of the site share the file {r.file}")
        path.write_bytes(r.body)
