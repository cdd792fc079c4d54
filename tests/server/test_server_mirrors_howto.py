"""The mirrors how-to (docs/how-to/mirrors.md) followed as written, between two ``pdi serve`` processes on
loopback: every ``pdi`` line of its ``sh`` blocks typed on the archive its comment names (A, the origin; B,
the mirror), and what each block prints is the ``text`` block after it.

A holds the page's two deposits: ``report.txt`` (``Quarterly report.`` and a line ending, 18 octets) and
``scan.bin`` (100,000 octets: a blob file), so a sync brings 100,018 octets. The page's addresses
(``https://a.example.org``, ``https://b.example.org``) are the two servers', its day today's and its keys the
ones ``pdi keys init`` made here; the text's first octet made ``P`` (it was ``Q``) by the page's own ``printf |
dd`` line, run by ``sh`` in B's archive, is the damage ``pdi verify --repair`` finds and mends from A.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from server_helpers import start_serve, stop, wait_answering

from pdi.cli import cli

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "mirrors.md"
S = "oma.eop.gov.us"
REPORT = b"Quarterly report.\n"
SCAN = bytes(range(256)) * 390 + bytes(160)  # 100,000 octets


@contextmanager
def serving(location: Path) -> Iterator[str]:
    process, port, _ = start_serve(location, "--replay-port", "0", start_new_session=True, drain=True,
                                   env=dict(os.environ))
    try:
        wait_answering(process, f"http://127.0.0.1:{port}/api/series")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def _blocks(text: str) -> list[tuple[str, str]]:
    """The page's fenced blocks in order: (language, body)."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _run(runner: CliRunner, words: list[str], archive: Path) -> tuple[int, str, str]:
    """``pdi WORDS --archive ARCHIVE``: its exit status, standard output, and both outputs as a terminal shows
    them."""
    result = runner.invoke(cli, [*words[1:], "--archive", str(archive)])
    return result.exit_code, result.stdout, result.output


def test_the_mirrors_page_shows_what_its_commands_print(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_gmt_day: datetime.datetime
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE", raising=False)
    monkeypatch.delenv("PDI_SIGNING_KEY", raising=False)
    runner = CliRunner()
    a, b = tmp_path / "a", tmp_path / "b"
    # the page's first paragraphs say how A and B are made: the two files by the shell's lines they give (found in a
    # new user's trial: the page once gave only the text's size, where its repair's path held its SHA-256's first
    # two digits, 7a), A's lines before its `pdi serve`, then B's `pdi init`; each its own `pdi keys init`
    intro = PAGE.read_text("utf-8").split("\n", 1)[1].split("## ", 1)[0]  # after the title
    made = [line for line in re.findall(r"`((?:printf|head) [^`]+)`", " ".join(intro.split()))]
    assert len(made) == 2, made
    subprocess.run(["sh", "-ec", "\n".join(made)], cwd=tmp_path, check=True, timeout=30)
    assert (tmp_path / "report.txt").read_bytes() == REPORT
    assert (tmp_path / "scan.bin").stat().st_size == len(SCAN)
    typed = [" ".join(line.split()) for line in re.findall(r"`(pdi [^`]+)`", intro)]
    assert typed[:6] == ["pdi init", f"pdi series add {S}", f"pdi add -s {S} report.txt scan.bin", "pdi serve",
                         "pdi init", "pdi keys init"], typed
    for line, side in [*((line, a) for line in typed[:3]), (typed[4], b), (typed[5], a), (typed[5], b)]:
        result = runner.invoke(cli, [*shlex.split(line)[1:], "--archive", str(side)])
        assert result.exit_code == 0, (line, result.output)
    keys = {}
    for side in (a, b):
        shown = runner.invoke(cli, ["keys", "show", "--archive", str(side)]).stdout.splitlines()
        keys[side] = (shown[2].split("\t")[1], shown[1].split("\t")[1])  # kid, x
    text = PAGE.read_text("utf-8")
    shown_keys = re.findall(r"^key\t(\S+)\tx=(\S+)$", text, flags=re.MULTILINE)
    assert len(shown_keys) == 2, shown_keys
    day = one_gmt_day.strftime("%Y/%m/%d")
    etc = tmp_path / "etc"
    etc.mkdir()
    with serving(a) as a_url, serving(b) as b_url:
        page = re.sub(r"/\d{4}/\d\d/\d\d/", f"/{day}/", text)
        for (kid, x), side in zip(shown_keys, (a, b), strict=True):
            page = page.replace(kid, keys[side][0]).replace(x, keys[side][1])
        page = page.replace("https://a.example.org", a_url).replace("/etc/pdi/", f"{etc}/")
        announced = "--announce https://b.example.org"  # a public name A records as said, never asked here
        page = page.replace(announced, "ANNOUNCED").replace("https://b.example.org", b_url)
        page = page.replace("ANNOUNCED", announced)
        blocks = _blocks(page)
        printed: list[str] = []
        side = b
        for i, (language, body) in enumerate(blocks):
            if language != "sh":
                continue
            out = ""
            shell: list[str] = []  # the block's other lines (the repair's damage), run by sh before the next pdi line
            for line in [*body.replace("\\\n", " ").splitlines(), ""]:
                said = re.search(r"#.*\((A|B)\)", line)
                if said:
                    side = a if said.group(1) == "A" else b
                first = (shlex.split(line, comments=True) or [""])[0]
                if first not in ("", "pdi", "curl", "install"):
                    shell.append(line)
                    continue
                if shell:  # the page's own commands, in B's archive: $PDI_ARCHIVE names it
                    done = subprocess.run(["sh", "-ec", "\n".join(shell)], cwd=tmp_path, capture_output=True,
                                          env={**os.environ, "PDI_ARCHIVE": str(side)}, check=False, timeout=30)
                    assert done.returncode == 0, (shell, done.stderr)
                    shell = []
                if line.startswith("curl "):
                    [url] = re.findall(r"'([^']+)'", line)
                    out += httpx.get(url).text.replace("\r\n", "\n")  # text/uri-list lines end CRLF (RFC 2483)
                    continue
                if line.startswith("install "):
                    source, target = shlex.split(line, comments=True)[-2:]
                    Path(target).write_bytes(Path(source).read_bytes())
                    Path(target).chmod(0o600)
                    continue
                words = shlex.split(line, comments=True)
                if not words or words[0] != "pdi":
                    continue
                redirected = None
                if ">" in words:
                    redirected = words[words.index(">") + 1]
                    words = words[: words.index(">")]
                code, stdout, output = _run(runner, words, side)
                assert code == 0, (line, output)
                if redirected:
                    (tmp_path / redirected).write_text(stdout)
                else:
                    out += output
            following = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
            printed.append(out)
            if following[0] == "text":
                assert out == following[1], out
        # the repair's first line: the text's octets as they now are, Q become P
        altered = hashlib.sha256(b"P" + REPORT[1:]).hexdigest()
        assert f"SHA-256 is now {altered} (chunk 0, octets 0 to 17)" in page
        assert printed[-1].startswith(f"announced\t{S}\tto {a_url}\tnew\n"), printed[-1]
        assert f"`announced\t{S}\tto {a_url}\tnew`" in page
        listed = runner.invoke(cli, ["mirror", "ls", "--archive", str(b)]).stdout
        assert f"token from the file {etc}/a-token" in listed, listed
        assert runner.invoke(cli, ["verify", "--archive", str(b)]).stdout.endswith(": 0 problems\n")
        # docs/how-to/signatures.md: another resolver's manifest, with its key, checked on its mirror (B), which holds
        # the copies, ends as the file's check does
        signatures = (ROOT / "docs" / "how-to" / "signatures.md").read_text("utf-8")
        [typed] = re.findall(r"^pdi verify --signatures --key .*?\n.*?$", signatures, flags=re.MULTILINE)
        words = shlex.split(typed.replace("\\\n", " ").replace("https://resolver.example.org", a_url), comments=True)
        code, stdout, output = _run(runner, words, b)
        assert (code, stdout) == (0, "checked 1 manifest listing 2 names: 0 problems\n"), output
        assert "third ends as the file's check does: `checked 1\nmanifest listing 2 names: 0 problems`" in signatures
