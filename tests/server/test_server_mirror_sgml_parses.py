"""A mirror answers an SGML document's #elt= passages at once, as its origin does, or not at all.

Two real resolvers on loopback (``pdi serve``): A, the origin, parsed the filing with its DTD (A's SGML folder
has it); B, a mirror, copies it with ``pdi mirror sync``. A's signed manifest gives the SHA-256 of the parse A
keeps; B keeps the parse it makes of the same octets only when it is that one, byte for byte. Without the DTD,
B's parse is another (element 3 is CITE, not PARA): B says so and refuses ``#elt=`` rather than answer otherwise
than A; once the DTD is added to B, the next sync keeps it, and both resolvers answer alike. The passages are
onsgmls's, run by hand (:mod:`support.sgml_filing`). The same again with the origin or the mirror on
PostgreSQL (its SGML folder the one ``$PDI_SGML_CATALOG`` names: it has no directory).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from test_server_mirrors import mirror, pdi, serving

from pdi.archive import Archive, Content
from pdi.archive.sgml_dtds import SGML_ENV
from pdi.fragments.markup import sgml
from pdi.identifier import PDI
from support.pgcluster import TemporaryCluster
from support.sgml_filing import FILING, FILING_DTD, PUBLIC, WITH_DTD, WITHOUT_DTD, check_by_hand

assert sgml.onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

S = "filings.example.us"


def _add_dtd(tmp_path: Path, location: Path | str) -> None:
    dtd = tmp_path / "filing.dtd"
    dtd.write_text(FILING_DTD, encoding="ascii")
    code, out = pdi("sgml", "add", str(dtd), "--public-id", PUBLIC, "--archive", str(location))
    assert code == 0, out


def _elt(base: str, name: str) -> httpx.Response:
    return httpx.get(f"{base}/uri-res/N2R?{name}%23elt=3,3", timeout=30)


def _origin(tmp_path: Path) -> tuple[Path, PDI]:
    """A, the origin (a SQLite archive with a signing key): the filing deposited with its DTD in A's SGML folder
    (onsgmls's reading of it checked by hand first)."""
    check_by_hand(tmp_path)
    a = tmp_path / "a"
    with Archive.init(a) as archive:
        archive.add_series(S)
    _add_dtd(tmp_path, a)
    with Archive.open(a) as archive:
        (name,) = archive.deposit(S, [Content(FILING.encode(), "sgml")])
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    return a, name


def test_a_mirror_answers_the_origins_passages_of_sgml_or_refuses_them_never_others(tmp_path: Path) -> None:
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")  # its SGML folder empty
    with serving(a) as a_url:
        assert _elt(a_url, str(name)).content == WITH_DTD
        code, out = pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))
        assert code == 0, out
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out  # the name is kept; its passages are not answered otherwise than A answers them
        assert "1 new" in out and f"unparsed\t{name}\tkept, but its #elt= is refused here: its parse here is not" \
            " its origin's" in out, out
        with serving(b) as b_url:
            refused = _elt(b_url, str(name))
            assert refused.status_code != 200 and "no kept SGML parse" in refused.text, refused.text
            assert httpx.get(f"{b_url}/uri-res/N2R?{name}", timeout=30).content == FILING.encode()
        _add_dtd(tmp_path, b)  # the DTD A read: the next sync makes the same parse, and keeps it
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out and "1 held already" in out, out
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
        code, out = pdi("mirror", "sync", "--archive", str(b))  # kept: nothing more to do
        assert code == 0 and "unparsed" not in out, out


@pytest.mark.parametrize(("origin_kind", "mirror_kind"), [("sqlite", "postgres"), ("postgres", "sqlite")])
def test_a_mirror_on_either_catalog_answers_the_origins_passages_of_sgml_or_refuses_them(
        tmp_path: Path, pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch, origin_kind: str,
        mirror_kind: str) -> None:
    """As above, across catalogs: the origin's parse kept in PostgreSQL's bytea and the mirror's in SQLite's BLOB, or
    the other way round, are the same octets, or the mirror says it is not and refuses ``#elt=``."""
    check_by_hand(tmp_path)
    monkeypatch.delenv(SGML_ENV, raising=False)

    def made(kind: str, which: str) -> tuple[str, dict[str, str]]:
        """An empty archive of ``kind`` with a signing key; the environment its processes need (PostgreSQL: its
        key file and its SGML folder, which it has no directory to hold)."""
        if kind == "sqlite":
            return str(mirror(tmp_path, which)), {}
        url = pg_cluster.create_database(f"pdi_sgml_{which}_{os.getpid()}_{time.monotonic_ns()}")
        Archive.init(url).close()
        env = {"PDI_SIGNING_KEY": str(tmp_path / f"{which}-key.pem"), SGML_ENV: str(tmp_path / f"{which}-sgml")}
        assert pdi("keys", "init", "--archive", url, "--key-file", env["PDI_SIGNING_KEY"])[0] == 0
        return url, env

    a, a_env = made(origin_kind, "a")
    b, b_env = made(mirror_kind, "b")

    def as_a() -> None:  # this process as A's commands run (the SGML folder of a PostgreSQL archive named)
        for key, value in a_env.items():
            monkeypatch.setenv(key, value)
        for key in b_env.keys() - a_env.keys():
            monkeypatch.delenv(key, raising=False)

    def as_b() -> None:
        for key, value in b_env.items():
            monkeypatch.setenv(key, value)
        for key in a_env.keys() - b_env.keys():
            monkeypatch.delenv(key, raising=False)

    as_a()
    with Archive.open(a) as archive:
        archive.add_series(S)
    _add_dtd(tmp_path, a)
    with Archive.open(a) as archive:
        (name,) = archive.deposit(S, [Content(FILING.encode(), "sgml")])
    with serving(a, a_env) as a_url:
        assert _elt(a_url, str(name)).content == WITH_DTD
        as_b()
        code, out = pdi("mirror", "add", a_url, "--series", S, "--archive", b)
        assert code == 0, out
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0, out
        assert "1 new" in out and f"unparsed\t{name}\tkept, but its #elt= is refused here: its parse here is not" \
            " its origin's" in out, out
        with serving(b, b_env) as b_url:
            refused = _elt(b_url, str(name))
            assert refused.status_code != 200 and "no kept SGML parse" in refused.text, refused.text
            assert httpx.get(f"{b_url}/uri-res/N2R?{name}", timeout=30).content == FILING.encode()
        _add_dtd(tmp_path, b)
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0 and "unparsed" not in out and "1 held already" in out, out
        with serving(b, b_env) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0 and "unparsed" not in out, out


def _kept_parse(location: Path) -> bytes:
    """The parse a plain archive without the DTD keeps of the filing at its deposit (element 3 is CITE): another
    reading than the origin's, as ``pdi reindex --elements`` made on a mirror before it was refused there, or an
    earlier pdi's."""
    with Archive.init(location) as other:
        other.add_series(S)
        (name,) = other.deposit(S, [Content(FILING.encode(), "sgml")])
        rec = other.held(str(name))
        assert rec is not None
        kept = other.store.fragment_index(rec.sha256, rec.media_type, rec.charset)
    assert kept is not None
    return kept


def test_a_mirror_never_keeps_a_parse_that_is_not_its_origins(tmp_path: Path) -> None:
    """``pdi reindex --elements`` on a mirror leaves a mirrored series' SGML to the sync (it would keep a parse
    with whatever DTDs the mirror has, and answer ``#elt=`` otherwise than the origin); and a sync that finds a
    kept parse that is not the origin's (by its SHA-256, which the origin signs) takes it away, or puts the
    origin's in its place once the mirror can make it."""
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")
    other = _kept_parse(tmp_path / "other")

    def keep_other() -> None:
        with Archive.open(b) as archive:
            rec = archive.held(str(name))
            assert rec is not None
            assert archive.store.keep_first_element_index(rec.sha256, rec.media_type, rec.charset or "", other)

    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" in out, out
        code, out = pdi("reindex", "--elements", "--archive", str(b))
        assert code == 0 and "made 0 element indexes anew" in out and "of a mirrored series" in out, out
        keep_other()
        with serving(b) as b_url:  # what the sync is there to mend: B answers otherwise than A
            assert WITHOUT_DTD in _elt(b_url, str(name)).content
            assert WITH_DTD not in _elt(b_url, str(name)).content
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"unparsed\t{name}\tkept, but its #elt= is refused here: the parse kept here was not its origin's," \
            " and is taken away" in out, out
        with serving(b) as b_url:
            refused = _elt(b_url, str(name))
            assert refused.status_code != 200 and "no kept SGML parse" in refused.text, refused.text
        keep_other()
        _add_dtd(tmp_path, b)  # B can now make A's parse: the sync puts it in place of the other
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out, out
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
