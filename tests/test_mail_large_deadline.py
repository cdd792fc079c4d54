"""A message read by its structure keeps a deadline (:attr:`pdi.mail.limits.MailLimits.max_seconds`): its loops look
at the thread's processor time a window at a time, so that a loop that stops moving (a uuencode ``begin`` line
unended at a body's end once spun forever in ``pdi.mail.large._next_line``, holding a worker of ``pdi serve``) ends in
the :class:`~pdi.errors.LimitError` other work past its time ends in, not in a thread that never returns.

No input makes a loop spin now, so the deadline is shown on work that honestly takes longer than a lowered bound: the
reading stops soon after the bound, saying so, and a reading within it is Python's reading of the same octets.
"""

from __future__ import annotations

import binascii
import email
import email.policy
import time
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.errors import LimitError
from pdi.mail.large import body_octets, part_map, part_pieces, read_large
from pdi.mail.limits import MailClock, MailLimits


def _uuencoded(lines: int, *, ended: bool = True) -> bytes:
    body = b"\r\n".join(binascii.b2a_uu(bytes([i % 256]) * 45).rstrip(b"\n") for i in range(lines))
    return b"\r\n".join([
        b"From: a@example.org", b"MIME-Version: 1.0", b"Content-Type: text/plain",
        b"Content-Transfer-Encoding: x-uuencode", b"", b"begin 644 f.bin", body, *([b"end"] if ended else []), b"",
    ])


def _python_body(data: bytes) -> bytes:
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    return cast(bytes, cast(Any, message).get_payload(decode=True))


def _refused_for_time(error: LimitError, seconds: float) -> None:
    said = str(error)
    assert "MailLimits.max_seconds" in said
    assert f"more than {seconds:g} CPU seconds" in said or "on the clock (the backstop" in said
    assert error.details == {"seconds": seconds}  # a bound of time: the body texts' cache does not keep it


def test_a_structure_reading_past_its_processor_time_stops_soon_after_it_saying_so() -> None:
    data = _uuencoded(250_000)  # 16 MB, its body within MAX_BODY_OCTETS: some 0.25 s of processor time to read
    started = time.thread_time()
    mail = read_large(data, window=4096)  # the default bound: read whole
    whole = time.thread_time() - started
    assert body_octets(mail.parts[0].entity) == _python_body(data)
    started = time.thread_time()
    with pytest.raises(LimitError) as refused:
        read_large(data, MailLimits(max_seconds=0.01), window=4096)
    spent = time.thread_time() - started
    _refused_for_time(refused.value, 0.01)
    offset = int(str(refused.value).rpartition("offset ")[2])
    assert 0 <= offset < len(data)
    assert spent < whole / 2, (spent, whole)  # a window's work past the bound, not the whole reading


def test_a_parts_map_past_its_processor_time_stops_saying_which_part() -> None:
    data = _uuencoded(300_000, ended=False)
    part = read_large(data, max_body=0).parts[0]
    with pytest.raises(LimitError) as refused:
        part_map(data, part, 4096, clock=MailClock(0.02, f"decoding part {part.index} of the message"))
    _refused_for_time(refused.value, 0.02)
    assert str(refused.value).startswith("decoding part 0 of the message took more than")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.integers(0, 3000), ended=st.booleans(), seconds=st.sampled_from([0.0005, 0.002, 0.01, 30.0]),
       window=st.sampled_from([64, 1000, 4096]))
def test_property_a_bounded_reading_is_pythons_reading_or_refused_for_its_time(
    lines: int, ended: bool, seconds: float, window: int
) -> None:
    data = _uuencoded(lines, ended=ended)
    expected = _python_body(data)
    try:
        mail = read_large(data, MailLimits(max_seconds=seconds), window=window)
    except LimitError as exc:
        _refused_for_time(exc, seconds)
        assert seconds < 30.0
        return
    part = mail.parts[0]
    assert body_octets(part.entity) == expected
    assert b"".join(part_pieces(data, part, window)) == expected
