"""Letters beyond ASCII in upper and lower case, on PostgreSQL: what docs/reference/postgresql.md says of ``LC_CTYPE``.

PostgreSQL's full-text search folds a word to lower case as the database's character type says: in a database
whose ``LC_CTYPE`` is ``C`` only ASCII letters are folded, so ``école`` does not find ``École`` (SQLite's FTS5, the
oracle of what a query finds, finds it); in one made as the guide makes it (``--lc-ctype C.UTF-8``) it does.
Each hit is checked against Python alone (``str.find`` in the text).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import psycopg
import pytest

from pdi.archive import Archive
from support.pgcluster import TemporaryCluster

S = "oma.eop.gov.us"
TEXT = "École МОСКВА Ωmega ÆON\n"
CANONICAL = TEXT.replace("\n", "\r\n")
_databases = itertools.count(1)


def _database(cluster: TemporaryCluster, ctype: str) -> str:
    name = f"pdi_ctype_{next(_databases)}"
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE '{ctype}'")
    return cluster.url(name)


@pytest.mark.parametrize(("query", "written"), [("école", "École"), ("москва", "МОСКВА"), ("ωmega", "Ωmega"),
                                                ("æon", "ÆON")])
def test_a_database_made_as_the_guide_says_folds_letters_beyond_ascii(
    pg_cluster: TemporaryCluster, query: str, written: str
) -> None:
    at = CANONICAL.find(written)
    for ctype, found in (("C.UTF-8", True), ("C", False)):
        with Archive.init(_database(pg_cluster, ctype)) as archive:
            archive.add_series(S)
            name = archive.add(S, TEXT.encode(), format="text")
            hits = [str(h.name) for h in archive.search(query).hits]
            assert hits == ([f"{name}#char={at},{at + len(written)}"] if found else []), ctype


def test_pdi_init_says_on_stderr_when_the_database_folds_only_ascii(pg_cluster: TemporaryCluster) -> None:
    """``pdi init`` on a database whose ``LC_CTYPE`` is ``C`` (the tests' cluster is made ``--locale=C``) says so in
    one line on standard error, what it means and what to do, each time it is run (found following
    docs/how-to/postgresql.md, 2026-12-01: nothing told an operator whose database was made so, and the search's
    misses above were silent); on one made as the guide makes it, nothing. Standard output is the usual line."""
    from click.testing import CliRunner

    from pdi.cli import cli

    runner = CliRunner()
    for ctype, warned in (("C", True), ("C.UTF-8", False)):
        url = _database(pg_cluster, ctype)
        with psycopg.connect(url) as conn:
            assert conn.execute("SHOW lc_ctype").fetchone() == (ctype,)
        for again in (False, True):  # made, then migrated (nothing to do): said both times
            result = runner.invoke(cli, ["init", url])
            assert result.exit_code == 0, result.output
            assert result.stdout.startswith("archive at postgresql://") and result.stdout.count("\n") == 1
            lines = result.stderr.splitlines()
            if again:  # the second time, found there already
                assert lines[0] == "note: the archive was there already: left as it was", lines
                lines = lines[1:]
            if not warned:
                assert lines == [], result.stderr
                continue
            [line] = lines
            assert line.startswith("pdi: warning: the database's LC_CTYPE is C: its full-text search folds only ASCII"
                                   " letters to lower case, so pdi search école does not find École;"), line
            assert "--lc-ctype C.UTF-8" in line and "pdi restore DEST --to" in line, line


def test_pdi_restore_says_on_stderr_when_the_database_restored_to_folds_only_ascii(
    pg_cluster: TemporaryCluster, tmp_path: Path
) -> None:
    """``pg_restore`` keeps no database's character type: a backup of an archive in a database made as the guide
    says, restored into one made by a bare ``createdb`` (``LC_CTYPE`` ``C`` in the tests' cluster, as in any cluster
    made ``--locale=C``), searched as ASCII only, and ``pdi restore`` said only "restored" (found following
    docs/how-to/backup.md, 2026-12-02, whose restore line then said "createdb pdi" first). Now it says so as
    ``pdi init`` does, naming the backup to restore again; restored into a UTF-8 one, nothing. The warning is
    true: a deposit in the restored ``C`` database is not found by ``école``, in the other it is."""
    from click.testing import CliRunner

    from pdi.archive.backup import backup
    from pdi.cli import cli

    made = _database(pg_cluster, "C.UTF-8")
    with Archive.init(made) as archive:
        archive.add_series(S)
        archive.add(S, TEXT.encode(), format="text")
    backup(made, tmp_path / "b")
    for ctype, warned in (("C", True), ("C.UTF-8", False)):
        url = _database(pg_cluster, ctype)
        result = CliRunner().invoke(cli, ["restore", str(tmp_path / "b"), "--to", url])
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("restored the postgres archive to ") and result.stdout.count("\n") == 1
        lines = result.stderr.splitlines()
        if warned:
            [line] = lines
            assert line.startswith("pdi: warning: the database's LC_CTYPE is C: its full-text search folds only ASCII"
                                   " letters to lower case, so pdi search école does not find École;"), line
            assert "--lc-ctype C.UTF-8" in line and f"pdi restore {tmp_path / 'b'} --to its URL" in line, line
        else:
            assert lines == [], result.stderr
        with Archive.open(url) as restored:
            name = restored.add(S, TEXT.encode(), format="text")
            found = [str(h.name).split("#")[0] for h in restored.search("école").hits]
            assert (str(name) in found) != warned, (ctype, found)


def test_a_search_finding_nothing_says_why_where_the_database_folds_only_ascii(pg_cluster: TemporaryCluster) -> None:
    """A first page finding nothing, asked a word with letters beyond ASCII that have a case, on a database whose
    ``LC_CTYPE`` is ``C``: its note says the database folds only ASCII letters and what to do (docs/how-to/postgresql.md:
    a database made with a UTF-8 ``LC_CTYPE``), in ``SearchResults.note``, ``pdi search``'s standard error and
    ``--json``, ``/api/search``'s ``note`` and the ``/search`` page (found following that guide, 2026-12-01: ``pdi
    search école`` printed only that no passage held the words). No note where the word was found, where the query's
    letters beyond ASCII have no case (``北京``), for a word of ASCII letters alone, nor on a database made as the
    guide says."""
    import json

    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from pdi.cli import cli
    from pdi.server import create_app

    runner = CliRunner()
    for ctype, told in (("C", True), ("C.UTF-8", False)):
        url = _database(pg_cluster, ctype)
        with Archive.init(url) as archive:
            archive.add_series(S)
            archive.add(S, TEXT.encode(), format="text")
            école = archive.search("école")
            assert (école.hits == ()) == told and (école.note is not None) == told, (ctype, école.note)
            missed = archive.search("zürich")  # in no passage: said on either, the note only where folding fails
            assert missed.hits == () and (missed.note is not None) == told, (ctype, missed.note)
            assert école.note == missed.note
            for quiet in ("École", "北京", "ecole", "carpenter walrus"):
                assert archive.search(quiet).note is None, (ctype, quiet)
            if told:
                assert missed.note is not None
                assert "LC_CTYPE C" in missed.note and "folds only ASCII letters" in missed.note, missed.note
                assert "--lc-ctype C.UTF-8" in missed.note and "pdi restore DEST --to" in missed.note, missed.note
            note = missed.note

            result = runner.invoke(cli, ["search", "zürich", "--archive", url])
            assert result.exit_code == 0 and result.stdout == "", result.output
            lines = result.stderr.splitlines()
            assert lines[0].startswith("note: no passage holds every one of these words"), lines
            assert lines[1:] == ([f"note: {note}"] if told else []), lines
            as_json = json.loads(runner.invoke(cli, ["search", "--json", "zürich", "--archive", url]).stdout)
            assert as_json["hits"] == [] and as_json["note"] == note

            client = TestClient(create_app(url, archive=archive))
            answer = client.get("/api/search", params={"q": "zürich"})
            assert answer.status_code == 200 and answer.json()["note"] == note
            assert client.get("/api/search", params={"q": "École"}).json()["note"] is None
            shown = client.get("/search", params={"q": "zürich"})
            assert shown.status_code == 200
            assert ('id="search-note"' in shown.text) == told
            if told:
                assert "folds only ASCII letters to lower case" in shown.text and "C.UTF-8" in shown.text
