"""``Archive.annotate_all``: several statements about one name in one transaction (the WARC import's), on both catalogs."""

from __future__ import annotations

import pytest

from pdi.archive import Archive
from pdi.errors import LimitError, NotFoundError, ParseError

S = "oma.eop.gov.us"


def test_statements_are_made_in_order_with_one_time(archive: Archive) -> None:
    name = archive.add(S, b"a text\n", format="text")
    made = archive.annotate_all(name, [("warc:date", "2024-05-06T07:08:09Z"), ("title", "A"), ("title", "B")])
    assert [(r.key, r.value) for r in made] == [("warc:date", "2024-05-06T07:08:09Z"), ("title", "A"), ("title", "B")]
    assert len({r.at for r in made}) == 1 and [r.id for r in made] == sorted(r.id for r in made)
    assert [(r.key, r.value) for r in archive.history(name)] == [(r.key, r.value) for r in made]
    assert archive.meta(name)["title"] == "B"
    assert archive.annotate_all(name, []) == []


@pytest.mark.parametrize(("bad", "error"), [
    (("9key", "x"), ParseError),
    (("key", 7), ParseError),
    (("key", "x" * 1_000_001), LimitError),
    (("title", "nul\x00byte"), ParseError),  # SQLite's text ended at the NUL: "nul" was kept, said as stored
    (("title", "half \ud800 a pair"), ParseError),  # no character: not UTF-8, not kept
])
def test_one_bad_statement_makes_none(archive: Archive, bad: tuple[str, object], error: type[Exception]) -> None:
    name = archive.add(S, b"a text\n", format="text")
    archive.annotate(name, "title", "kept")
    with pytest.raises(error):
        archive.annotate_all(name, [("warc:date", "2024-05-06T07:08:09Z"), bad, ("creator", "x")])  # type: ignore[list-item]
    assert [(r.key, r.value) for r in archive.history(name)] == [("title", "kept")]


def test_a_name_not_in_the_archive_gets_none(archive: Archive) -> None:
    name = archive.add(S, b"a text\n", format="text")
    missing = str(name).replace(".text.1", ".text.2")
    with pytest.raises(NotFoundError):
        archive.annotate_all(missing, [("title", "x")])
    assert archive.store.assertions() == []


def test_a_failure_inside_the_transaction_leaves_the_statements_as_they_were(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = archive.add(S, b"a text\n", format="text")
    archive.annotate(name, "title", "kept")
    store = archive.store
    real = store._query
    inserts = []

    def failing(sql: str, params: object = ()) -> list[tuple[object, ...]]:
        if sql.startswith("INSERT INTO assertions"):
            inserts.append(params)
            if len(inserts) == 2:
                raise OSError("the disk is full")
        return real(sql, params)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_query", failing)
    with pytest.raises(OSError, match="disk is full"):
        archive.annotate_all(name, [("warc:date", "2024-05-06T07:08:09Z"), ("creator", "x"), ("subject", "y")])
    monkeypatch.undo()
    assert len(inserts) == 2  # the first was made, inside the transaction that was rolled back
    assert [(r.key, r.value) for r in archive.history(name)] == [("title", "kept")]


def test_a_value_is_kept_whole_or_refused_saying_where(archive: Archive) -> None:
    name = archive.add(S, b"a text\n", format="text")
    with pytest.raises(ParseError, match=r"U\+0000 \(character 3\)"):
        archive.annotate(name, "title", "nul\x00byte")
    kept = "tab\tline\nbreak \u202e and \U0001f600"  # controls other than NUL are text, kept as given
    archive.annotate(name, "title", kept)
    assert archive.meta(name)["title"] == kept
