"""A deposit whose index fails on the counting thread after it has taken every piece (the index of a text past
:data:`~pdi.archive.content.COUNT_ON_THREAD_PAST`) says so, and never waits for pieces that will not come.

The fault is injected (a ``build_index`` that reads the whole stream, then fails): the real ones that do so
(a parser's error past its last octet, memory running out) cannot be had on demand."""

from __future__ import annotations

import threading

import pytest

import pdi.fragments
from pdi.archive.content import COUNT_ON_THREAD_PAST, IndexBuilder


def test_an_index_that_fails_after_the_last_piece_is_reported_not_waited_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def read_then_fail(source: object, **_: object) -> bytes:
        for _piece in source:  # type: ignore[attr-defined]
            pass
        raise RuntimeError("failed past the last octet")

    monkeypatch.setattr(pdi.fragments, "build_index", read_then_fail)
    builder = IndexBuilder("text/plain", "utf-8")
    for _ in range(COUNT_ON_THREAD_PAST // 65536 + 4):
        builder.update(b"a line of text\n" * 4369)
    raised: list[BaseException] = []

    def finish() -> None:
        try:
            builder.finish(None)  # type: ignore[arg-type]
        except BaseException as exc:  # what the deposit would raise
            raised.append(exc)

    finishing = threading.Thread(target=finish, daemon=True)
    finishing.start()
    finishing.join(60)  # a deadlock never ends; the deposit's own error comes at once
    assert not finishing.is_alive(), "the deposit waited for a counting thread that waited for it"
    assert [str(e) for e in raised] == ["failed past the last octet"]
