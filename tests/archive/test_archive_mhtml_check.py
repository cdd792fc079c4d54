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
from pdi.errors import IntegrityError, LimitError
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


def fields(parts: int, each: int) -> bytes:
    """``parts`` parts of ``each`` header fields (short ones: ``X-N: y``)."""
    head = b"".join(b"X-%d: y\r\n" % k for k in range(each - 1))
    body = b"".join(b"--b\r\nContent-Type: text/plain\r\n" + head + b"\r\nx\r\n" for _ in range(parts))
    return (b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="b"; type="text/html"\r\n\r\n'
            + b"--b\r\n" + PAGE + body + b"--b--\r\n")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (flat(100_001), "more than 100000 body parts"),
        (nested(17), "multipart nesting deeper than 16 at offset "),
        (fields(501, 1_000), "the file has more than 500,000 header fields (the limit for one file), at offset "),
    ],
    ids=["parts", "nesting", "fields"],
)
def test_what_replay_cannot_read_is_refused_and_leaves_nothing(archive: Archive, data: bytes, reason: str) -> None:
    before = snapshot(archive)
    with pytest.raises(LimitError) as refused:
        archive.deposit(S, [Content(data, "related", source="page.mht")])
    assert str(refused.value).startswith(f"page.mht: the MHTML file is past a limit of replay's reading: {reason}")
    assert str(refused.value).endswith("; --force deposits it as declared")
    assert snapshot(archive) == before
    forced = archive.get(archive.add(S, data, format="related", force=True))
    assert forced.data == data


def test_an_aggregate_that_does_not_parse_is_a_format_check_failure(archive: Archive) -> None:
    empty = b'Content-Type: multipart/related; boundary="b"\r\n\r\n--b--\r\n'  # RFC 2046: one part at least
    before = snapshot(archive)
    with pytest.raises(IntegrityError, match=r"page\.mht: the content is not an MHTML file pdi can read: multipart/"
                                             "related has no body parts"):
        archive.deposit(S, [Content(empty, "related", source="page.mht")])
    assert snapshot(archive) == before


def test_pdi_add_of_an_mht_file_names_the_limit(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "--archive", location]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    page = tmp_path / "deep.mht"
    page.write_bytes(nested(40))
    refused = runner.invoke(cli, ["add", str(page), "-s", S, "--archive", location])
    assert refused.exit_code == 7, refused.output
    assert refused.stderr.startswith(
        f"pdi: limit exceeded: {page}: the MHTML file is past a limit of replay's reading: multipart nesting deeper"
        " than 16"
    )
    assert runner.invoke(cli, ["ls", S, "--archive", location]).stdout == ""
