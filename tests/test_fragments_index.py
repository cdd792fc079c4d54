"""Indexes made once, at deposit: the text block table and the element index (``pdi.fragments.build_index``).

What must hold, whatever the text and however it is cut into chunks:

* a block table counted from a stream of chunks is the table a lazily
  counting :class:`~pdi.fragments.text.TextIndex` reaches over the same
  octets, cut anywhere (inside a multi-octet character, between a CR and its
  LF, inside a BOM), with both counting engines; its totals are those of a
  plain walk over the decoded text;
* written as octets and read back it is the same table, and a fragment query
  given it answers exactly what the same query answers without it, errors
  included;
* an index that is damaged (any octet changed, cut short, lengthened), of an
  unknown layout version, inconsistent, or made for other octets or another
  charset, is refused with an :class:`~pdi.errors.IntegrityError`;
* ``elt``, ``name``, ``char`` and ``line`` on HTML and XML give the same
  result (or error) from an element index as from a parse, on generated
  documents and on the pages of ``tests/data/corpus/mhtml``;
* building the index of a 300 MB text from a stream stays within a small,
  fixed amount of memory (the peak resident set of a child process).
"""

from __future__ import annotations

import codecs
import itertools
import mmap
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi import fragments
from pdi.errors import IntegrityError, PDIError
from pdi.fragments import markup
from pdi.fragments.markup import reading as markup_reading
from pdi.fragments.markup.index import ElementIndex
from pdi.fragments.sealed import seal
from pdi.fragments.text import TextIndex, TextTable
from pdi.mhtml import parse

CORPUS = Path(__file__).resolve().parent / "data" / "corpus" / "mhtml"

#: charset -> characters it can write (line-ending characters included where the charset has them)
ALPHABETS = {
    # U+0100 is C4 80, U+00C2 is C3 82, U+0145 is C5 85: octets like the NEL's C2 85 that are not a NEL
    "utf-8": "ab \r\n\x85é€😀\u0100\u00c2\u0145",
    "iso-8859-1": "ab \r\n\x85éÂ",
    "cp037": "ab \r\n\x85é",  # EBCDIC: LF is 25, NEL is 15
    "us-ascii": "ab \r\n",
}
ENDING = re.compile("\r\n|\r\x85|[\r\n\x85]")


@st.composite
def texts(draw: st.DrawFn) -> tuple[bytes, str]:
    """The octets of a text in one of :data:`ALPHABETS`' charsets (UTF-8 with a BOM sometimes), and the charset."""
    charset = draw(st.sampled_from(sorted(ALPHABETS)))
    text = draw(st.text(alphabet=st.sampled_from(ALPHABETS[charset]), max_size=300))
    bom = codecs.BOM_UTF8 if charset == "utf-8" and draw(st.booleans()) else b""
    return bom + text.encode(charset), charset


def cut(data: bytes, draw: st.DrawFn) -> list[bytes]:
    """``data`` cut at points drawn anywhere (empty chunks too), or into chunks of one to three octets.

    Chunks of one octet end a window at every octet: at every block cut, and at every octet after it.
    """
    if draw(st.booleans()):
        size = draw(st.integers(1, 3))
        return [data[i : i + size] for i in range(0, len(data), size)]
    points = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def outcome(call: Callable[[], fragments.FragmentResult]) -> object:
    """A fragment result, or the class and message of the pdi error it raised."""
    try:
        return call()
    except PDIError as exc:
        return type(exc), str(exc)


# --- the text block table -----------------------------------------------------------------


@pytest.mark.parametrize("engine", ["compiled", "numpy"])
@settings(max_examples=150)
@given(st.data())
def test_a_table_counted_from_any_chunking_is_the_lazily_counted_one(engine: str, data: st.DataObject) -> None:
    octets, charset = data.draw(texts())
    block_size = data.draw(st.integers(16, 64))
    chunks = cut(octets, data.draw)
    streamed = TextTable.from_chunks(iter(chunks), charset, block_size=block_size, engine=engine)
    lazy = TextIndex(octets, charset, block_size=block_size, engine=engine).table()
    assert streamed is not None and streamed == lazy
    # its totals are those of a plain walk over the decoded text
    text = codecs.decode(octets, "utf-8-sig" if charset == "utf-8" else charset)
    endings = ENDING.findall(text)
    assert (streamed.cps[-1], streamed.endings[-1]) == (len(text), len(endings))
    assert streamed.chars[-1] == len(text) - sum(len(e) == 2 for e in endings)
    canonical = all(e == "\r\n" for e in endings)
    assert (streamed.first_noncanonical is None) == canonical
    assert TextTable.from_bytes(streamed.to_bytes()) == streamed


@settings(max_examples=100)
@given(st.binary(max_size=300), st.integers(16, 40), st.data())
def test_octets_that_are_not_utf_8_are_cut_alike_too(octets: bytes, block_size: int, data: st.DataObject) -> None:
    streamed = TextTable.from_chunks(cut(octets, data.draw), "utf-8", block_size=block_size)
    assert streamed == TextIndex(octets, "utf-8", block_size=block_size).table()


@pytest.mark.parametrize(
    ("text", "first_cut"),
    [
        ("a" * 15 + "\r\n" + "b" * 20, 15),  # a cut at 16 would part the CR (15) from its LF (16)
        ("a" * 15 + "\r\x85" + "b" * 20, 15),  # ... or from its NEL (C2 85 at 16 and 17)
        ("a" * 15 + "é" + "b" * 20, 15),  # ... or the octets C3 A9 (15 and 16) of é
        ("a" * 14 + "😀" + "b" * 20, 14),  # ... or F0 9F 98 80 (14 to 17)
        ("a" * 16 + "\r\n" + "b" * 20, 16),  # nothing to part: the cut stays at 16
    ],
)
@pytest.mark.parametrize("chunk", [1, 2, 3, 17, 1000])
def test_a_block_cut_never_parts_a_character_or_a_line_ending(text: str, first_cut: int, chunk: int) -> None:
    octets = text.encode()
    chunks = [octets[i : i + chunk] for i in range(0, len(octets), chunk)]
    table = TextTable.from_chunks(chunks, "utf-8", block_size=16)
    assert table is not None and table.bounds[:2] == (0, first_cut)


def test_a_stream_cut_inside_the_bom_or_shorter_than_it() -> None:
    for octets in (codecs.BOM_UTF8, codecs.BOM_UTF8[:2], b"", codecs.BOM_UTF8 + "é\r\n".encode()):
        chunks = [octets[i : i + 1] for i in range(len(octets))]
        streamed = TextTable.from_chunks(chunks, "utf-8", block_size=16)
        assert streamed == TextIndex(octets, "utf-8", block_size=16).table()
    table = TextTable.from_chunks([codecs.BOM_UTF8[:1], codecs.BOM_UTF8[1:] + b"ab\n"], "utf-8")
    assert table is not None and (table.bom, table.cps[-1], table.endings[-1]) == (3, 3, 1)


def test_a_charset_that_is_counted_whole_gets_no_table() -> None:
    text = "line\r\nzwei\n".encode("utf-16")
    assert TextTable.from_chunks([text], "utf-16") is None
    assert TextIndex(text, "utf-16").table() is None
    assert fragments.build_index(text, media_type="text/plain; charset=utf-16") is None
    assert fragments.build_index(b"GIF89a", media_type="image/gif") is None


@settings(max_examples=150)
@given(st.data())
def test_queries_answer_the_same_with_a_table_read_back_from_octets(data: st.DataObject) -> None:
    octets, charset = data.draw(texts())
    table = TextTable.from_chunks(cut(octets, data.draw), charset, block_size=data.draw(st.integers(16, 48)))
    assert table is not None
    index = table.to_bytes()
    media_type = f"text/plain; charset={charset}"
    for _ in range(4):
        scheme = data.draw(st.sampled_from(["char", "line"]))
        positions = tuple(sorted(data.draw(st.lists(st.integers(0, len(octets) + 3), min_size=1, max_size=2))))
        if data.draw(st.booleans()):
            positions = positions[::-1]  # a range that ends before it starts: the same error
        without = outcome(lambda s=scheme, p=positions: fragments.evaluate(s, p, octets, media_type=media_type))
        with_index = outcome(
            lambda s=scheme, p=positions: fragments.evaluate(s, p, octets, media_type=media_type, index=index)
        )
        assert with_index == without


def test_a_table_serves_a_memory_map(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes("α\nβ\r\nγ\rδ\n".encode() * 5000)
    index = fragments.build_index(path.read_bytes(), media_type="text/plain; charset=utf-8")
    assert index is not None
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        result = fragments.evaluate("line", (9999, 10001), mapped, media_type="text/plain; charset=utf-8", index=index)
        # lines 10000 and 10001 (from 1): each repetition holds four lines, α β γ δ, so line n is the
        # ((n - 1) mod 4)-th of them: δ and α, written with CRLF
        assert result.data == "δ\r\nα\r\n".encode() and result.canonicalized


DAMAGED = {
    "text/plain; charset=utf-8": ("ab\r\né€\n" * 40).encode(),
    "text/html": b"<p id=a>one<p name=b>two<br>\r\n<table><td>x</table>",
    "application/xml": b"<a><b id='x'/>t</a>",
}


@pytest.mark.parametrize("media_type", sorted(DAMAGED))
@settings(max_examples=150)
@given(st.data())
def test_a_damaged_index_is_refused(media_type: str, data: st.DataObject) -> None:
    octets = DAMAGED[media_type]
    good = fragments.build_index(octets, media_type=media_type)
    assert good is not None
    how = data.draw(st.sampled_from(["flip", "cut", "grow"]))
    if how == "flip":
        at = data.draw(st.integers(0, len(good) - 1))
        damaged = bytearray(good)
        damaged[at] ^= data.draw(st.integers(1, 255))
    elif how == "cut":
        damaged = bytearray(good[: data.draw(st.integers(0, len(good) - 1))])
    else:
        damaged = bytearray(good + data.draw(st.binary(min_size=1, max_size=8)))
    scheme = data.draw(st.sampled_from(["char", "line"] if media_type.startswith("text/plain") else ["char", "elt"]))
    with pytest.raises(IntegrityError):
        fragments.evaluate(scheme, (0, 1), octets, media_type=media_type, index=bytes(damaged))


def test_a_text_index_made_for_other_octets_or_another_charset_is_refused() -> None:
    lines = b"ab\ncd\nef\n" * 20
    index = fragments.build_index(lines, media_type="text/plain; charset=utf-8")
    assert index is not None
    with pytest.raises(IntegrityError, match="made for 180 octets, not for these 179"):
        fragments.evaluate("char", (0, 1), lines[1:], media_type="text/plain; charset=utf-8", index=index)
    same_size = b"abcdefghi" * 20  # the same number of octets, and no line ending at all
    with pytest.raises(IntegrityError, match="does not match the text: block 0"):
        fragments.evaluate("line", (1, 2), same_size, media_type="text/plain; charset=utf-8", index=index)
    with pytest.raises(IntegrityError, match=r"made for utf-8 .* not for iso8859-1"):
        fragments.evaluate("char", (0, 1), lines, media_type="text/plain; charset=iso-8859-1", index=index)
    with pytest.raises(IntegrityError, match="not a pdi index"):
        fragments.evaluate("char", (0, 1), lines, media_type="text/plain; charset=utf-8", index=b"x" * 40)


def test_an_index_of_an_unknown_layout_or_that_does_not_add_up_is_refused() -> None:
    table = TextTable.from_chunks([b"ab\ncd\n" * 10], "utf-8", block_size=16)
    assert table is not None
    payload = table.to_bytes()[6:-16]
    with pytest.raises(IntegrityError, match="layout version 2; this pdi reads version 1"):
        TextTable.from_bytes(seal(b"PDIT", 2, payload))
    # sealed as it should be, but one block's octet count is off by one: the blocks no longer add up to the size
    at = len(payload) - 16 * table.blocks  # the first u32 of the octet counts, the first of the four columns
    wrong = bytearray(payload)
    wrong[at] += 1
    with pytest.raises(IntegrityError, match="damaged: its blocks do not add up"):
        TextTable.from_bytes(seal(b"PDIT", 1, bytes(wrong)))


# --- the element index --------------------------------------------------------------------

HTML_PIECES = [
    "<p>", "</p>", "<b>", "</b>", "<div id=a>", "</div>", "<a name=x>", "<a name=y href=1>", "</a>", "<br>",
    "<table>", "<tr>", "<td>", "</table>", "<li>", "<ul id=y>", "</ul>", "<title id=x>", "</title>",
    "<script>", "</script>", "<!-- c -->", "<span name=a>", "</body>", "<body>", "<html>", "</html>",
    "text", "é€", "&amp;", "\r\n", "\n", "\r", "<", ">", "<i id=é>",
    "<p id=x>", "<b name=x>", "<li id=a>", "<em name=y>",  # the same name or id on several elements
]
XML_NAMES = ["a", "b", "x-y", "él"]


@st.composite
def html_pages(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(HTML_PIECES), max_size=30))
    if draw(st.integers(0, 19)) == 0:
        pieces.insert(draw(st.integers(0, len(pieces))), "<template>")  # a document that cannot be cut
    return "".join(pieces)


@st.composite
def xml_documents(draw: st.DrawFn, depth: int = 0) -> str:
    """Mostly well-formed XML (a mismatched end tag now and then), with name and id attributes."""
    name = draw(st.sampled_from(XML_NAMES))
    attribute = draw(st.sampled_from(["", ' id="a"', " name='x'", ' id="y" name="a"']))
    if depth >= 3 or draw(st.booleans()):
        return f"<{name}{attribute}/>" if draw(st.booleans()) else f"<{name}{attribute}>t\r\n</{name}>"
    inner = "".join(draw(st.lists(xml_documents(depth + 1), max_size=3)))
    end = draw(st.sampled_from(XML_NAMES)) if draw(st.integers(0, 9)) == 0 else name
    return f"<{name}{attribute}>{inner}é\n</{end}>"


def _queries(draw: st.DrawFn, count: int) -> list[tuple[str, tuple[object, ...]]]:
    queries: list[tuple[str, tuple[object, ...]]] = []
    for _ in range(count):
        scheme = draw(st.sampled_from(["elt", "name", "char", "line"]))
        if scheme == "elt":
            a, b = draw(st.integers(0, 25)), draw(st.integers(0, 25))
            queries.append((scheme, (a, b)))
        elif scheme == "name":
            values = st.sampled_from(["a", "x", "y", "é", "zz"])
            queries.append((scheme, (draw(values), draw(values))))
        else:
            queries.append((scheme, tuple(sorted((draw(st.integers(0, 80)), draw(st.integers(0, 80)))))))
    return queries


def _same_with_and_without(octets: bytes, media_type: str, queries: list[tuple[str, tuple[object, ...]]],
                           charset: str | None = None) -> None:
    index = fragments.build_index(octets, media_type=media_type, charset=charset)
    assert index is not None
    for scheme, positions in queries:
        without = outcome(
            lambda s=scheme, p=positions: fragments.evaluate(s, p, octets, media_type=media_type, charset=charset)
        )
        with_index = outcome(
            lambda s=scheme, p=positions: fragments.evaluate(
                s, p, octets, media_type=media_type, charset=charset, index=index
            )
        )
        assert with_index == without, (scheme, positions)


@settings(max_examples=150)
@given(html_pages(), st.sampled_from([None, "utf-8", "windows-1252"]), st.data())
def test_html_queries_answer_the_same_from_the_element_index(page: str, charset: str | None, data: st.DataObject) -> None:
    octets = page.encode("utf-8")
    _same_with_and_without(octets, "text/html", _queries(data.draw, 6), charset)


@settings(max_examples=150)
@given(xml_documents(), st.sampled_from(["application/xml", "application/xhtml+xml", "image/svg+xml"]), st.data())
def test_xml_queries_answer_the_same_from_the_element_index(document: str, media_type: str, data: st.DataObject) -> None:
    _same_with_and_without(document.encode("utf-8"), media_type, _queries(data.draw, 6))


def test_the_element_index_keeps_what_a_document_that_cannot_be_cut_raises() -> None:
    for octets, media_type, charset in (
        (b"<p><template><p>a</template>b", "text/html", None),  # html5lib 1.1 predates <template>
        (b"<a><b></a>", "application/xml", None),  # not well-formed
        (b"<p id=x>caf\xe9</p>", "text/html", "utf-8"),  # not UTF-8 at octet 11
    ):
        index = fragments.build_index(octets, media_type=media_type, charset=charset)
        assert index is not None
        element_index = ElementIndex.from_bytes(index)
        assert element_index.failure is not None and len(element_index) == 0
        without = outcome(
            lambda o=octets, m=media_type, c=charset: fragments.evaluate("elt", (0, 0), o, media_type=m, charset=c)
        )
        assert isinstance(without, tuple) and issubclass(without[0], PDIError)
        markup._elements.cache_clear()
        with_index = outcome(
            lambda o=octets, m=media_type, c=charset, i=index: fragments.evaluate(
                "elt", (0, 0), o, media_type=m, charset=c, index=i
            )
        )
        assert with_index == without
        assert markup._elements.cache_info().misses == 0  # and nothing was parsed to say so


def test_the_element_index_answers_without_parsing_and_without_sniffing(monkeypatch: pytest.MonkeyPatch) -> None:
    page = "<!DOCTYPE html><p id=intro>caf\xe9<p name=second>two<br>x".encode("windows-1252")
    index = fragments.build_index(page, media_type="text/html")
    assert index is not None
    assert ElementIndex.from_bytes(index).charset == "windows-1252"  # not UTF-8: sniffed as a browser would
    markup._elements.cache_clear()

    def no_sniffing(data: bytes) -> str:
        raise AssertionError("sniffed again")

    monkeypatch.setattr(markup_reading, "_html_charset", no_sniffing)
    result = fragments.evaluate("name", ("intro", "second"), page, media_type="text/html", index=index)
    assert result.data == b"<p id=intro>caf\xe9<p name=second>two<br>x"
    assert markup._elements.cache_info().misses == 0


def test_an_element_index_made_for_another_document_is_refused() -> None:
    page = b"<p id=a>one<p>two"
    index = fragments.build_index(page, media_type="text/html")
    assert index is not None
    with pytest.raises(IntegrityError, match="made for html, not for application/xml"):
        fragments.evaluate("elt", (0, 0), page, media_type="application/xml", index=index)
    with pytest.raises(IntegrityError, match="made for 17 octets, not for these 18"):
        fragments.evaluate("elt", (0, 0), page + b" ", media_type="text/html", index=index)
    with pytest.raises(IntegrityError, match="reading the document as UTF-8, not utf-16"):
        fragments.evaluate("elt", (0, 0), page, media_type="text/html", charset="utf-16", index=index)
    damaged = bytearray(index)
    damaged[len(index) // 2] ^= 1
    with pytest.raises(IntegrityError, match="element index is damaged"):
        fragments.evaluate("elt", (0, 0), page, media_type="text/html", index=bytes(damaged))


REAL_PAGES = [
    "fastmhtml_example.com.mhtml",
    "fastmhtml_hn.mhtml",
    "fastmhtml_mdn.mhtml",
    "fastmhtml_wikipedia.mhtml",
    "msindwan_iframes.mhtml",
]


@pytest.mark.parametrize("name", REAL_PAGES)
def test_real_pages_answer_the_same_from_the_element_index(name: str) -> None:
    root = parse((CORPUS / name).read_bytes()).root
    page = root.data
    index = fragments.build_index(page, media_type="text/html")
    assert index is not None
    count = len(ElementIndex.from_bytes(index))
    queries: list[tuple[str, tuple[object, ...]]] = []
    for i in range(0, count + 2, max(1, count // 40)):
        queries += [("elt", (i, i)), ("elt", (i, min(i + 7, count + 1))), ("elt", (i, max(0, i - 3)))]
    for value in sorted(set(re.findall(rb'(?:id|name)="([^"&%]{1,40})"', page)))[:40]:
        queries.append(("name", (value.decode(), value.decode())))
    queries.append(("name", ("no-such-element", "no-such-element")))
    size = len(page)
    queries += [("char", (size // 3, size // 3 + 500)), ("line", (1, 3)), ("char", (size - 10, size + 10))]
    _same_with_and_without(page, "text/html", queries)


# --- memory -------------------------------------------------------------------------------

# A small launcher reaps the command and reports its peak: a child forked straight from the
# test process would count the test process's own pages as its peak (see test_mhtml_memory.py).
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out = child.stdout.read()
err = child.stderr.read()
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
print(out.decode().strip())
print(err.decode().strip()[-2000:])
"""
_BUILD = """
import sys
from pdi import fragments
from pdi.fragments.text import TextTable
def chunks(path):
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            yield chunk
index = fragments.build_index(chunks(sys.argv[1]), media_type="text/plain; charset=utf-8")
table = TextTable.from_bytes(index)
print(table.size, table.cps[-1], table.endings[-1], len(index))
"""


def _build_in_child(path: Path, engine: str) -> tuple[int, int, int, int, int]:
    """Peak resident KiB of a child that builds the index of ``path``, and the table's size, code points, endings, octets."""
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, sys.executable, "-c", _BUILD, str(path)],
        capture_output=True, text=True, check=True, timeout=600,
        env={**os.environ, "PDI_TEXT_COUNTER": engine},
    )
    status, out, err = [*done.stdout.split("\n"), "", ""][:3]
    code, peak = map(int, status.split())
    assert code == 0, err
    size, cps, endings, octets = map(int, out.split())
    return peak, size, cps, endings, octets


@pytest.mark.parametrize("engine", ["compiled", "numpy"])
def test_the_index_of_a_300_mb_text_is_built_in_bounded_memory(tmp_path: Path, engine: str) -> None:
    block = "".join(f"line {i} Grüße € 😀 {'x' * (i % 90)}" + ("\r\n" if i % 3 else "\n") for i in range(9000))
    octets = block.encode()
    repeats = 300_000_000 // len(octets) + 1
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    with big.open("wb") as out:
        for _ in range(repeats):
            out.write(octets)
    small.write_bytes(octets[:1000])
    base, *_ = _build_in_child(small, engine)
    peak, size, cps, endings, index_octets = _build_in_child(big, engine)
    assert size == repeats * len(octets) > 300_000_000
    assert (cps, endings) == (repeats * len(block), repeats * 9000)
    assert index_octets < 16 * (size // (1 << 16) + 2) + 100  # 16 octets per block of 64 KiB, and a header
    grown_mib = (peak - base) / 1024
    # Holding the text would grow by 300 MiB; a window of 4 MiB, a block and the table grow by a few.
    assert grown_mib < 32, f"building the index grew the process by {grown_mib:.0f} MiB"


def test_canonicalized_is_of_the_whole_text_whatever_the_blocks() -> None:
    # hypothesis found it: a table of 16-octet blocks put the bare CR in a later block than char=0
    # and said "canonicalized" false, where the one-block reading said true; the CR makes the text
    # not CRLF-canonical (PDI-GRAMMAR.md: positions count the CRLF-canonical form) whichever block holds it
    octets = b"a" + "\u00c2".encode() * 6 + "\u20ac".encode() + b"\r"
    table = TextTable.from_chunks([octets], "utf-8", block_size=16)
    assert table is not None
    for index in (None, table.to_bytes()):
        result = fragments.evaluate("char", (0,), octets, media_type="text/plain; charset=utf-8", index=index)
        assert result.canonicalized and result.data == b""
