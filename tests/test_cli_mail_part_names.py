"""A message's part named by its file name (PDI-GRAMMAR.md §3, e-mail: ``part=`` a file name; §1: its reserved
characters %-escaped): the refusal of one written unescaped says so in a part's words with the escape, and
``pdi get --info`` prints each part's name ready to write."""

from __future__ import annotations

import re
import urllib.parse
from email.message import EmailMessage
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pdi.cli import cli
from pdi.errors import ParseError
from pdi.identifier import PDI

S = "example.us"
MESSAGE = "urn:pdi://example.us/2026/12/01/1.rfc822.1"
_SAFE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_$!;'"


def escaped(ch: str) -> str:
    """``ch`` %-escaped by RFC 3986 §2.1, as the standard library writes it."""
    return urllib.parse.quote(ch, safe="", encoding="utf-8").replace(".", "%2E")


# not "," nor "=": a position's and a scheme's marks, each refused as such
@given(st.text(alphabet=_SAFE, min_size=1, max_size=8), st.sampled_from(".@*?+"),
       st.text(alphabet=_SAFE + ".", max_size=8))
def test_grammar_1_a_file_name_in_part_with_a_reserved_character_is_refused_with_its_escape(
    stem: str, reserved: str, rest: str
) -> None:
    text = f"{MESSAGE}#part={stem}{reserved}{rest}"
    with pytest.raises(ParseError) as refused:
        PDI.parse(text)
    at = text.index("#part=") + len("#part=") + len(stem)
    assert refused.value.offset == at
    assert refused.value.reason == (f"reserved character {reserved!r} in a part's file name (part=) must be"
                                    f" %-escaped ({escaped(reserved)})")


def test_grammar_1_a_cid_in_part_with_an_at_sign_is_refused_in_a_cids_words() -> None:
    with pytest.raises(ParseError) as refused:
        PDI.parse(f"{MESSAGE}#part=cid:a@b")
    assert refused.value.reason == "reserved character '@' in a part's cid: (part=) must be %-escaped (%40)"


@pytest.fixture
def archive(tmp_path: Path) -> str:
    location = str(tmp_path / "archive")
    assert CliRunner().invoke(cli, ["init", location]).exit_code == 0
    assert CliRunner().invoke(cli, ["series", "add", S, "--archive", location]).exit_code == 0
    return location


def test_pdi_get_info_prints_each_parts_file_name_ready_to_write_and_it_names_that_part(
    archive: str, tmp_path: Path
) -> None:
    m = EmailMessage()
    m["From"], m["To"], m["Subject"] = "a@example.org", "b@example.org", "Minutes"
    m.set_content("line one\nline two\n")
    m.add_attachment(b"item 1\nitem 2\n", maintype="text", subtype="plain", filename="schedule.txt")
    m.add_attachment(b"GIF89a", maintype="image", subtype="gif", filename="v1,final 2024.gif")
    m.add_attachment(b"dup", maintype="text", subtype="plain", filename="dup.txt")
    m.get_payload()[-1]["Content-Location"] = "schedule.txt"  # part= reads a location before a file name
    (tmp_path / "m.eml").write_bytes(bytes(m))
    added = CliRunner().invoke(cli, ["add", "-s", S, str(tmp_path / "m.eml"), "--archive", archive])
    assert added.exit_code == 0, added.output
    name = added.output.strip().splitlines()[-1]
    info = CliRunner().invoke(cli, ["get", "--info", name, "--archive", archive])
    assert info.exit_code == 0, info.output
    parts = [line for line in info.output.splitlines() if line.startswith("part\t")]
    offered = [re.search(r": #(part=\S+)$", line) for line in parts]
    # the GIF and dup.txt by their file names; schedule.txt by none: part=schedule%2Etxt is the part whose
    # Content-Location that is (read first), dup.txt's
    assert [o.group(1) if o else None for o in offered] == [None, None, "part=v1%2Cfinal%202024%2Egif",
                                                            "part=dup%2Etxt"]
    for fragment, payload in (("part=v1%2Cfinal%202024%2Egif", b"GIF89a"), ("part=dup%2Etxt", b"dup"),
                              ("part=schedule%2Etxt", b"dup")):
        got = CliRunner().invoke(cli, ["get", f"{name}#{fragment}", "-o", str(tmp_path / "out"), "--archive", archive])
        assert got.exit_code == 0, got.output
        assert (tmp_path / "out").read_bytes().replace(b"\r\n", b"\n") == payload


def test_pdi_get_help_says_a_file_names_reserved_characters_are_escaped() -> None:
    said = " ".join(CliRunner().invoke(cli, ["get", "--help"]).output.split())
    assert "#part=N (cid:ID, a file name, their reserved characters %-escaped: #part=schedule%2Etxt" in said
