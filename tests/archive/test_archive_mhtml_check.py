"""MHTML deposits (format ``related``) are read at deposit as replay reads them.

``pdi serve``'s replay parses a capture of up to 64 MiB within
:class:`pdi.mhtml.limits.Limits` (100,000 body parts, nesting 16 deep, …); a
capture beyond them could be deposited but never shown. The files here are
written by hand per RFC 2046 §5.1.1 (a boundary line ``--b``, a closing
``--b--``) and RFC 2557 (``multipart/related``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from archive_helpers import snapshot
from click.testing import CliRunner

from pdi.archive import Archive, Content
from pdi.cli import cli
from pdi.errors import IntegrityError
from pdi.mhtml import parse

S = "oma.eop.gov.us"
PAGE = b"Content-Type: text/html\r\nContent-Location: http://example.org/\r\n\r\n<p>hi</p>\r\n"


def flat(parts: int) -> bytes:
    """A page and ``parts - 1`` small text parts in one ``multipart/related``."""
    body = b"".join(
        b"--b\r\nContent-Type: text/plain\r\nContent-Location: http://example.org/%d.txt\r\n\r\nx\r\n" % i
        for i in range(parts - 1)
    )
    return (
        b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
        + b"--b\r\n" + PAGE + body + b"--b--\r\n"
    )


def nested(depth: int) -> bytes:
    """``depth`` multiparts, each the only part of the one outside it, the page innermost."""
    data = PAGE
    for level in reversed(range(depth)):
        kind = b"multipart/related" if level == 0 else b"multipart/mixed"
        data = b'Content-Type: %s; boundary="b%d"\r\n\r\n--b%d\r\n%s--b%d--\r\n' % (kind, level, level, data, level)
    return b"MIME-Version: 1.0\r\n" + data


def test_what_replay_can_read_is_deposited_as_it_came(archive: Archive) -> None:
    for data in (flat(100_000), nested(16)):
        assert parse(data).root.data == b"<p>hi</p>"
        got = archive.get(archive.add(S, data, format="related"))
        assert got.data == data and got.media_type == "multipart/related"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (flat(100_001), "more than 100000 body parts"),
        (nested(17), "multipart nesting deeper than 16 at offset "),
    ],
    ids=["parts", "nesting"],
)
def test_what_replay_cannot_read_is_refused_and_leaves_nothing(archive: Archive, data: bytes, reason: str) -> None:
    before = snapshot(archive)
    with pytest.raises(IntegrityError) as refused:
        archive.deposit(S, [Content(data, "related", source="page.mht")])
    assert str(refused.value).startswith(f"page.mht: the content is not an MHTML file pdi can read: {reason}")
    assert str(refused.value).endswith("; --force deposits it as declared")
    assert snapshot(archive) == before
    forced = archive.get(archive.add(S, data, format="related", force=True))
    assert forced.data == data


def test_pdi_add_of_an_mht_file_names_the_limit(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--archive", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    page = tmp_path / "deep.mht"
    page.write_bytes(nested(40))
    refused = runner.invoke(cli, ["add", str(page), "-s", S, "--archive", location])
    assert refused.exit_code == 3, refused.output
    assert refused.stderr.startswith(
        f"pdi: format check failed: {page}: the content is not an MHTML file pdi can read: multipart nesting deeper than 16"
    )
    assert runner.invoke(cli, ["ls", S, "--archive", location]).stdout == ""
