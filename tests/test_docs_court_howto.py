"""The court clerk's how-to (docs/how-to/court-record.md) followed as a clerk types it: every ``sh`` block run by
bash in order, on the page's folder, and what it prints (standard output and error as a terminal interleaves them)
is what the page's ``text`` block after it shows, times of day aside.

As tests/test_docs_collection_howto.py does, the blocks run with a ``pdi`` on ``PATH`` that is this checkout's
command on a clock fixed to one GMT day, ``$PDI_USER`` the page's ``clerk``; ``pdi serve`` is this test's resolver
app, and the ``curl`` lines are asked of it. The values the page cites are checked independently of pdi: the
judgement's paragraph on its text layer as PDFium reads it, the attachment's octets as Python's ``email`` reads
the message.
"""

from __future__ import annotations

import datetime
import email
import email.policy
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from starlette.testclient import TestClient

from pdi.server import create_app

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "how-to" / "court-record.md"
SERIES = "court.example.fr"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_docs_collection_howto import PDI  # noqa: E402  (the same clock-fixed command)

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z")


def _blocks() -> list[tuple[str, str]]:
    """The page's fenced blocks in order: (language, body)."""
    return re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)


def test_the_court_record_pages_steps_print_what_it_shows(tmp_path: Path) -> None:
    """The judgement deposited and its paragraph 3 named and got back; the e-mail exhibit named by its Message-ID,
    its attachment part 1; the attachment deposited alone, stated its source, searched and its line got back; the
    link answers 200 and the paragraph; ``pdi verify`` finds no problem; the mistaken deposit withdrawn, and
    getting it says gone (exit 11) with the reason, and ``pdi ls --long`` says it withdrawn, the others live; its
    tombstone (410) says so by both its names."""
    import pypdfium2

    today = datetime.datetime.now(datetime.UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    shown_day = re.search(rf"urn:pdi://{re.escape(SERIES)}/(\d{{4}}/\d\d/\d\d)/", PAGE.read_text("utf-8"))
    assert shown_day is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pdi").write_text(PDI.format(python=sys.executable), "utf-8")
    (bin_dir / "pdi").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PDI_DOCS_NOON": today.isoformat(),
           "PDI_USER": "clerk",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("PDI_ARCHIVE", None)
    folder = tmp_path / "court"

    def made_today(text: str) -> str:
        text = text.replace(shown_day.group(1), today.strftime("%Y/%m/%d"))
        return text.replace("/tmp/court", shlex.quote(str(folder)))

    blocks = [(language, made_today(body)) for language, body in _blocks()]
    shells = [(i, body) for i, (language, body) in enumerate(blocks) if language == "sh"]
    assert [body.split()[0] for _, body in shells] == ["mkdir", "pdi", "pdi", "pdi", "pdi", "pdi", "pdi", "pdi",
                                                       "pdi", "curl", "pdi", "pdi", "pdi", "pdi"], shells
    asked: list[str] = []
    for i, body in shells:
        if body.startswith("pdi serve"):
            continue  # this test's resolver
        if body.startswith("curl"):
            asked = re.findall(r"'http://127\.0\.0\.1:8000(/[^']+)'", body)
            continue
        # the first block is typed in the clone, the others in the folder it makes
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=ROOT if i == 0 else folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, check=False)
        assert done.returncode == 0, (body, done.stdout)
        if i == 0:
            assert done.stdout == "", done.stdout
            continue
        following = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
        assert following[0] == "text", body
        ended = done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"  # the prompt on a line of its own
        assert TIME.sub("TIME", ended) == TIME.sub("TIME", following[1]), (body, done.stdout)

    day = f"{today:%Y/%m/%d}"
    judgement, exhibit = f"urn:pdi://{SERIES}/{day}/1.pdf.1", f"urn:pdi://{SERIES}/{day}/mid:exhibit-a%2E1%40smith%2Eexample.rfc822.1"
    assert len(asked) == 2, asked
    with TestClient(create_app(str(folder / "pdi-archive"))) as client:
        view, passage = client.get(asked[0]), client.get(asked[1])
        held = client.get(f"/uri-res/N2R?{judgement}")
        assert held.status_code == 200 and held.content == (ROOT / "examples" / "judgement.pdf").read_bytes()
        # the exhibit's page (its link in the page, %25 for each % of the name) names the attachment
        link = re.search(r"`…(/view\?pdi=[^`]+rfc822\.1)`", PAGE.read_text("utf-8"))
        assert link is not None
        page = client.get(made_today(link.group(1)))
        assert page.status_code == 200 and "schedule.txt" in page.text and "Delivery schedule" in page.text
        # the mistaken deposit's tombstone, by its versioned name and its generic one
        for gone in (f"urn:pdi://{SERIES}/{day}/3.html.1", f"urn:pdi://{SERIES}/{day}/3"):
            tomb = client.get("/view", params={"pdi": gone}, headers={"Accept": "text/html"})
            assert tomb.status_code == 410 and "deposited by mistake: the judgement is 1.pdf.1" in tomb.text
    # pdi ls --long: every name the page minted, in listing order (serials, then the Message-ID), the one withdrawn so
    listed = blocks[[i for i, _ in shells][13] + 1][1]
    assert listed == "".join(f"urn:pdi://{SERIES}/{day}/{n}\t{state}\n" for n, state in (
        ("1.pdf.1", "live"), ("2.text.1", "live"), ("3.html.1", "withdrawn"),
        ("mid:exhibit-a%2E1%40smith%2Eexample.rfc822.1", "live"))), listed
    shown = blocks[[i for i, _ in shells][9] + 1][1]
    assert f"{view.status_code}\n{passage.text}\n".replace("\r\n", "\n") == shown

    # paragraph 3 stands at 332 to the end, 416, of the judgement's text as PDFium reads it (lines ending CR LF)
    text = pypdfium2.PdfDocument(ROOT / "examples" / "judgement.pdf")[0].get_textpage().get_text_range()
    paragraph = "3. The defendant shall pay the claimant the sum of 12,000 euros\r\nwithin thirty days."
    assert text.index(paragraph) == 332 and len(text) == 416 and text.index("defendant shall pay") == 339
    assert passage.text == paragraph
    # the attachment is part 1 of the message as Python's email reads it, and the file deposited holds its octets
    message = email.message_from_bytes((ROOT / "examples" / "exhibit-a.eml").read_bytes(), policy=email.policy.default)
    parts = [p for p in message.walk() if not p.is_multipart()]
    assert parts[1].get_filename() == "schedule.txt"
    assert (folder / "schedule.txt").read_bytes() == parts[1].get_payload(decode=True)
    assert parts[1].get_payload(decode=True).decode().splitlines()[2] == "Item 1: 400 chairs, to be delivered by 15 April 2026."
    assert exhibit in PAGE.read_text("utf-8").replace(shown_day.group(1), day)
