"""A mirror answers an SGML document's #elt= passages at once, as its origin does, or not at all.

Two real resolvers on loopback (``pdi serve``): A, the origin, parsed the filing with its DTD (A's SGML folder
has it); B, a mirror, copies it with ``pdi mirror sync``. A's signed manifest gives the SHA-256 of the parse A
keeps; B keeps the parse it makes of the same octets only when it is that one, byte for byte. Without the DTD,
B's parse is another (element 3 is CITE, not PARA): B keeps A's own instead (``GET /api/element-index``), only
when its SHA-256 is the one A signed and it is an element index of these octets; else B says so and refuses
``#elt=`` rather than answer otherwise than A. The passages are onsgmls's, run by hand
(:mod:`support.sgml_filing`). The same again with the origin or the mirror on PostgreSQL (its SGML folder the
one ``$PDI_SGML_CATALOG`` names: it has no directory). What A serves is changed by a proxy between A and B (as
the other mirror tests change manifests and octets): a pdi origin never serves a parse whose digest it did not
sign.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest
from server_helpers import in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from test_server_mirror_access import made_token
from test_server_mirrors import Tamper, a_key, mirror, pdi, serving

from pdi.archive import Archive, Content
from pdi.archive.mirroring import ParseRefusal
from pdi.archive.sgml_dtds import SGML_ENV
from pdi.errors import LimitError
from pdi.fragments.markup import sgml
from pdi.identifier import PDI
from pdi.network import peers
from pdi.signing import b64url_decode
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


def _signed_parse(base: str, name: PDI, token: str | None = None) -> str:
    """The ``element_index`` of ``name``'s entry in the manifest of S at ``base`` (the payload read as JSON: A's
    own answer, whose signature the mirror checks)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    jws = httpx.get(f"{base}/api/manifest", params={"series": S}, headers=headers, timeout=30).text
    payload = json.loads(b64url_decode(jws.split(".")[1], "payload"))
    (entry,) = [e for e in payload["names"] if e["name"] == str(name)]
    return str(entry["element_index"])


def _kept_index(location: Path | str, name: PDI) -> bytes | None:
    with Archive.open(location) as archive:
        rec = archive.held(str(name))
        assert rec is not None
        return archive.store.fragment_index(rec.sha256, rec.media_type, rec.charset)


def test_a_mirror_without_the_dtd_keeps_the_origins_parse_and_answers_its_passages_as_the_origin(
        tmp_path: Path) -> None:
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")  # its SGML folder empty: its own parse would be another
    with serving(a) as a_url:
        assert _elt(a_url, str(name)).content == WITH_DTD
        code, out = pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))
        assert code == 0, out
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 new" in out and "unparsed" not in out, out
        # B keeps A's parse byte for byte: the one whose SHA-256 A signed (hashlib of what A keeps)
        kept = _kept_index(b, name)
        assert kept is not None and kept == _kept_index(a, name)
        assert hashlib.sha256(kept).hexdigest() == _signed_parse(a_url, name)
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
            assert httpx.get(f"{b_url}/uri-res/N2R?{name}", timeout=30).content == FILING.encode()
        code, out = pdi("mirror", "sync", "--archive", str(b))  # kept: nothing more to do
        assert code == 0 and "unparsed" not in out and "1 held already" in out, out
        _add_dtd(tmp_path, b)  # the DTD A read, added since: B's own parse is the same, nothing changes
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out, out
        assert _kept_index(b, name) == kept


@pytest.mark.parametrize(("origin_kind", "mirror_kind"), [("sqlite", "postgres"), ("postgres", "sqlite")])
def test_a_mirror_on_either_catalog_answers_the_origins_passages_of_sgml_as_the_origin(
        tmp_path: Path, pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch, origin_kind: str,
        mirror_kind: str) -> None:
    """As above, across catalogs: the origin's parse kept in PostgreSQL's bytea and the mirror's in SQLite's BLOB, or
    the other way round, are the same octets: the origin's, brought by the mirror that has no DTD (its own parse is
    another), and the one it makes once it has the DTD."""
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
        assert code == 0 and "1 new" in out and "unparsed" not in out, out
        with serving(b, b_env) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
            assert httpx.get(f"{b_url}/uri-res/N2R?{name}", timeout=30).content == FILING.encode()
        kept = _kept_index(b, name)
        assert kept is not None and hashlib.sha256(kept).hexdigest() == _signed_parse(a_url, name)
        as_a()
        assert _kept_index(a, name) == kept
        as_b()
        _add_dtd(tmp_path, b)
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0 and "unparsed" not in out and "1 held already" in out, out
        with serving(b, b_env) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content


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


class ParseTamper(Tamper):
    """The proxy of the other mirror tests, which also changes A's answer to ``GET /api/element-index``: ``missing``
    (404, as an earlier pdi answers), ``served`` (these octets in its place), ``flipped`` (its last octet changed);
    ``asked`` counts those requests."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.parse: str | None = None
        self.served = b""
        self.asked = 0

    def _forward(self, method: str, path: str, query: str, asked: bytes) -> Response:
        answer = super()._forward(method, path, query, asked)
        if path != "/api/element-index":
            return answer
        with self.lock:
            self.asked += 1
        if self.parse == "missing":
            return Response(b'{"title": "not found"}', status_code=404, media_type="application/problem+json")
        body = bytes(answer.body)
        if self.parse == "served":
            body = self.served
        elif self.parse == "flipped":
            body = body[:-1] + bytes([body[-1] ^ 1])
        return Response(body, status_code=answer.status_code, media_type="application/octet-stream")


@contextmanager
def through_proxy(a: Path, b: Path | str, a_url: str) -> Iterator[ParseTamper]:
    """A :class:`ParseTamper` in front of A, recorded by B as the origin (A's own key pinned)."""
    tamper = ParseTamper(a_url)
    with in_thread(tamper.app, host="127.0.0.1", port=0, log_level="warning") as server:
        proxy = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        assert pdi("mirror", "add", proxy, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
        yield tamper


def _refused(base: str, name: PDI) -> None:
    refused = _elt(base, str(name))
    assert refused.status_code != 200 and "no kept SGML parse" in refused.text, refused.text


def test_a_mirror_never_keeps_a_parse_that_is_not_its_origins(tmp_path: Path) -> None:
    """``pdi reindex --elements`` on a mirror leaves a mirrored series' SGML to the sync (it would keep a parse
    with whatever DTDs the mirror has, and answer ``#elt=`` otherwise than the origin); and a sync that finds a
    kept parse that is not the origin's (by its SHA-256, which the origin signs) takes it away, and puts the
    origin's in its place: brought from the origin, or made here once the mirror can make it. The origin first
    serves no parse, as an earlier pdi does (404), so the mirror holds none."""
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")
    other = _kept_parse(tmp_path / "other")

    def keep_other() -> None:
        with Archive.open(b) as archive:
            rec = archive.held(str(name))
            assert rec is not None
            assert archive.store.keep_first_element_index(rec.sha256, rec.media_type, rec.charset or "", other)

    with serving(a) as a_url, through_proxy(a, b, a_url) as tamper:
        tamper.parse = "missing"
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out
        assert f"unparsed\t{name}\tkept, but its #elt= is refused here: its parse here is not its origin's" in out
        assert "nor is the origin's parse kept" in out and "HTTP 404" in out, out
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
            _refused(b_url, name)
        keep_other()
        tamper.parse = None  # A serves its parse: the sync puts it in place of the other
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out, out
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
        with Archive.open(b) as archive:  # as it was before the sync brought it
            rec = archive.held(str(name))
            assert rec is not None
            assert archive.store.replace_element_index(rec.sha256, rec.media_type, rec.charset or "",
                                                       hashlib.sha256(_kept_index(a, name) or b"").hexdigest(), other)
        _add_dtd(tmp_path, b)  # B can now make A's parse: the sync puts it in place of the other, asking A nothing
        asked = tamper.asked
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out, out
        assert tamper.asked == asked
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content


@pytest.mark.parametrize("how", ["flipped", "another"])
def test_a_parse_served_that_is_not_the_one_signed_is_refused_and_nothing_is_kept(tmp_path: Path, how: str) -> None:
    """The parse A serves changed on its way (its last octet), or another parse of the same octets (the one made
    without the DTD: an element index of these octets, but not A's): its SHA-256 is not the one A signed, so B
    keeps nothing and refuses ``#elt=``; once it comes as A sent it, the next sync keeps it."""
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")
    other = _kept_parse(tmp_path / "other")
    with serving(a) as a_url, through_proxy(a, b, a_url) as tamper:
        signed = _signed_parse(a_url, name)
        tamper.parse, tamper.served = ("flipped", b"") if how == "flipped" else ("served", other)
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 new" in out, out
        shown = hashlib.sha256(other).hexdigest() if how == "another" else ""
        assert f"unparsed\t{name}\tkept, but its #elt= is refused here: its parse here is not its origin's" in out
        assert f"its signed manifest says {signed}: refused" in out and shown in out, out
        assert tamper.asked == 1
        assert _kept_index(b, name) is None
        with serving(b) as b_url:
            _refused(b_url, name)
            assert httpx.get(f"{b_url}/uri-res/N2R?{name}", timeout=30).content == FILING.encode()
        tamper.parse = None  # A's parse comes as A sent it: the next sync an hour on would keep it; told to, now
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "not tried again until" in out and tamper.asked == 1, out
        code, out = pdi("mirror", "sync", "--retry-parses", "--archive", str(b))
        assert code == 0 and "unparsed" not in out, out
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD


def test_a_parse_signed_that_is_not_of_the_octets_is_refused_and_nothing_is_kept(tmp_path: Path) -> None:
    """A's kept parse replaced in its catalog by that of another document (A then signs its SHA-256 and serves it,
    as a damaged or forged catalog would): the digest is the one signed, but it is not an element index of these
    octets (not of their size), so B keeps nothing."""
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")
    with Archive.init(tmp_path / "longer") as elsewhere:
        elsewhere.add_series(S)
        (longer,) = elsewhere.deposit(S, [Content((FILING + "\n").encode(), "sgml")])
    foreign = _kept_index(tmp_path / "longer", longer)
    assert foreign is not None
    with Archive.open(a) as archive:
        rec = archive.held(str(name))
        assert rec is not None
        kept = archive.store.fragment_index(rec.sha256, rec.media_type, rec.charset)
        assert kept is not None
        assert archive.store.replace_element_index(rec.sha256, rec.media_type, rec.charset or "",
                                                   hashlib.sha256(kept).hexdigest(), foreign)
    with serving(a) as a_url:
        assert _signed_parse(a_url, name) == hashlib.sha256(foreign).hexdigest()
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 new" in out, out
        assert f"the element index brought with {name} is not one of its octets: the element index was made for" \
            f" {len(FILING) + 1} octets, not for these {len(FILING)}" in out, out
        assert _kept_index(b, name) is None
        with serving(b) as b_url:
            _refused(b_url, name)


def test_the_origin_serves_a_private_names_parse_to_a_token_that_may_read_it_alone(tmp_path: Path) -> None:
    """``GET /api/element-index`` under the name's access rules: of a private series, 403 without a token or with
    one of another series, the parse with one of its series (the SHA-256 signed for that reader, and B, mirroring
    with that token, answers ``#elt=`` as A); 404 for a name whose parse is not kept (a text), or not held."""
    a, name = _origin(tmp_path)
    with Archive.open(a) as archive:
        archive.set_series_access(S, "private")
        archive.add_series("other.example.us")
        (text,) = archive.deposit(S, [Content(b"plain words\n", "text")])
    token = made_token(a, "reader", S)
    elsewhere = made_token(a, "reader-elsewhere", "other.example.us")
    token_file = tmp_path / "a-token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        url = f"{a_url}/api/element-index"
        anyone = httpx.get(url, params={"pdi": str(name)}, timeout=30)
        assert anyone.status_code == 403 and f"the series {S} is private" in anyone.text, anyone.text
        assert b"PDIM" not in anyone.content
        refused = httpx.get(url, params={"pdi": str(name)}, headers={"Authorization": f"Bearer {elsewhere}"},
                            timeout=30)
        assert refused.status_code == 403 and b"PDIM" not in refused.content, refused.text
        reader = {"Authorization": f"Bearer {token}"}
        given = httpx.get(url, params={"pdi": str(name)}, headers=reader, timeout=30)
        assert given.status_code == 200, given.text
        assert given.headers["content-type"] == "application/octet-stream"
        assert given.headers["cache-control"] == "private, no-store"  # a reader's own: no cache keeps it
        tag = f'"{hashlib.sha256(given.content).hexdigest()}"'
        assert given.headers["etag"] == tag
        again = httpx.get(url, params={"pdi": str(name)}, headers={**reader, "If-None-Match": tag}, timeout=30)
        assert (again.status_code, again.content) == (304, b"")
        assert again.headers["cache-control"] == "private, no-store"
        assert httpx.get(url, params={"pdi": str(name)}, headers={"If-None-Match": tag}, timeout=30).status_code == 403
        assert given.content == _kept_index(a, name)
        assert hashlib.sha256(given.content).hexdigest() == given.headers["x-pdi-sha256"] \
            == _signed_parse(a_url, name, token)
        none = httpx.get(url, params={"pdi": str(text)}, headers=reader, timeout=30)
        assert none.status_code == 404 and "no parse of" in none.text and "not SGML" in none.text, none.text
        unknown = str(name).replace(".sgml.", ".html.")
        assert httpx.get(url, params={"pdi": unknown}, headers=reader, timeout=30).status_code == 404
        code, out = pdi("mirror", "add", a_url, "--series", S, "--token-file", str(token_file), "--archive", str(b))
        assert code == 0, out
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "2 new" in out and "unparsed" not in out, out
        assert _kept_index(b, name) == given.content
        b_token = made_token(b, "reader-b", S)
        with serving(b) as b_url:
            answer = httpx.get(f"{b_url}/uri-res/N2R?{name}%23elt=3,3", headers={"Authorization": f"Bearer {b_token}"},
                               timeout=30)
            assert answer.content == WITH_DTD


def test_a_parse_longer_than_any_pdi_makes_is_given_up_past_the_bound() -> None:
    """An origin that sends a parse without end of a document of 1,000 octets: the mirror reads no more than the
    largest element index pdi makes of one of that size (8 MiB and one octet per octet of the document,
    :func:`~pdi.fragments.markup.bounds.max_sgml_index_octets`, and what the sockets hold between), then gives up
    with a :class:`LimitError` that says so."""
    sent = [0]

    async def endless(request: Request) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            chunk = bytes(1 << 20)
            while not await request.is_disconnected():  # (the answer ends once the mirror has gone)
                sent[0] += len(chunk)
                yield chunk

        return StreamingResponse(body(), media_type="application/octet-stream")

    app = Starlette(routes=[Route("/api/element-index", endless)])
    with in_thread(app, host="127.0.0.1", port=0, log_level="warning") as server, peers._client() as client:
        base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        peer = peers.Peer(base, [], client, direct=False)
        most = (8 << 20) + 1000
        with pytest.raises(LimitError, match=f"is more than {most:,} octets, more than any element index of a"
                                             " document of 1,000 octets: given up"):
            peer.element_index(f"urn:pdi://{S}/2026/11/30/1.sgml.1", "0" * 64, 1000)
    assert most < sent[0] < most + (16 << 20)


def test_a_parse_of_names_namelen_raised_is_copied_or_refused_where_it_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two documents whose SGML declaration raises NAMELEN (:mod:`test_fragments_sgml_index_bounds`): A keeps the
    parse of the one whose name of 60,000 characters an element index holds, and the refusal of the one whose
    name is 70,000 (said by A's ``#elt=``, as each query says it); B, where onsgmls is missing, copies both from
    A, so that it answers each as A does: no parse A keeps is one a mirror cannot read."""
    from test_fragments_sgml_declaration import onsgmls as by_hand
    from test_fragments_sgml_index_bounds import long_named

    texts = [long_named(60_000), long_named(70_000)]
    assert [[len(n) for n in by_hand(text)[0]] for text in texts] == [[1, 60_000], [1, 70_000]]
    a = tmp_path / "a"
    with Archive.init(a) as archive:
        archive.add_series(S)
        names = [archive.deposit(S, [Content(text.encode(), "sgml", charset="utf-8")])[0] for text in texts]
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    b = mirror(tmp_path, "b")
    kept = texts[0][texts[0].index("<EXXX") : texts[0].rindex("</a>")].encode()
    with serving(a) as a_url:
        assert httpx.get(f"{a_url}/uri-res/N2R?{names[0]}%23elt=1,1", timeout=30).content == kept
        refused = httpx.get(f"{a_url}/uri-res/N2R?{names[1]}%23elt=1,1", timeout=30)
        assert refused.status_code != 200 and "an element name of 70,000 octets" in refused.text, refused.text
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        monkeypatch.setattr(sgml, "onsgmls_path", lambda: None)  # B parses nothing: it copies A's parses
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "2 new" in out and "unparsed" not in out, out
        for name in names:
            assert _kept_index(b, name) == _kept_index(a, name) is not None
        with serving(b) as b_url:
            assert httpx.get(f"{b_url}/uri-res/N2R?{names[0]}%23elt=1,1", timeout=30).content == kept
            again = httpx.get(f"{b_url}/uri-res/N2R?{names[1]}%23elt=1,1", timeout=30)
            assert (again.status_code, again.text) == (refused.status_code, refused.text)


def test_a_public_names_parse_is_revalidated_by_its_digest(tmp_path: Path) -> None:
    """A public name's parse: ``ETag`` its SHA-256 (a strong tag, RFC 9110 §8.8.3), ``Cache-Control: no-cache``
    (a cache asks again before it reuses it, RFC 9111 §5.2.2.4): ``If-None-Match`` holding that tag, or that tag
    weak (weak comparison, §13.1.2), or ``*``, is ``304`` with no body; another tag gets the parse. Once the
    parse kept changes (as ``pdi reindex --elements`` with other DTDs would make another), the tag held is
    another's: the new parse, under its own tag. Read with httpx against ``pdi serve``."""
    a, name = _origin(tmp_path)
    url_of = "{}/api/element-index"
    with serving(a) as a_url:
        url = url_of.format(a_url)
        given = httpx.get(url, params={"pdi": str(name)}, timeout=30)
        assert given.status_code == 200 and given.content == _kept_index(a, name)
        tag = f'"{hashlib.sha256(given.content).hexdigest()}"'
        assert given.headers["etag"] == tag and given.headers["cache-control"] == "no-cache"
        assert given.headers["x-pdi-sha256"] == _signed_parse(a_url, name)
        for held in (tag, f"W/{tag}", f'"{"0" * 64}", {tag}', "*"):
            again = httpx.get(url, params={"pdi": str(name)}, headers={"If-None-Match": held}, timeout=30)
            assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag), held
            assert again.headers["cache-control"] == "no-cache"
        other = httpx.get(url, params={"pdi": str(name)}, headers={"If-None-Match": f'"{"0" * 64}"'}, timeout=30)
        assert other.status_code == 200 and other.content == given.content
        head = httpx.head(url, params={"pdi": str(name)}, headers={"If-None-Match": tag}, timeout=30)
        assert head.status_code == 304
        another = _kept_parse(tmp_path / "other")  # the filing's parse without the DTD: another parse of it
        with Archive.open(a) as archive:
            rec = archive.held(str(name))
            assert rec is not None
            assert archive.store.replace_element_index(rec.sha256, rec.media_type, rec.charset or "",
                                                       hashlib.sha256(given.content).hexdigest(), another)
        changed = httpx.get(url, params={"pdi": str(name)}, headers={"If-None-Match": tag}, timeout=30)
        assert changed.status_code == 200 and changed.content == another
        assert changed.headers["etag"] == f'"{hashlib.sha256(another).hexdigest()}"' != tag


def _refusal(location: Path | str, name: PDI) -> tuple[str, int, datetime.timedelta] | None:
    """What B remembers of the parse of ``name`` it could not keep: the digest the origin signed, how many syncs
    in a row, and how long after the last the next tries again."""
    with Archive.open(location) as archive:
        rec = archive.held(str(name))
        assert rec is not None
        last = archive.parse_refusal(rec)
    if last is None:
        return None
    at, until = (datetime.datetime.fromisoformat(t.removesuffix("Z")) for t in (last.refused_at, last.retry_at))
    return last.origin_parse, last.refusals, until - at


def test_a_parse_refused_is_tried_again_later_or_once_the_origin_or_the_dtds_change(tmp_path: Path) -> None:
    """A parse changed on its way (its last octet flipped by the proxy) is refused, and B remembers it: the next
    sync neither parses nor asks A again for an hour (two after a second refusal in a row), and says so, unless
    it is told to (``--retry-parses``), A signs another parse, or B's DTDs change; a parse kept forgets it."""
    a, name = _origin(tmp_path)
    b = mirror(tmp_path, "b")
    other = _kept_parse(tmp_path / "other")
    first = _kept_index(a, name)
    assert first is not None
    hour = datetime.timedelta(hours=1)
    with serving(a) as a_url, through_proxy(a, b, a_url) as tamper:
        signed = _signed_parse(a_url, name)
        tamper.parse = "flipped"
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "tried again from" in out and tamper.asked == 1, out
        assert _refusal(b, name) == (signed, 1, hour)
        code, out = pdi("mirror", "sync", "--retry-parses", "--archive", str(b))
        assert code == 0 and tamper.asked == 2, out
        assert _refusal(b, name) == (signed, 2, 2 * hour)
        code, out = pdi("mirror", "sync", "--archive", str(b))  # put off: nothing parsed, nothing asked
        assert code == 0 and tamper.asked == 2, out
        assert f"unparsed\t{name}\tkept, but its #elt= is refused here: its parse here is not its origin's" in out
        assert "not tried again until" in out and "2 syncs in a row could not keep it" in out, out
        assert f"{S}\t1 SGML parse refused lately not tried again yet (pdi mirror sync --retry-parses" in out, out
        assert _kept_index(b, name) is None
        with Archive.open(a) as archive:  # A keeps (and signs) another parse: the one without the DTD, B's own
            rec = archive.held(str(name))
            assert rec is not None
            assert archive.store.replace_element_index(rec.sha256, rec.media_type, rec.charset or "", signed, other)
        assert _signed_parse(a_url, name) == hashlib.sha256(other).hexdigest() != signed
        code, out = pdi("mirror", "sync", "--archive", str(b))  # tried at once: made here as A made it, A not asked
        assert code == 0 and "unparsed" not in out and tamper.asked == 2, out
        assert _kept_index(b, name) == other and _refusal(b, name) is None  # kept: the refusal forgotten
        with Archive.open(a) as archive:  # A's first parse again: B's is not it, and A's comes flipped
            rec = archive.held(str(name))
            assert rec is not None
            assert archive.store.replace_element_index(rec.sha256, rec.media_type, rec.charset or "",
                                                       hashlib.sha256(other).hexdigest(), first)
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and tamper.asked == 3 and "the parse kept here was not its origin's" in out, out
        assert _refusal(b, name) == (signed, 1, hour) and _kept_index(b, name) is None
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and tamper.asked == 3 and "not tried again until" in out, out
        _add_dtd(tmp_path, b)  # what B parses with changed: tried at once, and B's parse is now A's
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out and tamper.asked == 3, out
        assert hashlib.sha256(_kept_index(b, name) or b"").hexdigest() == signed and _refusal(b, name) is None


def test_a_parse_refused_on_a_postgresql_mirror_is_remembered_and_put_off_as_on_sqlite(
        tmp_path: Path, pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, the mirror's catalog on PostgreSQL (its SGML folder the one ``$PDI_SGML_CATALOG`` names, empty):
    a parse flipped on its way is refused and remembered in ``parse_refusals``, read back as written (the digest A
    signed, one refusal, an hour); the next sync asks A nothing, ``--retry-parses`` asks again (two in a row, two
    hours), and once A's parse comes as A sent it the sync keeps it and forgets the refusal."""
    a, name = _origin(tmp_path)
    b = pg_cluster.create_database(f"pdi_refusals_{os.getpid()}_{time.monotonic_ns()}")
    Archive.init(b).close()
    monkeypatch.setenv(SGML_ENV, str(tmp_path / "b-sgml"))
    hour = datetime.timedelta(hours=1)
    with serving(a) as a_url, through_proxy(a, b, a_url) as tamper:
        signed = _signed_parse(a_url, name)
        tamper.parse = "flipped"
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0 and "1 new" in out and "tried again from" in out and tamper.asked == 1, out
        assert _refusal(b, name) == (signed, 1, hour)
        code, out = pdi("mirror", "sync", "--archive", b)  # put off: nothing parsed, nothing asked
        assert code == 0 and tamper.asked == 1 and "not tried again until" in out, out
        assert f"{S}\t1 SGML parse refused lately not tried again yet (pdi mirror sync --retry-parses" in out, out
        code, out = pdi("mirror", "sync", "--retry-parses", "--archive", b)
        assert code == 0 and tamper.asked == 2, out
        assert _refusal(b, name) == (signed, 2, 2 * hour)
        assert _kept_index(b, name) is None
        tamper.parse = None
        code, out = pdi("mirror", "sync", "--retry-parses", "--archive", b)
        assert code == 0 and "unparsed" not in out and tamper.asked == 3, out
        assert hashlib.sha256(_kept_index(b, name) or b"").hexdigest() == signed
        assert _refusal(b, name) is None


def test_two_syncs_refusing_one_parse_at_once_on_postgresql_both_remember_it(
        pg_cluster: TemporaryCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """PostgreSQL does not serialize writers as SQLite does: a sync remembering a refusal while another sync's
    refusal of the same parse is written and not yet committed waits for it, then writes its own over it (the
    later sync's is remembered). Before, it had deleted nothing (the other's row not yet committed) and its insert
    failed on the table's key once the other committed (a storage error ending the sync)."""
    monkeypatch.setenv(SGML_ENV, str(tmp_path / "sgml"))
    url = pg_cluster.create_database(f"pdi_refusals_race_{os.getpid()}_{time.monotonic_ns()}")
    first = ParseRefusal("a" * 64, "here", 1, "2026-11-30T10:00:00.000000Z", "2026-11-30T11:00:00.000000Z", "first")
    later = ParseRefusal("a" * 64, "here", 2, "2026-11-30T10:00:01.000000Z", "2026-11-30T12:00:01.000000Z", "later")
    with Archive.init(url) as archive:
        archive.add_series(S)
        (name,) = archive.deposit(S, [Content(FILING.encode(), "sgml")])
        rec = archive.held(str(name))
        assert rec is not None
        failed: list[BaseException] = []

        def remember() -> None:
            try:
                archive.remember_parse_refusal(rec, later)
            except BaseException as exc:  # said by the test's assertion, in its thread
                failed.append(exc)

        with psycopg.connect(url) as other:  # the other sync: its refusal written, not committed yet
            other.execute("INSERT INTO parse_refusals (sha256, media_type, charset, origin_parse, here, refusals,"
                          " refused_at, retry_at, why) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                          (rec.sha256, rec.media_type, rec.charset or "", first.origin_parse, first.here,
                           first.refusals, first.refused_at, first.retry_at, first.why))
            writer = threading.Thread(target=remember)
            writer.start()
            writer.join(2)
            assert writer.is_alive()  # waiting for the other's row
            other.commit()
        writer.join(60)
        assert not writer.is_alive() and failed == []
        assert archive.parse_refusal(rec) == later
