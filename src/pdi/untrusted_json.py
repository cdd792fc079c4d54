"""JSON that others wrote (a request's body or field, a peer's answer, a file): read, or refused with one error.

``json.loads`` fails three ways on what a stranger sends: not JSON (``ValueError``), not UTF-8 text
(``UnicodeDecodeError``, a ``ValueError`` too), and nested deeper than Python's recursion allows
(``RecursionError``: ``[[[[…]]]]`` of a few hundred kilobytes). Each is a :class:`~pdi.errors.ParseError` here,
naming what was read; the last says so in words rather than as the interpreter's limit.
"""

from __future__ import annotations

import json
from typing import Any

from pdi.errors import ParseError


def loads(data: str | bytes, what: str, *, rule: str) -> Any:
    """The JSON value of ``data``; a :class:`ParseError` of grammar ``rule`` saying ``what`` is not JSON, and why."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ParseError(f"{what} is not JSON pdi reads: it is nested too deep", rule=rule) from None
    except ValueError as exc:
        raise ParseError(f"{what} is not JSON: {exc}", rule=rule) from None
