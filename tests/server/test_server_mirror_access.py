"""Private and embargoed names mirrored, under the origin's access rules, between real ``pdi serve`` processes.

A (SQLite) has a private series, a hidden one and, in a public series, a
name embargoed until 2031-01-01. B, a mirror (SQLite or PostgreSQL) syncing
with a ``read`` token of A, holds them all and answers each reader as A
does: ``403`` to an anonymous reader (``embargoed until …``; ``404`` for the
hidden series), the bytes to a token of B; both
served with a clock ten years ahead (Debian's libfaketime), the embargo is
over on both. C, a mirror without a token, holds neither. A rule changed at
A reaches B at its next sync; a manifest whose rules were changed on the way
is refused. The statuses are compared with A's own answers, the bytes with
``hashlib`` of what was deposited.
"""

from __future__ import annotations

import glob
import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest
from server_helpers import in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from test_server_mirrors import a_key, mirror, pdi, postgres, serving  # noqa: F401 (postgres: a fixture)

from pdi.archive import Archive, Content
from pdi.signing import b64url, b64url_decode, canonical_json

PUBLIC = "open.example.us"
PRIVATE = "closed.example.us"
HIDDEN = "unseen.example.us"
BYTES = {"open": b"the open minutes\n", "sealed": b"the sealed minutes\n", "closed": b"the closed minutes\n",
         "unseen": b"the unseen minutes\n", "draft": b"a draft\n", "redraft": b"a draft, amended\n"}
UNTIL = "2031-01-01T00:00:00.000000Z"
#: A clock ten years ahead (2036): past the embargo.
LATER = {"LD_PRELOAD": (sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1")) or ["libfaketime-missing"])[0],
         "FAKETIME": "+3650d", "TZ": "UTC"}


def origin(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A: a public series with an open name and one embargoed until 2031, a private series with one name, a key,
    and a read token for both series in a file of mode 0600 (its path returned)."""
    location = tmp_path / "a"
    names: dict[str, str] = {}
    with Archive.init(location) as archive:
        archive.add_series(PUBLIC)
        archive.add_series(PRIVATE)
        archive.set_series_access(PRIVATE, "private")
        archive.add_series(HIDDEN)
        archive.set_series_access(HIDDEN, "hidden")
        names["open"] = str(archive.add(PUBLIC, BYTES["open"], format="text"))
        names["sealed"] = str(archive.add(PUBLIC, BYTES["sealed"], format="text", embargo_until="2031-01-01"))
        # a document embargoed whole, two versions
        names["draft"] = str(archive.add(PUBLIC, BYTES["draft"], format="text"))
        drafts = names["draft"].rsplit(".", 2)[0]
        names["redraft"] = str(archive.add_version(drafts, [Content(BYTES["redraft"], "text")])[0])
        archive.embargo(drafts, "2031-01-01")
        names["closed"] = str(archive.add(PRIVATE, BYTES["closed"], format="text"))
        names["unseen"] = str(archive.add(HIDDEN, BYTES["unseen"], format="text"))
    assert pdi("keys", "init", "--archive", str(location))[0] == 0
    token = tmp_path / "a-token"
    token.write_text(made_token(location, "mirror-b", PUBLIC, PRIVATE, HIDDEN) + "\n")
    token.chmod(0o600)
    return location, names, token


def made_token(location: Path | str, name: str, *series: str) -> str:
    code, out = pdi("token", "add", name, "--role", "read", *[a for s in series for a in ("--series", s)],
                    "--archive", str(location))
    assert code == 0, out
    return out.splitlines()[0]


def statuses(url: str, names: dict[str, str], token: str | None = None) -> dict[str, tuple[int, str]]:
    """Each name's N2R answer at ``url``: its status, and its bytes (200) or the problem's detail."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    found = {}
    for which, name in names.items():
        answer = httpx.get(f"{url}/uri-res/N2R?{name}", headers=headers)
        said = answer.text if answer.status_code == 200 else answer.json()["detail"]
        found[which] = (answer.status_code, said)
    return found


def held(location: Path | str, series: str) -> dict[str, str]:
    with Archive.open(location) as archive:
        return {e["name"]: e["sha256"] for e in archive.manifest_page(series, limit=10_000).entries}


@pytest.fixture(params=["sqlite", "postgresql"])
def b_location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """B: an empty archive with a signing key (SQLite, or test_server_mirrors' PostgreSQL one)."""
    if request.param == "sqlite":
        return str(mirror(tmp_path, "b")), {}
    found: tuple[str, dict[str, str]] = request.getfixturevalue("postgres")
    return found


def test_a_mirror_with_a_read_token_holds_private_and_embargoed_names_and_answers_as_the_origin(
    tmp_path: Path, b_location: tuple[str, dict[str, str]],
) -> None:
    a, names, token_file = origin(tmp_path)
    b, b_env = b_location
    with serving(a) as a_url:  # A at one address all along: the one B records
        for series in (PUBLIC, PRIVATE, HIDDEN):
            code, out = pdi("mirror", "add", a_url, "--series", series, "--token-file", str(token_file),
                            "--archive", b)
            assert code == 0 and f"token from the file {token_file}" in out, out
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0, out
        assert f"{PUBLIC}\tfrom {a_url}: 4 names listed, 4 new" in out and f"{PRIVATE}\tfrom {a_url}: 1 name listed" in out
        assert "as anyone" not in out
        from_a = statuses(a_url, names)
        theirs_too = statuses(a_url, names, made_token(a, "reader-a", PUBLIC, PRIVATE, HIDDEN))
        assert held(b, PUBLIC) == {names[w]: hashlib.sha256(BYTES[w]).hexdigest()
                                   for w in ("open", "sealed", "draft", "redraft")}
        assert held(b, PRIVATE) == {names["closed"]: hashlib.sha256(BYTES["closed"]).hexdigest()}
        assert held(b, HIDDEN) == {names["unseen"]: hashlib.sha256(BYTES["unseen"]).hexdigest()}
        # A's own answers, as the access rules say
        assert from_a["open"] == (200, BYTES["open"].decode())
        assert all(from_a[w][0] == 403 and f"embargoed until {UNTIL}" in from_a[w][1]
                   for w in ("sealed", "draft", "redraft"))
        assert from_a["closed"][0] == 403 and f"the series {PRIVATE} is private" in from_a["closed"][1]
        assert from_a["unseen"][0] == 404  # a hidden series' name: as if never minted
        assert all(theirs_too[w] == (200, BYTES[w].decode()) for w in BYTES)
        b_token = made_token(b, "reader-b", PUBLIC, PRIVATE, HIDDEN)  # B's own token holders read all of it
        with serving(b, b_env) as b_url:
            assert statuses(b_url, names) == from_a  # the same statuses and words to an anonymous reader
            assert all(statuses(b_url, names, b_token)[w] == (200, BYTES[w].decode()) for w in BYTES)
            listed = _payload(httpx.get(f"{b_url}/api/manifest?series={PUBLIC}").text)
            assert [e["name"] for e in listed["names"]] == [names["open"]]  # nor is it listed to anyone
            assert httpx.get(f"{b_url}/api/manifest?series={PRIVATE}").status_code == 403
            assert httpx.get(f"{b_url}/api/manifest?series={HIDDEN}").status_code == 404
        # the rules came in audited, from A's address, with the names
        with Archive.open(b) as archive:
            lines = [e for e in archive.audit() if e.action in ("series-access", "embargo")]
        assert {(e.action, e.subject, e.detail, e.address) for e in lines} == {
            ("series-access", PRIVATE, "private", a_url), ("series-access", HIDDEN, "hidden", a_url),
            ("embargo", names["sealed"], f"version 1 until {UNTIL} (from its origin's signed manifest)", a_url),
            ("embargo", names["draft"], f"the document until {UNTIL} (from its origin's signed manifest)", a_url)}
        # ten years later by each archive's clock: the embargo is over on both, the private series still private
        with serving(a, LATER) as a_later, serving(b, {**b_env, **LATER}) as b_later:
            later_a, later_b = statuses(a_later, names), statuses(b_later, names)
        assert all(later_a[w] == later_b[w] == (200, BYTES[w].decode()) for w in ("sealed", "draft", "redraft"))
        assert later_a["closed"] == later_b["closed"] and later_b["closed"][0] == 403
        assert later_a["unseen"] == later_b["unseen"] and later_b["unseen"][0] == 404
        # rules changed at A reach B at its next sync: the private series made public, the embargo lifted, the
        # open name's document embargoed
        with Archive.open(a) as archive:
            archive.set_series_access(PRIVATE, "public")
            archive.embargo(names["sealed"], None)
            archive.embargo(names["open"].rsplit(".", 2)[0], "2031-01-01")
        code, out = pdi("mirror", "sync", "--archive", b)
        assert code == 0 and "0 new" in out, out
        assert out.count("access rule changed") == 1 and "2 access rules changed" in out, out
        again = pdi("mirror", "sync", "--archive", b)
        assert again[0] == 0 and again[1].count("0 access rules changed") == 3, again[1]
        now_a = statuses(a_url, names)
    assert now_a["open"][0] == 403 and now_a["sealed"][0] == now_a["closed"][0] == 200 and now_a["unseen"][0] == 404
    with serving(b, b_env) as b_url:
        assert statuses(b_url, names) == now_a


def test_a_mirror_without_a_token_holds_neither_and_says_why(tmp_path: Path) -> None:
    a, names, _ = origin(tmp_path)
    c = mirror(tmp_path, "c")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", PUBLIC, "--archive", str(c))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(c))
        assert code == 0 and "1 name listed, 1 new" in out, out
        assert "names private or under embargo there are not listed to this archive" in out and "--token-file" in out
        # refused at once, not at the first sync: its manifest is not read as anyone
        code, out = pdi("mirror", "add", a_url, "--series", PRIVATE, "--archive", str(c))
        assert code == 10 and "HTTP 403" in out and "--token-file" in out, out
        assert out.count("is needed") == 1 and out.count("may read it") == 1, out  # said once, then what to do
        with Archive.open(c) as archive:
            assert [m.series for m in archive.mirrors()] == [PUBLIC] and archive.find_series(PRIVATE) is None
    assert held(c, PUBLIC) == {names["open"]: hashlib.sha256(BYTES["open"]).hexdigest()}


def _payload(jws: str) -> dict[str, Any]:
    return dict(json.loads(b64url_decode(jws.split(".")[1], "payload")))


class Altering:
    """A proxy in front of A that passes every request on (its Authorization too) and changes each manifest's
    payload with ``change``, keeping A's signature; it records each name whose octets are asked for."""

    def __init__(self, target: str, change: Callable[[dict[str, Any]], None]) -> None:
        self.target = target
        self.change = change
        self.altering = True
        self.fetched: list[str] = []
        self.app = Starlette(routes=[Route("/{path:path}", self.forward, methods=["GET", "POST"])])

    async def forward(self, request: Request) -> Response:
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("authorization", "content-type")}
        return await anyio.to_thread.run_sync(self._forward, request.method, request.url.path, request.url.query,
                                              body, headers)

    def _forward(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Response:
        url = f"{self.target}{path}" + (f"?{query}" if query else "")
        if path in ("/uri-res/N2R", "/api/octets"):
            self.fetched.append(query or body.decode())
        answer = httpx.request(method, url, content=body or None, headers=headers, timeout=30)
        content = answer.content
        if path == "/api/manifest" and answer.status_code == 200 and self.altering:
            header, payload, signature = content.decode().split(".")
            value = json.loads(b64url_decode(payload, "payload"))
            self.change(value)
            content = f"{header}.{b64url(canonical_json(value))}.{signature}".encode()
        kept = {k: v for k, v in answer.headers.items() if k.lower() in ("content-type", "link")}
        return Response(content, status_code=answer.status_code, headers=kept)


def _lift_embargoes(value: dict[str, Any]) -> None:
    for entry in value["names"]:
        entry.pop("embargo", None)


def _made_public(value: dict[str, Any]) -> None:
    value["access"] = "public"


@pytest.mark.parametrize(("series", "change"), [(PUBLIC, _lift_embargoes), (PRIVATE, _made_public)],
                         ids=["embargo-lifted", "access-public"])
def test_a_manifest_whose_access_rules_were_altered_fails_its_signature_and_nothing_is_stored(
    tmp_path: Path, series: str, change: Callable[[dict[str, Any]], None],
) -> None:
    a, _, token_file = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        proxy = Altering(a_url, change)
        with in_thread(proxy.app, host="127.0.0.1", port=0, log_level="warning") as server:
            p_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
            proxy.altering = False  # the add reads the first page once: the sync meets what was altered
            assert pdi("mirror", "add", p_url, "--series", series, "--key", a_key(a), "--token-file", str(token_file),
                       "--archive", str(b))[0] == 0
            proxy.altering = True
            code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 3 and "is refused" in out and "does not verify" in out, out
    assert proxy.fetched == []
    assert held(b, series) == {}
    with Archive.open(b) as archive:  # nor was any rule taken from it
        assert archive.find_series(series).access == "public"  # type: ignore[union-attr]
        assert not [e for e in archive.audit() if e.action in ("series-access", "embargo")]


def test_the_token_is_kept_where_the_operator_put_it_and_never_written_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, names, token_file = origin(tmp_path)
    secret = token_file.read_text().strip()
    b = mirror(tmp_path, "b")
    loose = tmp_path / "loose-token"
    loose.write_text(secret)
    loose.chmod(0o644)
    with serving(a) as a_url:
        code, out = pdi("mirror", "add", a_url, "--series", PRIVATE, "--token-file", str(loose), "--archive", str(b))
        assert code == 10 and f"chmod 600 {loose}" in out and secret not in out, out
        missing = pdi("mirror", "add", a_url, "--series", PRIVATE, "--token-env", "--archive", str(b))
        assert missing[0] == 4 and "$PDI_MIRROR_TOKEN holds no token" in missing[1]
        monkeypatch.setenv("PDI_MIRROR_TOKEN", secret)
        code, out = pdi("mirror", "add", a_url, "--series", PRIVATE, "--token-env", "--archive", str(b))
        assert code == 0 and "token from $PDI_MIRROR_TOKEN" in out, out
        # one secret is sent to one archive: the same variable for another is refused
        other = pdi("mirror", "add", "http://127.0.0.1:9", "--series", PUBLIC, "--token-env", "--key", a_key(a),
                    "--archive", str(b))
        assert other[0] == 5 and "holds the token of" in other[1]
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 new" in out and secret not in out, out
        monkeypatch.setenv("PDI_MIRROR_TOKEN", "pdi_wrong")
        refused = pdi("mirror", "sync", "--archive", str(b))
        assert refused[0] == 10 and "token sent is refused" in refused[1] and "pdi_wrong" not in refused[1]
    assert held(b, PRIVATE) == {names["closed"]: hashlib.sha256(BYTES["closed"]).hexdigest()}
    listing = pdi("mirror", "ls", "--archive", str(b))
    audit = pdi("audit", "--archive", str(b))
    assert "token from $PDI_MIRROR_TOKEN" in listing[1] and "token from env:PDI_MIRROR_TOKEN" in audit[1]
    assert all(secret not in text for text in (listing[1], audit[1]))
    with sqlite3.connect(b / "catalog.sqlite") as catalog:  # not in any row of the catalog either
        dump = "\n".join(catalog.iterdump())
    assert secret not in dump and "env:PDI_MIRROR_TOKEN" in dump


def test_with_a_token_an_origin_whose_manifests_do_not_say_its_rules_is_not_copied(tmp_path: Path) -> None:
    """An earlier pdi signs no access rules: what a token reads of it would be served here to anyone."""
    from pdi.archive.manifests import ManifestPage
    from pdi.server import create_app

    a, _, token_file = origin(tmp_path)
    b = mirror(tmp_path, "b")
    archive = Archive.open(a)
    real = archive.manifest_page

    def unsaid(*args: Any, **kwargs: Any) -> ManifestPage:
        page = real(*args, **kwargs)
        return ManifestPage(page.series, page.day, page.after, page.next,
                            tuple({k: v for k, v in e.items() if k != "embargo"} for e in page.entries))

    archive.manifest_page = unsaid  # type: ignore[method-assign]
    with in_thread(create_app(str(a), archive=archive), host="127.0.0.1", port=0, log_level="warning") as server:
        a_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        assert "access" not in _payload(httpx.get(f"{a_url}/api/manifest?series={PUBLIC}").text)
        assert pdi("mirror", "add", a_url, "--series", PUBLIC, "--token-file", str(token_file),
                   "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
    archive.close()
    assert code == 6 and "does not say its access rules" in out, out
    assert held(b, PUBLIC) == {}


def test_one_token_of_role_mirror_reads_and_announces(tmp_path: Path) -> None:
    """The token recorded by pdi mirror add --token-file is the one --announce sends when no other is given."""
    a, names, _ = origin(tmp_path)
    b = mirror(tmp_path, "b")
    token = tmp_path / "mirror-token"
    code, out = pdi("token", "add", "b-mirror", "--role", "mirror", "--series", PRIVATE, "--archive", str(a))
    assert code == 0, out
    token.write_text(out.splitlines()[0])
    token.chmod(0o600)
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", PRIVATE, "--token-file", str(token), "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--announce", "https://b.example.org", "--archive", str(b))
        assert code == 0 and f"announced\t{PRIVATE}\tto {a_url}\tnew" in out and "1 new" in out, out
        listed = httpx.get(f"{a_url}/uri-res/N2Ls?{names['closed']}",
                           headers={"Authorization": f"Bearer {token.read_text()}"}).text
    assert f"https://b.example.org/uri-res/N2R?{names['closed']}" in listed
    assert held(b, PRIVATE) == {names["closed"]: hashlib.sha256(BYTES["closed"]).hexdigest()}


def test_an_announcement_with_the_read_token_says_how_to_get_one_of_role_mirror(tmp_path: Path) -> None:
    """--announce falls back to the read token pdi mirror add recorded; A refuses it (403, "this needs mirror"),
    and the message says which token was sent and how to get one of role mirror: the pdi token add line to run
    on A, and --token-file to give it. Done as it says, the announcement is recorded."""
    a, _, read = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", PRIVATE, "--token-file", str(read), "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--announce", "https://b.example.org", "--archive", str(b))
        assert code == 10, out
        assert out == (
            f"pdi: forbidden: {a_url}/api/mirrors refused this mirror's announcement (HTTP 403): token 'mirror-b' has the role"
            f" read; this needs mirror. The token sent was the one pdi mirror add recorded to read {PRIVATE} with"
            f" (from the file {read}); an announcement needs a token of role mirror for {PRIVATE}, which the"
            f" operator of {a_url} makes there (pdi token add NAME --role mirror --series {PRIVATE}) and gives to"
            " you, to put in a file of mode 0600 and give with pdi mirror sync --announce https://b.example.org"
            " --token-file FILE\n"), out
        code, made = pdi("token", "add", "announce-b", "--role", "mirror", "--series", PRIVATE, "--archive", str(a))
        assert code == 0, made
        given = tmp_path / "b-token"
        given.write_text(made.splitlines()[0] + "\n")
        given.chmod(0o600)
        code, out = pdi("mirror", "sync", "--announce", "https://b.example.org", "--token-file", str(given),
                        "--archive", str(b))
        assert code == 0 and f"announced\t{PRIVATE}\tto {a_url}\tnew" in out, out


def test_an_audit_of_a_peer_read_as_anyone_does_not_call_what_it_withholds_missing(tmp_path: Path) -> None:
    """Found by a tester (2026-12-02): A recorded its mirror B as a peer without a token of B, and pdi mirror audit
    said ``B=missing`` of each name embargoed at A (exit 3), which B holds and, keeping A's rules, lists to no one
    without a token. Such a name is now said not to be compared with B, and how to compare it; a public name B
    lacks is still a disagreement, and with a token of B every name is compared."""
    a, names, token_file = origin(tmp_path)
    b = mirror(tmp_path, "b")
    withheld = ("sealed", "draft", "redraft")  # embargoed at A until 2031 (the version, the document)
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", PUBLIC, "--token-file", str(token_file), "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
    assert held(b, PUBLIC) == {names[w]: hashlib.sha256(BYTES[w]).hexdigest() for w in ("open", *withheld)}
    with Archive.open(a) as archive:  # a public name B has not copied yet
        late = str(archive.add(PUBLIC, b"the late minutes\n", format="text"))
    late_digest = hashlib.sha256(b"the late minutes\n").hexdigest()
    with serving(b) as b_url:
        assert pdi("mirror", "add", b_url, "--series", PUBLIC, "--peer", "--archive", str(a))[0] == 0
        code, out = pdi("mirror", "audit", "--archive", str(a))
        assert code == 3, out
        assert out.count("disagree\t") == 1, out
        assert f"disagree\t{late}\there={late_digest}; {b_url}=missing" in out
        assert f"{PUBLIC}\t5 names compared with 1 peer: 1 disagreement" in out
        assert (f"{PUBLIC}\tread from {b_url} as anyone: 3 names private or under embargo here not listed to this"
                f" archive, not compared (pdi mirror add {b_url} --series {PUBLIC} --peer --token-file FILE") in out
        assert all(names[w] not in out for w in withheld), out
        token = tmp_path / "b-token"
        token.write_text(made_token(b, "audit-a", PUBLIC) + "\n")
        token.chmod(0o600)
        assert pdi("mirror", "add", b_url, "--series", PUBLIC, "--peer", "--token-file", str(token),
                   "--archive", str(a))[0] == 0
        code, out = pdi("mirror", "audit", "--archive", str(a))
    assert code == 3 and out.count("disagree\t") == 1 and f"{late}\there=" in out, out
    assert "as anyone" not in out and f"{PUBLIC}\t5 names compared with 1 peer: 1 disagreement" in out, out


def test_a_repair_from_a_peer_read_as_anyone_says_why_an_embargoed_name_is_not_listed(tmp_path: Path) -> None:
    """Found by a tester (2026-12-02): A's blob of a name embargoed at A, damaged, was left unrepaired with
    ``its signed manifest does not list … with sha256 …`` of B, its mirror, which holds it and lists it to no one
    without a token of B. The refusal now says B was read as anyone and how to read it; with a token of B,
    the blob is repaired from B."""
    from support.stored_blobs import damage

    a, names, token_file = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", PUBLIC, "--token-file", str(token_file), "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
    sealed = hashlib.sha256(BYTES["sealed"]).hexdigest()
    with Archive.open(a) as archive:
        damage(archive, sealed, "alter")
    with serving(b) as b_url:
        assert pdi("mirror", "add", b_url, "--series", PUBLIC, "--peer", "--archive", str(a))[0] == 0
        code, out = pdi("verify", "--repair", "--archive", str(a))
        assert code == 3 and f"altered\t{names['sealed']}" in out, out
        assert (f"unrepaired\t{names['sealed']}\t{b_url}: its signed manifest does not list {names['sealed']}"
                f" (read as anyone: a name private or under embargo there is not listed to this archive; pdi mirror"
                f" add {b_url} --series {PUBLIC} --peer --token-file FILE, a token of that archive, reads it)") in out, out
        token = tmp_path / "b-token"
        token.write_text(made_token(b, "repair-a", PUBLIC) + "\n")
        token.chmod(0o600)
        assert pdi("mirror", "add", b_url, "--series", PUBLIC, "--peer", "--token-file", str(token),
                   "--archive", str(a))[0] == 0
        code, out = pdi("verify", "--repair", "--archive", str(a))
    assert code == 0 and f"repaired\t{names['sealed']}\tfrom {b_url}, checked against its signed manifest" in out, out
    with Archive.open(a) as archive:
        assert archive.get(names["sealed"]).data == BYTES["sealed"]
