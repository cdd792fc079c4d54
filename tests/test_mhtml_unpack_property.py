"""Property tests: random aggregates unpack inside the folder, and no input raises anything but pdi errors."""

from __future__ import annotations

import codecs
import os
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.capture import unpack_to
from pdi.mhtml import css_references, html_references, parse
from pdi.mhtml.unpack import plan
from pdi.mhtml.write import needed_references

_label = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=40)
_media = st.sampled_from(["text/html", "text/css", "image/png", "application/octet-stream", "text/plain", "x/y"])
_body = st.one_of(
    st.binary(max_size=200),
    st.lists(
        st.sampled_from(['<img src="', '">', "<base href=", "url(", ")", "@import '", "cid:", "../", "a.png", "#x", "<iframe src=", " ", "&amp;", "\u00e9"]),
        max_size=30,
    ).map(lambda xs: "".join(xs).encode("utf-8")),
)


def _mhtml(parts: list[tuple[str, str, bytes]]) -> bytes:
    out = [b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="=_b"\r\n\r\n']
    for label, media, body in parts:
        out.append(b"--=_b\r\nContent-Type: " + media.encode() + b"\r\nContent-Transfer-Encoding: binary\r\n")
        out.append(b"Content-Location: " + label.encode("utf-8") + b"\r\n\r\n" + body.replace(b"--=_b", b"") + b"\r\n")
    out.append(b"--=_b--\r\n")
    return b"".join(out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_label, _media, _body), min_size=1, max_size=6))
def test_property_random_aggregates_unpack_inside_the_folder(parts: list[tuple[str, str, bytes]]) -> None:
    # _mhtml writes a well-formed RFC 2557 aggregate (one boundary, a Content-Type and a Content-Location
    # per part, bodies that hold no delimiter): every one must be read and planned, none refused
    agg = parse(_mhtml(parts))
    result = plan(agg)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        written = unpack_to(result, out)
        assert sorted(os.listdir(out)) == sorted(p.name for p in written)
        assert len(written) == len(agg.parts)
        assert all(p.parent == out and p.is_file() and not p.is_symlink() for p in written)
        assert os.listdir(tmp) == ["out"]
        # Parts that are neither HTML nor CSS come out byte for byte.
        by_name = {f.name: f for f in result.files}
        for part in agg.parts:
            planned = next(f for f in by_name.values() if f.part == part.index)
            if not (part.is_html or part.is_css):
                assert (out / planned.name).read_bytes() == part.data


@settings(max_examples=150, deadline=None)
@given(_label, _media, _body, st.one_of(st.none(), st.text(max_size=12)))
def test_property_needed_references_of_any_part(url: str, media: str, body: bytes, charset: str | None) -> None:
    # any part can be packed: a label that is no encoding is ignored and undecodable octets are
    # replaced, as the WHATWG Encoding standard's decode does (pdi.mhtml.write.text_encoding), never refused
    needs = list(needed_references(url or "thismessage:/", media, body, charset))
    for need in needs:
        assert "#" not in need.url
        assert need.as_document in (None, "html", "css")


_ENCODINGS = st.sampled_from(
    [("shift_jis", "cp932"), ("iso-2022-jp", "iso2022_jp"), ("gbk", "gb18030"), ("big5", "big5hkscs"),
     ("euc-jp", "euc_jp"), ("utf-16le", "utf-16-le"), ("utf-8", "utf-8"), ("windows-1252", "cp1252")]
)
_CJK = ["日本", "ソ", "表", "、", "能", "x", " ", '"', "'", "\\", "(", ")", "p", "{", "}", ";", "\u00e9", ".png"]
_PAGE = st.lists(
    st.sampled_from([*_CJK, "<p>", '<img alt="', '<img src="', "<img src=", '<a href="', '">', ">", "x.png", "#f"]), max_size=30
)
_SHEET = st.lists(st.sampled_from([*_CJK, "url(", 'url("', "url('", "@import '", "x.png"]), max_size=30)


def _gaps(text: str, html: bool) -> list[str]:
    refs = sorted(html_references(text) if html else css_references(text), key=lambda r: r.start)
    edges = [0, *(i for r in refs for i in (r.start, r.end)), len(text)]
    return [text[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2)]


_DOCS = st.one_of(_PAGE.map(lambda xs: (True, "".join(xs))), _SHEET.map(lambda xs: (False, "".join(xs))))


@settings(max_examples=150, deadline=None)
@given(_ENCODINGS, _DOCS)
@example(("shift_jis", "cp932"), (False, 'url("ソ") p{} url(x.png)'))
@example(("iso-2022-jp", "iso2022_jp"), (True, '<img alt="、" src="x.png"><img src=日本.png>'))
@example(("utf-8", "utf-8"), (False, "日本url(日本"))  # "日本url(" is one function name, read one byte a character too
def test_property_rewriting_changes_only_the_references_in_any_encoding(
    encoding: tuple[str, str], doc: tuple[bool, str]
) -> None:
    # Read as a browser reads it (decoded), the unpacked page holds the same references
    # with the same text between them, whatever its encoding does with the ASCII values
    # of its bytes (Shift_JIS "ソ" holds "\\", ISO-2022-JP "、" holds '"').
    label, codec = encoding
    html, text = doc
    body = text.encode(codec, "ignore")
    media = "text/html" if html else "text/css"
    page = (["Content-Type: " + media + "; charset=" + label, "Content-Location: http://e.org/i"], body)
    image = (["Content-Type: image/png", "Content-Location: http://e.org/x.png"], b"X")
    files = {f.name: f.data for f in plan(parse(_mhtml_parts(page, image))).files}
    out = files["index.html" if html else "index.css"]
    before, after = codecs.decode(body, codec, "replace"), codecs.decode(out, codec, "replace")
    if html:  # what unpack puts first in every page (pdi.mhtml.unpack's docstring)
        policy = "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"
        assert after.startswith(policy)
        after = after[len(policy) :]
    assert _gaps(after, html) == _gaps(before, html)
    assert files["x.png"] == b"X"


def _mhtml_parts(*parts: tuple[list[str], bytes]) -> bytes:
    out = [b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="=_b"\r\n\r\n']
    for headers, body in parts:
        out.append(b"--=_b\r\n" + "".join(h + "\r\n" for h in headers).encode() + b"Content-Transfer-Encoding: binary\r\n\r\n")
        out.append(body + b"\r\n")
    out.append(b"--=_b--\r\n")
    return b"".join(out)
