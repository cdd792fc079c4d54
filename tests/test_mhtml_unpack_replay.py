"""plan() as replay asks for it: unsatisfied references lead nowhere, no policy <meta>, marks written into the root."""

from __future__ import annotations

from pdi.mhtml import parse
from pdi.mhtml.unpack import NO_SCRIPTS, plan
from pdi.mhtml.write import Resource, build

PAGE = b'<!DOCTYPE html><p><img src="a.png"><a href="http://elsewhere.example/x">x</a><img src="gone.png"></p>'


def _aggregate(page: bytes = PAGE, charset: str = "utf-8") -> bytes:
    return build(
        Resource("http://site.example/p.html", "text/html", page, charset=charset),
        [Resource("http://site.example/a.png", "image/png", b"\x89PNG\r\n\x1a\n")],
    )


def test_offline_plan_keeps_web_links_and_puts_the_policy_first() -> None:
    root = plan(parse(_aggregate())).files[0]
    assert root.data == PAGE.replace(b"<!DOCTYPE html>", b"<!DOCTYPE html>" + NO_SCRIPTS.encode()).replace(
        b'"gone.png"', b'"http://site.example/gone.png"')


def test_replay_plan_leads_nowhere_and_writes_no_policy() -> None:
    root = plan(parse(_aggregate()), nowhere=True, policy=False).files[0]
    # RFC 2557 §8.2: a.png resolves to http://site.example/a.png, a part; the other two name none
    assert root.data == (
        b'<!DOCTYPE html><p><img src="a.png"><a href="about:blank">x</a><img src="about:blank"></p>'
    )


def test_insertions_go_where_asked_around_rewritten_references() -> None:
    at_p = PAGE.index(b"<p>") + 3
    at_end = PAGE.index(b"</p>")
    root = plan(parse(_aggregate()), nowhere=True, policy=False,
                insertions=[(at_p, "<i>"), (at_end, "</i>"), (at_p, "<b>")]).files[0]
    assert root.data == (
        b'<!DOCTYPE html><p><i><b><img src="a.png"><a href="about:blank">x</a><img src="about:blank"></i></p>'
    )


def test_insertions_are_written_in_the_pages_encoding() -> None:
    page = '<p>é<img src="a.png"></p>'.encode("utf-16-le")
    at = len("<p>é".encode("utf-16-le"))
    root = plan(parse(_aggregate(page, "utf-16le")), nowhere=True, policy=False, insertions=[(at, "<br>")]).files[0]
    assert root.data.decode("utf-16-le") == '<p>é<br><img src="a.png"></p>'
