"""HTML that html.parser reads otherwise than a browser (pdi.mhtml.refs), and the crasher
inputs behind it: `<![x[` made every command that reads HTML raise AssertionError.

Expected references follow the WHATWG HTML tokenizer and tree builder (section numbers
in the tests); tests/test_mhtml_refs_chromium.py checks the same against Chromium itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.cli import cli
from pdi.errors import LimitError, PDIError
from pdi.mhtml import html_references, parse
from pdi.mhtml.refs import MAX_SRCDOC_DEPTH, refresh_url

CRASHERS = Path(__file__).resolve().parent / "data" / "crashers"


def urls(text: str) -> list[str]:
    return [r.url for r in html_references(text)]


CASES: list[tuple[str, list[str]]] = [
        # §13.2.5.42: "<![" outside foreign content is a bogus comment to the first ">"
        ("<![x[ y ]]><img src=a>", ["a"]),
        ("<![CDATA[ > <img src=b> ]]>", ["b"]),
        ("<![x[ <img src=hidden> ]]><img src=c>", ["c"]),
        ("<![", []),
        # §13.2.5.43-.52: comments end at "-->", "--!>", or at once ("<!-->", "<!--->")
        ("<!-- a --!><img src=d>", ["d"]),
        ("<!--><img src=e>", ["e"]),
        ("<!---><img src=f>", ["f"]),
        ("<!-- <img src=hidden> -- ><img src=hidden2> -->", []),
        # raw text ends at "</name" and white space, "/" or ">" (§13.2.5.13 and the like)
        ("<style>p{}</style x><img src=g>", ["g"]),
        ("<style>p{}</style/><img src=h>", ["h"]),
        ("<style>p{}</styles><img src=hidden></style>", []),
        # RCDATA and RAWTEXT elements: what html.parser took for a comment there is text
        ("<title><!--</title><img src=i>-->", ["i"]),
        ("<textarea><style></textarea><img src=j>", ["j"]),
        ("<xmp><!--</xmp><img src=k>", ["k"]),
        ("<iframe><!--</iframe><img src=l>", ["l"]),
        ("<noembed><style></noembed><img src=m>", ["m"]),
        ("<style/><!--</style><img src=n>-->", ["n"]),  # "/>" does not end <style>
        # script data: escaped after "<!--", double-escaped after "<script" in there (§13.2.5.4, .15-.31)
        ("<script><!--<script></script><style></script><img src=o></style>", ["o"]),
        ("<script><!--</script><img src=p>", ["p"]),
        ("<script><!--><style></script><img src=q>", ["q"]),
        # foreign content (§13.2.6.5): no raw text in SVG; a breakout tag or </p> leaves it
        ("<svg><style><img src=r></style></svg>", ["r"]),
        ("<svg><title><style></title><img src=s></style></svg>", []),  # an HTML integration point
        ("<svg></p><style><img src=hidden></style>", []),
        ("<svg><g><b></b><style><img src=hidden></style>", []),
        ("<math><mi><style></style></mi><style><img src=t></style></math>", ["t"]),
        ("<svg><style>a{fill:url(u.png)}</style></svg>", ["u.png"]),
        ("<svg><style><![CDATA[ body{background:url(v.png)} ]]></style></svg>", ["v.png"]),
        ("<svg><style>a{background:url(&quot;w.png&quot;)}</style></svg>", ["w.png"]),
        # §13.2.6.4.7: an <image> start tag in HTML is an <img>
        ("<image src=x>", ["x"]),
        # noscript: markup when scripting is off, text when on: both are read
        ("<noscript><img src=y></noscript>", ["y"]),
        ("<noscript><!--</noscript><img src=z>-->", ["z"]),
        ("<plaintext></plaintext><img src=hidden>", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_markup_is_read_as_a_browser_reads_it(text: str, expected: list[str]) -> None:
    assert urls(text) == expected


@pytest.mark.parametrize(
    ("content", "url"),
    [
        ("0; url=file:///etc/passwd", "file:///etc/passwd"),
        ("5;URL='a b' c", "a b"),
        ("0 ; http://x/", "http://x/"),
        (".5,url = \"q\"", "q"),
        ("1; urlx", "urlx"),  # no "=": the whole rest is the URL
        ("1 url=y", "y"),
        ("0", None),
        ("x; url=y", None),  # no time
        ("1x; url=y", None),
        ("3; url=", None),
    ],
)
def test_refresh_url_follows_the_declarative_refresh_steps(content: str, url: str | None) -> None:
    # WHATWG HTML §7.11.1, "shared declarative refresh steps"
    span = refresh_url(content)
    assert (content[span[0] : span[1]] if span else None) == url


def test_navigation_attributes_are_references() -> None:
    text = (
        '<meta http-equiv="Refresh" content="0; url=r.html"><form action="f"><button formaction="b">'
        '<input type=submit formaction="i"></form><a href="h" ping="p1 p2"><area ping=p3 href=a>'
        '<link rel=preload as=image imagesrcset="s1 1x, s2 2x"><table background=t><tr background=tr>'
        '<svg><a xlink:href="x"><rect fill="url(#g)" filter="url(f.svg#f)"/></a></svg><div fill="url(not.png)">'
    )
    assert [(r.kind, r.url) for r in html_references(text)] == [
        ("refresh", "r.html"), ("action", "f"), ("action", "b"), ("action", "i"),
        ("href", "h"), ("ping", "p1"), ("ping", "p2"), ("ping", "p3"), ("href", "a"),
        ("srcset", "s1"), ("srcset", "s2"), ("background", "t"), ("background", "tr"),
        ("href", "x"), ("style-url", "#g"), ("style-url", "f.svg#f"),
    ]


def test_srcdoc_documents_are_read_with_offsets_in_the_outer_text() -> None:
    text = "<iframe srcdoc=\"<img src='a&amp;amp;b'><iframe srcdoc='&lt;img src=c&gt;'>\"></iframe>"
    refs = html_references(text)
    assert [(r.url, text[r.start : r.end], r.quoting) for r in refs] == [
        ("a&b", "a&amp;amp;b", ('"',)),
        ("c", "c", ('"', "'")),
    ]


def test_srcdoc_nesting_is_bounded() -> None:
    inner = "<img src=x>"
    for _ in range(MAX_SRCDOC_DEPTH + 1):
        inner = '<iframe srcdoc="' + inner.replace("&", "&amp;").replace('"', "&quot;") + '"></iframe>'
    with pytest.raises(LimitError, match="srcdoc"):
        html_references(inner)


MARKUP = st.text(
    alphabet=st.sampled_from([*"<>!-[]/=\"' \tabcdsvgmathstylescriptCDATA&;#x\n", "é", "\x00", "\ufeff"]),
    max_size=60,
)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(MARKUP, st.text(max_size=40)))
def test_property_reading_any_short_html_gives_references(text: str) -> None:
    # HTML §13.2 (parsing) recovers from every error, so any string is a document; only a budget
    # (pdi.mhtml.limits) may refuse one, and none of these few characters comes near one
    try:
        refs = html_references(text)
    except PDIError as refused:
        raise AssertionError(f"{text!r} is a document an HTML parser reads, but was refused: {refused}") from None
    for r in refs:
        assert 0 <= r.start <= r.end <= len(text)


@pytest.mark.parametrize("name", ["assert_min.mht", "9474a1eb6923f01c.bin"])
@pytest.mark.parametrize("command", [["mhtml", "ls"], ["mhtml", "ls", "--json"]])
def test_cli_lists_the_marked_section_crashers(name: str, command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, str(CRASHERS / name)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("name", "status", "last"),
    [
        ("assert_min.mht", 0, "1 part, 0 references satisfied, 0 errors, 0 warnings, 0 links to pages outside the file"),
        # the fuzzed capture really is damaged: its frames share a Content-ID
        ("9474a1eb6923f01c.bin", 3, "pdi: integrity check failed: {path}: 3 errors, 20 warnings"),
    ],
)
def test_cli_checks_the_marked_section_crashers(name: str, status: int, last: str) -> None:
    path = CRASHERS / name
    result = CliRunner().invoke(cli, ["mhtml", "check", str(path)])
    assert result.exit_code == status, result.output
    assert result.output.splitlines()[-1] == last.format(path=path)


@pytest.mark.parametrize("name", ["assert_min.mht", "9474a1eb6923f01c.bin"])
def test_cli_unpacks_and_packs_the_marked_section_crashers(name: str, tmp_path: Path) -> None:
    runner = CliRunner()
    parts = len(parse((CRASHERS / name).read_bytes()).parts)
    result = runner.invoke(cli, ["mhtml", "unpack", str(CRASHERS / name), str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {parts} file{'' if parts == 1 else 's'} into ")
    unpacked = (tmp_path / "out" / "index.html").read_bytes()
    packed = tmp_path / "again.mht"
    result = runner.invoke(cli, ["mhtml", "pack", str(tmp_path / "out" / "index.html"), "-o", str(packed)])
    assert result.exit_code == 0, result.output
    assert parse(packed.read_bytes()).root.data == unpacked
