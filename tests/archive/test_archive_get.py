"""``pdi get``: generic names list every version, fragments wholly past the end, binary output and terminals.

The terminal tests run ``pdi`` as a process whose standard output is a real
pseudo-terminal (``os.openpty``), put in raw mode so the bytes that reach it
are the bytes ``pdi`` wrote.
"""

from __future__ import annotations

import datetime
import io
import os
import subprocess
import sys
import tty
import wave
from dataclasses import dataclass
from pathlib import Path

import pytest
from archive_helpers import SRC, Clock
from click.testing import CliRunner, Result
from PIL import Image

from pdi.archive import Archive, Content
from pdi.cli import cli

S = "archives.gov.us"
#: 50 characters, no line ending: char positions 0 to 50
FIFTY = b"0123456789" * 5
#: the MHTML of a one-part page (RFC 2557 §3: multipart/related, the root first)
PAGE = (
    b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
    b"--b\r\nContent-Type: text/html\r\nContent-Location: http://example.org/\r\n\r\n<p>hi</p>\r\n--b--\r\n"
)


@dataclass(frozen=True)
class Names:
    location: str
    text: str
    lines: str
    png: bytes
    picture: str
    sound: str
    page: str


def wav(frames: int, rate: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setparams((1, 2, rate, 0, "NONE", "not compressed"))
        w.writeframes(bytes(2 * frames))
    return out.getvalue()


@pytest.fixture
def names(tmp_path: Path) -> Names:
    location = str(tmp_path / "archive")
    png = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 10, 10)).save(png, format="PNG")
    with Archive.init(location) as archive:
        archive.add_series(S)
        text = str(archive.add(S, FIFTY, format="text"))
        lines = str(archive.add(S, b"one\ntwo\n", format="text"))  # two lines (counted CRLF-canonical)
        picture = str(archive.add(S, png.getvalue(), format="png"))
        sound = str(archive.add(S, wav(250, 100), format="wav"))  # 2.5 s
        page = str(archive.add(S, PAGE, format="related"))
    return Names(location, text, lines, png.getvalue(), picture, sound, page)


def get(names: Names, *argv: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["get", *argv, "--archive", names.location])
    assert result.exit_code == code, (argv, result.output, result.stderr, result.exception)
    return result


# --- generic names ------------------------------------------------------------------------------


def test_a_generic_name_lists_every_version_with_its_deposit_time_and_formats(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    clock = Clock(datetime.datetime(2026, 11, 22, 14, 30, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        archive.deposit(S, [Content(b"<p>one</p>", "html"), Content(b"one\n", "text")])
        generic = f"urn:pdi://{S}/2026/11/22/1"
        clock.now = datetime.datetime(2026, 11, 23, 9, 5, 7, tzinfo=datetime.UTC)
        archive.add_version(generic, [Content(b"two\n", "text")])
    result = CliRunner().invoke(cli, ["get", generic, "--archive", location])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"# {generic}\n"
        "# version 1, deposited 2026-11-22T14:30:00.000000Z\n"
        f"{generic}.html.1\n{generic}.text.1\n"
        "# version 2, deposited 2026-11-23T09:05:07.000000Z\n"
        f"{generic}.text.2\n"
    )
    newest = CliRunner().invoke(cli, ["get", generic, "--latest", "--archive", location])
    assert newest.stdout == f"# {generic}\n# version 2, deposited 2026-11-23T09:05:07.000000Z\n{generic}.text.2\n"
    # a format without a version is version 1, as the draft says
    assert CliRunner().invoke(cli, ["get", f"{generic}.text", "--archive", location]).stdout_bytes == b"one\n"


# --- fragments wholly past the end --------------------------------------------------------------


def test_a_fragment_wholly_past_the_end_warns_and_exits_9(names: Names) -> None:
    past = get(names, f"{names.text}#char=100,200", code=9)
    assert past.stdout_bytes == b""
    assert past.stderr == (
        f"warning: {names.text}#char=100,200 lies wholly past the end (the text has 50 characters):"
        " it selects nothing\n"
    )
    assert get(names, f"{names.text}#char=50,60", code=9).stdout_bytes == b""  # from the end on: nothing
    at_end = get(names, f"{names.text}#char=50,50")  # the empty place at the end is legal
    assert (at_end.stdout_bytes, at_end.stderr) == (b"", "")
    cut = get(names, f"{names.text}#char=45,60")  # reaches past the end: cut, as before
    assert cut.stdout_bytes == b"56789" and "reaches past the end" in cut.stderr
    assert get(names, f"{names.lines}#line=2,3", code=9).stderr.count("\n") == 1  # two lines: position 2 is the end
    assert get(names, f"{names.lines}#line=1,5").stdout_bytes == b"two\r\n"
    assert "(it has 50 bytes)" in get(names, f"{names.text}#byte=50,51", code=9).stderr
    out = Path(names.location) / "clip.wav"
    sound = get(names, f"{names.sound}#sec=3,4", "-o", str(out), code=9)
    assert "(the recording lasts 2.500 s)" in sound.stderr
    with wave.open(str(out), "rb") as clip:
        assert clip.getnframes() == 0
    get(names, f"{names.sound}#msec=2500,2500", "-o", str(out))  # the empty range at the end
    info = get(names, f"{names.text}#char=100,200", "--info", code=9)
    assert "clamped\ttrue\npast-end\ttrue\n" in info.stdout and "wholly past the end" in info.stderr


# --- binary content and terminals ---------------------------------------------------------------


def on_terminal(names: Names, *argv: str) -> tuple[int, bytes, str]:
    """Run ``pdi get`` with standard output on a pseudo-terminal: exit status, what reached it, stderr."""
    master, slave = os.openpty()
    tty.setraw(slave)  # no output processing: LF stays LF
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "pdi", "get", *argv, "--archive", names.location],
            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(SRC)),
        )
    finally:
        os.close(slave)
    shown = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO: every writer of the terminal has closed it
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    process.stderr.close()
    return process.wait(timeout=60), bytes(shown), stderr


def test_binary_content_is_not_written_to_a_terminal(names: Names) -> None:
    for name, media_type in [
        (names.picture, "image/png"),
        (f"{names.picture}#byte=0,8", "image/png"),  # a fragment of an image is not text either
        (f"{names.sound}#sec=1,2", "audio/wav"),
        (names.page, "multipart/related"),
    ]:
        code, shown, stderr = on_terminal(names, name)
        assert (code, shown) == (2, b""), name
        assert stderr.startswith(f"pdi: {name} is {media_type}, binary output") and stderr.count("\n") == 1
        assert "-o FILE" in stderr and "-o -" in stderr


def test_o_dash_writes_binary_content_to_the_terminal_anyway(names: Names, tmp_path: Path) -> None:
    assert on_terminal(names, names.picture, "-o", "-") == (0, names.png, "")
    out = tmp_path / "picture.png"
    assert on_terminal(names, names.picture, "-o", str(out)) == (0, b"", "")
    assert out.read_bytes() == names.png


def test_text_still_goes_to_a_terminal(names: Names) -> None:
    assert on_terminal(names, names.text) == (0, FIFTY, "")
    assert on_terminal(names, f"{names.lines}#line=1,2") == (0, b"two\r\n", "")
    assert on_terminal(names, f"{names.text}#byte=0,4") == (0, b"0123", "")  # octets of a text are text
    code, shown, _ = on_terminal(names, names.picture, "--info")  # a description is text
    assert code == 0 and b"media-type\timage/png\n" in shown
