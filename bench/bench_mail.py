"""E-mail: a passage of a message's body, and an mbox cut into messages, against Python's own ``email`` and ``mailbox``.

Made here: a message of a quoted-printable UTF-8 body of about 200 KB (the
second message of ``tests/data/email/desktop-devel-list.mbox``, its body
repeated) and a 1 MiB base64 attachment; an mbox of 2,000 short messages.
Timed interleaved in one run (each round runs every way once, in a rotated
order; medians of the rounds):

* pdi, evaluator: ``pdi.fragments.evaluate("char", …)`` on the message's
  octets: parse, find the body, decode it, count 100 characters;
* pdi, archive: ``Archive.resolve(name#char=…)``: the same, the octets read
  from the archive with every chunk checked against its digest;
* floor: Python's ``email.message_from_bytes(…, policy=default).get_body(("plain",
  "html")).get_content()``, sliced (what pdi's reading is defined by);
* mbox, pdi: ``pdi.mail.mbox.split_mbox`` over the file; floor: ``mailbox.mbox``'s
  ``get_bytes`` of every key.
* a thread, pdi: the reader's thread page of a message
  (:func:`pdi.server.pages.mail_pages.render_thread`) whose 62 replies (a reply
  to each message of a tree, two each) were deposited over 120 days among the
  mbox's other messages, found through the thread index (schema 10); peer: the
  same replies found as the page found them before the index, by reading every
  message deposited in the series on those days (``Archive.day_documents``,
  each message read and its ids parsed by Python's ``email``).
* a header, pdi: ``Mail.header("Subject")`` of a message whose Subject is 20,000
  RFC 2047 encoded words; peer: Python's ``email.header.decode_header`` and
  ``make_header`` of the same field, whose time grows with the square of the
  words' number (what pdi used before).

``--small``: a 20 KB body, a 64 KiB attachment, 200 messages, a thread of 14 replies, a Subject of 2,000 words,
one round.
Run with ``python3 bench/run_all.py mail``.
"""

from __future__ import annotations

import argparse
import base64
import email
import email.header
import email.policy
import mailbox
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
import readme

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "email"


def _message(body_bytes: int, attachment_bytes: int) -> bytes:
    from pdi.mail.mbox import split_mbox

    with (DATA / "desktop-devel-list.mbox").open("rb") as mbox:
        source = list(split_mbox(mbox))[1].data
    head, _, body = source.partition(b"\n\n")
    head = head.replace(b"Content-Type: text/plain; charset=utf-8", b"Content-Type: multipart/mixed; boundary=BENCH")
    head = head.replace(b"Content-Transfer-Encoding: quoted-printable\n", b"")
    repeated = body * max(1, body_bytes // len(body))
    attachment = base64.encodebytes(bytes(range(256)) * (attachment_bytes // 256))
    return (head + b"\n\n--BENCH\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"
            + repeated + b"\n--BENCH\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n"
            b"Content-Disposition: attachment; filename=data.bin\n\n" + attachment + b"--BENCH--\n")


def _mbox(count: int) -> bytes:
    return b"".join(
        b"From someone@example.org Mon Jan  1 00:00:00 2024\nFrom: a@example.org\nSubject: message %d\n"
        b"Message-ID: <%d@example.org>\n\nbody of message %d\n>From a quoted line\n\n" % (n, n, n) for n in range(count)
    )


def _thread(count: int) -> list[bytes]:
    """A thread of ``count`` messages: message n replies to message (n - 1) // 2, its References the whole chain."""
    def chain(n: int) -> list[int]:
        return [] if n == 0 else [*chain((n - 1) // 2), (n - 1) // 2]

    return [
        b"From: b@example.org\nSubject: thread %d\nMessage-ID: <t%d@example.org>\n" % (n, n)
        + (b"In-Reply-To: <t%d@example.org>\nReferences: %s\n" % (
            (n - 1) // 2, b" ".join(b"<t%d@example.org>" % i for i in chain(n))) if n else b"")
        + b"\nmessage %d of the thread\n" % n
        for n in range(count)
    ]


def _thread_archive(where: Path, box: bytes, thread: list[bytes], days: int) -> tuple[object, str]:
    """An archive whose one series holds the mbox's messages and the thread's, spread over ``days`` days;
    the archive and the name of the thread's first message."""
    import datetime

    from pdi.archive import Archive, Content
    from pdi.mail.mbox import split_mbox

    now = [datetime.datetime(2026, 1, 1, 12, tzinfo=datetime.UTC)]
    archive = Archive.init(str(where), clock=lambda: now[0])
    archive.add_series("threads.example.us")
    import io

    others = [m.data for m in split_mbox(io.BytesIO(box))]
    first = ""
    for day in range(days):
        now[0] = datetime.datetime(2026, 1, 1, 12, tzinfo=datetime.UTC) + datetime.timedelta(days=day)
        todays = [m for i, m in enumerate(thread) if i * days // len(thread) == day]
        todays += [m for i, m in enumerate(others) if i * days // len(others) == day]
        if not todays:
            continue
        done = archive.deposit_batch("threads.example.us", [([Content(m, "rfc822")], None) for m in todays])
        if day == 0:
            first = str(done[0][0])
    return archive, first


def _scan_replies(archive: object, first: str, days: int) -> set[str]:
    """The thread's replies found without the index: every message of the series on every day read, its ids
    parsed by Python's email, the tree walked from the first message (what the page did before schema 10)."""
    import datetime
    import email.parser

    from pdi.identifier import PDI

    start = PDI.parse(first).date
    assert start is not None
    by_parent: dict[str, list[tuple[str, str]]] = {}
    for offset in range(days + 1):
        after: str | None = None
        while True:
            page = archive.day_documents("threads.example.us", start + datetime.timedelta(days=offset),  # type: ignore[attr-defined]
                                         after=after, limit=100)
            for document in page.documents:
                name = document.names[-1]
                data = archive.read(archive.locate(name)).data  # type: ignore[attr-defined]
                fields = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(data)
                parent = (fields["In-Reply-To"] or "").strip()
                if parent:
                    by_parent.setdefault(parent, []).append((str(name), str(fields["Message-ID"]).strip()))
            if page.after is None:
                break
            after = page.after
    found: set[str] = set()
    frontier = ["<t0@example.org>"]
    while frontier:
        following = []
        for parent in frontier:
            for name, mid in by_parent.get(parent, []):
                found.add(name)
                following.append(mid)
        frontier = following
    return found


def main() -> None:
    parser = readme.arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), markdown=True)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    body_bytes, attachment_bytes, count, rounds = (20_000, 1 << 16, 200, 1) if args.small else (
        200_000, 1 << 20, 2000, args.rounds)
    replies, days = (15, 30) if args.small else (63, 120)
    words = 2_000 if args.small else 20_000
    from pdi import fragments
    from pdi.archive import Archive
    from pdi.mail.mbox import split_mbox

    data = _message(body_bytes, attachment_bytes)
    start, end = 1000, 1100
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        archive = Archive.init(str(where / "archive"))
        archive.add_series("bench.example.us")
        name = str(archive.add("bench.example.us", data, format="rfc822"))
        box = where / "list.mbox"
        box.write_bytes(_mbox(count))

        def evaluator() -> None:
            fragments.evaluate("char", (start, end), data, media_type="message/rfc822")

        def resolved() -> None:
            archive.resolve(f"{name}#char={start},{end}")

        def floor() -> None:
            message = email.message_from_bytes(data, policy=email.policy.default)
            message.get_body(preferencelist=("plain", "html")).get_content()[start:end]  # type: ignore[attr-defined]

        def cut() -> None:
            with box.open("rb") as stream:
                for _ in split_mbox(stream):
                    pass

        def cut_floor() -> None:
            folder = mailbox.mbox(str(box), create=False)
            try:
                for key in folder.iterkeys():
                    folder.get_bytes(key)
            finally:
                folder.close()

        from pdi.server.pages.mail_pages import render_thread

        threaded, first = _thread_archive(where / "threads", _mbox(count), _thread(replies), days)

        def thread_page() -> None:
            render_thread(threaded, first)  # type: ignore[arg-type]

        def thread_scan() -> None:
            _scan_replies(threaded, first, days)

        from pdi.mail.message import read_message

        subject = b"=?utf-8?q?caf=C3=A9?= " * words
        mail = read_message(b"From: a@example.org\r\nSubject: " + subject + b"\r\n\r\nbody\r\n")
        field = mail.raw_header("Subject")
        assert field is not None

        def header() -> None:
            mail.header("Subject")

        def header_floor() -> None:
            str(email.header.make_header(email.header.decode_header(field)))

        assert mail.header("Subject") == "caf\u00e9" * words == str(
            email.header.make_header(email.header.decode_header(field))), "pdi and Python's email read the Subject apart"
        page = render_thread(threaded, first)  # type: ignore[arg-type]
        scanned = _scan_replies(threaded, first, days)
        assert len(scanned) == replies - 1 and all("/view?pdi=" + quote(n, safe="") in page for n in scanned), (
            "the thread page and the scan disagree")
        check = fragments.evaluate("char", (start, end), data, media_type="message/rfc822").data.decode()
        message = email.message_from_bytes(data, policy=email.policy.default)
        oracle = message.get_body(preferencelist=("plain", "html")).get_content()  # type: ignore[attr-defined]
        assert check == oracle.replace("\n", "\r\n")[start:end], "pdi and Python's email disagree"
        ways: list[tuple[str, Callable[[], None]]] = [
            ("pdi: evaluate char=", evaluator), ("pdi: Archive.resolve", resolved), ("Python email: get_body", floor),
            ("pdi: split_mbox", cut), ("Python mailbox.mbox", cut_floor),
            ("pdi: thread page, by the index", thread_page), ("scan of the days (before the index)", thread_scan),
            ("pdi: Mail.header of the Subject", header), ("Python email: decode_header", header_floor)]
        times: dict[str, list[float]] = {label: [] for label, _ in ways}
        for r in range(rounds):
            for label, run in ways[r % len(ways):] + ways[: r % len(ways)]:
                started = time.perf_counter()
                run()
                times[label].append(time.perf_counter() - started)
        archive.close()
        threaded.close()  # type: ignore[attr-defined]
    median = {label: statistics.median(t) for label, t in times.items()}
    floors = {"pdi: evaluate char=": "Python email: get_body", "pdi: Archive.resolve": "Python email: get_body",
              "Python email: get_body": "Python email: get_body", "pdi: split_mbox": "Python mailbox.mbox",
              "Python mailbox.mbox": "Python mailbox.mbox",
              "pdi: thread page, by the index": "scan of the days (before the index)",
              "scan of the days (before the index)": "scan of the days (before the index)",
              "pdi: Mail.header of the Subject": "Python email: decode_header",
              "Python email: decode_header": "Python email: decode_header"}
    print(f"a message of {len(data)} octets (body ~{body_bytes} octets, attachment {attachment_bytes});"
          f" an mbox of {count} messages; a thread of {replies - 1} replies among them over {days} days;"
          f" a Subject of {words} encoded words; {rounds} rounds")
    rows = []
    for label, _ in ways:
        ratio = median[label] / median[floors[label]]
        print(f"{label:36} {median[label] * 1000:9.2f} ms  ratio to {floors[label]} {ratio:5.2f}x")
        rows.append([label, f"{median[label] * 1000:.2f} ms", f"{ratio:.2f}", floors[label]])
    readme.write(args.markdown, f"A message of {len(data)} octets (a quoted-printable UTF-8 body of about {body_bytes}"
                 f" octets, a {attachment_bytes >> 10} KiB base64 attachment), char={start},{end}; an mbox of {count}"
                 f" messages; the thread page of a message with {replies - 1} replies deposited over {days} days among"
                 f" those messages; a Subject of {words:,} encoded words; medians of {rounds} rounds, interleaved:\n\n"
                 + readme.table(["way", "median", "ratio", "to"], rows))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
