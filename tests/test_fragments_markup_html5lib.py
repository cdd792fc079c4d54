"""The html5lib installed is 1.1, whose private parts ``pdi.fragments.markup.html`` extends.

``pyproject.toml`` pins ``html5lib==1.1``: ``pdi.fragments.markup.html``
subclasses html5lib's tokenizer, tree builder, parser and "in body" phase, and
relies on how they work inside. When the installed html5lib is not 1.1 (a
moved pin, a patched copy) these tests fail, each naming the part of html5lib
that changed and what in ``pdi.fragments.markup.html`` relies on it (its
``HTML5LIB_INTERNALS``): re-check that against the new html5lib, then move
the pin and the values here together.

Where the expected values come from:

* the SHA-256 of each html5lib file: the ``RECORD`` of html5lib's 1.1 wheel
  on PyPI (``html5lib-1.1-py2.py3-none-any.whl``, itself of SHA-256
  ``0d78f8fde1c230e99fe37986a60526d7049ed4bf8a9fadbad5f00e22e58e041d``);
* the signatures: as written in html5lib 1.1's source;
* the SHA-256 of each part's source (``inspect.getsource``, UTF-8): taken
  from html5lib 1.1's files, the ones the wheel's ``RECORD`` vouches for.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import html5lib
import pytest
from html5lib import html5parser

from support.pinned import Pinned, resolve_dotted

ROOT = Path(__file__).resolve().parent.parent
HTML5LIB = Path(html5lib.__file__).parent

# From html5lib-1.1.dist-info/RECORD in the 1.1 wheel: the files html5lib's parts below live in.
WHEEL_RECORD = {
    "__init__.py": "pWnYcfZ69wNLrdQL7bpr49FUi8O8w0KhKCOHsyRgYGQ",
    "_inputstream.py": "IKuMiY8rzb7pqIGCpbvTqsxysLEpgEHWYvYEFu4LUAI",
    "_tokenizer.py": "WvJQa2Mli4NtTmhLXkX8Jy5FcWttqCaiDTiKyaw8D-k",
    "_utils.py": "AxAJSG15eyarCgKMnlUwzs1X6jFHXqEvhlYEOxAFmis",
    "constants.py": "Ll-yzLU_jcjyAI_h57zkqZ7aQWE5t5xA4y_jQgoUUhw",
    "html5parser.py": "w5hZJh0cvD3g4CS196DiTmuGpSKCMYe1GS46-yf_WZQ",
    "treebuilders/__init__.py": "AysSJyvPfikCMMsTVvaxwkgDieELD5dfR8FJIAuq7hY",
    "treebuilders/base.py": "oeZNGEB-kt90YJGVH05gb5a8E7ids2AbYwGRsVCieWk",
    "treebuilders/etree.py": "EbmHx-wQ-11MVucTPtF7Ul92-mQGN3Udu_KfDn-Ifhk",
}

# Each private part of html5lib that pdi.fragments.markup.html relies on: its signature in 1.1
# (None for a class) and the SHA-256 of its source text in 1.1.
TOKENIZER, STREAM = "html5lib._tokenizer.HTMLTokenizer", "html5lib._inputstream.HTMLUnicodeInputStream"
BUILDER, PARSER = "html5lib.treebuilders.base.TreeBuilder", "html5lib.html5parser.HTMLParser"
PHASES, DISPATCHER = "html5lib.html5parser.getPhases.<locals>", "html5lib._utils.MethodDispatcher"
FINGERPRINTS: dict[str, tuple[str | None, str]] = {
    f"{TOKENIZER}.__init__": ("(self, stream, parser=None, **kwargs)", "303919b87f77ccb273219a2b50c39ac0b528c0e3b7d9c1b915bb338e1c349d43"),
    f"{TOKENIZER}.__iter__": ("(self)", "4ceaa98357971ac2487d582a19c1477da2efc91a0a02725b017b9faa47daa0d0"),
    f"{TOKENIZER}.tagOpenState": ("(self)", "0d9ebc5b71523886eb36be7cc71093bd7d01e30af5fb6936f802cf1897b91faf"),
    f"{TOKENIZER}.closeTagOpenState": ("(self)", "10f0de9f41b09681fa778b0aca1e3559d223cfb18c42ffd837b8bec1c434ed79"),
    f"{TOKENIZER}.emitCurrentToken": ("(self)", "ad2b7c86f5d7aaef52919ce90b249eb5c8d5e4008b3d756c96fc17e6d50a0ac1"),
    f"{TOKENIZER}.rcdataEndTagNameState": ("(self)", "648fc5899795a6a1727e8d65e462912a0c314743a24d0649e21e0da632b6d7ee"),
    f"{TOKENIZER}.rawtextEndTagNameState": ("(self)", "9ac4ea7eee7d02133d259a3c07235fb9a96c80b2cc7cd433b52805a5f2dcc5c8"),
    f"{TOKENIZER}.scriptDataEndTagNameState": ("(self)", "32a7b82de81d7694073db3706d07f3cb3f7a4b9631ed7bde28ac463c6a4b850e"),
    f"{TOKENIZER}.scriptDataEscapedEndTagNameState": ("(self)", "2783e49400168d58d66168272619adf17dde5b5112e2558d382aaa15990e4269"),
    f"{TOKENIZER}.attributeNameState": ("(self)", "8537bbc7f56d5af8dd736eb4e1a12910bbddbd0091bb56d108d0e02ac72d2de7"),
    f"{STREAM}.position": ("(self)", "50e5c77daac2efbdf5e8302d87365257cbd91adf16d4086e54f75186ca06d221"),
    f"{STREAM}._position": ("(self, offset)", "c336b224181f8284ce03b2d0ef46d7a5e4df718815d2b581e1bf39e0397c9994"),
    f"{STREAM}.readChunk": ("(self, chunkSize=None)", "9ba5ffca7ee2d355520edfb3ff79399f278c752f40fe2aa77309b4b06c6dd3aa"),
    "html5lib.treebuilders.etree.getETreeBuilder.<locals>.TreeBuilder": (None, "ab18724cc39c020f4d093c7630e31a66a6919f45d46d7538c51b1db13291ae4b"),
    f"{BUILDER}.__init__": ("(self, namespaceHTMLElements)", "4fb7ea92552c80796b2543af5675beb6cdc35af780d7f02e0685c78f6341fbfb"),
    f"{BUILDER}.reset": ("(self)", "23873aad5d2295e769ca7018c0c8feac62da535941c14d003db5cba127c8732d"),
    f"{BUILDER}.insertRoot": ("(self, token)", "abd7dd6b395c256bc263fe1d34c395ad22a58381807bf8d982630fca32c45e87"),
    f"{BUILDER}.insertElementNormal": ("(self, token)", "f53cfbb7ce51fac087427770d59a21c3d0e0c65705908d1568b2ce72ff2cdb0c"),
    f"{BUILDER}.insertElementTable": ("(self, token)", "efaf12b06bc748aab80a3372b90938f79241a5dde86a6d4eabab8ea20f1cb589"),
    f"{BUILDER}._setInsertFromTable": ("(self, value)", "d458a0d7fba468f667dce783d217ddf14e2875d18da7eda74d3e7e672d77862a"),
    f"{BUILDER}.generateImpliedEndTags": ("(self, exclude=None)", "274df76968e06298c0d77ea110b6a4ab58e6507d2c20f65120b8b7b292ff2045"),
    f"{BUILDER}.elementInScope": ("(self, target, variant=None)", "519ec7cad12c28b397e17ee24abecde71c5ee57fc1d8c5802f64645a9a69cf1d"),
    f"{PARSER}.__init__": (
        "(self, tree=None, strict=False, namespaceHTMLElements=True, debug=False)",
        "cd063f2bf6e2aa6458b4f74e46317125a7eaa7c006e41db989d42aa281fb90c0",
    ),
    f"{PARSER}._parse": (
        "(self, stream, innerHTML=False, container='div', scripting=False, **kwargs)",
        "7de72ab70974de97e7ea17928b32902ba7e0e1bd9c70444dd80007122d02a7dc",
    ),
    f"{PARSER}.reset": ("(self)", "5ae2f95a5b947abaae4e029903efc29127de39dbfa82bfdfde8cb6c2a14e7e07"),
    f"{PARSER}.mainLoop": ("(self)", "fa26282b8b81c313ba652055aa0030a0c93fab240435798c414618f0f35f4937"),
    f"{PHASES}.Phase.processStartTag": ("(self, token)", "6fd72f756acf83edf3305448ee2f1a90b54a33786ad4bfce70a7f5786b91e892"),
    f"{PHASES}.Phase.processEndTag": ("(self, token)", "376f57323e20194dea7c12cadca485842b1f36eb49060cbb6bd20927766bd1ef"),
    f"{PHASES}.InBodyPhase": (None, "1e66046e31b52f10352d004f836ef0a94fed08b9db1760e6c85142cd8536e2e3"),
    f"{PHASES}.InBodyPhase.startTagCloseP": ("(self, token)", "9838e50b1bc8f9be8cc346332c97cdcc0703aadfc2d3a9c42777c50d095785d4"),
    f"{PHASES}.InBodyPhase.endTagBlock": ("(self, token)", "88988d653b88dfbd13089a217cb64ab145d873541cc7c9511821699223841c04"),
    f"{PHASES}.InBodyPhase.startTagOther": ("(self, token)", "5fabbad8307efba5ea1cdd454baaefa50175fd729259f0f231a1d4e4b1ca8df3"),
    f"{PHASES}.InBodyPhase.startTagListItem": ("(self, token)", "8c24b32cdc9eb6aba3e6a0ddc1a16848da44d678102df0ad33dd65b85a0114d1"),
    f"{PHASES}.InBodyPhase.endTagFormatting": ("(self, token)", "37947991f3bbdcaba567c8e4d879557116104dc7a14d414696ef01375b7c11f0"),
    f"{PHASES}.InBodyPhase.endTagOther": ("(self, token)", "30f6bd9fae2331eac4f914ad42ca4019b75b92bfa8171c216e97f9c9b4a1a694"),
    f"{PHASES}.InBodyPhase.endTagBody": ("(self, token)", "a106adb7aac0b09f98d0e85f3b299f0d9ca67411653bf994e865631fe66e9363"),
    f"{PHASES}.AfterBodyPhase.endTagHtml": ("(self, name)", "a57a266cc36d2b1cb5097976404dbb03aed86fd9bf0c6b5afa3057dc2971770f"),
    f"{DISPATCHER}.__init__": ("(self, items=())", "17476bd1c08e98f7b56142aeef4a532cb1f63723130f9f0391267c9759804098"),
    f"{DISPATCHER}.__getitem__": ("(self, key)", "25a6304d00c034142a6f127aad2e6d57a8ef2001ceb029b452b23170cab292b7"),
}


def relied_on(name: str) -> str:
    """What in pdi.fragments.markup.html relies on the html5lib part ``name``, for a failure's message.

    Imported here, not at the top: with another html5lib the module may not
    import, and the tests must still say which part changed.
    """
    try:
        from pdi.fragments.markup.html import HTML5LIB_INTERNALS
    except Exception as exc:  # any error html5lib raises while the module is set up
        return f"pdi.fragments.markup.html, which does not even import with it ({type(exc).__name__}: {exc})"
    return HTML5LIB_INTERNALS.get(name, "(not listed in HTML5LIB_INTERNALS)")


def resolve(name: str) -> Any:
    """The html5lib object of that module and qualified name (classes made inside getPhases and getETreeBuilder too)."""
    if ".<locals>." in name:
        factory, _, inner = name.partition(".<locals>.")
        made = {
            "html5lib.html5parser.getPhases": lambda: list(html5parser.getPhases(False).values()),
            "html5lib.treebuilders.etree.getETreeBuilder": lambda: [html5lib.getTreeBuilder("etree")],
        }[factory]()
        classes = {k.__qualname__: k for cls in made for k in cls.__mro__}
        class_name, _, attribute = inner.partition(".")
        owner = classes[f"{factory.rpartition('.')[2]}.<locals>.{class_name}"]
        return vars(owner)[attribute] if attribute else owner
    return resolve_dotted(name)


PINNED = Pinned(
    "html5lib", "1.1", HTML5LIB, "pdi.fragments.markup.html", WHEEL_RECORD, FINGERPRINTS, relied_on, resolve,
)


def test_html5lib_is_pinned_to_1_1_and_1_1_is_installed() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    assert [d for d in dependencies if d.startswith("html5lib")] == ["html5lib==1.1"], (
        "pyproject.toml must pin html5lib==1.1, the version pdi.fragments.markup.html was checked against;"
        " to move the pin, re-check every part in its HTML5LIB_INTERNALS and update this test's values"
    )
    assert importlib.metadata.version("html5lib") == html5lib.__version__ == "1.1", (
        f"html5lib {html5lib.__version__} is installed, not the 1.1 pyproject.toml pins"
    )


@pytest.mark.parametrize("path", sorted(WHEEL_RECORD))
def test_html5lib_files_are_those_of_the_1_1_wheel(path: str) -> None:
    PINNED.check_file(path, "html5lib." + path.removesuffix(".py").removesuffix("/__init__").replace("/", "."))


@pytest.mark.parametrize("name", sorted(FINGERPRINTS))
def test_each_html5lib_part_relied_on_is_as_in_1_1(name: str) -> None:
    PINNED.check_part(name)


def test_the_fingerprints_are_those_of_every_part_listed() -> None:
    from pdi.fragments.markup.html import HTML5LIB_INTERNALS

    assert set(FINGERPRINTS) == set(HTML5LIB_INTERNALS)


def test_every_html5lib_method_overridden_is_listed() -> None:
    from pdi.fragments.markup import html
    from pdi.fragments.markup.html import HTML5LIB_INTERNALS

    overridden = set()
    for cls in (html._Tokenizer, html._TreeBuilder, html._InBody, html._Parser):
        for attribute, value in vars(cls).items():
            if not (inspect.isfunction(value) or attribute in ("startTagHandler", "endTagHandler")):
                continue
            for base in cls.__mro__[1:]:
                if attribute in vars(base) and base.__module__.startswith("html5lib"):
                    replaced = vars(base)[attribute]
                    owner = replaced if inspect.isfunction(replaced) else base  # a handler table: its class
                    overridden.add(f"{owner.__module__}.{owner.__qualname__}")
                    break
    assert overridden == {
        f"{TOKENIZER}.__init__", f"{TOKENIZER}.__iter__", f"{TOKENIZER}.tagOpenState",
        f"{TOKENIZER}.closeTagOpenState", f"{TOKENIZER}.emitCurrentToken", f"{TOKENIZER}.attributeNameState",
        f"{BUILDER}.__init__", f"{BUILDER}.reset", f"{BUILDER}.insertRoot",
        f"{BUILDER}.insertElementNormal", f"{BUILDER}.insertElementTable", f"{BUILDER}.generateImpliedEndTags",
        f"{PHASES}.InBodyPhase", f"{PARSER}.__init__", f"{PARSER}._parse",
        f"{PHASES}.InBodyPhase.startTagListItem", f"{PHASES}.InBodyPhase.endTagFormatting",
        f"{PHASES}.InBodyPhase.endTagOther",
    }
    assert overridden <= set(HTML5LIB_INTERNALS)


def test_html5lib_changes_the_stack_of_open_elements_only_as_open_elements_sees() -> None:
    # _OpenElements closes an element on pop(), remove() and item assignment; html5lib 1.1 also
    # appends, inserts and looks up (index), and makes the list in TreeBuilder.reset, nothing else
    calls: set[str] = set()
    assignments: list[str] = []
    for path in ("html5parser.py", "treebuilders/base.py"):
        source = (HTML5LIB / path).read_text("utf-8")
        calls |= set(re.findall(r"openElements\s*\.\s*(\w+)", source))
        found = re.findall(r"openElements\s*(?:\[[^\]]*\])?\s*[-+]?=(?!=)", source)
        assignments += [path + ": " + re.sub(r"\s+", "", a) for a in found]
        assert not re.search(r"\bdel\b[^\n]*openElements", source), (
            f"html5lib/{path} deletes from the stack of open elements (del), which _OpenElements does not see"
        )
    assert calls == {"append", "insert", "index", "pop", "remove"}, (
        f"html5lib changes the stack of open elements with {sorted(calls)}: _OpenElements must see every way"
        " an element leaves it (it sees pop, remove and item assignment)"
    )
    assert sorted(assignments) == [
        "html5parser.py: openElements[self.tree.openElements.index(node)]=",  # the adoption agency's clone
        "treebuilders/base.py: openElements=",  # TreeBuilder.reset: a new stack
    ], f"html5lib assigns to the stack of open elements in new ways: {assignments}"
