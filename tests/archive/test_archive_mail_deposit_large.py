"""Depositing a message past :data:`pdi.mail.large.STREAMED_FROM`: checked by its structure, as it will be read, in
bounded memory, whatever its size (``docs/email.md`` §5).

Before, the deposit's check kept the message and gave it to Python's parser whole: ``pdi add`` of a 61 MB message
peaked at 217-330 MB, and one past 64 MiB was refused unless ``--force``d. The messages here are written by
Python's :mod:`email` package (a text body and base64 attachments); what is deposited is compared with the file,
and each attachment read back with the octets Python's ``get_payload(decode=True)`` gives of it. A message the
structural reading refuses is refused at deposit, naming what is wrong and where, and leaves the archive as it
was. The threshold is lowered (to 100 octets) for the small messages of those refusals.
"""

from __future__ import annotations

import email
import email.message
import email.policy
import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from archive_helpers import snapshot

from pdi.archive import Archive
from pdi.errors import FormatCheckError

S = "oma.eop.gov.us"
MIB = 1 << 20
#: How much more ``pdi add`` of the large message may peak than ``pdi add`` of a small one: a few windows and the
#: header blocks, never the message (before: 190 MiB more for 61 MB, the parser's copies of it).
BOUND = 32 * MIB


def _message(attachments: list[bytes], tag: str) -> bytes:
    """A message as Python's :mod:`email` writes it: a text body, then each attachment in base64."""
    message = email.message.EmailMessage()
    message["From"], message["To"] = "Ann <ann@example.org>", "Bob <bob@example.org>"
    message["Subject"], message["Message-ID"] = f"The scans {tag}", f"<scans-{tag}@example.org>"
    message.set_content("Dear Bob,\n\nthe scans are attached: café and all.\n\nAnn\n")
    for number, octets in enumerate(attachments):
        message.add_attachment(octets, maintype="application", subtype="octet-stream", filename=f"scan{number}.bin")
    return message.as_bytes(policy=email.policy.SMTP)


def test_a_message_past_64_mib_is_deposited_unforced_in_bounded_memory(tmp_path: Path) -> None:
    from peak_memory import run_with_peak

    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
    files = {"small": tmp_path / "small.eml", "large": tmp_path / "large.eml"}
    files["small"].write_bytes(_message([random.Random(9).randbytes(2_000)], "small"))
    scans = [random.Random(k).randbytes(17_000_000) for k in range(3)]
    files["large"].write_bytes(_message(scans, "large"))
    size = files["large"].stat().st_size
    assert size > 64 * MIB  # past the limit of a message read whole, which refused it before unless --force
    peaks: dict[str, int] = {}
    for tag, path in files.items():
        status, peaks[tag], said = run_with_peak(
            [sys.executable, "-m", "pdi", "add", "--archive", str(location), "-s", S, str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert status == 0, said
    grown = (peaks["large"] - peaks["small"]) * 1024
    assert grown < BOUND, f"pdi add of a {size:,}-octet message peaked {grown / MIB:.0f} MiB above a small one's"

    expected = hashlib.sha256(files["large"].read_bytes()).hexdigest()
    python = email.message_from_bytes(files["large"].read_bytes(), policy=email.policy.default)
    decoded = [cast(Any, p).get_payload(decode=True) for p in python.walk() if not p.is_multipart()]
    assert decoded[1:] == scans  # Python's reading of the file: the independent reference
    with Archive.open(location) as archive:
        name = "urn:pdi://oma.eop.gov.us/" + archive.now().strftime("%Y/%m/%d") + "/mid:scans-large%40example%2Eorg"
        located = archive.locate(f"{name}.rfc822.1#part=2")
        record = cast(Any, located).record
        assert (record.sha256, record.size) == (expected, size)
        part = archive.locate_message_part(cast(Any, located))
        assert part is not None
        assert hashlib.sha256(b"".join(part.pieces())).digest() == hashlib.sha256(scans[1]).digest()


def _refused(archive: Archive, data: bytes, monkeypatch: pytest.MonkeyPatch) -> str:
    """The refusal of ``data`` deposited as a message past the (lowered) threshold; the archive left as it was,
    no temporary file left behind."""
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr("pdi.archive.readable.HELD_UP_TO", 64)  # kept in a temporary file, as a large one is
    archive.add(S, b"Subject: warm\r\n\r\nthe deposit's modules loaded, its connections open\r\n", format="rfc822")
    before = snapshot(archive)
    files = sorted(os.listdir("/proc/self/fd"))
    with pytest.raises(FormatCheckError) as refused:
        archive.add(S, data, format="rfc822")
    assert sorted(os.listdir("/proc/self/fd")) == files  # its temporary file closed (and so gone)
    assert snapshot(archive) == before
    return str(refused.value)


def test_a_large_messages_refusal_names_what_is_wrong_and_where(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b"".join(b"line %d of the body\r\n" % k for k in range(40))
    head = b"From: Ann <ann@example.org>\r\nSubject: x\r\n\r\n"
    said = _refused(archive, head + body + b"a NUL \x00 here\r\n", monkeypatch)
    assert "a NUL octet at offset" in said and f"offset {len(head + body) + 6}" in said
    said = _refused(archive, b"\x89PNG\r\n" + body, monkeypatch)
    assert "line 1 is not a header field" in said
    nested = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (k, k) for k in range(40))
    said = _refused(archive, head[:-2] + nested + body, monkeypatch)
    assert "more than 32 entities deep" in said and "is 33 deep" in said


def test_a_large_message_is_checked_by_its_structure_not_whole(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the threshold the deposit reads it as it will be read (:func:`pdi.mail.large.read_large`), never by
    Python's parser whole; at or under it, whole, as every reading of it is."""
    import pdi.mail.large
    import pdi.mail.message

    data = _message([random.Random(1).randbytes(3_000)], "checked")
    read: list[str] = []
    whole, large = pdi.mail.message.read_message, pdi.mail.large.read_large
    monkeypatch.setattr("pdi.mail.message.read_message", lambda *a, **k: read.append("whole") or whole(*a, **k))
    monkeypatch.setattr("pdi.mail.large.read_large", lambda *a, **k: read.append("large") or large(*a, **k))
    archive.add(S, data, format="rfc822")
    assert "whole" in read and "large" not in read
    read.clear()
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", len(data) - 1)
    archive.add(S, data + b"\r\n", format="rfc822", foreign_id="second")
    assert "large" in read and "whole" not in read


def test_a_large_messages_body_text_is_indexed_from_its_body_part_alone(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full-text index reads a large message as ``char=`` does (by its structure, its body's part alone, the
    message kept in a temporary file), and each hit's ``char=`` range resolves to the words found."""
    import pdi.fragments.email_text

    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    whole: list[int] = []
    made = pdi.fragments.email_text.message_body_text
    monkeypatch.setattr(pdi.fragments.email_text, "message_body_text",
                        lambda data, *a: whole.append(len(data)) or made(data, *a))
    data = _message([random.Random(2).randbytes(5_000)], "indexed")
    name = archive.add(S, data, format="rfc822")
    hits = archive.search("café").hits
    assert [str(hit.name).split("#")[0] for hit in hits] == [str(name)] and whole == []
    python = email.message_from_bytes(data, policy=email.policy.default)
    text = cast(Any, python.get_body(("plain",))).get_content().replace("\r\n", "\n").replace("\n", "\r\n")
    assert archive.resolve(str(hits[0].name)).data == text[hits[0].start : hits[0].end].encode()
    assert "café" in text[hits[0].start : hits[0].end]

    monkeypatch.setattr("pdi.mail.large.MAX_BODY_OCTETS", 10)  # a body too long to read: a note, no passage
    archive.add(S, _message([b"x" * 500], "long body"), format="rfc822")
    assert archive.search("café").hits == hits


def test_a_large_messages_text_for_quotes_and_directives_is_read_from_its_body_part(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a citation, a text directive and an RFC 5147 check count in (``Archive.char_text``) is read of a large
    message as ``char=`` reads it: its body's part alone, by verified chunks, never the message whole."""
    import pdi.archive.reading
    from pdi.interop.aliases import native_names
    from pdi.server.pages.cite import evaluate_rfc5147_on

    data = _message([random.Random(4).randbytes(200_000)], "quoted")
    name = str(archive.add(S, data, format="rfc822"))
    python = email.message_from_bytes(data, policy=email.policy.default)
    text = cast(Any, python.get_body(("plain",))).get_content().replace("\r\n", "\n").replace("\n", "\r\n")
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    read = pdi.archive.reading.Reading.read
    monkeypatch.setattr(pdi.archive.reading.Reading, "read", lambda self, located: (
        pytest.fail("a large message read whole") if located.media_type == "message/rfc822" else read(self, located)))
    assert archive.char_text(cast(Any, archive.locate(name))) == text
    answer = evaluate_rfc5147_on(archive, name, "char=0,4")
    assert answer["text"] == text[:4] == "Dear"
    at = text.index("café")
    assert [str(n) for n in native_names(archive, f"{name}#:~:text=caf%C3%A9").natives] == [f"{name}#char={at},{at + 4}"]


def test_a_citation_whose_citing_document_is_a_large_message_reads_its_body_part_alone(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Archive.cite`` counted a citing message's position in its body text after reading the message whole
    (``resolve``); a large one's body text is read as ``char=`` reads it, its body's part alone."""
    import pdi.archive.reading

    data = _message([random.Random(6).randbytes(200_000)], "citing")
    name = str(archive.add(S, data, format="rfc822"))
    source = str(archive.add(S, "Quoted: caf\u00e9 and all, from the source.".encode(), format="utf-8"))
    python = email.message_from_bytes(data, policy=email.policy.default)
    text = cast(Any, python.get_body(("plain",))).get_content().replace("\r\n", "\n").replace("\n", "\r\n")
    at = text.index("café and all")
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    read = pdi.archive.reading.Reading._read
    monkeypatch.setattr(pdi.archive.reading.Reading, "_read", lambda self, parsed, record, *a: (
        pytest.fail("a large message read whole") if record.media_type == "message/rfc822" else read(
            self, parsed, record, *a)))
    assert archive.cite(f"{name}@{at}={source}#char=8,20").check.status == "ok"
    moved = archive.cite(f"{name}@{at + 1}={source}#char=8,20")
    assert moved.check.status == "mismatch" and moved.check.found == text[at + 1 : at + 13]


def test_a_large_messages_temporary_files_are_in_tmpdir_and_gone_on_every_path(
    archive: Archive, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The check's and the indexer's copies of the message are files of ``$TMPDIR`` (``tempfile.gettempdir()``),
    unlinked from the start and closed when the deposit ends: kept, refused, or failed by an error of no one's
    (the archive left as it was)."""
    import tempfile

    import pdi.mail.large

    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr("pdi.archive.readable.HELD_UP_TO", 64)
    data = _message([random.Random(8).randbytes(5_000)], "spooled")
    archive.add(S, b"Subject: warm\r\n\r\nthe deposit's modules loaded\r\n", format="rfc822")

    def spooled() -> list[str]:
        found = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                found.append(os.readlink(f"/proc/self/fd/{fd}"))
            except FileNotFoundError:  # the listing's own descriptor, closed since
                continue
        return [path for path in found if path.startswith(str(spool))]

    seen: list[list[str]] = []
    large = pdi.mail.large.read_large
    monkeypatch.setattr("pdi.mail.large.read_large", lambda *a, **k: seen.append(spooled()) or large(*a, **k))
    archive.add(S, data, format="rfc822")
    assert seen and all(seen) and all(path.endswith("(deleted)") for paths in seen for path in paths)
    assert spooled() == [] and os.listdir(spool) == []

    def broken(*a: object, **k: object) -> None:
        raise RuntimeError("a bug of no one's")

    monkeypatch.setattr("pdi.mail.large.read_large", broken)
    before = snapshot(archive)
    with pytest.raises(RuntimeError):
        archive.add(S, data + b"\r\n", format="rfc822", foreign_id="broken")
    assert spooled() == [] and os.listdir(spool) == [] and snapshot(archive) == before


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many temporary copies of a message the deposit makes, and how often it reads one (by its structure, or
    whole by Python's parser)."""
    import tempfile

    import pdi.fragments.email_text
    import pdi.mail.large
    import pdi.mail.message

    counts = {"copies": 0, "large": 0, "whole": 0}
    made = tempfile.TemporaryFile

    def copy(*args: Any, **kwargs: Any) -> Any:
        counts["copies"] += kwargs.get("prefix") == "pdi-message-"
        return made(*args, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryFile", copy)
    large, whole = pdi.mail.large.read_large, pdi.mail.message.read_message

    def read_large(*args: Any, **kwargs: Any) -> Any:
        counts["large"] += 1
        return large(*args, **kwargs)

    def read_message(*args: Any, **kwargs: Any) -> Any:
        counts["whole"] += 1
        return whole(*args, **kwargs)

    monkeypatch.setattr("pdi.mail.large.read_large", read_large)
    monkeypatch.setattr("pdi.mail.message.read_message", read_message)
    monkeypatch.setattr(pdi.fragments.email_text, "read_message", read_message)
    return counts


def test_a_large_message_is_copied_once_and_read_once_at_deposit(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deposit's check and its full-text index share one temporary copy of the message and one reading of its
    structure (before, each kept its own copy, and the index read the structure again); forced, the one copy is
    read once, by the index. Its text is indexed as before: each hit resolves to the words found."""
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr("pdi.archive.readable.HELD_UP_TO", 64)
    archive.add(S, b"Subject: warm\r\n\r\nthe deposit's modules loaded\r\n", format="rfc822")
    counts = _counted(monkeypatch)
    data = _message([random.Random(11).randbytes(5_000)], "once")
    name = archive.add(S, data, format="rfc822")
    assert counts == {"copies": 1, "large": 1, "whole": 0}
    hits = archive.search("café").hits
    assert [str(hit.name).split("#")[0] for hit in hits] == [str(name)]
    python = email.message_from_bytes(data, policy=email.policy.default)
    text = cast(Any, python.get_body(("plain",))).get_content().replace("\r\n", "\n").replace("\n", "\r\n")
    assert archive.resolve(str(hits[0].name)).data == text[hits[0].start : hits[0].end].encode()

    counts.update(copies=0, large=0)
    archive.add(S, data + b"\r\n", format="rfc822", foreign_id="forced", force=True)
    assert counts == {"copies": 1, "large": 1, "whole": 0}
    assert len(archive.search("café").hits) == 2


def test_a_small_message_is_read_whole_once_at_deposit(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """At or under the threshold the check's reading by Python's parser is the one the index reads the body from."""
    archive.add(S, b"Subject: warm\r\n\r\nthe deposit's modules loaded\r\n", format="rfc822")
    counts = _counted(monkeypatch)
    archive.add(S, _message([random.Random(12).randbytes(3_000)], "whole once"), format="rfc822")
    assert counts == {"copies": 0, "large": 0, "whole": 1}
    assert len(archive.search("café").hits) == 1


def test_a_queued_large_messages_text_is_indexed_from_the_store_without_a_copy(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message past the queue's threshold is indexed by the indexer (``pdi index``) from the store's verified
    chunks, read by its structure once, as ``char=`` reads it: no temporary copy of its own (before, a second copy
    of the message, after the deposit's, and a second reading of its structure)."""
    import pdi.archive.search as search

    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr("pdi.archive.readable.HELD_UP_TO", 64)
    monkeypatch.setattr(search, "QUEUE_PAST", 1000)
    data = _message([random.Random(13).randbytes(5_000)], "queued")
    name = archive.add(S, data, format="rfc822")
    assert archive.search("café").pending == 1
    counts = _counted(monkeypatch)
    run = archive.index_queued()
    assert (run.indexed, run.failed) == (1, ()) and counts == {"copies": 0, "large": 1, "whole": 0}
    hits = archive.search("café").hits
    assert [str(hit.name).split("#")[0] for hit in hits] == [str(name)]
    assert b"caf\xc3\xa9" in archive.resolve(str(hits[0].name)).data

    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 1 << 20)  # read whole: from the store, no copy either
    archive.add(S, data + b"\r\n", format="rfc822", foreign_id="whole")
    counts.update(copies=0, large=0, whole=0)
    run = archive.index_queued()
    assert (run.indexed, run.failed) == (1, ()) and counts == {"copies": 0, "large": 0, "whole": 1}
    assert len(archive.search("café").hits) == 2
