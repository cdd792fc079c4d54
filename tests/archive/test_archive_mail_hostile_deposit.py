"""A stranger's e-mail deposited: each attack below is kept as the octets it is, or refused naming what is wrong and
where, by ``pdi add`` in a child process whose peak resident memory is measured and whose time is bounded
(``run_with_peak``'s timeout), and a refused deposit leaves the archive as it was (``docs/email.md`` §5).

The messages are written to disk as they are made, just past :data:`pdi.mail.large.STREAMED_FROM` (32 MiB), so
that the deposit reads them by their structure as every later reading does; the mbox just past the 64 MiB of a
message. What held when this was written: nesting thousands deep, a part's header block of megabytes, millions
of tiny parts, base64 of one line of 40 MiB, a message/rfc822 part holding itself over and over, an mbox of one
huge line. What did not, and was fixed: 1,600,000 header fields (4.5 s and 100 MiB at each reading, now refused
past ``MailLimits.max_fields``) and an mbox line longer than a read (a piece of it taken for a From_ line).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest
from archive_helpers import snapshot

from pdi.archive import Archive

S = "mail.example.us"
MIB = 1 << 20
#: How much more ``pdi add`` of an attack may peak than ``pdi add`` of a small message: a few windows and the header
#: blocks read, never the message (the large deposit test's bound).
BOUND = 40 * MIB
HEAD = b"From: a@example.org\r\nSubject: an attack\r\n"
FILLER = b"z" * 76 + b"\r\n"


def _filler(out: BinaryIO, size: int = 33 * MIB) -> None:
    for _ in range(size // (len(FILLER) * 4096) + 1):
        out.write(FILLER * 4096)


def _nested(out: BinaryIO) -> None:
    out.write(HEAD)
    for k in range(5000):
        out.write(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (k, k))
    out.write(b"\r\n")
    _filler(out)


def _header_block(out: BinaryIO) -> None:
    out.write(HEAD + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nX-Long: ' + b"a" * (2 * MIB)
              + b"\r\n\r\nbody\r\n--B\r\n\r\n")
    _filler(out)


def _fields(out: BinaryIO) -> None:
    out.write(HEAD + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n')
    for _ in range(8):
        out.write(b"--B\r\n" + b"X:a\r\n" * 200_000 + b"\r\nbody\r\n")
    out.write(b"--B\r\n\r\n")
    _filler(out)


def _tiny_parts(out: BinaryIO) -> None:
    out.write(HEAD + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n')
    for _ in range(300):
        out.write(b"--B\r\n\r\nx\r\n" * 10_000)
    _filler(out, 8 * MIB)


#: Where part 0's header block starts in the attacks below (after HEAD, the multipart's Content-Type, the empty line
#: and the first delimiter line).
PART_0 = len(HEAD + b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\n')

#: Each attack that is refused: how it is written, and words its refusal holds (what, and where).
REFUSED: dict[str, tuple[Callable[[BinaryIO], None], list[str]]] = {
    "nested-5000-deep": (_nested, ["more than 32 entities deep", "is 33 deep"]),
    "a-header-block-of-2-mib": (_header_block, [
        f"part 0's header block is more than 1,048,576 octets (offset {PART_0})"]),
    "1600000-header-fields": (_fields, [
        "more than 100,000 header fields", f"part 0's header block (offset {PART_0})"]),
    "3000000-tiny-parts": (_tiny_parts, [  # the 20,001st delimiter line, after 20,000 parts of 10 octets
        "more than 20,000 boundary delimiter lines", f"at offset {PART_0 - 5 + 20_000 * 10}, in the message's body"]),
}


def _add(location: Path, path: Path, *more: str) -> tuple[int, int, str]:
    """``pdi add`` of ``path`` in a child: its exit status, its peak resident memory (octets), what it said on
    stderr; past 60 s it is a failure (``run_with_peak``'s timeout), not a hang."""
    from peak_memory import run_with_peak

    said = path.with_suffix(".said")
    with said.open("wb") as err:
        status, peak, _ = run_with_peak([sys.executable, "-m", "pdi", "add", "--archive", str(location), "-s", S,
                                         *more, str(path)], stdout=subprocess.DEVNULL, stderr=err, timeout=60)
    return status, peak * 1024, said.read_text()


@pytest.fixture(scope="module")
def small_peak(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The peak of ``pdi add`` of a small message: what the interpreter and pdi's modules cost."""
    folder = tmp_path_factory.mktemp("small")
    with Archive.init(folder / "a") as archive:
        archive.add_series(S)
    (folder / "small.eml").write_bytes(HEAD + b"\r\nthe body\r\n")
    status, peak, said = _add(folder / "a", folder / "small.eml")
    assert status == 0, said
    return peak


def _archive(location: Path) -> object:
    """An archive holding one message, and what it holds."""
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.add(S, HEAD + b"\r\nheld before\r\n", format="rfc822")
        return snapshot(archive)


def _held(location: Path) -> object:
    with Archive.open(location) as archive:
        return snapshot(archive)


@pytest.mark.parametrize("attack", list(REFUSED))
def test_an_attack_past_32_mib_is_refused_naming_what_and_where_in_bounded_memory(
    tmp_path: Path, small_peak: int, attack: str
) -> None:
    write, words = REFUSED[attack]
    location, path = tmp_path / "a", tmp_path / "attack.eml"
    before = _archive(location)
    with path.open("wb") as out:
        write(out)
    assert path.stat().st_size > 32 * MIB
    status, peak, said = _add(location, path)
    assert status != 0 and all(w in said for w in words), said
    assert peak - small_peak < BOUND, f"{(peak - small_peak) / MIB:.0f} MiB above a small message's deposit"
    assert _held(location) == before


def test_base64_of_one_line_of_40_mib_and_a_message_holding_itself_are_kept_as_they_are(
    tmp_path: Path, small_peak: int
) -> None:
    """Kept: the stored octets are the file's, and each part decodes to what was encoded (``ABC`` again and again;
    the enclosed message as written), read back a window at a time."""
    location = tmp_path / "a"
    _archive(location)
    one_line, itself = tmp_path / "one-line.eml", tmp_path / "itself.eml"
    with one_line.open("wb") as out:
        out.write(HEAD + b'Message-ID: <one-line@example.org>\r\nContent-Type: multipart/mixed; boundary="B"\r\n\r\n'
                  b"--B\r\n\r\nthe body\r\n--B\r\nContent-Transfer-Encoding: base64\r\n\r\n")
        for _ in range(40):
            out.write(b"QUJD" * (MIB // 4))
        out.write(b"\r\n--B--\r\n")
    enclosed = b"From: x@example.org\r\nContent-Type: message/rfc822\r\n\r\n"
    with itself.open("wb") as out:
        out.write(HEAD + b"Message-ID: <itself@example.org>\r\nContent-Type: message/rfc822\r\n\r\n")
        out.write(enclosed * 400_000)
        _filler(out, 20 * MIB)
    for path in (one_line, itself):
        status, peak, said = _add(location, path)
        assert status == 0, said
        assert peak - small_peak < BOUND, f"{path.name}: {(peak - small_peak) / MIB:.0f} MiB above a small one's"
    enclosed_octets = hashlib.sha256(itself.read_bytes().split(b"\r\n\r\n", 1)[1]).hexdigest()
    expected = {one_line: (1, hashlib.sha256(b"ABC" * (40 * MIB // 4)).hexdigest()), itself: (0, enclosed_octets)}
    with Archive.open(location) as archive:
        day = archive.now().strftime("%Y/%m/%d")
        for path, (part, octets) in expected.items():
            located = archive.locate(f"urn:pdi://{S}/{day}/mid:{path.stem}%40example%2Eorg.rfc822.1#part={part}")
            assert located.record.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()  # type: ignore[union-attr]
            streamed = archive.locate_message_part(located)  # type: ignore[arg-type]
            assert streamed is not None
            digest = hashlib.sha256()
            for piece in streamed.pieces():
                digest.update(piece)
            assert digest.hexdigest() == octets, path.name


def test_an_mbox_of_one_huge_line_is_refused_naming_its_message_and_from_line(tmp_path: Path, small_peak: int) -> None:
    """A line of 70 MiB after a From_ line, no line end: refused as a message past 64 MiB, in memory of a read of
    the file (64 MiB, twice while it is read), the archive as it was. The same line before any From_ line, one piece of it starting
    ``From `` where a read of 64 MiB and two octets ends: no message (a piece took it for a From_ line before); its
    first piece, before any From_ line, is refused as it is read (RFC 4155: an mbox begins with a From_ line)."""
    location = tmp_path / "a"
    before = _archive(location)
    box, preamble = tmp_path / "huge.mbox", tmp_path / "preamble.mbox"
    with box.open("wb") as out:
        out.write(b"From a@example.org Mon Jan  1 00:00:00 2024\n")
        for _ in range(70):
            out.write(b"y" * MIB)
    with preamble.open("wb") as out:
        out.write(b"y" * (64 * MIB + 2) + b"From a@example.org\nSubject: no message\n\nno message\n")
    status, peak, said = _add(location, box)
    assert status != 0 and "message 1 of the mbox (its From_ line is line 1) is larger than 67,108,864" in said, said
    assert peak - small_peak < 2 * 64 * MIB + BOUND // 2  # a read of the file, and the buffer's copy of it
    status, _, said = _add(location, preamble)
    assert status == 1 and f"{preamble}: line 1 is not an mbox From_ line (one that begins 'From '): 'yyy" in said, said
    assert said.rstrip().endswith("(rule mbox, offset 0)"), said
    assert _held(location) == before


def test_the_same_attacks_under_32_mib_are_refused_by_the_whole_reading_naming_them(tmp_path: Path) -> None:
    """Under the threshold a message is read whole, by Python's parser, within the same limits: each refused before
    the parser holds it (its header fields as it reads them, past the 100,000th, named where as read by its
    structure), the archive as it was. One of more lines than the parser is given (3,000,000 tiny parts) is read
    by its structure, as past the threshold, and refused as there, by its delimiter lines (it was refused by its
    lines before: ``lines, more than the limit of 2,000,000``)."""
    import io

    from pdi.errors import FormatCheckError

    location = tmp_path / "a"
    before = _archive(location)
    cases = {_nested: "more than 32 entities deep", _fields: re.escape(f"more than 100,000 header fields in all (the limit MailLimits.max_fields), past it in part 0's"
                               f" header block (offset {PART_0})"),
             _tiny_parts: re.escape(f"more than 20,000 boundary delimiter lines (lines that start '--' and the"
                                    " boundary of the multipart they lie in), the limit MailLimits.max_delimiters:"
                                    f" the first past it at offset {PART_0 - 5 + 20_000 * 10}, in the message's body")}
    with Archive.open(location) as archive:
        for write, words in cases.items():
            out = io.BytesIO()
            write(out)
            data = out.getvalue()[: 30 * MIB]
            with pytest.raises(FormatCheckError, match=words):
                archive.add(S, data, format="rfc822")
        assert snapshot(archive) == before
