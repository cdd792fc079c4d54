"""E-mail in the resolver as a stranger writes it: what an attack on the answers of a message's parts found."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

S = "mail.example.us"

#: Charset labels mail is met with that no registry names (Pine writes X-UNKNOWN, old Apple Mail x-mac-roman),
#: and ones that are no charset's name at all, with the part each labels
UNKNOWN_LABELS = ["X-UNKNOWN", "x-mac-roman", "default", "x-user-defined", "klingon", "base64",
                  "*=''utf-8%0D%0ASet-Cookie:%20a=b"]


def _message() -> bytes:
    parts = [b"Content-Type: text/plain; charset=iso-8859-1\r\n\r\ncaf\xe9\r\n"]
    for n, label in enumerate(UNKNOWN_LABELS):
        written = f"charset{label}" if label.startswith("*") else f"charset={label}"
        parts.append(f"Content-Type: text/plain; {written}\r\n\r\npart {n + 1}\r\n".encode())
    return (b"From: a@example.org\r\nMessage-ID: <labels@example.org>\r\nMIME-Version: 1.0\r\n"
            b"Content-Type: multipart/mixed; boundary=b\r\n\r\n"
            + b"".join(b"--b\r\n" + p for p in parts) + b"--b--\r\n")


def test_a_part_whose_charset_label_pdi_does_not_know_is_answered_as_utf_8(tmp_path: Path) -> None:
    """Found by an attack: ``N2R`` of ``#part=N`` of a text part whose charset label no registry names (Pine's
    ``X-UNKNOWN``) was a 400 "unknown charset": the part could not be had over HTTP at all (``pdi get`` gave it).
    docs/email.md §3: its octets, with its media type, the label read as UTF-8 as the body's text is."""
    data = _message()
    oracle = email.message_from_bytes(data, policy=email.policy.default).get_payload()
    assert isinstance(oracle, list)
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    client = TestClient(create_app(str(tmp_path / "a")))
    first = client.get(f"/uri-res/N2R?{name}%23part=0")
    assert (first.status_code, first.headers["content-type"], first.content) == (
        200, "text/plain; charset=iso-8859-1", b"caf\xe9")
    for number in range(1, len(UNKNOWN_LABELS) + 1):
        answer = client.get(f"/uri-res/N2R?{name}%23part={number}")
        assert answer.status_code == 200, (number, answer.text)
        assert answer.headers["content-type"] == "text/plain; charset=utf-8"
        assert answer.content == oracle[number].get_payload(decode=True) == f"part {number}".encode()
        assert "set-cookie" not in answer.headers


#: Content-Types that are no media type (RFC 2045 §5.1: type "/" subtype, each a token), as a stranger writes them
NO_MEDIA_TYPES = [b"text/html\xc3\xa9", b"text/html\xe9", b"x/\xff\xfe", b"t\xc2\x85/p", b"a/b\x01c", b"text/h\x7ftml",
                  b'application/x"y"', b"text/x\\y"]


def test_a_part_whose_content_type_is_no_media_type_is_answered_as_plain_text(tmp_path: Path) -> None:
    """Found by an attack: ``N2R`` of such a part was a 500 (``UnicodeEncodeError``: a field value beyond Latin-1),
    or answered with a ``Content-Type`` holding a control character or a quote. RFC 2045 §5.2: taken as the
    default, plain text."""
    body = b"".join(b"--b\r\nContent-Type: " + c + b"\r\n\r\npart " + str(n).encode() + b"\r\n"
                    for n, c in enumerate(NO_MEDIA_TYPES))
    data = (b"From: a@example.org\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
            + body + b"--b--\r\n")
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    client = TestClient(create_app(str(tmp_path / "a")))
    for number in range(len(NO_MEDIA_TYPES)):
        answer = client.get(f"/uri-res/N2R?{name}%23part={number}")
        assert (answer.status_code, answer.headers["content-type"], answer.content) == (
            200, "text/plain; charset=utf-8", f"part {number}".encode()), NO_MEDIA_TYPES[number]


# --- a message's body text, made once a process ----------------------------------------------------------------

def _html_message(marker: str, body: bytes) -> bytes:
    return (f"From: a@example.org\r\nMessage-ID: <{marker}@example.org>\r\nMIME-Version: 1.0\r\n"
            "Content-Type: text/html; charset=utf-8\r\n\r\n").encode() + body


def _counted(monkeypatch: Any) -> list[int]:
    """Each call of :func:`pdi.fragments.email_text.body_text` (what makes a message's body text) counted."""
    from pdi.fragments import email_text
    from pdi.fragments.email_text import forget_body_texts

    made = email_text.body_text
    calls: list[int] = []

    def counting(mail: Any) -> str:
        calls.append(1)
        return made(mail)

    monkeypatch.setattr(email_text, "body_text", counting)
    forget_body_texts()  # as a resolver just started: the deposit made it in this process
    return calls


def test_a_messages_body_text_is_made_once_for_every_request_on_it(tmp_path: Path, monkeypatch: Any) -> None:
    """Found by an attack: every ``/view``, ``char=`` and ``line=`` of a message read it and made its body text
    again; an HTML body of 10 MB of ``<div>`` cost some 28 s of CPU each time, so a few readers asking for it
    kept every worker busy. Its body text is made once (pdi.fragments.email_text), whatever asks for it."""
    from urllib.parse import quote

    paragraphs = "".join(f"<div><p>line {n} of the body</p></div>" for n in range(200))
    data = _html_message("made-once", paragraphs.encode())
    oracle = email.message_from_bytes(data, policy=email.policy.default)
    assert oracle.get_body(preferencelist=("plain", "html")) is not None  # type: ignore[attr-defined]
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    calls = _counted(monkeypatch)
    client = TestClient(create_app(str(tmp_path / "a")))
    page = client.get(f"/view?pdi={quote(name, safe='')}")
    assert page.status_code == 200 and "line 7 of the body" in page.text
    # one block a line (docs/email.md §2, 5.): the page text is "line 0 of the body" CR LF "line 1 …", and so on
    line = client.get(f"/uri-res/N2R?{name}%23line=7,8")
    assert (line.status_code, line.content) == (200, b"line 7 of the body\r\n")
    start = "\r\n".join(f"line {n} of the body" for n in range(200)).index("line 7 of the body")
    passage = f"#char={start},{start + 18}"
    char = client.get(f"/uri-res/N2R?{name}{passage.replace('#', '%23')}")
    assert (char.status_code, char.content) == (200, b"line 7 of the body")
    again = client.get(f"/view?pdi={quote(name + passage, safe='')}")
    assert again.status_code == 200 and '<mark' in again.text
    assert len(calls) == 1, f"the body text was made {len(calls)} times for four requests"


def test_an_html_body_past_the_bound_is_refused_once_and_the_message_still_shown(
        tmp_path: Path, monkeypatch: Any) -> None:
    """The making of a body text is bounded: an HTML body of more than MAX_HTML_BODY characters is refused,
    naming its size, the bound and its part, before its markup is read; the refusal is kept as a text is.
    The message's page still shows its header fields and parts."""
    from urllib.parse import quote

    from pdi.fragments.email_text import MAX_HTML_BODY

    body = b"<div>" * (MAX_HTML_BODY // 5 + 1)
    data = _html_message("too-long", body)
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    calls = _counted(monkeypatch)
    client = TestClient(create_app(str(tmp_path / "a")))
    said = f"is {len(body):,} characters of HTML, more than the {MAX_HTML_BODY:,}"
    for _ in range(2):
        refused = client.get(f"/uri-res/N2R?{name}%23char=0,5")
        assert (refused.status_code, refused.json()["title"]) == (400, "limit exceeded"), refused.text  # as a fragment
        assert said in refused.text and "part 0, text/html" in refused.text
    page = client.get(f"/view?pdi={quote(name, safe='')}")
    assert page.status_code == 200
    assert "too-long@example.org" in page.text and said in page.text
    assert client.get(f"/uri-res/N2R?{name}%23part=0").content == body  # its octets are still had by part=
    assert len(calls) == 1


def test_a_thread_naming_its_ancestors_again_and_again_reads_and_lists_each_once_and_at_most_so_many(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Found by an attack: ``/thread`` of a message whose References named one held message 140,000 times (1 MiB
    of header) read that message 140,000 times and listed it as often: 250 s and a page of 30 MB for one request.
    docs/email.md §4: the messages its References name, oldest first, each said once; and, as its replies are,
    at most 500 (said so when there are more): the last 500, those nearest the message."""
    from pdi.server.pages import mail_pages
    from pdi.server.pages.layout import isolated

    most = mail_pages.MAX_SCANNED
    root = b"From: a@example.org\r\nMessage-ID: <root@example.org>\r\nSubject: the root\r\n\r\nbody\r\n"

    def reply(n: int, references: list[str]) -> bytes:
        return (f"From: b@example.org\r\nMessage-ID: <reply{n}@example.org>\r\nSubject: reply {n}\r\n"
                f"References: {' '.join(references)}\r\n\r\nbody\r\n").encode()

    few = ["<root@example.org>"] * 2000 + [f"<gone{i}@example.org>" for i in range(300)] + ["<root@example.org>"] * 2000
    many = ["<root@example.org>"] * 2000 + [f"<gone{i}@example.org>" for i in range(most + 100)]
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        root_name = str(archive.add(S, root, format="rfc822"))
        names = [str(archive.add(S, reply(n, refs), format="rfc822")) for n, refs in enumerate((few, many))]
    read = mail_pages._read_message
    reads: list[str] = []

    def counting(archive: Any, name: Any, quiet: bool = True) -> Any:
        reads.append(str(name))
        return read(archive, name, quiet=quiet)

    monkeypatch.setattr(mail_pages, "_read_message", counting)
    client = TestClient(create_app(str(tmp_path / "a")))
    for name, references in zip(names, (few, many), strict=True):
        reads.clear()
        answer = client.get("/thread", params={"pdi": name})
        assert answer.status_code == 200, answer.text
        ancestors = answer.text.split('<ol class="thread"', 1)[1].split('<li class="this">', 1)[0]
        named = list(dict.fromkeys(references))  # each once, where first named: the root, then the missing ones
        shown = named[-most:]
        assert ancestors.count("<li") == len(shown)
        assert [i for i in named[1:] if f"<code>{isolated(i)}</code>" in ancestors] == shown[-(len(shown) - 1):] \
            if len(named) <= most else shown
        assert ("the root" in ancestors) == (len(named) <= most)
        # the message itself, then the root once where it is listed (by the name the thread index holds it under)
        assert reads[0] == name and len(reads) == (2 if len(named) <= most else 1)
        assert all(root_name.startswith(r) for r in reads[1:])
        more = f"Only the last {most} of the {len(named):,} messages its References and In-Reply-To name are listed"
        assert (more in answer.text) == (len(named) > most)


def _spoofing() -> bytes:
    """A message whose sender, subject and attachment's file name hold controls and bidirectional overrides, each
    written in RFC 2047 or RFC 2231 words (no octet of the message is one), and a Hebrew subject's marks."""
    import base64

    subject = base64.b64encode("pay \u202etxt.exe\x00 \x07bell \u2067x\u2069".encode()).decode()
    return (f"From: =?utf-8?q?Ann_=E2=80=AE_gro.elpmaxe=1B[31m?= <a@example.org>\r\n"
            f"Subject: =?utf-8?b?{subject}?=\r\nMessage-ID: <spoof@example.org>\r\n"
            'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nhello\r\n'
            "--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment;"
            " filename*=utf-8''..%2F..%2Fetc%2Fpasswd%00%E2%80%AEfdp.exe\r\n\r\nx\r\n"
            "--B\r\nContent-Type: text/plain\r\nContent-Disposition: attachment;"
            " filename*=utf-8''%D7%A9%D7%9C%D7%95%D7%9D%E2%80%8F.txt\r\n\r\ny\r\n"
            "--B--\r\n").encode()


def test_controls_and_bidi_overrides_of_a_strangers_fields_are_shown_as_escapes_on_its_page(tmp_path: Path) -> None:
    """Found by an attack: a file name ``report\\u202efdp.exe`` was shown ``reportexe.pdf``, and a sender
    ``\\u202egro.elpmaxe`` as ``example.org``: the ``<bdi>`` each is in keeps an override from reordering what
    follows it, not the text itself; a NUL (dropped by the HTML parser) and an ESC or BEL went to the page as
    they were. On the page of a message, a header field's value and a part's name show each C0 and C1 control and
    each bidirectional embedding, override and isolate as its escape (``\\u202e``), marked; the marks right-to-left
    text writes (RLM) are kept, as is every other character. The message's octets and the parts' names are not
    changed: ``part=`` still finds the file name as written."""
    import re
    from urllib.parse import quote

    data = _spoofing()
    python = email.message_from_bytes(data, policy=email.policy.default)
    files = [part.get_filename() for part in python.walk() if not part.is_multipart()]
    assert files[1] == "../../etc/passwd\x00\u202efdp.exe" and files[2] == "\u05e9\u05dc\u05d5\u05dd\u200f.txt"
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    client = TestClient(create_app(str(tmp_path / "a")))
    page = client.get("/view", params={"pdi": name}).text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", page)
    shown = re.compile(r'<span class="control">\\u202e</span>')
    assert re.search(r"<bdi>\.\./\.\./etc/passwd<span class=\"control\">\\x00</span>"
                     r'<span class="control">\\u202e</span>fdp\.exe</bdi>', page), page
    assert len(shown.findall(page)) == 4  # the sender's, the subject's (the heading, and its field) and the file name's
    assert '<span class="control">\\x1b</span>[31m' in page and '<span class="control">\\x07</span>bell' in page
    assert '<span class="control">\\u2067</span>x<span class="control">\\u2069</span>' in page
    assert "<bdi>\u05e9\u05dc\u05d5\u05dd\u200f.txt</bdi>" in page  # a Hebrew name and its mark, as written
    thread = client.get("/thread", params={"pdi": name}).text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", thread)
    assert len(shown.findall(thread)) == 3  # the subject in the title and in the line, and the sender
    named = quote(files[1], safe="").replace(".", "%2E")  # (a "." of a name is %-escaped: PDI-GRAMMAR.md)
    part = client.get(f"/uri-res/N2R?{name}%23part={quote(named, safe='')}")
    assert (part.status_code, part.content) == (200, b"x"), part.text


def test_many_overlapping_ranges_of_a_large_parts_octets_are_one_range_decoded_once(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Held under attack: 20,000 overlapping ranges of a large message's base64 part (RFC 9110 §14.2) are one
    ``206`` of the octets they cover, decoded from the window before them, not once a range; 20,000 ranges apart
    (more parts than a server sends) are the whole part, decoded once."""
    import base64
    import binascii
    import random
    import time

    import pdi.archive.record_facts

    scan = random.Random(5).randbytes(2_000_000)
    data = (b'From: a@example.org\r\nMessage-ID: <ranges@example.org>\r\nContent-Type: multipart/mixed; boundary="B"'
            b"\r\n\r\n--B\r\n\r\nthe scan\r\n--B\r\nContent-Type: image/tiff\r\nContent-Transfer-Encoding: base64\r\n"
            b"\r\n" + base64.encodebytes(scan).replace(b"\n", b"\r\n") + b"--B--\r\n")
    with Archive.init(tmp_path / "a") as archive:
        archive.add_series(S)
        name = str(archive.add(S, data, format="rfc822"))
    monkeypatch.setattr("pdi.mail.large.STREAMED_FROM", 100)
    monkeypatch.setattr(pdi.archive.record_facts, "_PARTS", pdi.archive.record_facts._Kept(256))
    client = TestClient(create_app(str(tmp_path / "a")))
    decoded: list[int] = []
    real = binascii.a2b_base64
    monkeypatch.setattr(binascii, "a2b_base64", lambda s, *a, **k: decoded.append(len(s)) or real(s, *a, **k))
    overlapping = ",".join(f"{1_500_000 + k}-{1_500_000 + k + 5_000}" for k in range(20_000))
    began = time.process_time()
    answer = client.get(f"/uri-res/N2R?{name}%23part=1", headers={"Range": f"bytes={overlapping}"})
    assert answer.status_code == 206 and answer.headers["content-range"] == f"bytes 1500000-1524999/{len(scan)}"
    assert answer.content == scan[1_500_000:1_525_000]
    assert sum(decoded) <= 2 * (1 << 20) and time.process_time() - began < 5
    decoded.clear()
    apart = ",".join(f"{k * 100}-{k * 100}" for k in range(20_000))
    answer = client.get(f"/uri-res/N2R?{name}%23part=1", headers={"Range": f"bytes={apart}"})
    assert answer.status_code == 200 and answer.content == scan
    assert sum(decoded) <= len(scan) * 4 // 3 + 8
