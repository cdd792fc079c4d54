"""A stranger's large message cannot make reading it by its structure (:mod:`pdi.mail.large`) exhaust memory or
run on: each shape is read from a file by a child process, a window at a time as the archive's chunks are, whose
peak resident memory and CPU time are measured; what it decodes is compared with Python's ``quopri`` and
``email`` on the same octets (``docs/email.md`` §5).

Found so: quoted-printable of one line of ``=`` (or ``=4`` again and again) many MiB long was walked back over,
an octet at a time in Python, at every window, 27 s of CPU before its refusal (then refused in half a second; now
decoded as Python decodes it); ``=`` CR (a soft break Python runs to the next LF) then a line of many MiB decoded
to the line's octets where Python gives none. Uuencode (refused before) of lines of 24 MiB, or millions of lines.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import quopri
import sys
from pathlib import Path
from typing import Any, cast

import pytest

MIB = 1 << 20

_CHILD = r"""
import hashlib, json, sys, time
from pdi.errors import PDIError
from pdi.mail.large import part_map, part_pieces, read_large

class File:
    def __init__(self, path):
        self.file = open(path, "rb")
        self.file.seek(0, 2)
        self.size = self.file.tell()
    def __len__(self):
        return self.size
    def __getitem__(self, key):
        start, stop, _ = key.indices(self.size)
        self.file.seek(start)
        return self.file.read(max(0, stop - start))

octets = File(sys.argv[1])
began = time.process_time()
try:
    mail = read_large(octets)
    part = mail.parts[-1]
    mapped = part_map(octets, part)
    digest = hashlib.sha256()
    for piece in part_pieces(octets, part, mapped=mapped):
        digest.update(piece)
    said = {"sha256": digest.hexdigest(), "size": mapped.size}
except PDIError as exc:
    said = {"refused": str(exc)}
said["cpu"] = time.process_time() - began
print(json.dumps(said))
"""


def _message(encoding: bytes, body: bytes) -> bytes:
    return b"\r\n".join([b"From: a@example.org", b'Content-Type: multipart/mixed; boundary="B"', b"", b"--B", b"",
                         b"The body.", b"--B", b"Content-Transfer-Encoding: " + encoding, b"", body, b"--B--", b""])


def _read_in_a_child(tmp_path: Path, data: bytes) -> tuple[dict[str, Any], int]:
    import json
    import subprocess

    from peak_memory import run_with_peak

    path = tmp_path / "message.eml"
    path.write_bytes(data)
    status, peak, said = run_with_peak([sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE)
    assert status == 0
    return json.loads(said), peak * 1024


def _python_part(data: bytes) -> bytes:
    message = email.message_from_bytes(data, policy=email.policy.default)
    return cast(bytes, cast(Any, message).get_payload()[1].get_payload(decode=True))


@pytest.mark.parametrize("line", [b"=", b"=4", b"=A=", b"==4"], ids=["equals", "equals-four", "equals-a", "two-four"])
def test_a_quoted_printable_line_of_escapes_many_mib_long_decodes_as_python_decodes_it(
    tmp_path: Path, line: bytes
) -> None:
    """A line of 24 MiB with an ``=`` every octet or two: cut where no escape is, found among a window's last few
    octets by the parity of its last run of ``=`` (refused before, after a walk back of 4 KiB at every window)."""
    body = line * (24 * MIB // len(line))
    data = _message(b"quoted-printable", body)
    expected = quopri.decodestring(body)
    assert expected == _python_part(data)
    _, small = _read_in_a_child(tmp_path, _message(b"quoted-printable", b"x"))
    said, peak = _read_in_a_child(tmp_path, data)
    assert (said["size"], said["sha256"]) == (len(expected), hashlib.sha256(expected).hexdigest()), said
    assert said["cpu"] < 6, said  # (27 s before the refusal of 2026-11-29, then half a second to refuse)
    assert peak - small < 48 * MIB


@pytest.mark.parametrize("body", [
    b"begin 644 f\r\nM" + b"A" * (24 * MIB) + b"\r\nend\r\n",
    b"begin 644 f\r\n" + b"end" + b" " * (24 * MIB) + b"\r\n#86)C\r\n",
    b"begin 644 f\r\n" + b" " * (24 * MIB) + b"end\r\n",
    b"\r\n" * (12 * MIB) + b"begin 644 f\r\n#86)C\r\nend\r\n",
    b"begin 644 f\n" + b"#86)C\n" * (4 * MIB) + b"end\n",
], ids=["a-line-of-24-mib", "end-then-blanks", "blanks-then-end", "lines-before-begin", "short-lines"])
def test_uuencode_of_long_or_many_lines_decodes_as_python_decodes_it(tmp_path: Path, body: bytes) -> None:
    data = _message(b"x-uuencode", body)
    expected = _python_part(data)
    _, small = _read_in_a_child(tmp_path, _message(b"x-uuencode", b"begin 644 f\r\n#86)C\r\nend\r\n"))
    said, peak = _read_in_a_child(tmp_path, data)
    assert (said["size"], said["sha256"]) == (len(expected), hashlib.sha256(expected).hexdigest()), said
    assert said["cpu"] < 12, said
    assert peak - small < 48 * MIB


def test_a_soft_break_before_a_line_of_many_mib_decodes_as_python_decodes_it(tmp_path: Path) -> None:
    body = b"kept=\r" + b"x" * (24 * MIB) + b"\r\nafter"
    data = _message(b"quoted-printable", body)
    expected = quopri.decodestring(body)
    assert expected == b"keptafter" == _python_part(data)
    _, small = _read_in_a_child(tmp_path, _message(b"quoted-printable", b"x"))
    said, peak = _read_in_a_child(tmp_path, data)
    assert (said["size"], said["sha256"]) == (len(expected), hashlib.sha256(expected).hexdigest())
    assert said["cpu"] < 4 and peak - small < 48 * MIB


def test_base64_with_an_equals_sign_every_five_characters_decodes_as_python_decodes_it(tmp_path: Path) -> None:
    """An ``=`` after each quad (which Python's lenient reading skips) makes every window hold hundreds of
    thousands of runs of ``=``: they are sorted by builtins, in bounded memory, to Python's octets."""
    body = (b"QUJD=" * 15 + b"!\r\n") * (12 * MIB // 78)
    data = _message(b"base64", body)
    expected = _python_part(data)
    _, small = _read_in_a_child(tmp_path, _message(b"base64", b"QUJD"))
    said, peak = _read_in_a_child(tmp_path, data)
    assert (said["size"], said["sha256"]) == (len(expected), hashlib.sha256(expected).hexdigest())
    assert said["cpu"] < 12 and peak - small < 48 * MIB


def test_a_boundary_never_closed_and_parts_nested_to_the_limit_are_read_in_bounded_memory(tmp_path: Path) -> None:
    nested = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (k, k) for k in range(31))
    body = b"Content-Transfer-Encoding: 8bit\r\n\r\n" + (b"-x" * 450 + b"\r\n") * (24 * MIB // 902)
    data = b"From: a@example.org\r\n" + nested + body
    expected = _python_part_deep(data)
    _, small = _read_in_a_child(tmp_path, _message(b"7bit", b"x"))
    said, peak = _read_in_a_child(tmp_path, data)
    assert (said["size"], said["sha256"]) == (len(expected), hashlib.sha256(expected).hexdigest())
    assert said["cpu"] < 8 and peak - small < 48 * MIB


def _python_part_deep(data: bytes) -> bytes:
    message = email.message_from_bytes(data, policy=email.policy.default)
    leaves = [part for part in message.walk() if not part.is_multipart()]
    return cast(bytes, cast(Any, leaves[-1]).get_payload(decode=True))
