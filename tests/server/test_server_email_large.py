"""E-mails of 60 MB through a real ``pdi serve`` and ``pdi get``, in bounded memory (``docs/email.md``).

An e-mail with a scan attached is 32-200 MB. Two are deposited here, each a short body and a 44.8 MB attachment
in base64 (61 MB of message): one with a quoted-printable text body, one a reply whose body is a
``multipart/alternative`` (plain text in ISO-8859-1, and HTML). Their reader's pages, thread page, and the N2R of
``#part=N``, ``#part=cid:…``, ``#char=`` are asked for; the worker's peak resident set (``VmHWM``) may grow by
:data:`BOUND` (before, each read and parsed the message whole: 535 MiB); and ``pdi get NAME#part=1`` may peak
:data:`BOUND` above ``pdi get`` of a small message's part (before: 490 MB). What the answers hold is checked
against what the messages were written from: the attachment's SHA-256, the bodies' text, each part's size as
written.
"""

from __future__ import annotations

import base64
import hashlib
import html
import random
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import S, start_serve, stop, wait_answering

from pdi._wording import byte_size
from pdi.archive import Archive
from support.procnet import peak_kib

MIB = 1 << 20
#: How much the worker's peak (or pdi get's, above a small message's) may grow for every page and part of the two
#: 61 MB messages: a few verified chunks and windows of decoded octets, never the message.
BOUND = 24 * MIB
BLOCK = 57 * 16_384  # octets of attachment a block: whole base64 lines of 76 characters (57 octets each)


def _write(path: Path, head: bytes, blocks: int, seed: int) -> tuple[str, int]:
    """A message: ``head`` (its header and body, up to the attachment's header block), then ``blocks`` blocks of
    attachment in base64, then the close delimiter; the attachment's SHA-256 and its size as written."""
    digest, written = hashlib.sha256(), 0
    with open(path, "wb") as out:
        out.write(head)
        for k in range(blocks):
            block = random.Random(seed * 1000 + k).randbytes(BLOCK)
            digest.update(block)
            coded = base64.b64encode(block)
            text = b"".join(coded[i:i + 76] + b"\r\n" for i in range(0, len(coded), 76))
            out.write(text)
            written += len(text)
        out.write(b"--OUT--\r\n")
    return digest.hexdigest(), written - 2  # the last line end is the delimiter's (RFC 2046 §5.1.1)


def _first(blocks: int, tag: str) -> bytes:
    return (
        f"From: Ann <ann@example.org>\r\nTo: Bob <bob@example.org>\r\nSubject: The survey {tag}\r\n"
        f"Date: Mon, 2 Mar 2026 10:00:00 +0000\r\nMessage-ID: <survey-{tag}@example.org>\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="OUT"\r\n\r\n--OUT\r\n'
        "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
        "Dear Bob,\r\n\r\nthe survey is attached: caf=C3=A9 and all.\r\n\r\nAnn\r\n--OUT\r\n"
        'Content-Type: application/octet-stream; name="survey.bin"\r\n'
        'Content-Disposition: attachment; filename="survey.bin"\r\n'
        f"Content-ID: <survey-{tag}@example.org>\r\nContent-Transfer-Encoding: base64\r\n\r\n"
    ).encode()


def _reply(tag: str) -> bytes:
    return (
        f"From: Bob <bob@example.org>\r\nTo: Ann <ann@example.org>\r\nSubject: Re: The survey {tag}\r\n"
        f"Message-ID: <reply-{tag}@example.org>\r\nIn-Reply-To: <survey-{tag}@example.org>\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="OUT"\r\n\r\n--OUT\r\n'
        'Content-Type: multipart/alternative; boundary="ALT"\r\n\r\n--ALT\r\n'
        "Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
        "Thanks Ann,=0D=0Ahere is mine: r=E9sum=E9.\r\n--ALT\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
        "<p>Thanks Ann,<br>here is <b>mine</b>: r\u00e9sum\u00e9.</p>\r\n--ALT--\r\n\r\n--OUT\r\n"
        'Content-Type: image/png\r\nContent-Disposition: attachment; filename="scan.png"\r\n'
        "Content-Transfer-Encoding: base64\r\n\r\n"
    ).encode()


@pytest.fixture(scope="module")
def mails(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str | Path | int]]:
    root = tmp_path_factory.mktemp("bigmail")
    found: dict[str, str | Path | int] = {"location": root / "archive"}
    with Archive.init(root / "archive") as archive:
        archive.add_series(S)
        for tag, blocks in (("small", 2), ("big", 48)):
            for kind, head, seed in (("first", _first(blocks, tag), 1), ("reply", _reply(tag), 2)):
                path = root / f"{tag}-{kind}.eml"
                sha, written = _write(path, head, blocks, seed)
                with open(path, "rb") as f:
                    found[f"{tag}-{kind}"] = str(archive.add(S, f, format="rfc822"))
                found[f"{tag}-{kind}-sha"], found[f"{tag}-{kind}-written"] = sha, written
                found[f"{tag}-{kind}-size"] = path.stat().st_size
                path.unlink()
    assert int(found["big-first-size"]) > 60_000_000
    yield found


def _get(base: str, path: str, name: str) -> httpx.Response:
    query = f"pdi={urllib.parse.quote(name, safe='')}" if path != "/uri-res/N2R" else name.replace("#", "%23")
    answer = httpx.get(f"{base}{path}?{query}", timeout=120)
    assert answer.status_code == 200, answer.text[:500]
    return answer


def _pages(base: str, mails: dict[str, str | Path | int], tag: str) -> dict[str, str]:
    first, reply = str(mails[f"{tag}-first"]), str(mails[f"{tag}-reply"])
    return {
        "view": _get(base, "/view", first).text,
        "view-part": _get(base, "/view", f"{first}#part=1").text,
        "view-char": _get(base, "/view", f"{first}#char=0,9").text,
        "reply": _get(base, "/view", reply).text,
        "thread": _get(base, "/thread", reply).text,
    }


def _streamed(base: str, name: str) -> tuple[str, httpx.Headers]:
    digest = hashlib.sha256()
    with httpx.stream("GET", f"{base}/uri-res/N2R?{name.replace('#', '%23')}", timeout=120) as answer:
        assert answer.status_code == 200
        for piece in answer.iter_bytes():
            digest.update(piece)
        return digest.hexdigest(), answer.headers


def test_sixty_megabyte_emails_are_read_cited_and_fetched_in_bounded_memory(
    mails: dict[str, str | Path | int],
) -> None:
    process, port, _ = start_serve(mails["location"], "--workers", "1", "--replay-port", "0", drain=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_answering(process, f"{base}/api/series")
        _pages(base, mails, "small")  # the modules every page and answer imports, loaded before the peak is read
        _streamed(base, f"{mails['small-first']}#part=1")
        _get(base, "/uri-res/N2R", f"{mails['small-reply']}#char=0,9")
        before = peak_kib(process.pid)

        pages = _pages(base, mails, "big")
        first, reply = str(mails["big-first"]), str(mails["big-reply"])
        sha, headers = _streamed(base, f"{first}#part=1")
        cid_sha, _ = _streamed(base, f"{first}#part=cid:survey-big%40example%2Eorg")
        scan_sha, scan_headers = _streamed(base, f"{reply}#part=2")
        passage = _get(base, "/uri-res/N2R", f"{first}#char=0,9")
        quoted = _get(base, "/uri-res/N2R", f"{reply}#char=13,27")  # after "Thanks Ann," and CR LF
        html_part = _get(base, "/uri-res/N2R", f"{reply}#part=1")
        n2r = f"{base}/uri-res/N2R?{first}%23part=1"
        unchanged = httpx.get(n2r, headers={"If-None-Match": headers["etag"]}, timeout=120)  # a cache revalidating
        fields = httpx.head(n2r, timeout=120)

        grown = (peak_kib(process.pid) - before) * 1024
        assert grown < BOUND, f"the worker's peak grew by {grown / MIB:.0f} MiB for two 61 MB messages"
    finally:
        stop(process)

    assert sha == cid_sha == mails["big-first-sha"] and scan_sha == mails["big-reply-sha"]
    assert headers["content-length"] == str(48 * BLOCK) and headers["content-type"] == "application/octet-stream"
    assert headers["accept-ranges"] == "bytes" and scan_headers["content-type"] == "image/png"
    assert headers["etag"].startswith('"') and headers["etag"].endswith('#part=1"')  # strong, the part's own
    assert unchanged.status_code == 304 and unchanged.headers["etag"] == headers["etag"] and not unchanged.content
    assert fields.status_code == 200 and fields.headers["content-length"] == str(48 * BLOCK) and not fields.content
    assert passage.content == b"Dear Bob," and passage.headers["content-type"] == "text/plain; charset=utf-8"
    assert quoted.text == "here is mine: " and html_part.text == "<p>Thanks Ann,<br>here is <b>mine</b>: résumé.</p>"

    view = pages["view"]
    assert '<p class="note" id="not-read">' not in view
    assert "<dt>Subject</dt><dd><bdi>The survey big</bdi></dd>" in view
    # the text body as written: 62 octets (its quoted-printable lines, the last line end the delimiter's)
    for number, media_type, label, written in ((0, "text/plain", "", 62), (1, "application/octet-stream",
                                               " <code><bdi>survey.bin</bdi></code>", mails["big-first-written"])):
        item = f'part {number}</a>: {media_type}{label}, {html.escape(byte_size(int(written)))} as written'
        assert item in view, item
    text = view.split('<pre id="text"', 1)[1].split(">", 1)[1].split("</pre>", 1)[0]
    shown = html.unescape(re.sub(r"<[^>]+>", "", text))  # each CR LF shown as a line break (as a small message's)
    assert shown == "\nDear Bob,\n\nthe survey is attached: café and all.\n\nAnn"
    assert '<li class="chosen" aria-current="true"><a href="/uri-res/N2R?' in pages["view-part"]
    assert "names part 1 of this message (application/octet-stream)" in pages["view-part"]
    assert re.search(r"<mark[^>]*>Dear Bob,</mark>", pages["view-char"])
    assert "part 0</a>: text/plain" in pages["reply"] and "(the body's text)" in pages["reply"]
    assert "Thanks Ann,\nhere is mine: résumé." in html.unescape(re.sub(r"<[^>]+>", "", pages["reply"]))
    assert "The survey big" in pages["thread"] and "Re: The survey big" in pages["thread"]


def test_pdi_get_writes_a_large_messages_part_in_bounded_memory(
    mails: dict[str, str | Path | int], tmp_path: Path
) -> None:
    from peak_memory import run_with_peak

    peaks = {}
    for tag in ("small", "big"):
        out = tmp_path / f"{tag}.bin"
        status, peaks[tag], _ = run_with_peak([
            sys.executable, "-m", "pdi", "get", "--archive", str(mails["location"]), f"{mails[f'{tag}-first']}#part=1",
            "-o", str(out)], stderr=subprocess.PIPE)
        assert status == 0
        assert hashlib.sha256(out.read_bytes()).hexdigest() == mails[f"{tag}-first-sha"]
        out.unlink()
    grown = (peaks["big"] - peaks["small"]) * 1024
    assert grown < BOUND, f"pdi get of a 61 MB message's part peaked {grown / MIB:.0f} MiB above a small one's"
