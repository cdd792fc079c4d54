"""Memento ``Accept-Datetime`` (RFC 7089 §2.1.1, an RFC 1123 date): :func:`pdi.interop.memento.parse_http_datetime`.

The input is the field's value as UTF-8 text (other bytes as lone
surrogates). What must hold: a value that parses is exactly what
:func:`~pdi.interop.memento.http_datetime` writes for the instant (white
space around it apart), so it formats back to the same instant; the same
instant as Python's ``email.utils`` reads it (from the year 100 on); and the memento a TimeGate
selects for it (:func:`~pdi.interop.memento.select`) is one nearest to it.
"""

from __future__ import annotations

import datetime
import email.utils

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.interop.memento import Memento, http_datetime, parse_http_datetime, select

_MOMENTS = [
    datetime.datetime(1996, 1, 1, tzinfo=datetime.UTC),
    datetime.datetime(2007, 5, 31, 20, 35, tzinfo=datetime.UTC),
    datetime.datetime(2007, 5, 31, 20, 35, 1, tzinfo=datetime.UTC),
    datetime.datetime(2026, 11, 23, 9, tzinfo=datetime.UTC),
]
_MEMENTOS = [Memento(m, f"http://a/{k}") for k, m in enumerate(_MOMENTS)]


def run(data: bytes) -> None:
    text = text_of(data)
    moment = parse_http_datetime(text)
    written = http_datetime(moment)
    assert written == text.strip(" \t")
    assert parse_http_datetime(written) == moment
    if moment.year >= 100:  # email.utils reads a year under 100 as 19xx or 20xx, as RFC 2822 §4.3 asks
        assert email.utils.parsedate_to_datetime(written) == moment
    chosen = select(_MEMENTOS, moment)
    assert abs(_MOMENTS[chosen] - moment) == min(abs(m - moment) for m in _MOMENTS)


TARGET = Target(
    "accept_datetime",
    run,
    warmup=b"Thu, 31 May 2007 20:35:00 GMT",
    tokens=(
        b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun", b"Jan", b"Feb", b"May", b"Jun", b"Dec", b", ",
        b" GMT", b" UTC", b":", b"00", b"23", b"24", b"59", b"60", b"29", b"30", b"31", b"0000", b"1900", b"2000",
        b"9999", b"\t", b" ", "\u0663".encode(), "\uff11".encode(),
    ),
)
