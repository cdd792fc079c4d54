"""Private series and embargoes over HTTP (issue 15): every read path, the response cache, replay.

Each test runs on both catalogs (``location``). A reader without a token
for the series gets 403 for a private series or an embargoed name, 404 —
the very answer a name never minted gets — for a hidden series; a token of
any role whose series cover it reads it (RFC 6750 bearer tokens). An answer
only a token's holder may read is marked ``private, no-store`` (RFC 9111
§5.2.2.3, §5.2.2.7) and never kept by the resolver's cache; a cached public
answer is forgotten when its series is made private or it is embargoed,
also when the change is made by another process.
"""

from __future__ import annotations

import base64
import datetime
import io
import json
import time
import urllib.parse
from pathlib import Path

from PIL import Image
from server_helpers import Clock, captured_aggregate, sealed_archive, serving
from starlette.testclient import TestClient
from test_server_pages_screenshots import SHOTS

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.server import create_app
from pdi.server.replay.origin import create_replay_app

S = "library.example.us"
SEALED = "court.example.us"


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _reads(client: TestClient, name: str, headers: dict[str, str] | None = None) -> dict[str, int]:
    """The status of every read path for ``name`` (a versioned text name)."""
    generic = name.rsplit(".", 2)[0]
    paths = {
        "N2R": f"/uri-res/N2R?{name}",
        "N2R#": f"/uri-res/N2R?{name}%23char=0,4",
        "I2R": f"/uri-res/I2R?{name}",
        "N2C": f"/uri-res/N2C?{name}",
        "N2L": f"/uri-res/N2L?{name}",
        "N2Ls": f"/uri-res/N2Ls?{generic}",
        "N2Ns": f"/uri-res/N2Ns?{name}",
        "resolve": f"/api/resolve?pdi={_q(name)}",
        "meta": f"/api/meta?pdi={_q(name)}",
        "rfc5147": f"/api/rfc5147?pdi={_q(name)}&fragment=char%3D0%2C4",
        "view": f"/view?pdi={_q(name)}",
        "document": f"/view?pdi={_q(generic)}",
    }
    return {what: client.get(path, headers=headers or {}, follow_redirects=False).status_code
            for what, path in paths.items()}


def test_every_read_path_is_403_for_a_private_series_404_for_a_hidden_one(location: str) -> None:
    archive, public, sealed, reader = sealed_archive(location)
    with archive:
        client = TestClient(create_app(location, archive=archive))
        token = {"Authorization": f"Bearer {reader}"}
        allowed = _reads(client, sealed, token)
        assert allowed == {**allowed, "N2L": 302} and set(allowed.values()) <= {200, 302}, allowed
        forbidden = _reads(client, sealed)
        assert set(forbidden.values()) == {403}, forbidden
        assert set(_reads(client, public).values()) <= {200, 302}
        # listings, counts and search show only what the reader may read
        assert client.get(f"/api/ls?series={SEALED}").status_code == 403
        assert client.get("/api/ls").json()["names"] == [public]
        assert sorted(client.get("/api/ls", headers=token).json()["names"]) == sorted([public, sealed])
        assert sealed not in client.get("/api/search?q=minutes").text
        assert sealed in client.get("/api/search?q=minutes", headers=token).text
        assert SEALED not in client.get("/series").text
        assert client.get(f"/series/{SEALED}").status_code == 403
        assert client.get(f"/series/{SEALED}", headers=token).status_code == 200
        # a token that is not one is refused, not read as anonymous
        bad = client.get(f"/uri-res/N2R?{public}", headers={"Authorization": "Bearer not-a-token"})
        assert bad.status_code == 401 and bad.headers["www-authenticate"].startswith("Bearer")
        # hidden: 404, as for a name never minted
        archive.set_series_access(SEALED, "hidden")
        client = TestClient(create_app(location, archive=archive))
        hidden = _reads(client, sealed)
        assert set(hidden.values()) == {404}, hidden
        never = sealed.replace("/1.text.1", "/77.text.1")
        assert client.get(f"/uri-res/N2R?{sealed}").json()["detail"] == \
            client.get(f"/uri-res/N2R?{never}").json()["detail"].replace("/77.", "/1.")
        assert SEALED not in client.get("/api/series").text
        assert client.get(f"/series/{SEALED}").status_code == 404
        assert set(_reads(client, sealed, token).values()) <= {200, 302}


def test_a_token_that_does_not_cover_a_private_series_is_told_insufficient_scope(location: str) -> None:
    """RFC 6750 §3.1: a live token that does not cover what it asks is ``403`` with ``error="insufficient_scope"``
    in ``WWW-Authenticate``; a reader without a token is told that one is needed, and gets no challenge of it."""
    archive, public, sealed, _ = sealed_archive(location)
    with archive:
        _, other = archive.add_token("visitor", role="read", series=[S])
        client = TestClient(create_app(location, archive=archive))
        token = {"Authorization": f"Bearer {other}"}
        assert set(_reads(client, sealed, token).values()) == {403}
        for path in (f"/uri-res/N2R?{sealed}", f"/uri-res/N2L?{sealed}", f"/api/meta?pdi={_q(sealed)}",
                     f"/api/ls?series={SEALED}"):
            answer = client.get(path, headers=token, follow_redirects=False)
            assert answer.status_code == 403, path
            assert answer.headers["www-authenticate"] == 'Bearer realm="pdi", error="insufficient_scope"', path
            assert "'visitor' does not cover it" in answer.json()["detail"], path
            anonymous = client.get(path, follow_redirects=False)
            assert anonymous.status_code == 403 and "www-authenticate" not in anonymous.headers, path
            assert anonymous.json()["detail"].endswith("a token that may read it is needed"), path
        assert client.get(f"/uri-res/N2R?{public}", headers=token).status_code == 200


def test_a_timemap_or_timegate_read_with_a_token_is_never_kept_by_a_cache(location: str) -> None:
    # a private series' captures of a URL are mementos only for a token that reads them: that list
    # must not be kept by a shared cache and given to others (RFC 9111 §5.2.2.7 no-store)
    url = "http://www.example.com/ruling.html"
    with Archive.init(location) as archive:
        archive.add_series(S)
        archive.add_series(SEALED)
        archive.add(S, b"<p>public copy</p>", format="html", foreign_id=url)
        archive.add(SEALED, b"<p>sealed copy</p>", format="html", foreign_id=url)
        archive.set_series_access(SEALED, "private")
        _, reader = archive.add_token("clerk", role="read", series=[SEALED])
        client = TestClient(create_app(location, archive=archive))
        token = {"Authorization": f"Bearer {reader}"}
        for route in (f"/timemap/link/{url}", f"/timegate/{url}"):
            anonymous = client.get(route, follow_redirects=False)
            assert anonymous.status_code in (200, 302)
            assert anonymous.headers["cache-control"].startswith("public, max-age=")
            read = client.get(route, headers=token, follow_redirects=False)
            assert read.status_code in (200, 302) and read.headers["cache-control"] == "private, no-store"
        # one memento anonymously (the public copy), two with the token
        def mementos(**headers: str) -> int:
            lines = client.get(f"/timemap/link/{url}", headers=headers).text.splitlines()
            return sum('memento"' in line for line in lines)

        assert (mementos(), mementos(**token)) == (1, 2)


def test_a_private_answer_is_never_cached_and_a_cached_public_one_is_forgotten(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"a public notice\n", format="text"))
        _, reader = archive.add_token("clerk", role="read", series=[S])
        app = create_app(location, archive=archive)
        app.state.cache.revalidate_seconds = 0  # ask the catalog at every request
        client = TestClient(app)
        first = client.get(f"/uri-res/N2R?{name}")
        assert first.status_code == 200 and "public" in first.headers["cache-control"]
        assert len(app.state.cache) == 1
        # another process makes the series private: this resolver's cache forgets
        with Archive.open(location) as elsewhere:
            elsewhere.set_series_access(S, "private")
        assert client.get(f"/uri-res/N2R?{name}").status_code == 403
        assert len(app.state.cache) == 0
        private = client.get(f"/uri-res/N2R?{name}", headers={"Authorization": f"Bearer {reader}"})
        assert private.status_code == 200 and private.content == b"a public notice\n"
        assert private.headers["cache-control"] == "private, no-store"
        again = client.get(f"/uri-res/N2R?{name}",
                           headers={"Authorization": f"Bearer {reader}", "If-None-Match": private.headers["etag"]})
        assert again.status_code == 304 and again.headers["cache-control"] == "private, no-store"
        assert len(app.state.cache) == 0  # never kept, so never given to anyone else
        assert client.get(f"/uri-res/N2R?{name}").status_code == 403
        # public again, then embargoed by another process: forgotten again
        with Archive.open(location) as elsewhere:
            elsewhere.set_series_access(S, "public")
        assert client.get(f"/uri-res/N2R?{name}").status_code == 200
        assert len(app.state.cache) == 1
        with Archive.open(location) as elsewhere:
            elsewhere.embargo(name, "2099-01-01")
        assert client.get(f"/uri-res/N2R?{name}").status_code == 403


def test_a_write_embargoed_until_a_moment_past_says_so_in_a_warning(location: str) -> None:
    # found in a new user's trial: `pdi add --embargo-until <a day past>` warns that the embargo is over already, but
    # POST /api/deposit?…&embargo=<a day past> answered 201 as any deposit, and the depositor believed it embargoed.
    # The archive's clock is 2026-11-23 09:00 GMT: 2026-11-23 (its start) is past, 09:00:00+02:00 (07:00 GMT) too.
    clock = Clock(datetime.datetime(2026, 11, 23, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        client = TestClient(create_app(location, archive=archive))
        token = {"Authorization": f"Bearer {curator}"}
        said = ('299 pdi "an embargo until {} is over already: it set nothing, and the version reads as any other'
                ' name (POST /api/embargo?pdi=NAME&until=DATE embargoes it)"')
        made = client.post(f"/api/deposit?series={S}&format=text&embargo=2026-11-23", content=b"one\n", headers=token)
        assert made.status_code == 201 and made.headers["warning"] == said.format("2026-11-23T00:00:00.000000Z")
        name = made.json()["pdi"]
        assert client.get(f"/uri-res/N2R?{name}").content == b"one\n"  # as said: it reads as any other name
        generic = name.rsplit(".", 2)[0]
        again = client.post(f"/api/version?pdi={_q(generic)}&format=text&embargo={_q('2026-11-23T09:00:00+02:00')}",
                            content=b"two\n", headers=token)
        assert again.status_code == 201 and again.headers["warning"] == said.format("2026-11-23T07:00:00.000000Z")
        batch = client.post(f"/api/batch?series={S}&embargo=2026-11-01", headers=token,
                            files={"a": ("a.txt", b"three\n", "text/plain")})
        assert batch.status_code == 201 and batch.headers["warning"] == said.format("2026-11-01T00:00:00.000000Z")
        # the very moment of the clock is over (an embargo ends at its moment); a moment still to come is said nothing of
        now = client.post(f"/api/deposit?series={S}&format=text&embargo={_q('2026-11-23T09:00:00Z')}",
                          content=b"four\n", headers=token)
        assert now.headers["warning"] == said.format("2026-11-23T09:00:00.000000Z")
        later = client.post(f"/api/deposit?series={S}&format=text&embargo={_q('2026-11-23T09:00:01Z')}",
                            content=b"five\n", headers=token)
        assert later.status_code == 201 and "warning" not in later.headers
        assert client.get(f"/uri-res/N2R?{later.json()['pdi']}").status_code == 403
        plain = client.post(f"/api/deposit?series={S}&format=text", content=b"six\n", headers=token)
        assert "warning" not in plain.headers


def test_a_deposit_answered_unchanged_says_that_the_embargo_it_asked_for_was_not_set(location: str) -> None:
    # found by a reviewer: the same octets again under id=Case_2 with embargo=2100-01-01 answered 200 "unchanged"
    # and nothing more, the document still public; and under an embargo until 2099, embargo=2020-01-01 warned "over
    # already: what was deposited reads as any other name", where it answered 403 until 2099
    clock = Clock(datetime.datetime(2026, 11, 23, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        client = TestClient(create_app(location, archive=archive))
        token = {"Authorization": f"Bearer {curator}"}
        made = client.post(f"/api/deposit?series={S}&format=text&id=Case_2", content=b"one\n", headers=token)
        assert made.status_code == 201 and "warning" not in made.headers and "embargo" not in made.json()
        name = made.json()["pdi"]
        again = client.post(f"/api/deposit?series={S}&format=text&id=Case_2&embargo=2100-01-01", content=b"one\n",
                            headers=token)
        assert again.status_code == 200 and again.json()["unchanged"] is True and again.json()["pdi"] == name
        assert again.headers["warning"] == (
            '299 pdi "no embargo was set: nothing was deposited (version 1 already holds these octets), and the'
            ' version reads as any other name (POST /api/embargo?pdi=NAME&until=DATE embargoes it)"')
        assert again.json()["embargo"] == {"set": False, "asked": "2100-01-01T00:00:00.000000Z", "in_force": None}
        assert client.get(f"/uri-res/N2R?{name}").status_code == 200  # as said: not embargoed
        # the way it names sets it
        assert client.post(f"/api/embargo?pdi={_q(name)}&until=2099-01-01", headers=token).status_code == 200
        assert client.get(f"/uri-res/N2R?{name}").status_code == 403
        # under that embargo: a moment past, an earlier and a later one each set nothing, and each says what holds
        for asked, stands in (
            ("2020-01-01", "the version is embargoed until 2099-01-01T00:00:00.000000Z already"),
            ("2050-01-01", "the version is embargoed until 2099-01-01T00:00:00.000000Z already"),
            ("2100-01-01", "the version is embargoed only until 2099-01-01T00:00:00.000000Z, not until"
                           " 2100-01-01T00:00:00.000000Z (POST /api/embargo?pdi=NAME&until=DATE embargoes it until"
                           " then)"),
        ):
            sealed = client.post(f"/api/deposit?series={S}&format=text&id=Case_2&embargo={asked}",
                                 content=b"one\n", headers=token)
            assert sealed.status_code == 200 and "over already" not in sealed.headers["warning"]
            assert sealed.headers["warning"] == (
                f'299 pdi "no embargo was set: nothing was deposited (version 1 already holds these octets), and'
                f' {stands}"')
            assert sealed.json()["embargo"] == {"set": False, "asked": f"{asked}T00:00:00.000000Z",
                                                "in_force": "2099-01-01T00:00:00.000000Z"}
            assert client.get(f"/uri-res/N2R?{name}").status_code == 403
        # a batch: the unchanged item says it, the new one embargoed as asked
        batch = client.post(f"/api/batch?series={S}&embargo=2100-01-01", headers=token,
                            data={"manifest": json.dumps([{"id": "Case_2"}, {}])},
                            files=[("a", ("a.txt", b"one\n", "text/plain")), ("b", ("b.txt", b"two\n", "text/plain"))])
        assert batch.status_code == 201, batch.text
        first, second = batch.json()["items"]
        assert first["unchanged"] is True and first["embargo"]["set"] is False
        assert "embargo" not in second
        assert batch.headers["warning"].startswith('299 pdi "no embargo was set: nothing was deposited')
        assert client.get(f"/uri-res/N2R?{second['pdi']}").status_code == 403


def test_embargo_over_http_and_its_lifting_by_the_archive_clock(location: str) -> None:
    clock = Clock(datetime.datetime(2026, 11, 23, 9, 0, tzinfo=datetime.UTC))
    with Archive.init(location, clock=clock) as archive:
        archive.add_series(S)
        _, depositor = archive.add_token("intake", role="deposit", series=[S])
        _, curator = archive.add_token("clerk", role="curate", series=[S])
        client = TestClient(create_app(location, archive=archive))
        refused = client.post(f"/api/deposit?series={S}&format=text&embargo=2026-12-01", content=b"ruling\n",
                              headers={"Authorization": f"Bearer {depositor}"})
        assert refused.status_code == 403 and "curate" in refused.json()["detail"]
        made = client.post(f"/api/deposit?series={S}&format=text&embargo=2026-12-01", content=b"ruling\n",
                           headers={"Authorization": f"Bearer {curator}"})
        assert made.status_code == 201, made.text
        name = made.json()["pdi"]
        assert [(e.action, e.detail) for e in archive.audit()][-1] == (
            "deposit", f"{name}; embargoed until 2026-12-01T00:00:00.000000Z")
        gone = client.get(f"/uri-res/N2R?{name}")
        assert gone.status_code == 403 and "embargoed until 2026-12-01" in gone.json()["detail"]
        assert client.get(f"/uri-res/N2R?{name}", headers={"Authorization": f"Bearer {depositor}"}).status_code == 200
        clock.now = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
        assert client.get(f"/uri-res/N2R?{name}").content == b"ruling\n"
        # embargoed again through the API, then lifted
        again = client.post(f"/api/embargo?pdi={_q(name)}&until=2027-01-01",
                            headers={"Authorization": f"Bearer {curator}"})
        assert again.status_code == 200 and again.json()["embargo_until"] == "2027-01-01T00:00:00.000000Z"
        assert client.get(f"/uri-res/N2R?{name}").status_code == 403
        lifted = client.post(f"/api/embargo?pdi={_q(name)}&lift=true", headers={"Authorization": f"Bearer {curator}"})
        assert lifted.json() == {"pdi": name, "embargo_until": None, "changed": True,
                                 "before": "2027-01-01T00:00:00.000000Z", "held": []}
        assert client.get(f"/uri-res/N2R?{name}").status_code == 200
        # the version under its document's embargo: a lift of the version, which has none of its own, lifts
        # nothing and is refused (409), naming what holds it; the resolver still answers 403
        generic = name.rsplit(".", 2)[0]
        whole = client.post(f"/api/embargo?pdi={_q(generic)}&until=2027-02-01",
                            headers={"Authorization": f"Bearer {curator}"})
        assert whole.json()["embargo_until"] == "2027-02-01T00:00:00.000000Z"
        refused = client.post(f"/api/embargo?pdi={_q(name)}&lift=true", headers={"Authorization": f"Bearer {curator}"})
        assert refused.status_code == 409
        assert refused.json()["detail"] == (
            f"{name}: nothing lifted: version 1 has no embargo of its own; its document's embargo until"
            f" 2027-02-01T00:00:00.000000Z still covers it (lift it by the generic name {generic})")
        assert client.get(f"/uri-res/N2R?{name}").status_code == 403
        # the version's own embargo, then the document's lifted: the answer names the version still held
        own = client.post(f"/api/embargo?pdi={_q(name)}&until=2027-01-15",
                          headers={"Authorization": f"Bearer {curator}"})
        assert own.json() == {"pdi": name, "embargo_until": "2027-02-01T00:00:00.000000Z", "changed": True,
                              "before": None, "held": [{"pdi": generic, "embargo_until": "2027-02-01T00:00:00.000000Z"}]}
        lifted = client.post(f"/api/embargo?pdi={_q(generic)}&lift=true", headers={"Authorization": f"Bearer {curator}"})
        assert lifted.json() == {"pdi": generic, "embargo_until": None, "changed": True,
                                 "before": "2027-02-01T00:00:00.000000Z",
                                 "held": [{"pdi": name, "embargo_until": "2027-01-15T00:00:00.000000Z"}]}
        answer = client.get(f"/uri-res/N2R?{name}")
        assert answer.status_code == 403 and "embargoed until 2027-01-15" in answer.json()["detail"]
        refused = client.post(f"/api/embargo?pdi={_q(generic)}&lift=true", headers={"Authorization": f"Bearer {curator}"})
        assert refused.status_code == 409 and name in refused.json()["detail"]
        # the version's embargo shortened: refused without shorten=true, naming both moments; done with it
        shorter = client.post(f"/api/embargo?pdi={_q(name)}&until=2027-01-10",
                              headers={"Authorization": f"Bearer {curator}"})
        assert shorter.status_code == 409
        assert shorter.json()["detail"].startswith(
            f"{name}: its embargo until 2027-01-15T00:00:00.000000Z would end earlier, at 2027-01-10T00:00:00.000000Z")
        assert "embargoed until 2027-01-15" in client.get(f"/uri-res/N2R?{name}").json()["detail"]
        shorter = client.post(f"/api/embargo?pdi={_q(name)}&until=2027-01-10&shorten=true",
                              headers={"Authorization": f"Bearer {curator}"})
        assert shorter.json() == {"pdi": name, "embargo_until": "2027-01-10T00:00:00.000000Z", "changed": True,
                                  "before": "2027-01-15T00:00:00.000000Z", "held": []}
        assert "embargoed until 2027-01-10" in client.get(f"/uri-res/N2R?{name}").json()["detail"]
        assert [e.detail for e in archive.audit() if e.action == "embargo"][-1] == (
            "version 1 until 2027-01-10T00:00:00.000000Z (was until 2027-01-15T00:00:00.000000Z)")
        # Found by a review: `until` sent in a form's body was not read, and no `until` lifted the embargo; the
        # route reads its query alone, so a body, neither until nor lift, or both, are refused and change nothing
        entries = len(archive.audit())
        for query, body in ((f"pdi={_q(name)}", {"until": "2027-01-05"}), (f"pdi={_q(name)}", None),
                            (f"pdi={_q(name)}&until=2027-03-01&lift=true", None),
                            (f"pdi={_q(name)}&lift=true", {"lift": "true"})):
            refused = client.post(f"/api/embargo?{query}", data=body, headers={"Authorization": f"Bearer {curator}"})
            assert refused.status_code == 400, (query, body, refused.text)
            assert "nothing changed" in refused.json()["detail"]
        chunked = client.post(f"/api/embargo?pdi={_q(name)}&lift=true", content=iter([b"", b"until=2027-01-05"]),
                              headers={"Authorization": f"Bearer {curator}"})
        assert chunked.status_code == 400 and "a request body is not read" in chunked.json()["detail"]
        assert len(archive.audit()) == entries
        assert "embargoed until 2027-01-10" in client.get(f"/uri-res/N2R?{name}").json()["detail"]


def test_replay_of_a_private_capture_is_refused(location: str) -> None:
    picture = io.BytesIO()
    Image.new("RGB", (4, 4), (250, 200, 0)).save(picture, format="PNG")
    with Archive.init(location) as archive:
        archive.add_series(SEALED)
        capture = str(archive.add(SEALED, captured_aggregate(picture.getvalue()), format="related",
                                  foreign_id="http://www.example.com/news/"))
        _, reader = archive.add_token("clerk", role="read", series=[SEALED])
        replay = TestClient(create_replay_app(location, archive=archive))
        path = f"/replay/{_q(capture)}/index.html"
        assert replay.get(path).status_code == 200
        archive.set_series_access(SEALED, "private")
        assert replay.get(path).status_code == 403
        assert replay.get(f"/replay/{_q(capture)}/style.css").status_code == 403
        assert replay.get(path, headers={"Authorization": f"Bearer {reader}"}).status_code == 200


def test_the_viewer_tells_a_reader_without_a_token_that_a_name_is_private(tmp_path: Path) -> None:
    """Opened in Chromium, as a reader sees it; the screenshot is saved beside the other pages'."""
    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(SEALED)
        name = str(archive.add(SEALED, b"sealed minutes\n", format="text"))
        embargoed = str(archive.add(SEALED, b"judgment\n", format="text", embargo_until="2099-01-01"))
        archive.set_series_access(SEALED, "private")
    with serving(location, "--workers", "1") as (_, port), devtools() as pipe:
        shots = {}
        for label, shown in (("private", name), ("embargoed", embargoed)):
            if label == "embargoed":
                with Archive.open(location) as archive:  # a refusal is never kept: asked again now
                    archive.set_series_access(SEALED, "public")
            session = open_page(pipe, f"http://127.0.0.1:{port}/view?pdi={_q(shown)}")
            deadline = time.monotonic() + 30
            size = {"width": 1100, "height": 500, "deviceScaleFactor": 1, "mobile": False}
            pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
            text = pipe.call("Runtime.evaluate", {"expression": "document.querySelector('.error')?.innerText ?? ''",
                                                  "returnByValue": True}, session, deadline)["result"]["value"]
            body = pipe.call("Runtime.evaluate", {"expression": "document.body.innerText", "returnByValue": True},
                             session, deadline)["result"]["value"]
            shots[label] = base64.b64decode(pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)["data"])
            assert ("private" if label == "private" else "embargoed until 2099-01-01") in text, text
            assert "sealed minutes" not in body and "judgment" not in body
    SHOTS.mkdir(parents=True, exist_ok=True)
    for label, png in shots.items():
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        (SHOTS / f"{label}.png").write_bytes(png)
