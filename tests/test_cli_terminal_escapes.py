"""What a stranger wrote reaches the operator's terminal escaped, never as control characters that drive it.

A statement's value (a bag's bag-info.txt, a WARC's headers, a curator's
HTTP request), a withdrawal's reason, who wrote (``$PDI_USER``, a token's
name): each is printed by ``pdi meta`` or ``pdi audit`` on one line, every
ESC, BEL, CR, bidirectional override and line separator shown as Python
writes it in a string literal (``\\x1b``, ``\\u202e``), while ``--json``
keeps the exact text. Each command runs as an operator runs it, in a process
of its own whose output is a pipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi._wording import printable
from pdi.cli import one_line

SRC = Path(__file__).resolve().parents[1] / "src"
S = "example.ac.gb"
#: An OSC that sets the window's title, a CSI that clears the screen, a CR that writes over the line, a right-to-left
#: override, a line separator, NEL and a tab: nothing a terminal shows as what it is.
HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J\rOVER\u202egnp.exe\u2028next\x85line\tcol"
#: The same as Python's unicode_escape writes each control character (a tab too: it would make a column).
SHOWN = "evil\\x1b]0;pwned\\x07\\x1b[2J\\rOVER\\u202egnp.exe\\u2028next\\x85line\\tcol"


#: Unicode's Bidi_Control property (PropList.txt, Unicode 15): ALM, LRM, RLM, LRE…RLO, LRI…PDI.
BIDI_CONTROL = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def drives_a_terminal(ch: str) -> bool:
    """Whether ``ch`` must not reach a terminal as it is: a control (C0, DEL, C1), a line or paragraph separator,
    a bidirectional control, or a lone surrogate (no character; not writable as UTF-8)."""
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs") or ch in BIDI_CONTROL


def pdi(*args: str, archive: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``pdi ARGS`` on ``archive``, its output a pipe (text: UTF-8, no newline translation)."""
    return subprocess.run(
        [sys.executable, "-m", "pdi", *args], capture_output=True, encoding="utf-8", errors="strict",
        env={**os.environ, "PYTHONPATH": str(SRC), "PDI_ARCHIVE": str(archive), **env}, check=False, timeout=120,
    )


def controls(text: str) -> list[str]:
    """The characters of ``text`` that are not printable (Python's str.isprintable), but for the lines' ends and
    the columns' tabs."""
    return [ch for ch in text if not ch.isprintable() and ch not in "\n\t"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """An archive holding one text; its name."""
    where = tmp_path_factory.mktemp("escapes")
    location = where / "archive"
    assert pdi("init", str(location), archive=location).returncode == 0
    assert pdi("series", "add", S, archive=location).returncode == 0
    text = where / "a.txt"
    text.write_bytes(b"hello\r\n")
    added = pdi("add", str(text), "--series", S, archive=location)
    assert added.returncode == 0, added.stderr
    return location, added.stdout.strip()


def test_meta_shows_a_hostile_value_escaped_on_one_line(archive: tuple[Path, str]) -> None:
    location, name = archive
    stated = pdi("meta", name, f"title={HOSTILE}", archive=location, PDI_USER="eve\x1b[2J")
    assert stated.returncode == 0, stated.stderr
    assert controls(stated.stderr) == []
    assert f"title={SHOWN}" in stated.stderr
    assert "(by eve\\x1b[2J at " in stated.stderr
    shown = pdi("meta", name, archive=location)
    assert shown.returncode == 0, shown.stderr
    assert controls(shown.stdout) == []
    assert f"title\t{SHOWN}\n" in shown.stdout
    history = pdi("meta", "--history", name, archive=location)
    assert controls(history.stdout) == []
    assert history.stdout.endswith(f"\teve\\x1b[2J\ttitle\t{SHOWN}\n")



def test_audit_shows_a_hostile_reason_and_writer_escaped_and_its_json_keeps_them(
    archive: tuple[Path, str],
) -> None:
    location, name = archive
    withdrawn = pdi("withdraw", name, "--reason", HOSTILE, archive=location, PDI_USER="mallory\u202e")
    assert withdrawn.returncode == 0, withdrawn.stderr
    assert controls(withdrawn.stdout) == []
    assert withdrawn.stdout.rstrip("\n").endswith(f": {SHOWN}")
    again = pdi("withdraw", name, "--reason", "twice", archive=location)
    assert controls(again.stdout) == []
    assert SHOWN in again.stdout
    audit = pdi("audit", archive=location)
    assert audit.returncode == 0, audit.stderr
    assert controls(audit.stdout) == []
    line = audit.stdout.splitlines()[-1].split("\t")
    assert line[2] == "mallory\\u202e"
    assert line[-2].endswith(SHOWN)
    exact = json.loads(pdi("audit", "--json", archive=location).stdout)[-1]
    assert (exact["who"], exact["detail"].endswith(HOSTILE)) == ("mallory\u202e", True)


def test_get_info_shows_an_sgml_documents_public_identifier_escaped(
    archive: tuple[Path, str], tmp_path: Path,
) -> None:
    """The public identifier an SGML document declares is the document's own words: `pdi get --info` names it."""
    location, _ = archive
    sgml = tmp_path / "e.sgml"
    sgml.write_bytes(b'<!DOCTYPE doc PUBLIC "-//Evil\x1b]0;pwned\x07Corp//DTD X//EN\x1b[2J">\n<doc><p>hi</doc>\n')
    added = pdi("add", str(sgml), "--series", S, archive=location)
    assert added.returncode == 0, added.stderr
    info = pdi("get", "--info", added.stdout.strip(), archive=location)
    assert info.returncode == 0, info.stderr
    assert controls(info.stdout) == []
    parse = next(line for line in info.stdout.splitlines() if line.startswith("sgml-parse\t"))
    assert "-//Evil\\x1b]0;pwned\\x07Corp//DTD X//EN\\x1b[2J" in parse


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_what_is_shown_holds_nothing_that_drives_a_terminal_and_keeps_the_rest(text: str) -> None:
    for shown in (printable(text), one_line(text)):
        assert not any(drives_a_terminal(ch) for ch in shown)
        shown.encode("utf-8")  # raises on a lone surrogate: escaped, it no longer stops the line being written
        kept = [ch for ch in text if not drives_a_terminal(ch)]
        assert [ch for ch in shown if ord(ch) > 0x7F] == [ch for ch in kept if ord(ch) > 0x7F]
    if not any(drives_a_terminal(ch) for ch in text):
        assert printable(text) == one_line(text) == text


@pytest.mark.parametrize(("text", "shown"), [
    ("a\u2028b\u2029c\x85d", "a\\u2028b\\u2029c\\x85d"),  # the separators a log viewer breaks lines at
    ("\u200fabc\u061c\u200e", "\\u200fabc\\u061c\\u200e"),  # the bidirectional marks
    ("\ud83d", "\\ud83d"),  # half of a surrogate pair, as a name read with surrogateescape may hold
])
def test_separators_marks_and_lone_surrogates_are_shown_escaped(text: str, shown: str) -> None:
    assert printable(text) == one_line(text) == shown


def test_search_shows_an_emoji_sequence_and_a_persian_word_as_they_are(
    archive: tuple[Path, str], tmp_path: Path,
) -> None:
    """A zero-width joiner holds an emoji family together and a non-joiner a Persian word: neither drives a
    terminal, so a snippet shows them as what they are, not as \\u200d; an ideographic space stays a space."""
    location, _ = archive
    family, persian = "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\u0646\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    text = tmp_path / "j.txt"
    text.write_text(f"\u6771\u4eac\u3000\u5927\u962a family {family} {persian}\n", encoding="utf-8")
    assert pdi("add", str(text), "--series", S, archive=location).returncode == 0
    found = pdi("search", "family", archive=location)
    assert found.returncode == 0, found.stderr
    snippet = found.stdout.splitlines()[1]
    assert f"[family] {family} {persian}" in snippet


def test_cite_shows_the_quotation_escaped_and_its_json_keeps_it(archive: tuple[Path, str], tmp_path: Path) -> None:
    """The quotation is the cited document's text: in JSON's quotes a right-to-left override, a line separator and
    an 8-bit CSI (U+009B) are still themselves (JSON escapes only C0), so the line shows them escaped too."""
    location, _ = archive
    text = tmp_path / "q.txt"
    text.write_text("ab\u202ecd\u2028ef\x9b2Jgh\n", encoding="utf-8")
    name = pdi("add", str(text), "--series", S, archive=location).stdout.strip()
    citation = f"{name}@0={name}#char=0,11"
    cited = pdi("cite", citation, archive=location)
    assert cited.returncode == 0, cited.stderr
    assert controls(cited.stdout) == []
    assert 'quote\t"ab\\u202ecd\\u2028ef\\x9b2J"\n' in cited.stdout
    exact = json.loads(pdi("cite", "--json", citation, archive=location).stdout)
    assert exact["quote"] == "ab\u202ecd\u2028ef\x9b2J"


def test_verify_shows_a_hostile_manifests_name_and_problem_escaped(tmp_path: Path) -> None:
    """``pdi verify`` prints each problem as kind, name and detail: a manifest file named with an OSC that sets the
    window's title (a name a stranger's archive may have handed over) is shown escaped, the columns on one line."""
    location = tmp_path / "archive"
    assert pdi("init", str(location), archive=location).returncode == 0
    assert pdi("keys", "init", archive=location).returncode == 0
    hostile = tmp_path / "m\x1b]0;pwned\x07\u202e.jws"
    hostile.write_text("eyJhbGciOiJFZERTQSJ9.\x1b[2Jevil.sig\n", encoding="utf-8")
    checked = pdi("verify", "--signatures", str(hostile), archive=location)
    assert checked.returncode == 3
    assert controls(checked.stdout) == []
    shown = str(tmp_path) + "/m\\x1b]0;pwned\\x07\\u202e.jws:1"
    # the JWS's middle part, its payload, is not base64url at its first character (RFC 7515 §7.1)
    assert f"signature\t{shown}\tthe JWS payload is not unpadded base64url (rule base64url, offset 0)\n" in checked.stdout
