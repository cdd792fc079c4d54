"""The body text of a large e-mail (past :data:`pdi.mail.large.STREAMED_FROM`, read by its structure) read for a
``char=`` passage and for the reader's page, in a child process whose peak resident memory is measured: some times
its text, never the copies Python's decoding and ``re.sub`` made (a 16 MiB body of ``a`` LF lines peaked at 220
MiB, 13 times the body), and the same passage as Python's :mod:`email` reads the body."""

from __future__ import annotations

import email
import email.policy
import subprocess
import sys
from pathlib import Path

import pytest

from pdi.archive import Archive

S = "mail.example.us"
MIB = 1 << 20
#: The body: 8 Mi lines of "a" LF (16 MiB as written; its CR LF text 24 Mi characters).
LINES = 8 * MIB
HEAD = (b'From: a@example.org\r\nSubject: many lines\r\nMessage-ID: <%s@example.org>\r\n'
        b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n')
#: Read in the child: the passage's octets, then the reader's page of it, each written out.
CHILD = """
import sys
from pdi.archive import Archive
from pdi.server.pages.viewer import render_view
with Archive.open(sys.argv[1]) as archive:
    found = archive.resolve(sys.argv[2] + "#char=" + sys.argv[3])
    sys.stdout.buffer.write(found.data + b"|" + repr((found.fragment.ranges[0].start, found.fragment.ranges[0].end)).encode() + b"|")
    del found
    page = render_view(archive, sys.argv[2] + "#char=" + sys.argv[3])
    sys.stdout.buffer.write(str(len(page)).encode())
"""


def _write(path: Path, stem: bytes, lines: int) -> None:
    with path.open("wb") as out:
        out.write(HEAD % stem)
        out.write(b"a\n" * lines)
        out.write(b"\r\n--B\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n")
        line = b"QUJD" * 19 + b"\r\n"
        out.write(line * ((36 * MIB - 2 * lines) // len(line)))
        out.write(b"--B--\r\n")


def _read(location: Path, name: str, passage: str) -> tuple[int, bytes]:
    from peak_memory import run_with_peak

    status, peak, said = run_with_peak([sys.executable, "-c", CHILD, str(location), name, passage],
                                       stdout=subprocess.PIPE, timeout=120)
    assert status == 0, said
    return peak * 1024, said


@pytest.fixture(scope="module")
def deposited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, Path]:
    """An archive holding a large message of 8 Mi short lines and one of a few, each with base64 after its body
    to 36 MiB (past 32 MiB: read by their structure)."""
    folder = tmp_path_factory.mktemp("body")
    location = folder / "a"
    with Archive.init(location) as archive:
        archive.add_series(S)
    big, small = folder / "big.eml", folder / "small.eml"
    _write(big, b"big", LINES)
    _write(small, b"small", 64)
    for path in (big, small):
        assert path.stat().st_size > 32 * MIB
        subprocess.run([sys.executable, "-m", "pdi", "add", "--archive", str(location), "-s", S, str(path)],
                       check=True, stdout=subprocess.DEVNULL, timeout=120)
    with Archive.open(location) as archive:
        day = archive.now().strftime("%Y/%m/%d")
    return location, f"urn:pdi://{S}/{day}/mid:big%40example%2Eorg.rfc822.1", \
        f"urn:pdi://{S}/{day}/mid:small%40example%2Eorg.rfc822.1", big


def test_a_passage_and_the_page_of_a_large_body_of_short_lines_cost_some_times_its_text(
    deposited: tuple[Path, str, str, Path],
) -> None:
    """The passage deep in the body is Python's reading of it (``get_payload(decode=True)``, its LF ends written CR
    LF, RFC 5147 §4.1: ``a`` CR LF a line, three characters each); the child's peak above reading a body of 64
    lines stays under three times the body's text (24 MiB): its decoded octets, its text and its UTF-8."""
    location, big, small, path = deposited
    first = 3 * (LINES - 10) + 1  # inside the tenth line from the end
    peak, said = _read(location, big, f"{first},{first + 7}")
    body = email.message_from_bytes(path.read_bytes(), policy=email.policy.default).get_body(("plain",))
    assert body is not None
    text = body.get_payload(decode=True).decode("utf-8").replace("\n", "\r\n")
    assert len(text) == 3 * LINES
    passage, ranges, _ = said.split(b"|")
    assert passage == text[first : first + 7].encode() == b"\r\na\r\na\r"
    assert ranges == repr((first, first + 7)).encode()
    baseline, _ = _read(location, small, "1,8")
    assert peak - baseline < 3 * 3 * LINES, f"{(peak - baseline) / MIB:.0f} MiB above a body of 64 lines"
