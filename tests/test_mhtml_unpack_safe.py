"""Unpacking MHTML safely (pdi.mhtml.unpack, pdi.capture.unpack_to, `pdi mhtml unpack`).

Hostile files are written by hand here (not by our writer, which refuses
them); expected names and rewritten pages are worked out by hand from the
naming rules in pdi.mhtml.unpack's docstring.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.capture import unpack_to
from pdi.cli import cli
from pdi.errors import ImmutabilityError, LimitError, PDIError
from pdi.mhtml import parse
from pdi.mhtml.refs import html_references
from pdi.mhtml.unpack import UnpackLimits, plan, safe_name
from pdi.uri import resolve

# What unpack puts first in every page (pdi.mhtml.unpack's docstring): no script may run.
POLICY = b"<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus" / "mhtml"


def mhtml(*parts: tuple[list[str], bytes], top: str = 'multipart/related; boundary="b"; type="text/html"') -> bytes:
    out = [f"MIME-Version: 1.0\r\nContent-Type: {top}\r\n\r\n".encode()]
    for headers, body in parts:
        out.append(b"--b\r\n" + "".join(h + "\r\n" for h in headers).encode() + b"\r\n" + body + b"\r\n")
    out.append(b"--b--\r\n")
    return b"".join(out)


@pytest.mark.parametrize(
    ("label", "media_type", "expected"),
    [
        ("http://x/a/b/../../etc/passwd", "text/plain", "passwd.txt"),
        ("../../../../evil.html", "image/png", "evil.html.png"),  # typed an image: stays an image
        ("C:\\Windows\\system32\\cmd.exe", "application/octet-stream", "cmd.exe.bin"),
        ("/dev/zero", "image/gif", "zero.gif"),
        ("CON", "text/plain", "_CON.txt"),
        ("http://x/nul.tar.gz", "application/gzip", "_nul.tar.gz"),
        ("http://x/com1.css", "text/css", "_com1.css"),
        ("http://x/", "image/png", "part.png"),
        (".htaccess", "text/plain", "htaccess.txt"),
        ("-rf", "application/octet-stream", "rf.bin"),
        ("http://x/caf\u00e9.png", "image/png", "cafe.png"),
        ("http://x/a%2F..%2F..%2Fb.png?x=1#y", "image/png", "a_.._.._b.png"),
        ("cid:frame-AB12@mhtml.blink", "text/html", "frame-AB12.html"),
        ("http://x/photo.JPEG", "image/jpeg", "photo.JPEG"),
        ("http://x/script", "text/javascript", "script.js"),
        ("http://x/run.sh", "application/x-sh", "run.sh.bin"),
        (None, "image/webp", "part.webp"),
        ("file:///etc/shadow", "text/plain", "shadow.txt"),
    ],
)
def test_safe_name_by_hand(label: str | None, media_type: str, expected: str) -> None:
    assert safe_name(label, media_type, set()) == expected


def test_safe_name_unique_even_on_case_insensitive_file_systems() -> None:
    taken: set[str] = set()
    assert safe_name("http://x/A.png", "image/png", taken) == "A.png"
    assert safe_name("http://y/a.png", "image/png", taken) == "a-2.png"
    assert safe_name("http://z/a.PNG", "image/png", taken) == "a-3.PNG"


def test_safe_name_length_bounded() -> None:
    name = safe_name("http://x/" + "a" * 500 + ".png", "image/png", set())
    assert len(name) <= 80 and name.endswith(".png")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=200)), st.sampled_from(["text/html", "image/png", "x/y", "text/css", "application/octet-stream"]))
def test_property_safe_names_are_plain_file_names(label: str | None, media_type: str) -> None:
    taken: set[str] = set()
    first = safe_name(label, media_type, taken)
    second = safe_name(label, media_type, taken)
    for name in (first, second):
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", name)
        assert not name.startswith((".", "-"))
        assert len(name) <= 80
        assert name.split(".", 1)[0].lower() not in {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
    assert first.casefold() != second.casefold()


HOSTILE = mhtml(
    (["Content-Type: text/html", "Content-Location: http://example.com/dir/page.html"],
     b'<html><head><base href="http://example.com/other/"></head><body>\r\n'
     b'<img src="cid:img1@x"><img src="pic.png#f"><a href="next.html?a=1&amp;b=2">n</a>\r\n'
     b'<iframe src="cid:frame-1@mhtml.blink"></iframe><img src="../../../../etc/passwd">\r\n'
     b"</body></html>"),
    (["Content-Type: image/png", "Content-ID: <img1@x>", "Content-Transfer-Encoding: base64"], b"iVBORw0KGgo="),
    (["Content-Type: image/png", "Content-Location: http://example.com/other/pic.png"], b"PIC"),
    (["Content-Type: text/html", "Content-ID: <frame-1@mhtml.blink>", "Content-Location: http://example.com/dir/page.html"],
     b'<p style="background: url(cid:css-1)">frame</p>'),
    (["Content-Type: text/css", "Content-Location: cid:css-1"], b"p { color: red }"),
    (["Content-Type: text/plain", "Content-Location: ../../../../tmp/pwned"], b"x"),
    (["Content-Type: text/plain", "Content-Location: /etc/passwd"], b"y"),
    (["Content-Type: image/png", "Content-Location: NUL"], b"z"),
)


def test_unpack_rewrites_references_and_names_files_safely(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = plan(parse(HOSTILE))
    written = unpack_to(result, out)
    names = sorted(p.name for p in written)
    assert names == sorted(
        ["index.html", "img1.png", "pic.png", "page.html", "css-1.css", "pwned.txt", "passwd.txt", "_NUL.png"]
    )
    assert sorted(os.listdir(out)) == names  # nothing anywhere else, no sub-folders
    assert not (tmp_path / "tmp").exists()
    index = (out / "index.html").read_bytes()
    assert index == POLICY + (
        b'<html><head><base href="./"></head><body>\r\n'
        b'<img src="img1.png"><img src="pic.png#f"><a href="http://example.com/other/next.html?a=1&amp;b=2">n</a>\r\n'
        b'<iframe src="page.html"></iframe><img src="http://example.com/etc/passwd">\r\n'
        b"</body></html>"
    )
    assert (out / "page.html").read_bytes() == POLICY + b'<p style="background: url(css-1.css)">frame</p>'
    assert (out / "img1.png").read_bytes() == b"\x89PNG\r\n\x1a\n"
    assert result.unsatisfied == ("http://example.com/other/next.html?a=1&b=2", "http://example.com/etc/passwd")


def test_unpack_never_clobbers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "PIC.png").write_bytes(b"mine")
    with pytest.raises(ImmutabilityError):
        unpack_to(plan(parse(HOSTILE)), out)
    assert os.listdir(out) == ["PIC.png"]  # nothing written at all
    assert (out / "PIC.png").read_bytes() == b"mine"


def test_unpack_never_follows_links(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim"
    victim.write_bytes(b"safe")
    os.symlink(victim, out / "index.html")
    with pytest.raises(ImmutabilityError):
        unpack_to(plan(parse(HOSTILE)), out)
    assert victim.read_bytes() == b"safe"


def test_unpack_limits(tmp_path: Path) -> None:
    agg = parse(HOSTILE)
    with pytest.raises(LimitError, match="parts"):
        plan(agg, limits=UnpackLimits(max_parts=3))
    with pytest.raises(LimitError, match="part"):
        plan(agg, limits=UnpackLimits(max_part_bytes=10))
    with pytest.raises(LimitError, match="add up"):
        plan(agg, limits=UnpackLimits(max_total_bytes=100))


def test_cli_unpack_limits_on_depth_headers_and_sizes(tmp_path: Path) -> None:
    nested = b"MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=b0\r\n\r\n"
    for i in range(1, 30):
        nested += f"--b{i - 1}\r\nContent-Type: multipart/related; boundary=b{i}\r\n\r\n".encode()
    nested += b"--b29\r\nContent-Type: text/html\r\n\r\nhi\r\n"
    deep = tmp_path / "deep.mht"
    deep.write_bytes(nested)
    runner = CliRunner()
    result = runner.invoke(cli, ["mhtml", "unpack", str(deep), str(tmp_path / "o1"), "--max-depth", "5"])
    assert result.exit_code == 7, result.output
    long_header = tmp_path / "long.mht"
    long_header.write_bytes(b"MIME-Version: 1.0\r\nX-Long: " + b"a" * 5000 + b"\r\nContent-Type: text/html\r\n\r\nhi")
    result = runner.invoke(cli, ["mhtml", "unpack", str(long_header), str(tmp_path / "o2"), "--max-header-kb", "1"])
    assert result.exit_code == 7, result.output
    hostile = tmp_path / "h.mht"
    hostile.write_bytes(HOSTILE)
    result = runner.invoke(cli, ["mhtml", "unpack", str(hostile), str(tmp_path / "o3"), "--max-part-mb", "0.000001"])
    assert result.exit_code == 7, result.output
    assert not (tmp_path / "o3").exists() or not os.listdir(tmp_path / "o3")
    result = runner.invoke(cli, ["mhtml", "unpack", str(hostile), str(tmp_path / "o4")])
    assert result.exit_code == 0, result.output
    assert "wrote 8 files" in result.output
    again = runner.invoke(cli, ["mhtml", "unpack", str(hostile), str(tmp_path / "o4")])
    assert again.exit_code == 5
    # A file too large to fit the total limit is refused before it is read.
    huge = tmp_path / "huge.mht"
    huge.write_bytes(HOSTILE + b"x" * (4 * 1024 * 1024))
    result = runner.invoke(cli, ["mhtml", "unpack", str(huge), str(tmp_path / "o5"), "--max-total-mb", "1"])
    assert result.exit_code == 7 and "max-total-mb" in result.output


def test_unpack_keeps_legacy_bytes_outside_rewritten_references(tmp_path: Path) -> None:
    # Shift_JIS page, no charset anywhere but <meta>; 0x5C ("\") and 0x7C occur as trail bytes.
    body = '<meta charset="shift_jis"><p>表示 ソ</p><img src="画像.png"><img src="x.png">'.encode("shift_jis")
    data = mhtml(
        (["Content-Type: text/html", "Content-Location: http://example.jp/index.html"], body),
        (["Content-Type: image/png", "Content-Location: http://example.jp/%E7%94%BB%E5%83%8F.png"], b"IMG"),
        (["Content-Type: image/png", "Content-Location: http://example.jp/x.png"], b"X"),
    )
    result = plan(parse(data))
    index = next(f for f in result.files if f.name == "index.html").data
    expected = POLICY + body.replace('src="画像.png"'.encode("shift_jis"), b'src="part.png"')
    assert index == expected
    assert [f.name for f in result.files] == ["index.html", "part.png", "x.png"]


def _corpus() -> list[Path]:
    return sorted(CORPUS.glob("*.mhtml"))


def test_corpus_is_there() -> None:
    assert len(_corpus()) == 13


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_corpus_unpacks_safely_and_opens_offline(path: Path, tmp_path: Path) -> None:
    try:
        agg = parse(path.read_bytes())
    except PDIError:
        return  # the malformed files: the reader's clear error is its business, not a crash
    out = tmp_path / "out"
    result = plan(agg)
    written = unpack_to(result, out)
    assert len(written) == len(agg.parts)
    assert sorted(os.listdir(out)) == sorted(p.name for p in written)
    assert (out / "index.html").exists() or agg.root.content_type != "text/html"
    local = set(os.listdir(out))
    # Every reference the reader found satisfied now names a file in the folder.
    satisfied_in: dict[int, int] = {}
    for ref in agg.references:
        if ref.satisfied and ref.source.is_html:
            satisfied_in[ref.source.index] = satisfied_in.get(ref.source.index, 0) + 1
    for planned in result.files:
        part = next(p for p in agg.parts if p.index == planned.part)
        if not part.is_html:
            continue
        rewritten = planned.data.decode("latin-1")
        names = [r.url.split("#", 1)[0] for r in html_references(rewritten) if r.kind != "base"]
        hits = sum(1 for n in names if n in local)
        assert hits >= satisfied_in.get(part.index, 0)
        assert not any(n.lower().startswith("cid:") and n for n in names if n in local)


def test_unpack_rewrites_srcset_import_and_inline_styles(tmp_path: Path) -> None:
    data = mhtml(
        (["Content-Type: text/html", "Content-Location: http://e.org/p/index.html"],
         b'<img srcset="a.png 1x, /b.png 2x" src="a.png"><div style="background:url(&quot;a.png&quot;)"></div>'
         b'<link rel=stylesheet href=s.css><style>@import url(s.css); p{background:url(x.png)}</style>'),
        (["Content-Type: image/png", "Content-Location: http://e.org/p/a.png"], b"A"),
        (["Content-Type: image/png", "Content-Location: http://e.org/b.png"], b"B"),
        (["Content-Type: text/css", "Content-Location: http://e.org/p/s.css"], b'@import "t.css";\r\nq { background: url( "../b.png#f" ) }'),
        (["Content-Type: text/css", "Content-Location: http://e.org/p/t.css"], b""),
    )
    result = plan(parse(data))
    files = {f.name: f.data for f in result.files}
    assert sorted(files) == ["a.png", "b.png", "index.html", "s.css", "t.css"]
    assert files["index.html"] == POLICY + (
        b'<img srcset="a.png 1x, b.png 2x" src="a.png"><div style="background:url(&quot;a.png&quot;)"></div>'
        b"<link rel=stylesheet href=s.css><style>@import url(s.css); p{background:url(http://e.org/p/x.png)}</style>"
    )
    assert files["s.css"] == b'@import "t.css";\r\nq { background: url( "b.png#f" ) }'
    assert result.unsatisfied == ("http://e.org/p/x.png",)


def test_unpack_rewrites_unquoted_non_ascii_references(tmp_path: Path) -> None:
    # UTF-8 "à" is C3 A0 and "Å" is C3 85: as single bytes, A0 and 85 are white space to
    # Python's re, not to HTML. An unquoted value ends only at ASCII white space or ">".
    body = "<meta charset=utf-8><img src=à.png><img src=Å.png>".encode()
    data = mhtml(
        (["Content-Type: text/html", "Content-Location: http://e.org/index.html"], body),
        (["Content-Type: image/png", "Content-Location: http://e.org/%C3%A0.png"], b"A"),
        (["Content-Type: image/png", "Content-Location: http://e.org/%C3%85.png"], b"B"),
    )
    result = plan(parse(data))
    files = {f.name: f.data for f in result.files}
    assert sorted(files) == ["A-2.png", "a.png", "index.html"]
    assert files["index.html"] == POLICY + b"<meta charset=utf-8><img src=a.png><img src=A-2.png>"
    assert result.unsatisfied == ()


def test_unpack_leaves_no_reference_that_leads_out_of_the_folder(tmp_path: Path) -> None:
    # No retrieval URI: the base is thismessage:/ (RFC 2557 §5 (e)). Unsatisfied references
    # that are relative, protocol-relative or file: would, from out/index.html, reach the
    # local disk or a network share; resolved, they are thismessage: or file: URIs, schemes
    # an unpacked page keeps none of: about:blank. Web links stay web links.
    body = (
        b'<img src="../../../../etc/hostname"><img src="/etc/passwd"><img src="//evil/share/x.png">'
        b'<img src="file:///etc/passwd"><a href="https://e.org/x">w</a><img src="ok.png">'
        b'<img src="FiLe://server/share/x.png"><img src="c:/windows/x.png">'
    )
    data = mhtml(
        (["Content-Type: text/html"], body),
        (["Content-Type: image/png", "Content-Location: ok.png"], b"OK"),
    )
    result = plan(parse(data))
    index = next(f for f in result.files if f.name == "index.html").data
    assert index == POLICY + (
        b'<img src="about:blank"><img src="about:blank">'
        b'<img src="about:blank"><img src="about:blank">'
        b'<a href="https://e.org/x">w</a><img src="ok.png">'
        b'<img src="about:blank"><img src="about:blank">'
    )


def test_unpack_multibyte_encodings_whose_characters_hold_ascii_bytes(tmp_path: Path) -> None:
    # Shift_JIS "ソ" is 83 5C: its trail byte is "\" in ASCII, a CSS escape that would
    # swallow the closing quote. ISO-2022-JP "、" is 21 22 after ESC $ B: the second byte is
    # '"', which would end an attribute value early. Only the references may change.
    css = '@charset "shift_jis"; p{background:url("ソ")} q{background:url(b.png)}'.encode("shift_jis")
    page = '<meta charset="iso-2022-jp"><img alt="、" src="b.png"><p>日本、</p>'.encode("iso2022_jp")
    data = mhtml(
        (["Content-Type: text/html", "Content-Location: http://e.org/i.html"], page),
        (["Content-Type: text/css", "Content-Location: http://e.org/s.css"], css),
        (["Content-Type: image/png", "Content-Location: http://e.org/%E3%82%BD"], b"S"),
        (["Content-Type: image/png", "Content-Location: http://e.org/b.png"], b"B"),
    )
    files = {f.name: f.data for f in plan(parse(data)).files}
    assert sorted(files) == ["b.png", "index.html", "part.png", "s.css"]
    assert files["s.css"] == '@charset "shift_jis"; p{background:url("part.png")} q{background:url(b.png)}'.encode("shift_jis")
    assert files["index.html"] == POLICY + page  # "b.png" is the name b.png gets: nothing to change
    assert "alt=\"\x1b$B!\"\x1b(B\" src=\"b.png\"" in page.decode("latin-1")


def test_unpack_iso_2022_jp_reference_with_japanese(tmp_path: Path) -> None:
    page = '<meta charset="iso-2022-jp"><img alt="、" src="画像.png">'.encode("iso2022_jp")
    data = mhtml(
        (["Content-Type: text/html", "Content-Location: http://e.org/i.html"], page),
        (["Content-Type: image/png", "Content-Location: http://e.org/%E7%94%BB%E5%83%8F.png"], b"G"),
    )
    files = {f.name: f.data for f in plan(parse(data)).files}
    assert files["index.html"] == POLICY + '<meta charset="iso-2022-jp"><img alt="、" src="part.png">'.encode("iso2022_jp")


CRASHERS = Path(__file__).resolve().parent / "data" / "crashers"
FILE_REF_CRASHERS = ["file_refs.mht", "cases_small_refresh.mht", "cases_small_srcdoc.mht"]


def _reaches_out(folder: str, names: set[str], page: str, text: str) -> list[str]:
    """References of an unpacked page that a browser would resolve to a file: URL other
    than a file of the folder (or to a drive letter)."""
    found = []
    for ref in html_references(text):
        if ref.kind == "base":
            continue
        # As a browser's URL parser: C0 controls and spaces around dropped, tabs and line
        # breaks inside removed, "\" read as "/" in file: and http: URLs (WHATWG URL).
        url = ref.url.strip("".join(map(chr, range(33)))).translate({9: None, 10: None, 13: None}).replace("\\", "/")
        if url.startswith("#") or url == "":
            continue
        absolute = resolve(folder, url)  # the page's <base href> is "./": the folder
        scheme = absolute.split(":", 1)[0].lower()
        if len(scheme) == 1 or (scheme == "file" and absolute.split("#", 1)[0] not in {folder + n for n in names}):
            found.append(f"{page}: {ref.kind} {ref.url!r} -> {absolute}")
    return found


@pytest.mark.parametrize("name", FILE_REF_CRASHERS)
def test_unpacked_crashers_have_no_reference_to_the_local_disk(name: str, tmp_path: Path) -> None:
    result = plan(parse((CRASHERS / name).read_bytes()))
    written = unpack_to(result, tmp_path / "out")
    folder = (tmp_path / "out").as_uri() + "/"
    names = {p.name for p in written}
    for page in written:
        if page.suffix == ".html":
            text = page.read_bytes().decode("latin-1")
            assert _reaches_out(folder, names, page.name, text) == []
            assert POLICY.decode() in text


def test_the_check_finds_what_the_crashers_held(tmp_path: Path) -> None:
    # The same check on the files as they were: it finds every way out the report lists.
    folder = (tmp_path / "out").as_uri() + "/"
    found = {
        name: _reaches_out(folder, set(), name, parse((CRASHERS / name).read_bytes()).root.text())
        for name in FILE_REF_CRASHERS
    }
    assert [f.split(" ")[1] for f in found["cases_small_refresh.mht"]] == ["refresh"]
    assert [f.split(" ")[1] for f in found["cases_small_srcdoc.mht"]] == ["src", "frame"]
    kinds = {f.split(" ")[1] for f in found["file_refs.mht"]}
    assert {"refresh", "action", "ping", "src", "frame", "stylesheet", "import", "style-url", "srcset"} <= kinds


def test_unpacked_meta_refresh_srcdoc_form_and_ping_by_hand() -> None:
    result = plan(parse((CRASHERS / "cases_small_srcdoc.mht").read_bytes()))
    assert result.files[0].data == POLICY + (
        b'<html><body><iframe srcdoc="&lt;img src=about:blank onerror=1&gt;&lt;iframe src=about:blank&gt;'
        b'&lt;/iframe&gt;"></iframe></body></html>'
    )
    result = plan(parse((CRASHERS / "cases_small_refresh.mht").read_bytes()))
    assert result.files[0].data == POLICY + (
        b'<html><head><meta http-equiv="refresh" content="0; url=about:blank"></head><body>x</body></html>'
    )
    index = plan(parse((CRASHERS / "file_refs.mht").read_bytes())).files[0].data
    assert index.startswith(b"<!doctype html>" + POLICY + b"<html><head>")  # after the doctype: no quirks mode
    assert b'<form action="about:blank"><button formaction="about:blank">' in index
    assert b'<a ping="about:blank" href="about:blank">' in index


def test_unpack_escapes_what_it_writes_into_srcdoc_for_each_level() -> None:
    # Inner document: <img src="a.png#x&amp;y"> (the URL a.png#x&y), and one level deeper
    # <img src='b.png?q=1'> that no part holds (written as its absolute URI).
    page = (
        b"<iframe srcdoc='<img src=\"a.png#x&amp;amp;y\"><iframe srcdoc=\"&amp;lt;img src=&amp;#39;b.png?q&amp;amp;amp;r&amp;#39;&amp;gt;\">'>"
        b"</iframe>"
    )
    data = mhtml(
        (["Content-Type: text/html", "Content-Location: http://e.org/p/index.html"], page),
        (["Content-Type: image/png", "Content-Location: http://e.org/p/a.png"], b"A"),
    )
    index = next(f for f in plan(parse(data)).files if f.name == "index.html").data
    # a.png#x&y: "&" is "&amp;" in the inner page, and that "&" is "&#38;" in the outer value;
    # b.png?q&r, two levels down: "&amp;" inside, each "&" of it "&#38;" at each level above.
    assert index == POLICY + (
        b"<iframe srcdoc='<img src=\"a.png#x&#38;amp;y\"><iframe srcdoc=\"&amp;lt;img src=&amp;#39;"
        b"http://e.org/p/b.png?q&#38;#38;amp;r&amp;#39;&amp;gt;\">'></iframe>"
    )
    # and read back, each level decodes to what was meant
    inner = [r for r in html_references(index.decode()) if r.url.startswith(("a.png", "http"))]
    assert [r.url for r in inner] == ["a.png#x&y", "http://e.org/p/b.png?q&r"]


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (
            b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body/></html>',
            b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head>' + POLICY[:-1] + b"/>"
            b"<title>t</title></head><body/></html>",
        ),
        (
            b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>',
            b'<html xmlns="http://www.w3.org/1999/xhtml"><head>' + POLICY[:-1] + b"/></head><body><p>x</p></body></html>",
        ),
    ],
)
def test_xhtml_gets_the_policy_inside_head_and_stays_well_formed(page: bytes, expected: bytes) -> None:
    import xml.dom.minidom

    data = mhtml((["Content-Type: application/xhtml+xml", "Content-Location: http://e.org/a.xhtml"], page))
    out = plan(parse(data)).files[0].data
    assert out == expected
    head = xml.dom.minidom.parseString(out).getElementsByTagName("head")[0]
    assert head.firstChild.getAttribute("http-equiv") == "Content-Security-Policy"


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (b"\xef\xbb\xbf<!-- c --><!DOCTYPE html><p>x", b"\xef\xbb\xbf<!-- c --><!DOCTYPE html>" + POLICY + b"<p>x"),
        (b"<p>x</p><!DOCTYPE html>", POLICY + b"<p>x</p><!DOCTYPE html>"),  # a late doctype is no doctype
        (b"", POLICY),
    ],
)
def test_the_policy_goes_after_the_doctype_or_first(page: bytes, expected: bytes) -> None:
    data = mhtml((["Content-Type: text/html; charset=utf-8", "Content-Location: http://e.org/i.html"], page))
    assert plan(parse(data)).files[0].data == expected
