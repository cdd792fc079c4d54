"""elt on a stranger's SGML (:mod:`pdi.fragments.markup.sgml`): nothing fetched, bounded in time and memory.

OpenSP's ``onsgmls`` fetches an entity whose system identifier is an ``http`` URL, or a formal system
identifier's ``<url>`` storage object (OpenSP's ``sysid.htm``); ``-R`` restricts files only. A document must
never make the archive fetch anything, however its declarations spell the URL.
"""

from __future__ import annotations

import http.server
import json
import pathlib
import subprocess
import sys
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.errors import UnsupportedError
from pdi.fragments.markup.sgml import onsgmls_path, read_sgml
from peak_memory import run_with_peak
from support.handler_server import handler_server

# scripts/bootstrap installs OpenSP (Debian's opensp): a machine without it fails here, it skips nothing
assert onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap"

#: Ways to name a URL that OpenSP fetches (each was fetched before the fix, checked with a loopback server).
URL_SPELLINGS = {
    "formal sysid with an attribute": '<!ENTITY e SYSTEM "<url bctf=utf-8>{u}a">',
    "public text holding a quote": """<!ENTITY e PUBLIC "-//it's//EN" "{u}b">""",
    "comment between parameters": '<!ENTITY e SYSTEM -- c -- "{u}c">',
    "declaration built from character references": '<!ENTITY % d "<!ENTITY e SYSTEM &#34;{u}d&#34;>"> %d;',
    "external parameter entity": '<!ENTITY % p SYSTEM -- c -- "{u}e"> %p;',
}


class _Recorder(http.server.BaseHTTPRequestHandler):
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        body = b"<x>fetched</x>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("declaration", URL_SPELLINGS.values(), ids=URL_SPELLINGS.keys())
def test_an_entity_named_by_url_is_never_fetched_however_it_is_spelt(declaration: str) -> None:
    _Recorder.asked = []
    with handler_server(_Recorder) as url:
        text = f"<!DOCTYPE r [<!ELEMENT r - - ANY>{declaration.format(u=url)}]>\r\n<r>&e;</r>\r\n"
        with pytest.raises(UnsupportedError, match="by URL"):
            read_sgml(text)
        doctype = f'<!DOCTYPE r SYSTEM -- c -- "{url}f">\r\n<r></r>\r\n'
        with pytest.raises(UnsupportedError, match="by URL"):
            read_sgml(doctype)
    assert _Recorder.asked == []


def test_without_a_seccomp_filter_onsgmls_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.fragments.markup import sgml

    monkeypatch.setattr(sgml, "_WITHOUT_NETWORK", sgml._WITHOUT_NETWORK.replace("libseccomp.so.2", "libnone.so.0"))
    with pytest.raises(UnsupportedError, match=r"\(status 120\): cannot keep onsgmls off the network: libnone.so.0"):
        read_sgml("<!DOCTYPE r [<!ELEMENT r - - ANY>]>\r\n<r></r>\r\n")


_MANY_FROM_AN_ENTITY = (
    "<!DOCTYPE r [<!ELEMENT r - - ANY><!ELEMENT x - O EMPTY><!ELEMENT z - - (#PCDATA)><!ELEMENT p - - (#PCDATA)>"
    '<!ENTITY a "' + "<x>" * 50 + "<z>w</z>" * 25 + '">]><r>'
)


def test_elements_from_an_entity_on_one_long_line_are_placed_in_one_pass() -> None:
    """Found by an attack, 2026-11-27: each element of an entity's replacement text (not in the source) was looked
    for from the last place found to the next line onsgmls names, the whole rest of a one-line document: 97,500
    elements of 1,300 references before 4 MB of text took minutes. In a child, so that the old reading fails this
    test by its timeout rather than hang the suite. The elements are onsgmls's, each of the entity's a zero-length
    place (as the module docstring says where), and the written <p> is where it was written."""
    code = (
        "import json\n"
        "from pdi.fragments.markup.sgml import read_sgml\n"
        f"text = {_MANY_FROM_AN_ENTITY!r} + '&a;' * 1300 + 't' * 4_000_000 + '<p>end</p></r>\\r\\n'\n"
        "reading = read_sgml(text)\n"
        "print(json.dumps([[e.name, e.start, e.end] for e in reading.elements]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    elements = json.loads(done.stdout)
    prolog, p_start = len(_MANY_FROM_AN_ENTITY), len(_MANY_FROM_AN_ENTITY) + 3 * 1300 + 4_000_000
    assert [name for name, _, _ in elements] == ["R"] + (["X"] * 50 + ["Z"] * 25) * 1300 + ["P"]
    assert elements[0][1:] == [prolog - 3, p_start + 14] and elements[-1][1:] == [p_start, p_start + 10]
    # each reference's 75 elements stand where that reference (&a;, 3 characters) is written
    assert [e[1:] for e in elements[1:-1]] == [[prolog + 3 * k] * 2 for k in range(1300) for _ in range(75)]


def test_a_processing_instruction_inside_an_ignored_section_hides_nothing_of_it() -> None:
    """ISO 8879 §10.4: an IGNORE marked section's content is not parsed, a processing instruction in it included;
    a ``<p>`` after that instruction, still in the section, is no start tag (onsgmls reports two ``P``)."""
    text = ("<!DOCTYPE d [<!ELEMENT d - - (p*)><!ELEMENT p - O (#PCDATA)>]>\r\n"
            "<d><p>one <![ IGNORE [ <?pi> <p>no ]]> two<p>three</d>\r\n")
    reading = read_sgml(text)
    assert [(e.name, text[e.start : e.end]) for e in reading.elements] == [
        ("D", "<d><p>one <![ IGNORE [ <?pi> <p>no ]]> two<p>three</d>"),
        ("P", "<p>one <![ IGNORE [ <?pi> <p>no ]]> two"),
        ("P", "<p>three"),
    ]


@pytest.mark.parametrize("keyword", ["\u0131GNORE", "\u0131gnore"])  # U+0131 LATIN SMALL LETTER DOTLESS I
def test_a_status_keyword_spelled_with_a_dotless_i_is_no_ignore(keyword: str) -> None:
    """ISO 8879 §9.3, §10.4.2: a status keyword is a reserved name, ASCII letters in any case; a word holding an
    ``ı`` is none, and onsgmls parses the section's content (it reports the ``P`` in it). Found by a hunt: Python's
    ``str.upper`` makes ``ı`` an ``I``, the section was taken for an ignored one, and its ``P`` was located as an
    empty span."""
    text = ("<!DOCTYPE r [<!ELEMENT r - - (p|q)*><!ELEMENT p - - (#PCDATA)><!ELEMENT q - - (#PCDATA)>]>\r\n"
            f"<r><![ {keyword} [<p>one</p>]]><q>two</q></r>\r\n")
    reading = read_sgml(text)
    assert [(e.name, text[e.start : e.end]) for e in reading.elements] == [
        ("R", f"<r><![ {keyword} [<p>one</p>]]><q>two</q></r>"),
        ("P", "<p>one</p>"),
        ("Q", "<q>two</q>"),
    ]


_PEAK = (
    "import sys\n"
    "from pdi.fragments.markup.sgml import read_sgml\n"
    "print(len(read_sgml(open(sys.argv[1], encoding='utf-8', newline='').read()).elements))\n"
)


def test_the_parsers_output_is_not_kept_whole(tmp_path: pathlib.Path) -> None:
    """Found by an attack, 2026-11-27: every line of onsgmls's output was kept as a Python string, and that output
    may be 64 MiB and 16 octets for each of the document's (an attribute line for each of the 60 attributes the
    DTD declares on each of 99,000 elements): 4 MB of SGML took 500 MiB. Only what places elements is kept now.
    Peak memory read from the kernel for a child (tests/peak_memory.py)."""
    small = tmp_path / "small.sgml"
    small.write_text("<!DOCTYPE r [<!ELEMENT r - - ANY>]>\r\n<r>x</r>\r\n", newline="")
    status, base, out = run_with_peak([sys.executable, "-c", _PEAK, str(small)], stdout=subprocess.PIPE)
    assert (status, out) == (0, b"1\n")
    attributes = " ".join(f"a{i} CDATA #IMPLIED" for i in range(60))
    crowded = tmp_path / "crowded.sgml"
    crowded.write_text(f"<!DOCTYPE r [<!ELEMENT r - - ANY><!ELEMENT x - O EMPTY><!ATTLIST x {attributes}>]>\r\n<r>"
                       + "<x>\r\n" * 99_000 + "<!-- " + "y" * 4_000_000 + " --></r>\r\n", newline="")
    status, peak, out = run_with_peak([sys.executable, "-c", _PEAK, str(crowded)], stdout=subprocess.PIPE)
    assert (status, out) == (0, b"99001\n")
    assert (peak - base) / 1024 < 150, f"4 MB of SGML took {(peak - base) / 1024:.0f} MiB more than a small one"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.integers(65_530, 65_540), st.sampled_from(["", "x", "\\\\", "\\\\n"]))
def test_a_long_data_line_is_blank_when_it_holds_only_record_ends_and_spaces(
    tmp_path_factory: pytest.TempPathFactory, lines: int, length: int, tail: str,
) -> None:
    """ESIS (OpenSP's sgmlsout.htm): a data line escapes a record end as \\n and a backslash as \\\\. One longer
    than a piece read is blank when all of it is; an escape cut between two pieces is still one."""
    from pdi.fragments.markup.sgml import _esis_events

    body = ("\\n" * (length // 2) + " " * (length % 2))[:length] + tail  # the piece read ends inside a "\n"
    path = tmp_path_factory.mktemp("esis") / "esis"
    path.write_bytes(("(R\n" + ("-" + body + "\n") * lines + ")R\n").encode())
    blank = body.replace("\\n", "").strip() == ""
    assert _esis_events(str(path)) == ["(R"] + ([("-" if blank else "-x")] if lines else []) + [")R"]


@pytest.mark.parametrize("size", [1000, 2 << 20])
def test_a_deposit_gives_onsgmls_the_deposits_time_whatever_the_size(tmp_path: pathlib.Path,
                                                                       monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """docs/reference/fragments.md: onsgmls has 10 s at deposit. An SGML document past 1 MiB (indexed on a thread
    as it streams in) was given a query's 30 s."""
    from pdi.archive import Archive, Content
    from pdi.archive.content import ELEMENT_INDEX_SECONDS
    from pdi.fragments.markup import sgml

    given: list[float] = []
    real = sgml.read_sgml

    def spy(text: str, *, seconds: float = sgml.MAX_SECONDS, catalog: sgml.SgmlCatalog | None = None) -> sgml.SgmlReading:
        given.append(seconds)
        return real(text, seconds=seconds, catalog=catalog)

    monkeypatch.setattr(sgml, "read_sgml", spy)
    text = "<!DOCTYPE r [<!ELEMENT r - - ANY>]>\r\n<r>" + "x" * size + "</r>\r\n"
    with Archive.init(str(tmp_path / "a")) as archive:
        archive.add_series("oma.eop.gov.us")
        archive.deposit("oma.eop.gov.us", [Content(text.encode(), "sgml")])
    assert given == [ELEMENT_INDEX_SECONDS]


def test_a_public_identifier_the_catalogs_know_is_read_though_a_url_stands_beside_it() -> None:
    """HTML 4.01 §7.2 has a document name its DTD by public identifier and URL; the system's catalogs (Debian's
    sgml-data) know the public one, so onsgmls reads the DTD from them and fetches nothing. Its elements are what
    onsgmls reports run here, without pdi's restrictions: HTML HEAD TITLE BODY P, all but TITLE and P implied."""
    _Recorder.asked = []
    with handler_server(_Recorder) as url:
        text = f'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "{url}strict.dtd">\r\n<title>T</title><p>x\r\n'
        reading = read_sgml(text)
        run = subprocess.run(["onsgmls", "-E0", "-"], input=text, capture_output=True, text=True, timeout=60, check=False)
    assert _Recorder.asked == []
    assert [e.name for e in reading.elements] == [line[1:] for line in run.stdout.splitlines() if line.startswith("(")]
    assert [e.name for e in reading.elements] == ["HTML", "HEAD", "TITLE", "BODY", "P"]
    assert reading.dtd_found and reading.errors == 0
    assert text[reading.elements[4].start :] == "<p>x\r\n"


def test_a_parse_stopped_at_its_output_bound_says_so_naming_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack: a billion laughs (an entity expanding to 10⁸ elements) was refused as "onsgmls was
    stopped (status -25): the document needs more time, memory or output than pdi gives one parse", which says
    neither which bound nor how large. Status -25 is SIGXFSZ (signal(7)), which the kernel sends a process that
    writes past its RLIMIT_FSIZE: the output bound, docs/reference/fragments.md's "64 MiB (plus 16 per octet)"."""
    from pdi.errors import LimitError
    from pdi.fragments.markup import sgml

    monkeypatch.setattr(sgml, "MAX_OUTPUT", 1 << 20)
    levels = ['<!ENTITY e0 "<p>lol">'] + [f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">' for i in range(1, 9)]
    text = ("<!DOCTYPE x [\n<!ELEMENT x - - (p*)>\n<!ELEMENT p - O (#PCDATA)>\n" + "\n".join(levels)
            + "\n]>\n<x>&e8;</x>\n")
    with pytest.raises(LimitError) as refused:
        sgml.read_sgml(text)
    bound = (1 << 20) + 16 * len(text)
    assert str(refused.value).startswith(f"onsgmls wrote more than its bound of {bound:,} octets of output")
