"""`pdi capture URL --series S` of a URL whose capture of the day was withdrawn (pdi.capture.deposit).

docs/how-to/write-over-http.md: a withdrawal takes a version, or a whole document, out of service for good, and
its name resolves to its tombstone. docs/explanation/name.md: other bytes are the document's next version (as
``pdi version`` deposits them); the bytes a withdrawn latest version holds are refused naming that version and its
withdrawal (exit 5), never answered ``unchanged`` with its name.
"""

from __future__ import annotations

import datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from click.testing import CliRunner

from pdi.cli import cli
from pdi.identifier import PDI

S = "web.example.us"


class Handler(BaseHTTPRequestHandler):
    """``/page.html``: whatever :attr:`body` holds when it is asked."""

    body = b"<p>first edition</p>"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        body = Handler.body if self.path == "/page.html" else b"not here"
        self.send_response(200 if self.path == "/page.html" else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _run(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, list(args))
    return done.exit_code, done.stdout, done.stderr


def test_a_capture_after_its_version_was_withdrawn_is_the_next_version_unless_it_holds_the_same_bytes(
    server: str, tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    archive = ["--archive", str(tmp_path / "archive")]
    assert _run("init", *archive)[0] == 0 and _run("series", "add", S, *archive)[0] == 0
    url = f"{server}/page.html"
    capture = ["capture", url, "--allow-private", "--series", S, *archive]
    name = PDI.build(series=S, date=one_gmt_day.date(), foreign_id=url, format="related", version=1)
    Handler.body = b"<p>first edition</p>"
    assert _run(*capture)[:2] == (0, f"{name}\n")
    assert _run("withdraw", str(name), "--reason", "libel, by order", *archive)[0] == 0
    # the page changed: its next version, which resolves, beside the tombstone of the first
    Handler.body = b"<p>corrected edition</p>"
    status, out, err = _run(*capture)
    assert (status, out) == (0, f"{name.with_version(2)}\n"), err
    status, out, err = _run("get", str(name.with_version(2)), *archive)
    assert status == 0 and "<p>corrected edition</p>" in out, err
    assert _run("get", str(name), *archive)[0] == 11
    # the page as the withdrawn version 2 holds it: refused, naming it and its withdrawal, nothing stored
    assert _run("withdraw", str(name.with_version(2)), "--reason", "still libel", *archive)[0] == 0
    status, out, err = _run(*capture)
    assert status == 5 and out == "", (status, out, err)
    assert str(name.with_version(2)) in err and "withdrawn" in err and "still libel" in err, err
    # the hint is pdi capture's own (its --force, as its unchanged note says it), not another command's
    assert err.rstrip().endswith("(--force deposits it as a new version)") and "pdi version" not in err, err
    assert _run("ls", str(name).rsplit(".", 2)[0], *archive)[1].count("related.") == 2
    status, out, err = _run(*capture, "--force")
    assert (status, out) == (0, f"{name.with_version(3)}\n"), err
    status, out, err = _run("get", str(name.with_version(3)), *archive)
    assert status == 0 and "<p>corrected edition</p>" in out, err


def test_a_capture_of_a_url_whose_document_of_the_day_was_withdrawn_whole_is_refused_naming_it(
    server: str, tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    archive = ["--archive", str(tmp_path / "archive")]
    assert _run("init", *archive)[0] == 0 and _run("series", "add", S, *archive)[0] == 0
    url = f"{server}/page.html"
    capture = ["capture", url, "--allow-private", "--series", S, *archive]
    generic = str(PDI.build(series=S, date=one_gmt_day.date(), foreign_id=url, format="related")).rsplit(".", 2)[0]
    Handler.body = b"<p>first edition</p>"
    assert _run(*capture)[0] == 0
    assert _run("withdraw", generic, "--reason", "the whole page, by order", *archive)[0] == 0
    Handler.body = b"<p>corrected edition</p>"
    status, out, err = _run(*capture)
    # exit 11 (docs/reference/exit-codes.md: gone, a withdrawn name resolves to its tombstone)
    assert status == 11 and out == "", (status, out, err)
    assert (f"{generic}:" in err or f"{generic} " in err) and "withdrawn" in err and "the whole page, by order" in err, err
    assert _run("ls", generic, *archive)[1].count("related.") == 1
