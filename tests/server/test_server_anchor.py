"""``GET /api/anchor``: a cited passage found in another version, over HTTP, with two versions deposited."""

from __future__ import annotations

import httpx
from server_helpers import ELSEWHERE, Served

from pdi.archive import Content

V1 = ("Minutes of the meeting held on Monday.\r\n\r\nThe board approved the annual accounts and thanked the auditors.\r\n"
      "Signed by the chair and the secretary.\r\n")
V2 = ("Draft, second reading.\r\n\r\nMinutes of the meeting held on Monday.\r\n\r\n"
      "The board approved the annual accounts and thanked the auditors.\r\nSigned by the chair and the secretary.\r\n"
      "\r\nAny other business.\r\n")


def _anchor(served: Served, name: str, to: str) -> httpx.Response:
    return httpx.get(f"{served.url}/api/anchor", params={"pdi": name, "to": to}, timeout=30)


def test_anchor_route_answers_the_new_name_and_the_problems(served: Served) -> None:
    first = served.archive.add(ELSEWHERE, V1.encode(), format="text")
    served.archive.add_version(first.without_fragment(), [Content(V2.encode(), "text")])
    second = str(first)[:-1] + "2"
    quote = "approved the annual accounts"
    a = V1.index(quote)
    answer = _anchor(served, f"{first}#char={a},{a + len(quote)}", "latest")
    assert answer.status_code == 200, answer.text
    got = answer.json()
    b = V2.index(quote)
    assert got["pdi"] == f"{second}#char={b},{b + len(quote)}"
    assert (got["method"], got["score"], got["quote"], got["found"]) == ("exact", 1.0, quote, quote)
    # the name it answers resolves to the same text
    text = httpx.get(f"{served.url}/uri-res/N2R?{got['pdi'].replace('#', '%23')}", timeout=30)
    assert text.status_code == 200 and text.text == quote

    # cited in version 2, "Any other business." is not in version 1: orphaned, its own problem type
    c = V2.index("Any other business.")
    orphaned = _anchor(served, f"{second}#char={c},{c + 19}", "1")
    assert orphaned.status_code == 422
    assert orphaned.headers["content-type"] == "application/problem+json"
    problem = orphaned.json()
    assert problem["type"] == "/api#problem-passage-orphaned" and problem["title"] == "passage orphaned"
    assert problem["quote"] == "Any other business." and problem["version"] == 1

    missing = _anchor(served, f"{first}#char=0,5", "")
    assert missing.status_code == 400 and missing.json()["type"] == "/api#problem-syntax-error"


def test_anchor_route_refuses_an_ambiguous_passage(served: Served) -> None:
    line = "Each member shall pay the fee on the first day of every month.\r\n"
    first = served.archive.add(ELSEWHERE, ("Rules.\r\n" + line).encode(), format="text")
    served.archive.add_version(first.without_fragment(), [Content(("Rules, amended.\r\n" + line + "Also:\r\n" + line).encode(), "text")])
    a = ("Rules.\r\n" + line).index("pay the fee")
    answer = _anchor(served, f"{first}#char={a},{a + 11}", "2")
    assert answer.status_code == 422
    problem = answer.json()
    assert problem["type"] == "/api#problem-passage-ambiguous"
    second = str(first)[:-1] + "2"
    v2 = "Rules, amended.\r\n" + line + "Also:\r\n" + line
    x = v2.index("pay the fee")
    y = v2.index("pay the fee", x + 1)
    assert problem["candidates"] == [f"{second}#char={x},{x + 11}", f"{second}#char={y},{y + 11}"]


def test_anchor_route_refuses_a_version_that_is_no_ascii_number(served: Served) -> None:
    first = served.archive.add(ELSEWHERE, V1.encode(), format="text")
    # str.isdigit() holds for superscript and other Unicode digits, which int() refuses
    for to in ("²", "١", "1²"):
        answer = _anchor(served, f"{first}#char=0,7", to)
        assert answer.status_code == 400, (to, answer.text)
        assert "a version is a positive number or 'latest'" in answer.json()["detail"]


def test_anchor_route_reads_a_version_of_thousands_of_digits(served: Served) -> None:
    # int() counted leading zeros against its 4,300 digits: a ValueError, answered 500
    first = served.archive.add(ELSEWHERE, V1.encode(), format="text")
    padded = _anchor(served, f"{first}#char=0,7", "0" * 5000 + "1")
    assert padded.status_code == 200 and padded.json()["pdi"] == f"{first}#char=0,7"
    long = _anchor(served, f"{first}#char=0,7", "9" * 5000)
    assert long.status_code == 400 and long.json()["type"] == "/api#problem-limit-exceeded"
    assert _anchor(served, f"{first}#char=0,7", "0" * 5000).status_code == 400  # version 0


def test_latest_is_the_newest_version_not_withdrawn(served: Served) -> None:
    # as N2R of a generic name offers the newest version not withdrawn, so does to=latest
    first = served.archive.add(ELSEWHERE, V1.encode(), format="text")
    generic = first.without_fragment()
    served.archive.add_version(generic, [Content(V2.encode(), "text")])
    served.archive.add_version(generic, [Content(b"Nothing of the minutes.\r\n", "text")])
    served.archive.withdraw(str(first)[:-1] + "3", "deposited by mistake")
    quote = "approved the annual accounts"
    a, b = V1.index(quote), V2.index(quote)
    answer = _anchor(served, f"{first}#char={a},{a + len(quote)}", "latest")
    assert answer.status_code == 200, answer.text
    assert answer.json()["pdi"] == f"{str(first)[:-1]}2#char={b},{b + len(quote)}"
    # named by its number, the withdrawn version is still gone
    assert _anchor(served, f"{first}#char={a},{a + len(quote)}", "3").status_code == 410


def test_a_malformed_version_is_a_syntax_error_whatever_the_name(served: Served) -> None:
    # to= is checked before the cited name is looked up: a withdrawn or a missing name does not hide it
    withdrawn = served.archive.add(ELSEWHERE, V1.encode(), format="text")
    served.archive.withdraw(str(withdrawn), "withdrawn before it was cited")
    missing = f"urn:pdi://{ELSEWHERE}/2026/01/01/99.text.1"
    for name in (withdrawn, missing):
        for to in ("C;", "0", "", " "):
            answer = _anchor(served, f"{name}#char=0,7", to)
            assert answer.status_code == 400, (name, to, answer.text)
    # well-formed, the same names answer what they are
    assert _anchor(served, f"{withdrawn}#char=0,7", "1").status_code == 410
    assert _anchor(served, f"{missing}#char=0,7", "latest").status_code == 404
