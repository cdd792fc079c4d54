"""The shape of ``pdi.server``: rooms by audience, no circle between its files, no private name borrowed.

Read from the source (``ast``), every import counted, the ones inside
functions too: an import made late to dodge a circle is still a circle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

SRC = Path(__file__).resolve().parents[2] / "src"
SERVER = SRC / "pdi" / "server"
#: The rooms, lowest first: a room imports only itself and the rooms before it (and pdi.server, their
#: package, puts them together in one app).
ROOMS = ("http", "process", "protocol", "write", "replay", "pages")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(SERVER.rglob("*.py")):
        found[".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")] = path
    return found


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every ``from … import`` and ``import`` in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return found


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return circles


def test_no_two_files_of_the_server_import_each_other_even_round_a_circle() -> None:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for module, names in _imports(path):
            for target in (module, *(f"{module}.{n}" for n in names)):
                if target in modules and target != name:
                    edges[name].add(target)
    assert _circles(edges) == []


def _compiled(package: str, name: str) -> bool:
    """Whether ``package.name`` is a compiled module of the package (its C source beside its modules): the
    package's own accelerator, which its modules use, not another module's private name."""
    return (SRC.joinpath(*package.split("."), f"{name}.c")).is_file()


def test_no_module_of_the_server_imports_a_private_name_of_another() -> None:
    """A compiled accelerator its own package's module imports (``pdi.server.process._fasthead`` in
    ``pdi.server.process.connection``) is the package's, not another module's, and is allowed; nothing else."""
    borrowed = []
    for name, path in _modules().items():
        for module, names in _imports(path):
            if module.startswith("pdi"):
                borrowed += [f"{name} imports {module}.{n}" for n in names
                             if n.startswith("_") and not n.endswith("__")
                             and not (name.rpartition(".")[0] == module and _compiled(module, n))]
    assert borrowed == []


def test_a_compiled_module_is_allowed_only_to_its_own_package() -> None:
    """The allowance above is the package's own: a compiled module exists where it is named, and a module of
    another package importing it would still be borrowing."""
    assert _compiled("pdi.server.process", "_fasthead")
    assert not _compiled("pdi.server.process", "_nothing_here")
    assert not _compiled("pdi.server.protocol", "_fasthead")


def test_the_server_is_grouped_in_rooms_by_audience() -> None:
    flat = sorted(p.name for p in SERVER.glob("*.py"))
    rooms = {p.name for p in SERVER.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert flat == ["__init__.py"]
    assert rooms == set(ROOMS)


def test_each_room_imports_only_the_rooms_below_it() -> None:
    upward = []
    for name, path in _modules().items():
        room = name.split(".")[2] if name.count(".") >= 2 else None
        if room is None:
            continue  # pdi.server itself: the app, above every room
        for module, _ in _imports(path):
            if module == "pdi.server" or module.startswith("pdi.server."):
                other = module.split(".")[2] if module.count(".") >= 2 else "pdi.server"
                if other == "pdi.server" or ROOMS.index(other) > ROOMS.index(room):
                    upward.append(f"{name} ({room}) imports {module}")
    assert upward == []


def test_a_name_in_a_heading_breaks_between_its_parts_and_reads_back_whole() -> None:
    import html5lib

    from pdi.server.pages.layout import breakable

    name = "urn:pdi://s.example.us/2026/11/26/o'brien&x<y>.text.1#line=5,6;length=9"
    made = breakable(name)
    tree = html5lib.parse(f"<h1><code>{made}</code></h1>", namespaceHTMLElements=False)
    code = tree.find(".//code")
    assert code is not None and "".join(code.itertext()) == name  # every character as it was, entities whole
    # a break after each / (the scheme's // once) and before each # and ;, and before each . but those of its last
    # part, its unique id, format and version (o'brien&x<y>.text.1), which stands whole
    assert made.count("<wbr>") == name.count(".") - 2 + name.count("#") + name.count(";") + name.count("/") - 1
    # the fragment in an inline block of its own: whole on a line that holds it, else cut only before its ;
    assert made.endswith('o&#x27;brien&amp;x&lt;y&gt;.text.1<wbr><span class="fragment">#line=5,6<wbr>;length=9</span>')
    assert made.startswith("urn:pdi://<wbr>s")  # the scheme's // kept together


_PART = st.text(st.characters(codec="utf-8", exclude_characters="/#"), min_size=1, max_size=60)


@given(st.lists(_PART, min_size=1, max_size=5), _PART, st.sampled_from(["", "#char=7,12", "#line=5,6;length=9"]))
@example(["s.example.us", "2026"], "7;v.text.1", "#char=0,1")
def test_a_names_last_part_has_no_break_and_the_name_reads_back_whole(
    path: list[str], last: str, fragment: str
) -> None:
    import html

    from pdi.server.pages.layout import LONG_PIECE, breakable

    name = "urn:pdi://" + "/".join(path) + "/" + last + fragment
    made = breakable(name)
    # the fragment (from the #) alone in its span, an inline block; the name before it in pieces between <wbr>s
    before, _, held = made.partition('<span class="fragment')
    before = re.sub(r'<span dir="auto">([^<]*)</span>', r"\1", before)  # a right-to-left part's isolate (in_order)
    long = re.compile(r'<span class="anywhere">([^<]*)</span>')
    assert all(len(html.unescape(p)) > LONG_PIECE for p in long.findall(before))
    pieces = [html.unescape(long.sub(r"\1", p)) for p in before.split("<wbr>") if p]
    assert "".join(pieces) == name.removesuffix(fragment)  # every character as it was
    # a piece short enough stays whole, a longer one breaks anywhere in its span
    assert all((len(p) > LONG_PIECE) == ('<span class="anywhere">' in m) for p, m in
               zip(pieces, [m for m in before.split("<wbr>") if m], strict=True))
    # the last part (after the last /, before the #) is never cut: one piece holds it whole
    assert last in pieces, pieces
    if fragment:  # whole but for a break before its ;
        assert held == f'">{fragment.replace(";", "<wbr>;")}</span>', held
    else:
        assert held == "", held


_NAMEISH = st.lists(st.sampled_from([*"/.#;&@=,()%:<>\"'` \t", "urn:pdi://", "pdi:", "%2F", "&amp;", "\u05d0", "\u202e",
                                      "\u0627", "\U0001d11e", "a", "Z", "9"]), max_size=40).map("".join)


@given(st.sampled_from(["urn:pdi://s.example.us/2026/", "pdi://s.example.us/", "https://x.example/", ""]), _NAMEISH)
@example("urn:pdi://s.example.us/2026/", "1.text.1@0=urn:pdi://t.example.us/2026/2.html.1#t=1&xywh=1,2,3,4")
@example("urn:pdi://s.example.us/2026/", "%D7%90.text.1#xpointer(//a[@b='<c>'&d])")
def test_any_name_breakable_makes_reads_back_whole_in_a_wbr_or_a_span_alone(head: str, rest: str) -> None:
    """Whatever a name holds (a %-escape, a foreign id's @ and =, a fragment's & and ;, right-to-left letters, a
    markup character), the page's text of what :func:`breakable` makes is the name, every character in order, and
    the only elements it makes are <wbr> and <span>: a selection's copy gives the name, and none of its parts is
    read as markup."""
    import html5lib

    from pdi.server.pages.layout import breakable

    name = head + rest
    tree = html5lib.parse(f"<h1><code>{breakable(name)}</code></h1>", namespaceHTMLElements=False)
    code = tree.find(".//code")
    assert code is not None
    assert "".join(code.itertext()) == name
    assert {element.tag for element in code.iter()} <= {"code", "wbr", "span"}
    assert all(set(element.attrib) <= {"class"} or element.attrib == {"dir": "auto"} for element in code.iter())


#: Unicode's right-to-left letters (bidirectional class R or AL) the test writes: Hebrew alef and shin, Arabic alef
#: and its semicolon, a Syriac letter, N'Ko's digit one, which is a letter to the bidi algorithm.
_RIGHT_TO_LEFT = "\u05d0\u05e9\u0627\u061b\u0710\u07c1"
_DELIMITING = ":/?#[]@!$&'()*+,;=."


@given(st.lists(st.sampled_from([*_DELIMITING, *_RIGHT_TO_LEFT, "a", "Z", "9", "-", "%D7", " ", "<", "&amp;", "\u202e"]),
                max_size=40).map("".join))
@example("https://he.example.org/\u05de\u05e1\u05de\u05da/2024")
def test_in_order_isolates_each_right_to_left_part_between_delimiters(text: str) -> None:
    """:func:`in_order` reads back as ``text``, each part between RFC 3986's delimiters that holds a right-to-left
    letter alone in a ``span dir="auto"`` (its own direction, isolated), and no other character in one."""
    import html
    import unicodedata

    import html5lib

    from pdi.server.pages.layout import in_order

    made = in_order(text)
    tree = html5lib.parse(f"<code>{made}</code>", namespaceHTMLElements=False)
    code = tree.find(".//code")
    assert code is not None and "".join(code.itertext()) == text
    isolates = [span.text or "" for span in code.iter("span")]
    assert all(span.attrib == {"dir": "auto"} and len(span) == 0 for span in code.iter("span"))
    parts = [part for part in re.split(f"[{re.escape(_DELIMITING)}]+", text) if part]
    assert isolates == [part for part in parts if any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in part)]
    if not any(ch in _RIGHT_TO_LEFT + "\u05de\u05e1\u05da" for ch in text):
        assert made == html.escape(text)
