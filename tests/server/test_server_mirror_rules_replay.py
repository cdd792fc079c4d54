"""An older manifest page re-served to a mirror: refused, so that no rule the origin set since is lifted on the mirror.

A signature holds for ever, so a page the origin signed before it embargoed a name or closed a series still
verifies. Before schema step 25 a mirror that was re-served such a page (by a stale cache, or by anyone between
the two archives: a helper's attack on the mirrors, 2026-12-02) followed it, lifting the embargo and opening the
series on the mirror. A page now signs how many times its series' rules have changed at the origin (``rules``), and
a mirror records the most it has followed, refusing fewer. Here A and B are real ``pdi serve`` processes and
archives, and the page replayed is one A itself signed, kept by a proxy in between; the counts expected are
worked out from what the test changes (each ``set_series_access`` or embargo set or lifted is one change, of its
series and those under it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import in_thread
from starlette.responses import Response
from test_server_mirror_access import (
    PRIVATE,
    PUBLIC,
    UNTIL,
    Altering,
    held,
    origin,
    statuses,
)
from test_server_mirror_hostile import KEY, SERIES, Origin, entry, run, signed
from test_server_mirrors import a_key, mirror, pdi, serving

from pdi.archive import Archive, Content
from pdi.archive.naming import key_of, parse_pdi
from pdi.signing import jwk_set_text, parse_jwks, verify_manifest
from support.stored_blobs import flip_octet


class Replaying(Altering):
    """A proxy in front of A that passes every request on (its Authorization too), keeps each manifest page A
    answers while ``keeping``, and answers the one kept for the same query instead of asking A while
    ``replaying``; it records each name whose octets are asked for (test_server_mirror_access's proxy, which
    alters nothing here)."""

    def __init__(self, target: str) -> None:
        super().__init__(target, lambda value: None)
        self.altering = False
        self.keeping = False
        self.replaying = False
        self.kept: dict[str, bytes] = {}

    def _forward(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Response:
        if path == "/api/manifest" and self.replaying and query in self.kept:
            return Response(self.kept[query], media_type="application/jose")
        answer = super()._forward(method, path, query, body, headers)
        if path == "/api/manifest" and answer.status_code == 200 and self.keeping:
            self.kept[query] = bytes(answer.body)
        return answer


@pytest.fixture
def a_and_b(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], Path, Path, str, Replaying]]:
    """A (test_server_mirror_access's origin, its private series made public first) served behind a
    :class:`Replaying` proxy, and B mirroring A's public and private series through it with A's read token."""
    a, names, token_file = origin(tmp_path)
    with Archive.open(a) as archive:
        archive.set_series_access(PRIVATE, "public")
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        proxy = Replaying(a_url)
        with in_thread(proxy.app, host="127.0.0.1", port=0, log_level="warning") as server:
            p_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
            for series in (PUBLIC, PRIVATE):
                code, out = pdi("mirror", "add", p_url, "--series", series, "--key", a_key(a), "--token-file",
                                str(token_file), "--archive", str(b))
                assert code == 0, out
            yield a, names, token_file, b, p_url, proxy


def test_a_page_signed_before_the_origin_closed_a_series_and_embargoed_a_name_is_refused_when_replayed(
    a_and_b: tuple[Path, dict[str, str], Path, Path, str, Replaying],
) -> None:
    a, names, _, b, _, proxy = a_and_b
    proxy.keeping = True  # the pages of this first sync are the ones replayed later
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0, out
    proxy.keeping = False
    assert set(proxy.kept) == {f"series={PUBLIC}&limit=1000", f"series={PRIVATE}&limit=1000"}
    with Archive.open(a) as archive:  # A closes its second series and embargoes its open name, after that sync
        archive.set_series_access(PRIVATE, "private")
        archive.embargo(names["open"].rsplit(".", 2)[0], UNTIL[:10])
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0 and out.count("1 access rule changed") == 2, out  # each series: its access, its embargo
    before = _rules_audited(b)

    proxy.replaying = True  # the pages A signed before, A's own signature on them
    proxy.fetched.clear()
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 3, out
    assert "an older page, replayed" in out and "had changed" in out and "pdi mirror remove" in out, out
    assert proxy.fetched == []  # nothing the replayed pages list was fetched
    assert _rules_audited(b) == before  # nor any of their rules followed
    with Archive.open(b) as archive:
        assert archive.find_series(PRIVATE).access == "private"  # type: ignore[union-attr]
    with serving(b) as b_url:  # and B answers as A does now, not as A did when it signed the replayed pages
        now = statuses(b_url, {"open": names["open"], "closed": names["closed"]})
        assert now["open"][0] == 403 and f"embargoed until {UNTIL}" in now["open"][1], now
        assert now["closed"][0] == 403 and f"the series {PRIVATE} is private" in now["closed"][1], now

    proxy.replaying = False  # A's current pages are followed again at once
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0 and "0 new" in out and "access rule" in out, out
    assert held(b, PUBLIC)[names["open"]] == held(a, PUBLIC)[names["open"]]


def _rules_audited(location: Path) -> list[tuple[str, str, str]]:
    with Archive.open(location) as archive:
        return [(e.action, e.subject, e.detail) for e in archive.audit() if e.action in ("series-access", "embargo")]


def test_a_page_of_as_many_changes_as_one_followed_is_taken_and_the_same_page_is_the_same_octets(
    a_and_b: tuple[Path, dict[str, str], Path, Path, str, Replaying],
) -> None:
    _, _, token_file, b, p_url, proxy = a_and_b
    token = token_file.read_text().strip()
    asked = f"{p_url}/api/manifest?series={PUBLIC}"
    first = httpx.get(asked, headers={"Authorization": f"Bearer {token}"}).text
    again = httpx.get(asked, headers={"Authorization": f"Bearer {token}"}).text
    assert first == again  # no time of its own: the same names and rules are the same page, octet for octet
    page = verify_manifest(first, parse_jwks(httpx.get(f"{p_url}/api/keys").text, p_url))
    # A's public series: the document embargoed whole (one change) and its sealed name made at deposit (none)
    assert page.rules == 1
    proxy.keeping = True
    assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
    proxy.keeping, proxy.replaying = False, True  # the same pages again: as many changes as followed, taken
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0 and "0 new" in out, out


def test_the_count_a_page_signs_grows_with_each_change_of_its_series_rules_and_those_above_it(tmp_path: Path) -> None:
    with Archive.init(tmp_path / "a") as archive:
        for series in ("example.us", "minutes.example.us", "other.us"):
            archive.add_series(series)
        one = str(archive.add("minutes.example.us", b"the minutes\n", format="text"))
        other = str(archive.add("other.us", b"other minutes\n", format="text"))

        def rules() -> int | None:
            return archive.manifest_page("minutes.example.us").rules

        assert rules() == 0  # registered and deposited in: no rule changed yet
        document = one.rsplit(".", 2)[0]
        archive.embargo(document, "2031-01-01")
        assert rules() == 1
        archive.embargo(document, "2031-01-01")  # the same again: no change
        archive.embargo(other.rsplit(".", 2)[0], "2031-01-01")  # another series': not this one's
        assert rules() == 1
        archive.set_series_access("example.us", "private")  # the series above it: its readers change too
        assert rules() == 2
        archive.set_series_access("minutes.example.us", "hidden")
        archive.embargo(document, None)  # lifted
        assert rules() == 4
        assert archive.manifest_page("example.us").rules == 1  # the series above: only its own changes
        assert archive.manifest_page("other.us").rules == 1


@pytest.fixture
def stranger() -> Iterator[Origin]:
    made = Origin()
    try:
        yield made
    finally:
        made.close()


def _mirroring(tmp_path: Path, stranger: Origin) -> Path:
    """A new archive mirroring the stranger's series (its key pinned), whose every name's octets are ``TEXT``."""
    location = tmp_path / "mirror"
    assert run(location, "init").exit_code == 0
    keys = tmp_path / "keys.json"
    keys.write_text(jwk_set_text([KEY.public]))
    assert run(location, "mirror", "add", stranger.url, "--series", SERIES, "--key", str(keys), "--no-check").exit_code == 0
    stranger.octets = b"hello world\r\n"
    return location


@pytest.mark.parametrize("later", [{"rules": 2}, {}], ids=["fewer", "none"])
def test_a_page_saying_fewer_changes_or_none_after_one_that_said_is_refused_and_nothing_of_it_followed(
    tmp_path: Path, stranger: Origin, later: dict[str, int],
) -> None:
    location = _mirroring(tmp_path, stranger)
    embargoed = entry(1, embargo={"document": "2031-01-01T00:00:00.000000Z"})
    stranger.manifest = lambda q: (200, {}, signed([embargoed], rules=3), 0.0)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 0, synced.output
    stranger.manifest = lambda q: (200, {}, signed([entry(1), entry(2)], **later), 0.0)  # no embargo, one more name
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3 and "an older page, replayed" in synced.output, synced.output
    said = "had changed 2 times" if later else "does not say how many times"
    assert said in synced.output and "said 3 before" in synced.output, synced.output
    key = key_of(parse_pdi(str(embargoed["name"])))
    with Archive.open(location) as archive:
        assert archive.embargoes_held([key]) == {(key, None): "2031-01-01T00:00:00.000000Z"}  # not lifted
        listed = archive.manifest_page(SERIES).entries
        assert [e["name"] for e in listed] == [embargoed["name"]]  # the second name was not fetched


def test_an_origin_moved_by_export_and_import_is_followed_by_its_mirror_as_before(
    a_and_b: tuple[Path, dict[str, str], Path, Path, str, Replaying], tmp_path: Path,
) -> None:
    a, names, token_file, b, _, proxy = a_and_b
    with Archive.open(a) as archive:  # rules changed a few times before the mirror's sync: counts it records
        document = names["open"].rsplit(".", 2)[0]
        for until in (UNTIL[:10], None, UNTIL[:10], None):
            archive.embargo(document, until)
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0, out
    # A moves as docs/how-to/backup.md moves an archive (to PostgreSQL there): exported, imported into a new one,
    # its signing key kept, and served at the same address (the proxy now asks the new one)
    moved = tmp_path / "a-moved"
    assert pdi("export", str(tmp_path / "bag"), "--archive", str(a))[0] == 0
    assert pdi("init", str(moved))[0] == 0
    code, out = pdi("import", str(tmp_path / "bag"), "--archive", str(moved))
    assert code == 0, out
    (moved / "signing-key.pem").write_bytes((a / "signing-key.pem").read_bytes())
    (moved / "signing-key.pem").chmod(0o600)
    code, out = pdi("token", "add", "mirror-b", "--role", "read", "--series", PUBLIC, "--series", PRIVATE,
                    "--archive", str(moved))  # a bag holds no token: the mirror's made again
    assert code == 0, out
    token_file.write_text(out.splitlines()[0] + "\n")
    with Archive.open(moved) as archive:
        archive.embargo(document, UNTIL[:10])  # a rule set after the move: the mirror must follow it
    with serving(moved) as moved_url:
        proxy.target = moved_url
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 access rule changed" in out, out
    with Archive.open(b) as archive:
        key = key_of(parse_pdi(names["open"]))
        assert archive.embargoes_held([key])[key, None] == UNTIL


def test_a_page_refused_as_older_has_none_of_its_withdrawals_followed_either(tmp_path: Path, stranger: Origin) -> None:
    location = _mirroring(tmp_path, stranger)
    stranger.manifest = lambda q: (200, {}, signed([entry(1)], rules=3), 0.0)
    assert run(location, "mirror", "sync").exit_code == 0
    gone = {"name": str(entry(2)["name"]), "withdrawn": "2026-11-27T02:20:44.484697Z"}  # never held here
    stranger.manifest = lambda q: (200, {}, signed([entry(1), gone], rules=2), 0.0)
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3 and "an older page, replayed" in synced.output, synced.output
    assert run(location, "get", str(gone["name"])).exit_code == 4  # no tombstone recorded: unknown here, not gone
    stranger.manifest = lambda q: (200, {}, signed([entry(1), gone], rules=3), 0.0)  # the same, at as many
    assert run(location, "mirror", "sync").exit_code == 0
    assert run(location, "get", str(gone["name"])).exit_code == 11  # followed: gone, as at the origin


@pytest.fixture
def stranger_mirrored(tmp_path: Path, stranger: Origin) -> tuple[Path, Path]:
    """A mirror of the stranger's series, read as anyone (no token), and the file of the stranger's key."""
    return _mirroring(tmp_path, stranger), tmp_path / "keys.json"


def test_the_pages_of_one_sync_may_say_more_changes_as_they_go_and_never_fewer(
    stranger: Origin, stranger_mirrored: tuple[Path, Path],
) -> None:
    location, _ = stranger_mirrored
    first = str(entry(1)["name"])
    counts = {None: 3, first: 4}  # a rule changed at the origin while the sync read its first page

    def two_pages(q: dict[str, str]) -> tuple[int, dict[str, str], bytes, float]:
        after = q.get("after")
        names, following = ([entry(1)], first) if after is None else ([entry(2)], None)
        return 200, {}, signed(names, after=after, next=following, rules=counts[after]), 0.0

    stranger.manifest = two_pages
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 0 and "2 new" in synced.output, synced.output
    counts[None] = 5  # the first page newer than the second (the second from a stale cache): the second refused
    stranger.manifest = two_pages
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3 and "had changed 4 times, and a page of it said 5 before" in synced.output


def test_a_mirror_added_again_keeps_its_count_and_one_removed_and_added_again_starts_anew(
    stranger: Origin, stranger_mirrored: tuple[Path, Path],
) -> None:
    location, keys = stranger_mirrored
    stranger.manifest = lambda q: (200, {}, signed([entry(1)], rules=3), 0.0)
    assert run(location, "mirror", "sync").exit_code == 0
    stranger.manifest = lambda q: (200, {}, signed([entry(1)], rules=2), 0.0)  # the origin restored from a backup
    again = ("mirror", "add", stranger.url, "--series", SERIES, "--key", str(keys), "--no-check")
    assert run(location, *again).exit_code == 0  # the same again: nothing changes, the count neither
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 3 and "said 3 before" in synced.output, synced.output
    assert run(location, "mirror", "remove", stranger.url, "--series", SERIES).exit_code == 0
    assert run(location, *again).exit_code == 0  # the documented remedy, once the origin's operator says so
    synced = run(location, "mirror", "sync")
    assert synced.exit_code == 0, synced.output
    stranger.manifest = lambda q: (200, {}, signed([entry(1)], rules=1), 0.0)  # and from then on, the new count
    assert run(location, "mirror", "sync").exit_code == 3


def test_a_page_read_as_anyone_says_the_same_count_and_none_of_a_hidden_series_changes(
    a_and_b: tuple[Path, dict[str, str], Path, Path, str, Replaying],
) -> None:
    a, names, token_file, _, p_url, _ = a_and_b
    keys = parse_jwks(httpx.get(f"{p_url}/api/keys").text, p_url)
    token = {"Authorization": f"Bearer {token_file.read_text().strip()}"}

    def rules(series: str, headers: dict[str, str]) -> int | None:
        answer = httpx.get(f"{p_url}/api/manifest?series={series}", headers=headers)
        assert answer.status_code == 200, answer.text
        return verify_manifest(answer.text, keys).rules

    assert rules(PUBLIC, {}) == rules(PUBLIC, token) == 1  # its document embargoed whole: one change
    hidden = key_of(parse_pdi(names["unseen"])).series
    with Archive.open(a) as archive:  # the hidden series' rules change, and the other's: not the public one's
        archive.embargo(names["unseen"].rsplit(".", 2)[0], UNTIL[:10])
        archive.embargo(names["closed"].rsplit(".", 2)[0], UNTIL[:10])
        archive.set_series_access(PRIVATE, "private")
    assert rules(PUBLIC, {}) == rules(PUBLIC, token) == 1
    assert rules(hidden, token) == 2 and rules(PRIVATE, token) == 4  # theirs (the fixture's own changes too)
    # nor is theirs told to anyone: no page of them
    assert [httpx.get(f"{p_url}/api/manifest?series={s}").status_code for s in (PRIVATE, hidden)] == [403, 404]


def test_a_repair_and_an_audit_read_an_older_page_for_its_digests_alone_and_leave_the_count_as_it_was(
    stranger: Origin, stranger_mirrored: tuple[Path, Path],
) -> None:
    location, _ = stranger_mirrored
    body = b"hello world\r\n"
    stranger.manifest = lambda q: (200, {}, signed([entry(1)], day=q.get("day"), rules=3), 0.0)
    assert run(location, "mirror", "sync").exit_code == 0
    flip_octet(location, hashlib.sha256(body).hexdigest(), 3)
    # an older page (a stale cache): a name's octets never change, so its digest is the one recorded here
    stranger.manifest = lambda q: (200, {}, signed([entry(1)], day=q.get("day"), rules=2), 0.0)
    repaired = run(location, "verify", "--repair")
    assert repaired.exit_code == 0 and "repaired" in repaired.output, repaired.output
    assert run(location, "get", str(entry(1)["name"])).stdout_bytes == body
    audited = run(location, "mirror", "audit", "--series", SERIES)
    assert audited.exit_code == 0 and "0 disagreements" in audited.output, audited.output
    synced = run(location, "mirror", "sync")  # neither took the older page's count for the rules followed
    assert synced.exit_code == 3 and "said 3 before" in synced.output, synced.output


def test_a_new_version_deposited_under_embargo_counts_no_change_and_an_older_page_lifts_nothing_of_it(
    a_and_b: tuple[Path, dict[str, str], Path, Path, str, Replaying],
) -> None:
    a, names, _, b, _, proxy = a_and_b
    proxy.keeping = True  # the pages before the new version: replayed after it
    assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
    proxy.keeping = False
    with Archive.open(a) as archive:  # a version of the open document, under embargo from its deposit
        rules = archive.manifest_page(PUBLIC).rules
        document = names["open"].rsplit(".", 2)[0]
        sealed = str(archive.add_version(document, [Content(b"the amended minutes\n", "text")],
                                         embargo_until=UNTIL[:10])[0])
        assert archive.manifest_page(PUBLIC).rules == rules  # a new name under its rules: no rule of a name changed
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0 and "1 new" in out, out  # brought in with its embargo
    before = _rules_audited(b)
    proxy.replaying = True  # the page from before it, as many changes: taken, and it does not list the new version
    code, out = pdi("mirror", "sync", "--archive", str(b))
    assert code == 0 and "0 new" in out, out
    assert _rules_audited(b) == before  # no rule followed from it, none lifted
    with serving(b) as b_url:  # the new version still under its embargo on the mirror; the open one still open
        now = statuses(b_url, {"open": names["open"], "sealed": sealed})
        assert now["open"][0] == 200 and now["sealed"][0] == 403 and f"until {UNTIL}" in now["sealed"][1], now
