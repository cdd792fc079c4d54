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

``--small``: a 20 KB body, a 64 KiB attachment, 200 messages, one round.
Run with ``python3 bench/run_all.py mail``.
"""

from __future__ import annotations

import argparse
import base64
import email
import email.policy
import mailbox
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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


def main() -> None:
    parser = readme.arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]), markdown=True)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    body_bytes, attachment_bytes, count, rounds = (20_000, 1 << 16, 200, 1) if args.small else (
        200_000, 1 << 20, 2000, args.rounds)
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

        check = fragments.evaluate("char", (start, end), data, media_type="message/rfc822").data.decode()
        message = email.message_from_bytes(data, policy=email.policy.default)
        oracle = message.get_body(preferencelist=("plain", "html")).get_content()  # type: ignore[attr-defined]
        assert check == oracle.replace("\n", "\r\n")[start:end], "pdi and Python's email disagree"
        ways: list[tuple[str, Callable[[], None]]] = [
            ("pdi: evaluate char=", evaluator), ("pdi: Archive.resolve", resolved), ("Python email: get_body", floor),
            ("pdi: split_mbox", cut), ("Python mailbox.mbox", cut_floor)]
        times: dict[str, list[float]] = {label: [] for label, _ in ways}
        for r in range(rounds):
            for label, run in ways[r % len(ways):] + ways[: r % len(ways)]:
                started = time.perf_counter()
                run()
                times[label].append(time.perf_counter() - started)
        archive.close()
    median = {label: statistics.median(t) for label, t in times.items()}
    floors = {"pdi: evaluate char=": "Python email: get_body", "pdi: Archive.resolve": "Python email: get_body",
              "Python email: get_body": "Python email: get_body", "pdi: split_mbox": "Python mailbox.mbox",
              "Python mailbox.mbox": "Python mailbox.mbox"}
    print(f"a message of {len(data)} octets (body ~{body_bytes} octets, attachment {attachment_bytes});"
          f" an mbox of {count} messages; {rounds} rounds")
    rows = []
    for label, _ in ways:
        ratio = median[label] / median[floors[label]]
        print(f"{label:24} {median[label] * 1000:9.2f} ms  ratio to {floors[label]} {ratio:5.2f}x")
        rows.append([label, f"{median[label] * 1000:.2f} ms", f"{ratio:.2f}", floors[label]])
    readme.write(args.markdown, f"A message of {len(data)} octets (a quoted-printable UTF-8 body of about {body_bytes}"
                 f" octets, a {attachment_bytes >> 10} KiB base64 attachment), char={start},{end}; an mbox of {count}"
                 f" messages; medians of {rounds} rounds, interleaved:\n\n"
                 + readme.table(["way", "median", "ratio", "to"], rows))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
