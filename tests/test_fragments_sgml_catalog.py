"""An archive's own SGML DTDs (pdi.archive.sgml_dtds, pdi sgml): a custom DTD with omitted tags, read as onsgmls reads
it by hand with the same catalog; a document's system identifier kept inside the allowed folders; the folder kept
for good (add-only, backed up, restored); and `pdi get --info`'s sgml-parse line for every SGML document."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive.sgml_dtds import add_dtd, catalog_entries, dtd_files, public_identifier
from pdi.cli import cli
from pdi.errors import ImmutabilityError, ParseError, StoreError
from pdi.fragments import build_index, evaluate
from pdi.fragments.markup.sgml import SgmlCatalog, onsgmls_path, read_sgml
from pdi.fragments.text.lines import to_crlf

assert onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

PUBLIC = "-//ACME//DTD Filing//EN"
# A court's DTD: CAPTION and PARA end tags may be omitted (- O), BODY's start and end tags both (O O): ISO 8879 §11.2.2
FILING_DTD = """<!-- ACME court filings -->
<!ELEMENT filing  - - (caption, body)>
<!ELEMENT caption - O (#PCDATA)>
<!ELEMENT body    O O (para+)>
<!ELEMENT para    - O (#PCDATA | cite)*>
<!ELEMENT cite    - - (#PCDATA)>
<!ATTLIST filing court CDATA #IMPLIED>
"""
FILING = f"""<!DOCTYPE filing PUBLIC "{PUBLIC}">
<filing court="9th">
<caption>Acme v. Roadrunner
<para>First <cite>one</cite> para
<para>Second
</filing>
"""


def _folder(root: Path) -> Path:
    folder = root / "sgml"
    folder.mkdir()
    (folder / "filing.dtd").write_text(FILING_DTD, encoding="ascii")
    (folder / "catalog").write_text(f'PUBLIC "{PUBLIC}" "filing.dtd"\n', encoding="ascii")
    return folder


def _by_hand(document: Path, catalog: Path | None) -> tuple[list[tuple[str, int]], int]:
    """Each element onsgmls reports (its name and depth, from its ESIS) and its error count, run by hand with
    ``catalog`` (``-c``) and nothing else of pdi's: the oracle."""
    command = ["onsgmls", "-E0"] + (["-c", str(catalog)] if catalog else []) + [str(document)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False,
                         env={"PATH": os.environ["PATH"], "SGML_CATALOG_FILES": "/etc/sgml/catalog"})
    elements, depth = [], 0
    for line in run.stdout.splitlines():
        if line.startswith("("):
            elements.append((line[1:], depth))
            depth += 1
        elif line.startswith(")"):
            depth -= 1
    return elements, sum(":E:" in line for line in run.stderr.splitlines())


def _depths(elements: list[tuple[str, int, int]]) -> list[tuple[str, int]]:
    """Each element's name and depth, told from the extents pdi gives them (how many earlier ones hold it)."""
    return [(name, sum(1 for other in elements[:i] if other[1] <= start and end <= other[2] and other[2] > start))
            for i, (name, start, end) in enumerate(elements)]


def test_a_custom_dtd_with_omitted_tags_reads_as_onsgmls_reads_it_with_the_same_catalog(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    document = tmp_path / "filing.sgml"
    document.write_text(FILING, encoding="ascii")
    expected, errors = _by_hand(document, folder / "catalog")
    assert errors == 0
    assert [name for name, _ in expected] == ["FILING", "CAPTION", "BODY", "PARA", "CITE", "PARA"]  # BODY implied
    text = to_crlf(FILING)
    reading = read_sgml(text, catalog=SgmlCatalog(str(folder)))
    assert reading.dtd_found and reading.errors == 0
    found = [(e.name, e.start, e.end) for e in reading.elements]
    assert _depths(found) == expected

    def cut(number: int) -> str:
        element = reading.elements[number]
        return text[element.start : element.end]

    # worked out from the rules of docs/reference/fragments.md: an omitted end tag ends where the markup that made
    # the parser close it begins; an implied start tag starts where what made the parser imply it begins
    assert cut(1) == "<caption>Acme v. Roadrunner\r\n"
    assert cut(2) == "<para>First <cite>one</cite> para\r\n<para>Second\r\n"
    assert cut(3) == "<para>First <cite>one</cite> para\r\n"
    assert cut(5) == "<para>Second\r\n"
    assert cut(0) == text[text.index("<filing") : text.index("</filing>") + len("</filing>")]

    # without the archive's catalog onsgmls finds no DTD, by hand as in pdi: no omitted tag is inferred
    bare, bare_errors = _by_hand(document, None)
    without = read_sgml(text)
    assert not without.dtd_found and without.errors == bare_errors > 0
    assert _depths([(e.name, e.start, e.end) for e in without.elements]) == bare
    assert [name for name, _ in bare] == ["FILING", "CAPTION", "PARA", "CITE", "PARA"]


def test_elt_with_no_index_reads_the_archive_catalog_as_the_deposit_did(tmp_path: Path) -> None:
    catalog = SgmlCatalog(str(_folder(tmp_path)))
    data = FILING.encode()
    index = build_index(data, media_type="text/sgml", charset="us-ascii", sgml_catalog=catalog)
    with_index = evaluate("elt", (3, 3), data, media_type="text/sgml", charset="us-ascii", index=index)
    parsed_now = evaluate("elt", (3, 3), data, media_type="text/sgml", charset="us-ascii", sgml_catalog=catalog)
    assert with_index.data == parsed_now.data == b"<para>First <cite>one</cite> para\r\n"
    without = evaluate("elt", (3, 3), data, media_type="text/sgml", charset="us-ascii")
    assert without.data != with_index.data  # (the system's catalogs alone: PARA is the third element, not BODY)


@pytest.mark.parametrize("system", [
    "{root}/secret.dtd", "{root}/sgml/../secret.dtd", "{root}/sgml//../secret.dtd", "<osfile>{root}/secret.dtd",
    "<osfile>{root}/sgml/../secret.dtd", "../../secret.dtd", "../secret.dtd", "sgml/../secret.dtd",
])
def test_a_doctype_system_identifier_cannot_read_outside_the_allowed_folders(tmp_path: Path, system: str) -> None:
    # the archive's directory: its SGML folder, and beside it a file the parser must never read (a key would be;
    # here a DTD, so that reading it would show: the document would have its DTD and no error)
    folder = _folder(tmp_path)
    (tmp_path / "secret.dtd").write_text("<!ELEMENT filing - - ANY>\n", encoding="ascii")
    catalog = SgmlCatalog(str(folder))
    named = system.format(root=tmp_path)
    reading = read_sgml(to_crlf(f'<!DOCTYPE filing SYSTEM "{named}">\n<filing>x</filing>\n'), catalog=catalog)
    assert not reading.dtd_found and reading.errors > 0
    # the control: a DTD of the archive's folder named by its path is read (so a read would have shown above)
    allowed = read_sgml(to_crlf(f'<!DOCTYPE filing SYSTEM "{folder}/filing.dtd">\n<filing><caption>c<para>p'
                                "</filing>\n"), catalog=catalog)
    assert allowed.dtd_found and allowed.errors == 0


def test_a_folder_holding_a_link_or_a_folder_is_refused_naming_it(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(StoreError, match=r"holds 'passwd', a symbolic link"):
        read_sgml(to_crlf(FILING), catalog=SgmlCatalog(str(folder)))
    (folder / "passwd").unlink()
    (folder / "more").mkdir()
    with pytest.raises(StoreError, match=r"holds 'more', not a plain file"):
        read_sgml(to_crlf(FILING), catalog=SgmlCatalog(str(folder)))
    (folder / "more").rmdir()
    linked = tmp_path / "linked"
    linked.symlink_to(folder)
    with pytest.raises(StoreError, match="is a symbolic link"):
        read_sgml(to_crlf(FILING), catalog=SgmlCatalog(str(linked)))
    assert read_sgml(to_crlf(FILING), catalog=SgmlCatalog(str(tmp_path / "none"))).dtd_found is False  # no folder


_MINIMUM = "abcXYZ0189 '()+,-./:=?"
_identifiers = st.text(alphabet=_MINIMUM, min_size=1, max_size=40).filter(lambda t: t.strip())
_file_names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)


@settings(max_examples=200)
@given(st.lists(st.tuples(_identifiers, _file_names, st.sampled_from(["", "-- a comment --", 'SYSTEM "x" "y.dtd"',
                                                                       "OVERRIDE YES", "\n\n"])), max_size=8))
def test_catalog_entries_reads_the_public_entries_written_among_others(
    entries: list[tuple[str, str, str]],
) -> None:
    # TR9401 §6: entries are keywords and their literals, in any white space, with comments and other kinds between
    text = "".join(f'{between}\nPUBLIC "{identifier}"\t"{name}" ' for identifier, name, between in entries)
    assert catalog_entries(text) == [(" ".join(identifier.split()), name) for identifier, name, _ in entries]


@given(st.text(max_size=300))
def test_catalog_entries_takes_any_text(text: str) -> None:
    for identifier, name in catalog_entries(text):
        assert isinstance(identifier, str) and isinstance(name, str)


def test_a_public_identifier_is_read_as_sgml_reads_it_and_a_wrong_one_named_where() -> None:
    assert public_identifier("  -//ACME//DTD\n  Filing//EN ") == PUBLIC  # ISO 8879 §10.1.7: spaces taken as one
    with pytest.raises(ParseError, match=r"'\"' at character 8 of the public identifier") as refused:
        public_identifier('-//ACME"//DTD Filing//EN')
    assert refused.value.offset == 7
    with pytest.raises(ParseError, match="empty"):
        public_identifier("  ")


def test_add_keeps_what_is_there_for_good(tmp_path: Path) -> None:
    dtd, other = tmp_path / "filing.dtd", tmp_path / "other.dtd"
    dtd.write_text(FILING_DTD, encoding="ascii")
    other.write_text("<!ELEMENT x - - ANY>\n", encoding="ascii")
    folder = tmp_path / "archive" / "sgml"
    folder.parent.mkdir()
    folder.parent.chmod(0o755)  # an archive's folder no one chose to share: what pdi makes in it is its owner's
    added = add_dtd(folder, dtd, public=PUBLIC)
    assert (added.name, added.public) == ("filing.dtd", (PUBLIC,))
    assert add_dtd(folder, dtd, public=PUBLIC) == added  # the same again: no change
    assert (folder / "catalog").read_text().count("PUBLIC") == 1
    with pytest.raises(ImmutabilityError, match=r"holds another filing\.dtd"):
        add_dtd(folder, other, name="filing.dtd")
    with pytest.raises(ImmutabilityError, match=r"already sends '-//ACME//DTD Filing//EN' to 'filing.dtd'"):
        add_dtd(folder, other, public=PUBLIC)
    with pytest.raises(ParseError, match="cannot name a file"):
        add_dtd(folder, other, name="catalog")
    assert (folder / "filing.dtd").read_text() == FILING_DTD
    assert oct((folder / "filing.dtd").stat().st_mode & 0o777) == oct(0o400)  # read-only (pdi.archive.modes)
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
    assert oct((folder / "catalog").stat().st_mode & 0o777) == oct(0o600)
    assert [f.name for f in dtd_files(folder)] == ["filing.dtd"]


def _run(runner: CliRunner, *arguments: str, status: int = 0) -> str:
    result = runner.invoke(cli, list(arguments))
    assert result.exit_code == status, result.output
    return result.stdout


def _info_line(runner: CliRunner, archive: str, name: str) -> str:
    info = _run(runner, "get", name, "--info", "--archive", archive)
    return next(line for line in info.splitlines() if line.startswith("sgml-parse\t"))


def test_cli_sgml_add_deposit_backup_and_restore(tmp_path: Path) -> None:
    runner = CliRunner()
    archive = str(tmp_path / "arc")
    _run(runner, "init", archive)
    _run(runner, "series", "add", "acme.court.us", "--archive", archive)
    dtd, document = tmp_path / "filing.dtd", tmp_path / "filing.sgml"
    dtd.write_text(FILING_DTD, encoding="ascii")
    document.write_text(FILING, encoding="ascii")
    # deposited before the DTD is added: parsed without it, and said so (true then, and later)
    before = _run(runner, "add", str(document), "-f", "sgml", "-s", "acme.court.us", "--archive", archive).strip()
    assert _info_line(runner, archive, before).startswith(f"sgml-parse\tno DTD found at deposit for {PUBLIC}")
    added = _run(runner, "sgml", "add", str(dtd), "--public-id", PUBLIC, "--archive", archive)
    assert added.startswith("filing.dtd\tsha256:") and added.rstrip().endswith(PUBLIC)
    assert _run(runner, "sgml", "list", "--archive", archive) == added
    _run(runner, "sgml", "add", str(document), "--name", "filing.dtd", "--archive", archive, status=5)
    # (the same octets again would be read as they were: their element index is made once, for their SHA-256)
    second = tmp_path / "second.sgml"
    second.write_text(FILING.replace("9th", "10th"), encoding="ascii")
    name = _run(runner, "add", str(second), "-f", "sgml", "-s", "acme.court.us", "--archive", archive).strip()
    assert _info_line(runner, archive, name) == (
        f"sgml-parse\tDTD found ({PUBLIC}; the archive's SGML folder keeps it: filing.dtd); 0 parser errors"
        " (OpenSP onsgmls)")
    assert _run(runner, "get", f"{name}#elt=2,2", "--archive", archive) == (
        "<para>First <cite>one</cite> para\n<para>Second\n")  # BODY, implied (the octets as kept)
    # the earlier deposit's parse is kept as it was made: its passages read the same
    assert _info_line(runner, archive, before).startswith(f"sgml-parse\tno DTD found at deposit for {PUBLIC}")
    assert _run(runner, "get", f"{name}#elt=3,3", "--archive", archive) == "<para>First <cite>one</cite> para\n"
    assert _run(runner, "get", f"{before}#elt=3,3", "--archive", archive) == "<cite>one</cite>"  # no BODY in it

    backup, restored = tmp_path / "backup", tmp_path / "restored"
    _run(runner, "backup", str(backup), "--archive", archive)
    assert (backup / "sgml" / "filing.dtd").read_text() == FILING_DTD
    _run(runner, "restore", str(backup), "--to", str(restored))
    assert (restored / "sgml" / "filing.dtd").read_text() == FILING_DTD
    assert _run(runner, "sgml", "list", "--archive", str(restored)) == added
    assert _run(runner, "get", f"{name}#elt=2,2", "--archive", str(restored)) == (
        "<para>First <cite>one</cite> para\n<para>Second\n")
    assert _run(runner, "reindex", "--elements", "--archive", str(restored)) is not None
    # a backup never drops a DTD the archive lost: a document deposited with it is read with it
    (Path(archive) / "sgml" / "filing.dtd").unlink()
    result = runner.invoke(cli, ["backup", str(backup), "--archive", archive])
    assert result.exit_code == 0, result.output
    assert "kept" in result.stderr and (backup / "sgml" / "filing.dtd").exists()


def test_cli_sgml_add_names_a_folder_a_postgresql_archive_needs(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["sgml", "add", str(tmp_path / "x.dtd"), "--archive", "postgresql://h/db"])
    assert result.exit_code == 6
    assert "--sgml-folder or $PDI_SGML_CATALOG" in result.stderr


def test_info_says_why_a_document_refused_at_deposit_has_no_parse(tmp_path: Path) -> None:
    # docs/reference/fragments.md: pdi get --info has an sgml-parse line; one refused for a short reference to tags
    # (ISO 8879 §11.5) had none
    runner = CliRunner()
    archive = str(tmp_path / "arc")
    _run(runner, "init", archive)
    _run(runner, "series", "add", "acme.court.us", "--archive", archive)
    short = tmp_path / "short.sgml"
    short.write_text("<!DOCTYPE a [<!ELEMENT a - - (#PCDATA|b)*><!ELEMENT b - - (#PCDATA)>"
                     '<!ENTITY s STARTTAG "b"><!ENTITY t ENDTAG "b">'
                     "<!SHORTREF m '*' s '#' t><!USEMAP m a>]>\n<a>x*y#<b>w</b></a>\n", encoding="ascii")
    name = _run(runner, "add", str(short), "-f", "sgml", "-s", "acme.court.us", "--archive", archive).strip()
    assert _info_line(runner, archive, name) == (
        "sgml-parse\tno parse (DOCTYPE a): refused at deposit: the SGML document maps a short reference to the entity"
        " 's', whose tags elt cannot tell from tags written in the text (onsgmls does not say where a short"
        " reference stands); char and line fragments (#char=, #line=) select its text without parsing it")
    _run(runner, "get", f"{name}#elt=0,0", "--archive", archive, status=6)


def test_a_parse_with_the_archive_catalog_is_not_kept_in_memory_past_a_dtd_added(tmp_path: Path) -> None:
    # one process: parsed while the folder has no DTD, then again once it has one (pdi sgml add): read anew
    folder = tmp_path / "sgml"
    folder.mkdir()
    catalog = SgmlCatalog(str(folder))
    data = FILING.encode()
    before = evaluate("elt", (3, 3), data, media_type="text/sgml", charset="us-ascii", sgml_catalog=catalog)
    assert before.data == b"<cite>one</cite>"  # onsgmls without the DTD: CITE is element 3 (the first test)
    (folder / "filing.dtd").write_text(FILING_DTD, encoding="ascii")
    (folder / "catalog").write_text(f'PUBLIC "{PUBLIC}" "filing.dtd"\n', encoding="ascii")
    after = evaluate("elt", (3, 3), data, media_type="text/sgml", charset="us-ascii", sgml_catalog=catalog)
    assert after.data == b"<para>First <cite>one</cite> para\r\n"  # with it: PARA, BODY implied before it


def _dtd_errors_by_hand(dtd: Path) -> list[str]:
    """onsgmls run by hand on a document whose DTD is ``dtd``: each error's line:column: message, in ``dtd``."""
    document = dtd.parent / "by-hand.sgml"
    document.write_text(f'<!DOCTYPE filing SYSTEM "{dtd.name}">\n', encoding="ascii")
    run = subprocess.run(["onsgmls", "-p", "-s", str(document)], capture_output=True, text=True, timeout=60,
                         check=False, env={"PATH": os.environ["PATH"]})
    document.unlink()
    return [line.split(f"{dtd}:", 1)[1].replace(":E:", ":", 1) for line in run.stderr.splitlines()
            if f"{dtd}:" in line and ":E:" in line]


def test_sgml_add_refuses_a_dtd_onsgmls_reports_errors_in_naming_file_and_line(tmp_path: Path) -> None:
    archive = str(tmp_path / "archive")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", archive]).exit_code == 0
    broken = tmp_path / "given" / "broken.dtd"
    broken.parent.mkdir()
    broken.write_text(FILING_DTD.replace("(#PCDATA)>\n<!ELEMENT body", "(#PCDATA)\n<!ELEMENT body"), encoding="ascii")
    expected = _dtd_errors_by_hand(broken)
    assert expected and expected[0].startswith("4:0: character \"<\" invalid")  # the declaration line 3 left open
    refused = runner.invoke(cli, ["sgml", "add", str(broken), "--public-id", PUBLIC, "--archive", archive])
    assert refused.exit_code != 0
    assert f"{broken}:{expected[0]}" in refused.output.replace("\n", " ") or f"{broken}:{expected[0]}" in refused.stderr
    assert not (Path(archive) / "sgml" / "broken.dtd").exists()
    assert not (Path(archive) / "sgml" / "catalog").exists()  # nor its identifier
    # its own text is wrong, no file is missing: no word of adding a module first (found in a new user's trial:
    # pdi told them to add a module or entity file before a DTD that names none)
    assert "added first" not in refused.stderr
    # a public entity no catalog knows is missing too, and is said so with what to do
    public = tmp_path / "given" / "public.dtd"
    public.write_text('<!ENTITY % p PUBLIC "-//ACME//ENTITIES Nowhere//EN">\n%p;\n', encoding="ascii")
    unknown = runner.invoke(cli, ["sgml", "add", str(public), "--archive", archive])
    assert unknown.exit_code == ParseError.exit_code
    assert "; a module or entity file it names is added first" in " ".join(unknown.stderr.split())
    # a DTD naming a module the folder does not hold yet is refused, saying so; added after it, it is taken
    main = tmp_path / "given" / "main.dtd"
    main.write_text('<!ENTITY % parts SYSTEM "parts.mod">\n%parts;\n', encoding="ascii")
    (tmp_path / "given" / "parts.mod").write_text(FILING_DTD, encoding="ascii")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "main.dtd").write_text(main.read_text(encoding="ascii"), encoding="ascii")
    missing = _dtd_errors_by_hand(alone / "main.dtd")
    assert missing and 'cannot find "parts.mod"' in missing[0]
    first = runner.invoke(cli, ["sgml", "add", str(main), "--public-id", PUBLIC, "--archive", archive])
    assert first.exit_code != 0 and f"{main}:{missing[0].split(';')[0]}" in first.stderr.replace("\n", " ")
    # onsgmls -R ends its message "; tried " and names no place (found in a new user's trial: pdi said "…; tried;
    # a module or entity file it names is added first"): the message says what is missing, then what to do
    said = " ".join(first.stderr.split())
    assert f'{main}:{missing[0].split(";")[0]}; a module or entity file it names is added first' in said, said
    assert "tried" not in said
    assert runner.invoke(cli, ["sgml", "add", str(tmp_path / "given" / "parts.mod"), "--archive", archive]).exit_code == 0
    taken = runner.invoke(cli, ["sgml", "add", str(main), "--public-id", PUBLIC, "--archive", archive])
    assert taken.exit_code == 0, taken.output


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["<!ELEMENT a - - (#PCDATA)>", "<!ELEMENT b - O (a|", "<!ATTLIST a x CDATA #IMPLIED>",
                                 "<!ENTITY % e 'x'>", "%e;", "<!--", "-->", ">", '"', "\n", "<!ENTITY c SYSTEM 'c.ent'>"]),
                max_size=10))
def test_dtd_errors_takes_any_declarations_and_names_where(pieces: list[str]) -> None:
    from pdi.fragments.markup.sgml import dtd_errors

    for error in dtd_errors("\n".join(pieces).encode(), "given.dtd", shown="/where/given.dtd"):
        file, line, column, said = error.split(":", 3)
        assert file == "/where/given.dtd" and line.isdigit() and column.isdigit() and said.strip()
