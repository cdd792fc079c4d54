"""What a new user tried on the command line and was not told (a helper's trial of the web-archive, search and
backup commands): each now says what it did not do, or refuses what it would have done wrongly."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pdi.archive.store import SCHEMA_VERSION
from pdi.cli import cli

S = "trial.example.us"


def _pdi(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_index_pending_says_when_nothing_is_queued_and_goes_with_nothing_else(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    assert _pdi("init", location)[0] == 0
    assert _pdi("index", "--pending", "--archive", location) == (
        0, "", "nothing is queued: every text deposited is searched\n")
    for other in (["--watch"], ["--limit", "3"]):
        code, _, err = _pdi("index", "--pending", *other, "--archive", location)
        assert code == 2 and "--pending only lists what is queued" in err


def test_export_wacz_to_a_directory_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    assert _pdi("init", location)[0] == 0
    for target in (f"{tmp_path}/newdir/", str(tmp_path)):
        code, _, err = _pdi("export", "--wacz", target, "--archive", location)
        assert code == 2 and "--wacz names the WACZ file to write, not a directory" in err
    assert not (tmp_path / "newdir").exists()


def test_init_backup_says_when_it_backs_nothing_up(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    code, _, err = _pdi("init", location, "--backup", str(tmp_path / "bk"))
    assert code == 0 and f"not backed up to {tmp_path / 'bk'}: there is no archive yet" in err
    code, _, err = _pdi("init", location, "--backup", str(tmp_path / "bk"))
    assert code == 0 and f"it is at schema version {SCHEMA_VERSION} already, nothing to migrate (pdi backup makes one)" in err
    assert not (tmp_path / "bk").exists()


def test_a_base_url_that_is_no_absolute_http_url_is_refused_by_every_option_that_takes_one(tmp_path: Path) -> None:
    """``pdi serve --base-url notaurl`` was taken, and N2Ls then listed ``notaurl/uri-res/N2R?…``: refused before
    anything is served, naming it, as ``pdi mirror add`` and ``pdi registry add`` refuse one (urlsplit, the stdlib's
    reading, finds no http(s) scheme or no host in each)."""
    from urllib.parse import urlsplit

    archive = str(tmp_path / "archive")
    assert _pdi("init", archive)[0] == 0
    for bad in ("notaurl", "example.org", "ftp://example.org/", "http://", "/pdi/"):
        parts = urlsplit(bad)
        assert parts.scheme not in ("http", "https") or not parts.hostname  # what makes it no base URL
        for argv in (["serve", "--port", "0", "--base-url", bad], ["mirror", "sync", "--announce", bad]):
            code, out, err = _pdi(*argv, "--archive", archive)
            assert code == 2 and out == "", (argv, err)
            assert f"Invalid value for '{argv[-2]}'" in err and repr(bad) in err, (argv, err)
        code, _, err = _pdi("mirror", "add", bad, "-s", "x.example.us", "--archive", archive)
        assert code == 1 and repr(bad) in err, err
        code, _, err = _pdi("registry", "add", "x.example.us", bad, "--archive", archive)
        assert code == 1 and repr(bad) in err, err


def test_init_in_a_folder_of_other_files_refuses_naming_them_and_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "thesis"
    (folder / "chapters").mkdir(parents=True)
    (folder / "draft.docx").write_bytes(b"x")
    (folder / "notes.txt").write_bytes(b"y")
    code, out, err = _pdi("init", str(folder))
    assert (code, out) == (5, "")  # what pdi would write among other things: an immutability conflict, as export's
    assert err == (f"pdi: immutability conflict: {folder} is not empty and holds no archive (3 entries: chapters/,"
                   " draft.docx, notes.txt): pdi init makes an archive only in a new or empty folder, never among other"
                   f" files; give a new one, such as pdi init {folder / 'pdi-archive'}\n")
    assert sorted(p.name for p in folder.iterdir()) == ["chapters", "draft.docx", "notes.txt"]  # nothing written
    # by --archive (or PDI_ARCHIVE) the same
    assert _pdi("init", "--archive", str(folder))[0] == 5


def test_init_in_a_folder_of_many_files_names_the_first_five_and_counts_the_rest(tmp_path: Path) -> None:
    for n in range(8):
        (tmp_path / f"scan-{n}.tif").write_bytes(b"")
    code, _, err = _pdi("init", str(tmp_path))
    assert code == 5
    assert "(8 entries: scan-0.tif, scan-1.tif, scan-2.tif, scan-3.tif, scan-4.tif and 3 more)" in err


def test_init_makes_an_archive_in_an_empty_folder_the_top_of_a_disk_and_where_it_is_already(tmp_path: Path) -> None:
    empty, disk = tmp_path / "empty", tmp_path / "disk"
    empty.mkdir()
    (disk / "lost+found").mkdir(parents=True)  # ext4's own, at the top of a disk mounted for the archive
    for folder in (empty, disk):
        code, out, err = _pdi("init", str(folder))
        assert (code, out, err) == (0, f"archive at {folder} (schema version {SCHEMA_VERSION})\n", "")
        # an archive there already: today's answer, migrated or left as it was
        assert _pdi("init", str(folder)) == (0, f"archive at {folder} (schema version {SCHEMA_VERSION})\n",
                                            "note: the archive was there already: left as it was\n")


def _searchable(tmp_path: Path) -> str:
    from pdi.archive import Archive, Content

    location = str(tmp_path / "a")
    with Archive.init(location) as made:
        made.add_series(S)
        made.deposit(S, [Content(b"We hold these truths to be self-evident.\n", "text")])
    return location


def test_a_search_word_beginning_with_a_minus_is_refused_saying_how_to_search_for_it(tmp_path: Path) -> None:
    """``pdi search truths -self`` was ``-s elf``: a search of the series ``elf``, which found nothing, silently."""
    location = _searchable(tmp_path)
    code, out, err = _pdi("search", "truths", "-self", "--archive", location)
    assert (code, out) == (2, "")
    assert err.endswith(
        "Error: '-self' would be read as -s elf (the series 'elf'): a query has no operators, and a leading '-'"
        " excludes nothing (the word is searched as 'self'); to search for it, write the words after '--' and the"
        f" options before it: pdi search --archive {location} -- truths -self; for the series 'elf', write -s elf\n")
    code, _, err = _pdi("search", "-nothing", "--archive", location)  # -n othing: not a limit either
    assert code == 2 and "Error: '-nothing' would be read as -n othing (the limit 'othing')" in err
    assert err.endswith(f": pdi search --archive {location} -- -nothing; for the limit 'othing', write -n othing\n")
    code, _, err = _pdi("search", "--json", "truths", "-x", "--archive", location)
    assert code == 2 and "Error: '-x' is no option of pdi search: a query has no operators" in err
    assert err.endswith(f": pdi search --json --archive {location} -- truths -x\n")


def test_the_command_line_it_offers_searches_for_the_word(tmp_path: Path) -> None:
    location = _searchable(tmp_path)
    code, out, err = _pdi("search", "--archive", location, "--", "truths", "-self")
    # "truths" is chars 14-20 of the text, "self" of "self-evident" 27-31 (counted by hand)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].endswith("/1.text.1#char=14,31")
    # options as they were: the series, a limit glued to -n, and --series=
    for options in (["-s", S], ["-n5"], [f"--series={S}"], ["-n", "3"]):
        code, out, err = _pdi("search", *options, "truths", "--archive", location)
        assert (code, err) == (0, ""), options
        assert out.splitlines()[0].endswith("/1.text.1#char=14,20")


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(_WORD, min_size=0, max_size=3), dashed=_WORD, inside=st.booleans(),
       at=st.integers(min_value=0, max_value=3), json=st.booleans())
def test_whatever_the_words_the_line_offered_for_a_dashed_word_runs(
        tmp_path_factory: pytest.TempPathFactory, words: list[str], dashed: str, inside: bool, at: int,
        json: bool) -> None:
    import shlex

    location = _SEARCHABLE.get("a") or _SEARCHABLE.setdefault("a", _searchable(tmp_path_factory.mktemp("s")))
    word = f"{dashed}-x" if inside else f"-{dashed}"  # a minus inside a word is no option: searched as its parts
    assume(word not in ("-h", "-n", "-s"))  # the options themselves (the help, the limit, the series): no word
    argv = [*words[:at], word, *words[at:]]
    options = ["--json"] if json else []
    code, out, err = _pdi("search", *options, *argv, "--archive", location)
    if not word.startswith("-"):
        assert code == 0
        return
    assert (code, out) == (2, "")
    offered = shlex.split(err.rstrip("\n").rsplit(": pdi search ", 1)[1].split("; for the ", 1)[0])
    assert offered[offered.index("--") + 1:] == argv  # the words as given, in order, after the '--'
    assert _pdi("search", *offered)[0] == 0


_SEARCHABLE: dict[str, str] = {}
