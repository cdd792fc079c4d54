"""What one ``elt`` or ``name`` fragment on HTML may cost: the bounds on what html5lib is given.

Reported: an anonymous ``#elt=7,7`` of a 6 MB page of ``<p>`` took 30 s of
CPU and 400–900 MB each time (the deposit's 10 s parse had given up, so
every read parsed again), and ``pdi get`` of it 35 s and 1.6 GB. The bounds
(:mod:`pdi.fragments.markup.reading`): octets and start tags are counted
before html5lib starts, depth and attributes as the parse meets them; a page
past them is deposited whole, its index holds the refusal, and its ``elt``
and ``name`` are a :class:`~pdi.errors.LimitError` at once, naming the bound
and ``#char=``. Memory is read from the kernel as a child process's peak
(``tests/peak_memory.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pdi import fragments
from pdi.archive import Archive
from pdi.errors import LimitError
from pdi.fragments import markup
from pdi.fragments.markup.bounds import (
    MAX_ATTRIBUTES,
    MAX_DEPTH,
    MAX_MARKUP_OCTETS,
    MAX_START_TAGS,
    MAX_TAG_ATTRIBUTES,
)
from peak_memory import run_with_peak
from support.kept_refusal import assert_refused_from_the_index, assert_the_command_line_refuses

S = "archives.gov.us"
HEAD = "<!DOCTYPE html><html><body>"  # two start tags, two elements open
CITE_TEXT = r"#char=, #line=\) select its text without parsing it"


def elt(page: str | bytes, first: int = 0, last: int = 0) -> bytes:
    data = page.encode() if isinstance(page, str) else page
    return bytes(fragments.evaluate("elt", (first, last), data, media_type="text/html").data)


@pytest.fixture
def no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """html5lib must not be started."""
    import pdi.fragments.markup.html as html

    def refuse(text: str, seconds: float) -> None:
        raise AssertionError("html5lib was started")

    monkeypatch.setattr(html, "elements", refuse)


def test_more_start_tags_than_the_bound_are_refused_before_parsing(no_parse: None) -> None:
    page = HEAD + "<a>" * (MAX_START_TAGS - 1)  # one more than the bound, with <html> and <body>
    with pytest.raises(LimitError, match=rf"has {MAX_START_TAGS + 1:,} start tags, more than the"
                                         rf" {MAX_START_TAGS:,} element fragments .*{CITE_TEXT}"):
        elt(page)


def test_a_page_larger_than_the_bound_is_refused_by_its_size_before_it_is_read(no_parse: None) -> None:
    page = b"<p>" + b" " * MAX_MARKUP_OCTETS
    with pytest.raises(LimitError, match=rf"this HTML is {MAX_MARKUP_OCTETS + 3:,} octets, more than the 8 MiB"
                                         rf" .*{CITE_TEXT}"):
        elt(page)
    assert fragments.evaluate("char", (0, 3), page, media_type="text/html").data == b"<p>"


def test_nesting_deeper_than_the_bound_is_refused_where_it_gets_too_deep() -> None:
    deepest = HEAD + "<div>" * (MAX_DEPTH - 2) + "x"
    assert elt(deepest, MAX_DEPTH - 1, MAX_DEPTH - 1) == b"<div>x"
    too_deep = deepest + "<b>y"
    at = len(deepest)
    with pytest.raises(LimitError, match=rf"nests elements more than {MAX_DEPTH} deep \(at character {at}\).*{CITE_TEXT}"):
        elt(too_deep)
    # formatting elements reopened for each run of text (the adoption agency's <b><i> bomb) count too
    with pytest.raises(LimitError, match=f"more than {MAX_DEPTH} deep"):
        elt(HEAD + "<b><i>" * MAX_DEPTH + "x")


def test_a_tag_of_more_attributes_than_the_bound_is_refused() -> None:
    names = [f"a{i}" for i in range(MAX_TAG_ATTRIBUTES + 1)]
    fits = HEAD + "<p " + " ".join(names[:-1]) + ">x"
    assert elt(fits, 2, 2) == fits[len(HEAD):].encode()
    at = len(HEAD)
    with pytest.raises(LimitError, match=rf"the tag at character {at} has more than {MAX_TAG_ATTRIBUTES} attributes"):
        elt(HEAD + "<p " + " ".join(names) + ">x")


def test_more_attributes_in_all_than_the_bound_are_refused() -> None:
    tag = "<a " + " ".join(f"a{i}" for i in range(100)) + ">"
    page = HEAD + tag * (MAX_ATTRIBUTES // 100 + 1)
    with pytest.raises(LimitError, match=rf"more than {MAX_ATTRIBUTES:,} attributes.*{CITE_TEXT}"):
        elt(page)


def test_a_parse_that_failed_is_not_tried_again() -> None:
    page = (HEAD + "<div>" * MAX_DEPTH).encode()
    markup._elements.cache_clear()
    for _ in range(3):
        with pytest.raises(LimitError, match="deep"):
            elt(page)
    assert (markup._elements.cache_info().misses, markup._elements.cache_info().hits) == (1, 2)


def test_the_root_page_of_an_aggregate_is_bounded_alike(no_parse: None) -> None:
    root = HEAD + "<a>" * MAX_START_TAGS
    aggregate = (
        'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        f"--b\r\nContent-Type: text/html\r\nContent-Location: http://example.org/\r\n\r\n{root}\r\n--b--\r\n"
    ).encode()
    with pytest.raises(LimitError, match="start tags"):
        fragments.evaluate("elt", (0, 0), aggregate, media_type="multipart/related")


def test_a_page_past_the_bounds_is_deposited_and_its_element_fragments_refused_at_once(
    tmp_path: Path, no_parse: None,
) -> None:
    page = (HEAD + "<p>hello world " * MAX_START_TAGS).encode()
    archive = Archive.init(str(tmp_path / "archive"))
    try:
        archive.add_series(S)
        name = archive.add(S, page, format="html")
        assert archive.get(str(name)).data == page  # kept whole
        assert archive.get(f"{name}#char=27,45").data == b"<p>hello world <p>"
        assert_refused_from_the_index(archive, str(name), ("elt=7,7", "name=a,a"),
                                      rf"{MAX_START_TAGS + 2:,} start tags.*{CITE_TEXT}")
        location = str(tmp_path / "archive")
    finally:
        archive.close()
    assert_the_command_line_refuses(location, f"{name}#elt=7,7", "start tags")


# --- memory -------------------------------------------------------------------------------

_PARSE = """
import sys
from pdi import fragments
from pdi.errors import LimitError
data = open(sys.argv[1], "rb").read()
index = fragments.build_index(data, media_type="text/html")
try:
    fragments.evaluate("elt", (7, 7), data, media_type="text/html")  # parsed again, without the index
    print("parsed")
except LimitError:
    print("limit")
"""


def _peak_mib(path: Path) -> tuple[float, str]:
    status, peak, out = run_with_peak([sys.executable, "-c", _PARSE, str(path)], stdout=subprocess.PIPE)
    assert status == 0
    return peak / 1024, out.decode().strip()


def test_the_worst_page_within_the_bounds_and_a_bomb_past_them_stay_in_bounded_memory(tmp_path: Path) -> None:
    small, worst, bomb = tmp_path / "small.html", tmp_path / "worst.html", tmp_path / "bomb.html"
    small.write_text(HEAD + "<p>x" * 10)
    # as many start tags and attributes as allowed, and the rest of the octets text
    tags = "<a x=1 y=2>" * (MAX_START_TAGS - 3)
    worst.write_text(HEAD + "<p>" + tags + "w" * (MAX_MARKUP_OCTETS - len(HEAD) - len(tags) - 3))
    assert worst.stat().st_size == MAX_MARKUP_OCTETS
    bomb.write_text(HEAD + "<a>" * 2_000_000)  # the reported 6 MB page of <a>
    base, said = _peak_mib(small)
    assert said == "parsed"
    peak, said = _peak_mib(worst)
    assert said == "parsed"
    assert peak - base < 320, f"the worst page within the bounds took {peak - base:.0f} MiB more than a small one"
    peak, said = _peak_mib(bomb)
    assert said == "limit"
    assert peak - base < 64, f"refusing the bomb took {peak - base:.0f} MiB more than a small page"
