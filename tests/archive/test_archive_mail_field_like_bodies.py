"""A message whose attachment's lines look like header fields (an access log) is deposited and cited by ``part=``
as Python's :mod:`email` reads it, read whole (at most :data:`pdi.mail.large.STREAMED_FROM` octets) or by its
structure alike: it was refused read whole (``100007 lines that could be header fields``), kept past 32 MiB."""

from __future__ import annotations

import email
import email.policy
from typing import Any, cast

import pytest

from pdi.archive import Archive, Generic

S = "oma.eop.gov.us"
#: 100,001 lines of an access log: each begins with a run of field-name characters and a colon (``12:``).
LOG = b"".join(b"12:00:%02d GET /x 200\n" % (i % 60) for i in range(100_001))


def log_message() -> bytes:
    return (b"From: a@example.org\nSubject: the log\nMIME-Version: 1.0\n"
            b'Content-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/plain\n\nthe log, attached\n'
            b'--B\nContent-Type: text/plain\nContent-Disposition: attachment; filename="access.log"\n\n'
            + LOG + b"--B--\n")


@pytest.mark.parametrize("streamed", [False, True], ids=["read-whole", "by-structure"])
def test_a_message_with_an_access_log_attached_is_deposited_and_cited(
    archive: Archive, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    data = log_message()
    python = email.message_from_bytes(data, policy=email.policy.default)
    leaves = [p for p in python.walk() if not p.is_multipart()]
    if streamed:
        monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    name = str(archive.add(S, data, format="rfc822"))
    for number, leaf in enumerate(leaves):
        found = archive.resolve(f"{name}#part={number}")
        assert not isinstance(found, Generic)
        assert (found.data, found.media_type) == (leaf.get_payload(decode=True), leaf.get_content_type())
    assert cast(Any, archive.resolve(f"{name}#part=access%2Elog")).data == LOG[:-1]
