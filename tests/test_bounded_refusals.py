"""A pdi error a bounded child (:mod:`pdi._bounded`) refused with is raised in the parent as the same error.

Found in review: the parent made the error again as ``kind(message)`` from
the class's name and the child's whole message, so a class whose constructor
adds advice to what it is given (a :class:`~pdi.errors.ContentRefusal`'s
``--force deposits it …``, a :class:`~pdi.errors.CommitUnknownError`'s ``look
before doing it again …``) said its advice twice, and one whose constructor
takes more (a :class:`~pdi.errors.WithdrawnError`'s reason) could not be made
at all. Each class the child can name is checked here: its ``str()``, its
answer over HTTP and the same error said of a place (``within``), against the
error the child raised, for any message.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdi._bounded as bounded
from pdi import errors
from pdi._bounded import ChildLimits, run_child

#: Every class of the pdi error family a child can name (the parent looks its name up in pdi.errors).
CLASSES = sorted((c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.PDIError)),
                 key=lambda c: c.__name__)

words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=200)
maybe = st.none() | words


def made(kind: type[errors.PDIError]) -> st.SearchStrategy[errors.PDIError]:
    """Errors of ``kind`` as pdi's code makes them, with any words (its constructor's own arguments)."""
    if issubclass(kind, errors.ContentRefusal):
        declare = st.none() | st.tuples(st.sampled_from(["format", "charset"]), maybe) | st.tuples(
            st.sampled_from(["format", "charset"]), maybe, words)
        return st.builds(kind, words, declare=declare, note=st.just("") | words)
    if issubclass(kind, errors.CommitUnknownError):
        return st.builds(kind, words, look=maybe)
    if issubclass(kind, errors.ParseError):
        return st.builds(kind, words, text=maybe, offset=st.none() | st.integers(0, 10**9), rule=maybe)
    if issubclass(kind, errors.WithdrawnError):
        return st.builds(kind, words, reason=words, at=words, who=words, purged=st.booleans())
    return st.builds(kind, words)


class Exited(Exception):
    """What ``os._exit`` raises here instead of ending the test's process."""


def refused_in_child(error: errors.PDIError) -> str:
    """What :func:`pdi._bounded.child_main` writes on standard error when its work raises ``error`` (run here,
    with its rlimits and its exit stood in for, so the test's own process keeps its limits)."""
    said = io.StringIO()

    def work(args: list[str]) -> bytes:
        raise error

    def exit_(code: int) -> None:
        raise Exited(code)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounded.resource, "setrlimit", lambda *_: None)
        patch.setattr(bounded.os, "_exit", exit_)
        patch.setattr(sys, "argv", ["child", json.dumps(dataclasses.asdict(ChildLimits(1, 1 << 30, 1 << 20)))])
        patch.setattr(sys, "stderr", said)
        with pytest.raises(Exited) as exited:
            bounded.child_main(work)
    assert exited.value.args == (bounded.REFUSED,)
    return said.getvalue()


def the_same(rebuilt: errors.PDIError, error: errors.PDIError) -> None:
    assert type(rebuilt) is type(error)
    assert str(rebuilt) == str(error) and rebuilt.args == error.args
    assert rebuilt.over_http() == error.over_http()
    assert str(rebuilt.within("the PDF: ")) == str(error.within("the PDF: "))
    assert str(rebuilt.of_item(3)) == str(error.of_item(3))
    assert rebuilt.exit_code == error.exit_code and rebuilt.http_status == error.http_status


@pytest.mark.parametrize("kind", CLASSES, ids=lambda c: c.__name__)
def test_every_error_a_child_refuses_with_is_raised_here_as_the_child_said_it(kind: type[errors.PDIError]) -> None:
    @settings(max_examples=60, deadline=None)
    @given(made(kind))
    def check(error: errors.PDIError) -> None:
        the_same(bounded._refusal(refused_in_child(error)), error)

    check()


def test_an_errors_details_reach_the_parent() -> None:
    """A page's text refused past its bound of time (``pdi.fragments.pagetext``): its RFC 9457 member ``seconds``,
    which the problem answer carries, is said in the parent as the child's error held it."""
    error = errors.LimitError("the page's text took longer than 5 s", details={"seconds": 5.0})
    rebuilt = bounded._refusal(refused_in_child(error))
    the_same(rebuilt, error)
    assert rebuilt.details == {"seconds": 5.0}


def test_the_advice_of_a_content_refusal_is_said_once() -> None:
    error = errors.FormatCheckError("the octets are not a PNG (their signature is GIF89a)", declare=("format", "gif"))
    assert str(error) == ("the octets are not a PNG (their signature is GIF89a); give --format gif, or --force to"
                          " deposit it as declared")
    assert str(bounded._refusal(refused_in_child(error))) == str(error)


@pytest.fixture
def child_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """A module a real child runs (``python -m``), raising what ``raising`` says: its name."""
    src = Path(bounded.__file__).parents[1]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(src)]))

    def module(raising: str) -> str:
        name = f"refusing_child_{abs(hash(raising))}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(f"""
            from pdi import errors
            from pdi._bounded import child_main

            def work(args):
                raise {raising}

            child_main(work)
        """))
        return name

    return module


@pytest.mark.parametrize("raising", [
    'errors.CharsetCheckError("the text reads otherwise in latin-1", declare=("charset", "utf-8"), note=" (unread)")',
    'errors.CommitUnknownError("the commit to postgresql://pdi@db/pdi got no answer")',
    'errors.WithdrawnError("urn:pdi://a.example/2026/1/2/3 was withdrawn", reason="court order", at="2026-01-02",'
    ' who="registrar")',
    'errors.ParseError("a page number past the last", offset=12, rule="page")',
])
def test_a_real_child_refusal_is_raised_here_as_the_child_said_it(child_module: Callable[[str], str],
                                                                  raising: str) -> None:
    error = eval(raising, {"errors": errors})  # the same expression the child runs: the error it raises
    with pytest.raises(type(error)) as raised:
        run_child(child_module(raising), [], ChildLimits(seconds=60, memory=1 << 30, output=1 << 20))
    the_same(raised.value, error)


def test_a_line_cannot_give_the_error_another_status_nor_shadow_its_methods() -> None:
    """A child is a stranger's file read by PDFium: its line sets what the error held, never its class's own."""
    line = json.dumps({"error": "LimitError", "message": "too many pages", "held": {
        "http_status": 200, "exit_code": 0, "title": "fine", "over_http": "x", "within": 1, "__class__": "x",
        "_reword": 1, "item": 2}})
    rebuilt = bounded._refusal(line)
    assert type(rebuilt) is errors.LimitError and str(rebuilt) == "too many pages" and rebuilt.item == 2
    assert (rebuilt.http_status, rebuilt.exit_code, rebuilt.title) == (413, 7, "limit exceeded")
    assert rebuilt.over_http() == "too many pages" and str(rebuilt.within("x: ")) == "x: too many pages"
