"""What a tester found mirroring a series as docs/how-to/mirrors.md says (2026-12-02), between real ``pdi serve``
processes on loopback: A the origin, B its mirror (test_server_mirrors' archives and bytes). Each test names what
was found and what is said now; the digests are ``hashlib``'s of the bytes deposited."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
from server_helpers import in_thread
from test_server_mirror_access import statuses
from test_server_mirror_rules_replay import Replaying
from test_server_mirrors import BYTES, S, a_key, mirror, origin, pdi, serving

from pdi.archive import Archive
from support.stored_blobs import flip_octet


def test_a_repair_of_a_name_withdrawn_at_the_origin_says_it_was_withdrawn_there(tmp_path: Path) -> None:
    """B's blob of a name withdrawn at A since B copied it, damaged, was left ``unrepaired`` with "its signed
    manifest does not list NAME with sha256 …": A's manifest lists the name, as withdrawn (when, and no digest). The
    refusal says so, and, the name withdrawn here too, how to let its damaged octets go; the other names are repaired
    as before."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
        with Archive.open(a) as archive:
            archive.withdraw(names["page"], "a mistake")
            withdrawn = next(e["withdrawn"] for e in archive.manifest_page(S, limit=100).entries
                             if e["name"] == names["page"])
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 withdrawn (1 withdrawn here now)" in out, out
        flip_octet(b, hashlib.sha256(BYTES["page"]).hexdigest(), 3)
        flip_octet(b, hashlib.sha256(BYTES["text"]).hexdigest(), 3)
        code, out = pdi("verify", "--repair", "--archive", str(b))
    assert code == 3, out
    assert (f"unrepaired\t{names['page']}\t{a_url}: its signed manifest lists {names['page']} as withdrawn there at"
            f" {withdrawn}: it gives its octets to no one (withdrawn here too: pdi withdraw {names['page']} --purge"
            " --reason WHY lets its damaged octets go)\n") in out, out
    assert f"repaired\t{names['text']}\tfrom {a_url}, checked against its signed manifest" in out, out
    with Archive.open(b) as archive:
        assert archive.get(names["text"]).data == BYTES["text"]
    # as it says: purged, nothing is left to mend
    assert pdi("withdraw", names["page"], "--purge", "--reason", "damaged", "--archive", str(b))[0] == 0
    code, out = pdi("verify", "--archive", str(b))
    assert code == 0 and out.endswith(": 0 problems\n"), out


def test_mirror_ls_says_a_peer_is_a_copy_not_a_sync_still_to_run(tmp_path: Path) -> None:
    """On A, ``pdi mirror ls`` said ``never synced`` of B, recorded with ``--peer`` as the how-to says: a copy is
    never synced from, so it read as a sync still to run. A peer says it is a copy; an origin not synced yet still
    says ``never synced``."""
    a = mirror(tmp_path, "a")
    keys = tmp_path / "keys.json"
    keys.write_text(pdi("keys", "show", "--jwks", "--archive", str(mirror(tmp_path, "other")))[1])
    for argv in (("http://b.example.org", "--peer"), ("http://c.example.org",)):
        code, out = pdi("mirror", "add", argv[0], "--series", S, *argv[1:], "--key", str(keys), "--no-check",
                        "--archive", str(a))
        assert code == 0, out
    code, out = pdi("mirror", "ls", "--archive", str(a))
    assert code == 0, out
    assert out.splitlines() == [f"{S}\torigin\thttp://c.example.org\tnever synced\tno token",
                                f"{S}\tpeer\thttp://b.example.org\ta copy: not synced from\tno token"], out


def test_adding_an_origin_again_without_its_token_says_the_token_it_keeps(tmp_path: Path) -> None:
    """``pdi mirror add`` of an origin recorded with ``--token-file``, typed again without it (as the how-to's first
    block has it), printed its ``origin`` line with no token, as if the token were dropped: the catalog kept it
    (``pdi mirror ls`` said so). The line says the token recorded, as ``pdi mirror ls`` does."""
    b = mirror(tmp_path, "b")
    keys = tmp_path / "keys.json"
    keys.write_text(pdi("keys", "show", "--jwks", "--archive", str(mirror(tmp_path, "a")))[1])
    token = tmp_path / "a-token"
    token.write_text("pdi_not-checked-with-no-check\n")
    token.chmod(0o600)
    base = ["mirror", "add", "http://a.example.org", "--series", S, "--key", str(keys), "--no-check", "--archive", str(b)]
    line = f"origin\t{S}\thttp://a.example.org\ttoken from the file {token}"
    for argv in ([*base, "--token-file", str(token)], base):
        code, out = pdi(*argv)
        assert code == 0 and out.splitlines()[-1] == line, (argv, out)
    code, out = pdi("mirror", "ls", "--archive", str(b))
    assert code == 0 and out == f"{S}\torigin\thttp://a.example.org\tnever synced\ttoken from the file {token}\n", out


def test_an_audit_says_a_name_the_origin_embargoed_since_it_was_copied_is_hidden_there_not_missing(
    tmp_path: Path,
) -> None:
    """On B, which reads A without a token, a name A embargoed after B copied it was a disagreement with A holding
    ``missing``: A has lost nothing (it lists every name it minted to whoever may read it), it shows the name to no
    one. It is still a disagreement (B shows it to anyone, exit 3), written ``hidden``, and standard error says why
    and that B's next sync withholds it (the test below)."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        assert pdi("mirror", "sync", "--archive", str(b))[0] == 0
        with Archive.open(a) as archive:
            archive.embargo(names["large"], "2031-01-01")
        code, out = pdi("mirror", "audit", "--archive", str(b))
    assert code == 3, out
    large = hashlib.sha256(BYTES["large"]).hexdigest()
    assert f"disagree\t{names['large']}\there={large}; {a_url}=hidden\n" in out, out
    assert f"{S}\t3 names compared with 1 peer: 1 disagreement\n" in out, out
    assert (f"{S}\tread from {a_url} as anyone: 1 name shown here to anyone that it lists to no one (hidden: embargoed"
            " or made private there since copied here; the next pdi mirror sync withholds them here)\n") in out, out
    assert "missing" not in out, out


def test_an_audit_agrees_on_a_name_withdrawn_at_the_origin_before_the_mirror_held_it(tmp_path: Path) -> None:
    """A mirror whose first sync found a name withdrawn at A records it gone (``410`` here as there) and holds no
    copy; its audit then said ``disagree NAME here=missing; A=withdrawn`` and exited 3, and ``pdi verify
    --signatures`` of A's manifest ``manifest-missing``: a healthy mirror told it disagreed. Both agree now. A name
    it lacks that A holds is a disagreement still."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    with Archive.open(a) as archive:
        archive.withdraw(names["page"], "a mistake")
    with serving(a) as a_url:
        assert pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))[0] == 0
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "1 withdrawn (1 withdrawn here now)" in out, out
        code, out = pdi("mirror", "audit", "--archive", str(b))
        assert (code, out) == (0, f"{S}\t3 names compared with 1 peer: 0 disagreements\n"), out
        # and pdi verify --signatures of A's manifest, which said manifest-missing of it
        code, out = pdi("verify", "--signatures", "--key", f"{a_url}/api/keys", f"{a_url}/api/manifest?series={S}",
                        "--archive", str(b))
        assert (code, out) == (0, "checked 1 manifest listing 3 names: 0 problems\n"), out
        with Archive.open(a) as archive:
            late = str(archive.add(S, b"the late minutes\n", format="text"))
        code, out = pdi("mirror", "audit", "--archive", str(b))
    assert code == 3, out
    late_digest = hashlib.sha256(b"the late minutes\n").hexdigest()
    assert out.splitlines()[0] == f"disagree\t{late}\there=missing; {a_url}={late_digest}", out
    assert f"{S}\t4 names compared with 1 peer: 1 disagreement" in out, out


def test_a_name_the_origin_embargoes_after_it_was_copied_is_withheld_by_a_mirror_without_a_token_until_listed_again(
    tmp_path: Path,
) -> None:
    """B, reading A as anyone, served on to anyone a name A embargoed after B copied it: A no longer lists it, and the
    sync said nothing. The sync that reads a count of rules changes higher than B followed compares what B holds with
    what A lists, and withholds the name here as an embargo on A's word (B answers it as A does); the sync after A
    lifts it shows it again, with its very bytes. A page A signed before the embargo, replayed, is refused and lifts
    nothing. B is served through a proxy that keeps and replays A's pages (test_server_mirror_rules_replay's)."""
    a, names = origin(tmp_path)
    b = mirror(tmp_path, "b")
    digests = {which: hashlib.sha256(data).hexdigest() for which, data in BYTES.items()}
    with serving(a) as a_url:
        proxy = Replaying(a_url)
        with in_thread(proxy.app, host="127.0.0.1", port=0, log_level="warning") as server:
            p_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
            assert pdi("mirror", "add", p_url, "--series", S, "--key", a_key(a), "--archive", str(b))[0] == 0
            proxy.keeping = True  # A's pages before the embargo: replayed below
            code, out = pdi("mirror", "sync", "--archive", str(b))
            assert code == 0 and "3 new" in out and "withheld from readers" not in out, out
            proxy.keeping = False
            with Archive.open(a) as archive:
                archive.embargo(names["large"], "2031-01-01")
            at_a = statuses(a_url, names)
            assert at_a["large"][0] == 403, at_a  # an embargoed name: it exists, its content is not anyone's

            code, out = pdi("mirror", "sync", "--archive", str(b))
            assert code == 0, out
            assert (f"{S}\tread from {p_url} as anyone: 1 name held here that it no longer lists withheld from readers"
                    " without access (until it lists them again), 0 listed again shown again\n") in out, out
            with serving(b) as b_url:
                at_b = statuses(b_url, names)
            assert at_b["large"][0] == at_a["large"][0], at_b
            assert "embargoed" in at_b["large"][1], at_b
            for which in ("text", "page"):
                assert at_b[which] == (200, BYTES[which].decode()), at_b
            with Archive.open(b) as archive:
                lines = [e for e in archive.audit() if e.action == "embargo" and e.subject == names["large"]]
                assert archive.get(names["text"]).data == BYTES["text"]
            assert len(lines) == 1 and lines[0].address == p_url, lines
            code, out = pdi("mirror", "audit", "--archive", str(b))  # withheld here: not compared with A as anyone
            assert code == 0, out
            assert f"{S}\t3 names compared with 1 peer: 0 disagreements\n" in out, out
            assert (f"{S}\tread from {p_url} as anyone: 1 name private or under embargo here not listed to this"
                    " archive, not compared") in out, out
            assert "hidden" not in out, out

            proxy.replaying = True  # A's page from before the embargo, its signature A's own: refused
            code, out = pdi("mirror", "sync", "--archive", str(b))
            assert code == 3 and "an older page, replayed" in out and "shown again" not in out, out
            proxy.replaying = False
            with serving(b) as b_url:
                assert statuses(b_url, {"large": names["large"]})["large"][0] == 403

            with Archive.open(a) as archive:
                archive.embargo(names["large"], None)
            code, out = pdi("mirror", "sync", "--archive", str(b))
            assert code == 0, out
            assert (f"{S}\tread from {p_url} as anyone: 0 names held here that it no longer lists withheld from readers"
                    " without access (until it lists them again), 1 listed again shown again\n") in out, out
            with serving(b) as b_url:
                again = httpx.get(f"{b_url}/uri-res/N2R?{names['large']}")
            assert again.status_code == 200 and hashlib.sha256(again.content).hexdigest() == digests["large"]
            assert again.content == BYTES["large"]
