"""A stranger's large message read by its structure (:mod:`pdi.mail.large`): what it keeps is what Python's
:mod:`email` reads of the same octets whole, and what it refuses it refuses naming what and where, in bounded
memory and time (``docs/email.md`` §5).

Found so: a part's header block longer than the first window its end is looked for in (64 KiB) was cut where that
window ended when the window cut a line before its colon: the rest of the header fields read as the part's body,
its media type, charset and file name lost (a PDF attachment served as ``text/plain``, its fields as its octets).
"""

from __future__ import annotations

import email
import email.policy
from email.message import Message
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.mail.large import part_pieces, read_large


def _python_leaves(data: bytes) -> list[Message]:
    message = email.message_from_bytes(data, policy=email.policy.default)
    return [part for part in message.walk() if not part.is_multipart()]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=st.integers(3_500, 7_000), pad=st.integers(0, 40), eol=st.sampled_from([b"\r\n", b"\n", b"\r"]))
def test_property_a_header_block_longer_than_a_window_is_read_whole_as_python_reads_it(
    fields: int, pad: int, eol: bytes
) -> None:
    """A part's header block of 64 to 400 KiB, its media type and file name last: each window it is read in cuts
    some line somewhere; the part's fields, type, name and octets are those Python reads."""
    block = b"".join(b"X-Field-%d: value%s%s" % (k, b"v" * pad, eol) for k in range(fields))
    data = eol.join([
        b"From: a@example.org", b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B", b"", b"The body.",
        b"--B", block + b'Content-Type: application/pdf; name="scan.pdf"', b"", b"%PDF-1.4 the scan", b"--B--", b"",
    ])
    assert len(block) > 64 << 10
    expected = _python_leaves(data)[1]
    part = read_large(data).parts[1]
    assert (part.media_type, part.filename) == (expected.get_content_type(), expected.get_filename()) == (
        "application/pdf", "scan.pdf")
    assert len(part.entity.keys()) == len(expected.keys()) == fields + 1
    assert b"".join(part_pieces(data, part)) == cast(Any, expected).get_payload(decode=True)
