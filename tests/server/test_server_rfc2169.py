"""RFC 2169 resolution (``/uri-res/<service>?<urn>``) and RFC 9457 errors, against a live resolver."""

from __future__ import annotations

import hashlib

import httpx
import pytest
from server_helpers import TEXT, S, Served


def get(served: Served, path: str) -> httpx.Response:
    return httpx.get(served.url + path, follow_redirects=False, timeout=30)


def test_n2r_returns_the_bytes_a_name_and_its_fragment_select(served: Served) -> None:
    whole = get(served, f"/uri-res/N2R?{served.text}")
    # archived pages must not run scripts in the resolver's origin
    policy = {d.strip() for d in whole.headers["content-security-policy"].split(";")}
    # no scripts, an opaque origin, and nothing loaded from outside the archive
    assert {"sandbox", "script-src 'none'", "default-src 'self' data:", "connect-src 'none'"} <= policy
    assert whole.headers["x-content-type-options"] == "nosniff"
    assert whole.status_code == 200
    assert whole.content == TEXT  # the octets deposited
    assert whole.headers["content-type"] == "text/plain; charset=utf-8"
    # the first link-value names the resource; the memento's links (RFC 7089) follow
    assert whole.headers["link"].split(", ")[0] == f'<{served.text}>; rel="canonical"'
    assert whole.headers["x-pdi-sha256"] == hashlib.sha256(whole.content).hexdigest()
    # '#' cannot travel in a URL: %23 stands for it
    part = get(served, f"/uri-res/N2R?{served.text}%23char=15,21")
    assert part.content == b"Second" and part.headers["link"].split(", ")[0] == f'<{served.text}#char=15,21>; rel="canonical"'
    assert get(served, f"/uri-res/I2R?{served.text}%23char=15,21").content == b"Second"  # the 1990s service name
    # the text is 58 characters stored (15 + 16 + 27, CR and LF one each)
    cut = get(served, f"/uri-res/N2R?{served.text}%23char=50,999")
    assert cut.status_code == 200 and cut.content == b"cript>\r\n"  # "</" is 47-48, "s" 49
    assert cut.headers["warning"] == '299 pdi "the fragment reaches past the end: cut there"'
    past = get(served, f"/uri-res/N2R?{served.text}%23char=60,999")  # wholly past: RFC 9110 §15.5.17
    assert past.status_code == 416 and past.headers["content-type"] == "application/problem+json"
    assert past.json()["detail"] == f"{served.text}#char=60,999 lies wholly past the end (the text has 58 characters):" \
        " it selects nothing"
    at_end = get(served, f"/uri-res/N2R?{served.text}%23char=58,58")  # the empty place at the end
    assert at_end.status_code == 200 and at_end.content == b"" and "warning" not in at_end.headers


def test_a_fragment_of_one_position_is_an_empty_200_with_a_note_of_what_it_is(served: Served) -> None:
    # RFC 5147 §3: line=1 is the place before the second line and char=15 before the sixteenth character; both
    # select nothing, and the note says what the one-position fragment is and names the line or character meant
    for fragment, said in (
        ("line=1", "line=1 is a position, not a line: it selects nothing; a line is written as a range, line=1,2"),
        ("char=15", "char=15 is a position, not a character: it selects nothing; a character is written as a range,"
                    " char=15,16"),
        ("15", "char=15 is a position, not a character: it selects nothing; a character is written as a range,"
               " char=15,16"),
    ):
        empty = get(served, f"/uri-res/N2R?{served.text}%23{fragment}")
        assert (empty.status_code, empty.content) == (200, b""), fragment
        assert empty.headers["warning"] == f'299 pdi "{said}"', fragment
    meant = get(served, f"/uri-res/N2R?{served.text}%23char=15,16")
    assert meant.content == b"S" and "warning" not in meant.headers  # "Second" begins at 15 (above)


def test_the_note_of_one_position_follows_a_warning_the_answer_already_carries(served: Served) -> None:
    # RFC 9110's Warning (as RFC 7234 §5.5 defined it) is a list: a later capture's warning stays, the note after it
    from pdi.server.protocol.entity_answers import about_headers

    resolved = served.archive.resolve(f"{served.text}#line=1")
    later = '299 pdi "this is a later capture"'
    assert about_headers(resolved, {"Warning": later})["Warning"] == (
        f'{later}, 299 pdi "line=1 is a position, not a line: it selects nothing; a line is written as a range,'
        ' line=1,2"')


def test_a_fragment_is_served_under_the_iana_name_of_its_charset(served: Served) -> None:
    latin = str(served.archive.add(S, "café au lait\n".encode("cp1252"), format="text", charset="cp1252"))
    whole = get(served, f"/uri-res/N2R?{latin}")
    part = get(served, f"/uri-res/N2R?{latin}%23char=0,4")
    assert whole.headers["content-type"] == part.headers["content-type"] == "text/plain; charset=windows-1252"
    assert part.content == "café".encode("cp1252")


def test_n2l_n2ls_and_a_browser_fragment_write_urls_that_requests_sends_as_written(served: Served) -> None:
    # requests (as RFC 3986 §6.2.2.2 allows) decodes %2E to "." before sending, which breaks an encapsulated id
    # (PDI-GRAMMAR: a "." in it is escaped); the resolver's own URLs write it %252E, which requests keeps
    import requests

    query = served.foreign.replace("%2E", "%252E")  # as the Memento answers write it
    followed = requests.get(f"{served.url}/uri-res/N2L?{query}", timeout=30)
    assert followed.status_code == 200, (followed.url, followed.text)
    assert followed.content == b"<html>then</html>"
    listed = requests.get(f"{served.url}/uri-res/N2Ls?{query}", timeout=30)
    [url] = [line for line in listed.text.splitlines() if not line.startswith("#")]
    assert requests.get(url, timeout=30).content == b"<html>then</html>"
    aliased = requests.get(f"{served.url}/uri-res/N2R?{query}%23:~:text=then", timeout=30)
    assert aliased.status_code == 200 and aliased.content == b"then"


def test_n2r_keeps_the_escapes_of_a_foreign_id(served: Served) -> None:
    assert "http:%2F%2Fwww%2Eexample%2Ecom%2Fa%20b" in served.foreign
    assert get(served, f"/uri-res/N2R?{served.foreign}").content == b"<html>then</html>"


def test_a_generic_name_offers_its_formats(served: Served) -> None:
    generic = served.text.rsplit(".", 2)[0]
    choices = get(served, f"/uri-res/N2R?{generic}")
    assert choices.status_code == 300 and choices.headers["content-type"].startswith("text/uri-list")
    # text/uri-list as RFC 2169's examples write it: the URN as a comment, then the locations
    assert choices.text == f"# {generic}\r\n{served.url}/uri-res/N2R?{served.text}\r\n"
    assert get(served, f"/uri-res/N2Ns?{served.text}").text == f"# {served.text}\r\n{served.text}\r\n{generic}\r\n"


def test_a_generic_name_offers_every_format_of_every_version(served: Served) -> None:
    generic = served.versioned
    locations = "".join(
        f"{served.url}/uri-res/N2R?{generic}.{tail}\r\n" for tail in ("html.1", "text.1", "text.2")
    )
    choices = get(served, f"/uri-res/N2R?{generic}")
    assert choices.status_code == 300 and choices.text == f"# {generic}\r\n{locations}"
    several = get(served, f"/uri-res/N2L?{generic}")
    assert several.status_code == 300 and several.text == f"# {generic}\r\n{locations}"
    assert get(served, f"/uri-res/N2Ls?{generic}").text == f"# {generic}\r\n{locations}"
    # a format without a version is version 1 (the draft's default), one resource
    assert get(served, f"/uri-res/N2L?{generic}.text").headers["location"] == f"/uri-res/N2R?{generic}.text.1"
    assert get(served, f"/uri-res/N2R?{generic}.text").content == b"first\n"


def test_n2l_redirects_to_the_resource_and_n2ls_lists_it(served: Served) -> None:
    found = get(served, f"/uri-res/N2L?{served.text}%23line=1,2")
    assert found.status_code == 302
    assert found.headers["location"] == f"/uri-res/N2R?{served.text}%23line=1,2"  # relative: no Host trusted
    assert httpx.get(served.url + found.headers["location"]).content == "Second 𝕚 line.\r\n".encode()
    listed = get(served, f"/uri-res/N2Ls?{served.text}")
    assert listed.text == f"# {served.text}\r\n{served.url}/uri-res/N2R?{served.text}\r\n"


def test_escapes_in_the_query_round_trip(served: Served) -> None:
    # a foreign id holding "%23" is written %2523 (its '%' escaped), a '#' of the id %23, the fragment's '#' %23
    odd = str(served.archive.add(S, b"<p>odd</p>", format="html", foreign_id="a%23b"))
    hashed = str(served.archive.add(S, b"<p>hash</p>", format="html", foreign_id="a#b"))
    assert odd.endswith("/a%2523b.html.1") and hashed.endswith("/a%23b.html.1")
    assert get(served, f"/uri-res/N2R?{odd.replace('%25', '%2525')}").content == b"<p>odd</p>"
    assert get(served, f"/uri-res/N2R?{hashed.replace('%23', '%2523')}%23char=3,7").content == b"hash"
    redirect = get(served, f"/uri-res/N2L?{odd.replace('%25', '%2525')}").headers["location"]
    assert get(served, redirect).content == b"<p>odd</p>"


def test_n2c_describes_the_resource(served: Served) -> None:
    described = get(served, f"/uri-res/N2C?{served.text}").json()
    stored = TEXT  # kept exactly as deposited
    assert described["pdi"] == served.text and described["media_type"] == "text/plain"
    assert described["stored"]["sha256"] == hashlib.sha256(stored).hexdigest()
    assert described["stored"]["bytes"] == len(stored) and described["stored"]["kept"] == "exact"
    assert described["meta"] == {"title": "A letter"}


def test_errors_are_problem_details(served: Served) -> None:
    # pdi's own errors have a type of their own and their title; any other is about:blank, titled with the status's
    # phrase as RFC 9110 §15 gives it (RFC 9457 §4.2.1)
    for path, status, title, detail in [
        (f"/uri-res/N2Rs?{served.text}", 501, "Not Implemented", "N2Rs"),
        (f"/uri-res/X2Y?{served.text}", 404, "not found", "no RFC 2169 service 'X2Y'"),
        ("/uri-res/N2R", 400, "syntax error", "takes the URN as the query string"),
        ("/uri-res/N2R?urn:pdi://library.example.us/2026/11/22/999.text.1", 404, "not found", "not in this archive"),
        ("/uri-res/N2R?urn:pdi://library.example.us/2026/13/22/1.text.1", 400, "syntax error", "month"),
        (f"/uri-res/N2R?{served.text}%23char=5,2", 400, "syntax error", "ends before it starts"),
        (f"/uri-res/N2R?{served.picture}%23elt=0,1", 400, "syntax error", "'elt' is not defined for image/png"),
        (f"/uri-res/N2R?{served.picture}%23crop=(3,3),(3,9)", 400, "unsupported", "holds no pixels"),
        ("/no/such/page", 404, "Not Found", "no such page: /no/such/page"),
        ("/api/ls?series=library.example.us&offset=99999999999999999999", 400, "syntax error", "offset="),
    ]:
        response = get(served, path)
        assert response.status_code == status, (path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        body = response.json()
        kind = "about:blank" if title[0].isupper() else "/api#problem-" + title.replace(" ", "-")
        assert (body["type"], body["title"], body["status"]) == (kind, title, status)
        assert detail in body["detail"], (path, body)
    posted = httpx.post(f"{served.url}/uri-res/N2R?{served.text}", timeout=30)
    assert posted.status_code == 405 and posted.json()["detail"] == "POST is not allowed here: use GET, HEAD, OPTIONS"
    assert posted.headers["allow"] == "GET, HEAD, OPTIONS"  # RFC 9110 §15.5.6: a 405 names the methods it takes


def test_each_service_is_a_handler_that_answers_without_an_app(served: Served) -> None:
    from pdi.server.process.limits import WorkLimits
    from pdi.server.protocol.resolver import OTHER_SERVICES, Resolver

    resolver = Resolver(served.archive, WorkLimits())
    assert set(resolver.services) == {"N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns"}
    assert not set(resolver.services) & set(OTHER_SERVICES)
    base = "https://resolver.example.org/"
    fragment = resolver.services["N2R"](served.text + "#char=0,5", base)
    assert (fragment.status_code, fragment.body) == (200, b"Hello")
    moved = resolver.services["N2L"](served.text, base)
    assert moved.status_code == 302 and moved.headers["location"] == "/uri-res/N2R?" + served.text
    listed = resolver.services["N2Ls"](served.text, base).body.decode()
    assert listed == f"# {served.text}\r\nhttps://resolver.example.org/uri-res/N2R?{served.text}\r\n"


@pytest.mark.parametrize("kind, fragment", [
    ("text", "char=58,59"), ("text", "char=100,200"), ("text", "line=3,4"),
    ("picture", "(40,0),(50,10)"), ("sound", "sec=3,4"),
])
def test_a_fragment_wholly_past_the_end_is_416_with_the_words_of_pdi_get(served: Served, kind: str,
                                                                         fragment: str) -> None:
    """N2R and ``pdi get`` answer a fragment wholly past the end alike: RFC 9110 §15.5.17's 416 (the
    range asked for lies wholly outside the resource), exit 9; the same sentence in both."""
    from click.testing import CliRunner

    from pdi.cli import cli

    name = f"{getattr(served, kind)}#{fragment}"
    answer = get(served, f"/uri-res/N2R?{name.replace('#', '%23')}")
    assert answer.status_code == 416, answer.text
    problem = answer.json()
    # RFC 9110 §15.5.17's phrase, as a problem of type about:blank is titled (RFC 9457 §4.2.1)
    assert problem["status"] == 416 and problem["title"] == "Range Not Satisfiable"
    assert "lies wholly past the end" in problem["detail"]
    assert httpx.head(f"{served.url}/uri-res/N2R?{name.replace('#', '%23')}").status_code == 416
    run = CliRunner().invoke(cli, ["get", name, "-o", "-", "--archive", served.archive.location])
    assert run.exit_code == 9
    assert run.stderr.strip() == f"warning: {problem['detail']}"


def test_the_readers_page_reads_a_browser_fragment_as_the_native_name_it_equals(served: Served) -> None:
    # as N2R and pdi get do (pdi.interop.aliases): "world" of "Hello, world." is #char=7,12, marked; the page says so
    import urllib.parse

    shown = httpx.get(f"{served.url}/view", params={"pdi": served.text + "#:~:text=world"})
    assert shown.status_code == 200
    assert "<code>#:~:text=world</code> is <code>#char=7,12</code>" in shown.text
    assert '<mark id="passage">world</mark>' in shown.text
    missing = httpx.get(f"{served.url}/view?pdi={urllib.parse.quote(served.text + '#:~:text=nowhere', safe='')}")
    assert missing.status_code == 404 and "is not in" in missing.text


@pytest.mark.parametrize("service", ["N2R", "N2L", "N2Ls", "N2Ns", "N2C"])
def test_rfc2169_2_lexically_equivalent_urns_get_identical_answers(served: Served, service: str) -> None:
    """RFC 2169 §2: requests for lexically equivalent URNs "MUST return identical results". Equivalent spellings
    (PDI-GRAMMAR.md §2.1, §2.2: ``urn``, ``pdi``, the series, the format and the fragment scheme in any case, the
    ``pdi://`` spelling, an omitted version 1, an omitted default scheme) get the same status, body and fields."""
    generic = served.text.rsplit(".", 2)[0]
    _, tail = served.text.split("//", 1)
    series, rest = tail.split("/", 1)
    shouting = f"URN:PDI://{series.upper()}/{rest.upper()}"  # the serial and the format upper-cased: "1.TEXT.1"
    spellings = [
        [served.text, shouting, served.text.replace("urn:pdi:", "pdi:"), served.text.removesuffix(".1")],
        [f"{served.text}%23char=0,5", f"{shouting}%23CHAR=0,5", f"{served.text.removesuffix('.1')}%230,5"],
        [generic, f"URN:PDI://{series.upper()}/{generic.split('/', 3)[3]}"],
        [served.versioned, served.versioned.replace(series, series.upper()).replace("urn:pdi:", "PDI:")],  # 300s
    ]
    for group in spellings:
        first = get(served, f"/uri-res/{service}?{group[0]}")
        for spelling in group[1:]:
            again = get(served, f"/uri-res/{service}?{spelling}")
            assert (again.status_code, again.content) == (first.status_code, first.content), (spelling, again.text)
            for field in ("content-type", "etag", "location", "link", "cache-control"):
                assert again.headers.get(field) == first.headers.get(field), (spelling, field)


def test_an_unknown_service_is_answered_with_every_service_there_is_and_their_case(served: Served) -> None:
    # RFC 2169 §2 puts the service in the URL's path, which is case-sensitive (RFC 3986 §6.2.2.1): n2r is not N2R
    import re

    wrong = get(served, f"/uri-res/n2r?{served.text}")
    assert wrong.status_code == 404
    detail = wrong.json()["detail"]
    assert "case-sensitive" in detail
    offered = re.search(r"\(try ([^;]*);", detail)
    assert offered is not None, detail
    named = offered.group(1).split(", ")
    # I2R is answered (PDI-GRAMMAR decision 11), so it is listed with the others; every name listed is answered
    assert sorted(named) == sorted(["N2R", "I2R", "N2L", "N2Ls", "N2C", "N2Ns"])
    for service in named:
        assert get(served, f"/uri-res/{service}?{served.text}").status_code in (200, 302, 303), service
        assert get(served, f"/uri-res/{service.lower()}?{served.text}").status_code == 404, service
