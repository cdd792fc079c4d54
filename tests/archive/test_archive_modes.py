"""Who can read an archive (docs/reference/backup.md, "Who can read an archive"): it holds every private and
embargoed document (a blob of at most 64 KiB inline in the catalog), the catalog's metadata of each and its tokens'
hashes, so ``pdi init DIR``, ``Archive.init`` and ``pdi restore --to DIR`` make it its owner's alone whatever the
umask, as PostgreSQL's initdb makes its data directory 0700:

- DIR, when pdi makes it, 0700; a DIR there already keeps its mode;
- what pdi makes in it: folders 0700 and files 0600 (SQLite's ``-wal`` and ``-shm`` too), a DTD read-only (0400);
  0750, 0640 and 0440 when DIR is deliberately shared with its group (group-readable, closed to others);
- a key 0600 always; a blob file read-only to everyone (0444), its folder keeps it.

Under the common umask 022 an archive was 0755 with a catalog of 0644: readable by every local user. Each ``pdi``
runs in a child whose umask the test sets (``subprocess.run(umask=…)``); the modes expected are worked out from the
rule above, never read from what pdi prints. A second local user is tried directly when the tests run as root
(``cat`` and ``ls`` run as ``nobody``, and ``pdi`` itself as ``nobody`` in the group of an archive shared with
``nogroup``: it reads the archive, may not write it, and ``pdi serve`` refuses writes); otherwise those tests are
skipped (never in CI) and the modes alone say it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from pdi.fragments.markup.sgml import onsgmls_path
from support.modes import KEYS, expected, mode, open_place
from support.modes import found as modes_found
from support.read_only_resolver import read_only_resolver

assert onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

S = "modes.example.us"
DTD = "<!ELEMENT memo - - (#PCDATA)>\n"
#: The environment of each pdi: no key, registry or SGML folder named elsewhere than in the archive.
ENV = {**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": "", "PDI_SGML_CATALOG": "", "PDI_REGISTRY": "",
       "PDI_ARCHIVE": ""}


def _pdi(umask: int, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, timeout=300, check=False,
                          umask=umask, env=ENV, input=input)
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")
    return done



def _fill(root: Path, umask: int, tmp_path: Path) -> str:
    """Use the archive at ``root`` as an operator does, each command under ``umask``: a series, a small text (a
    row of the catalog), a blob file, both keys, a registry and an SGML DTD. The big blob's SHA-256."""
    octets = os.urandom(120_000)  # more than 64 KiB: a blob file, not a row of the catalog
    big = tmp_path / "big.bin"
    big.write_bytes(octets)
    where = ("--archive", str(root))
    _pdi(umask, "series", "add", S, *where)
    _pdi(umask, "add", "--series", S, "--format", "text", "-", *where, input=b"an embargoed memo\n")
    _pdi(umask, "add", "--series", S, "--format", "octet-stream", str(big), *where)
    _pdi(umask, "keys", "init", *where)
    _pdi(umask, "keys", "init", "--wacz", *where)
    _pdi(umask, "registry", "add", S, "https://resolver.example.org/", *where)
    dtd = tmp_path / "memo.dtd"
    dtd.write_text(DTD, encoding="ascii")
    _pdi(umask, "sgml", "add", str(dtd), "--public-id", "-//ACME//DTD Memo//EN", *where)
    return hashlib.sha256(octets).hexdigest()


@contextmanager
def _held_open(root: Path, umask: int) -> Iterator[None]:
    """The archive held open by a child of ``umask`` that has just deposited: SQLite's ``-wal`` and ``-shm`` are
    there (the last connection to close takes them away) and were made by that child."""
    script = ("import sys; from pdi.archive import Archive, Content\n"
              f"a = Archive.open({str(root)!r})\n"
              f"a.deposit({S!r}, [Content(b'another memo', 'text')])\n"
              "print('ready', flush=True); sys.stdin.read(); a.close()\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             umask=umask, env=ENV)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        yield
    finally:
        child.communicate(timeout=60)
    assert child.returncode == 0




def _check(root: Path, digest: str, folder: int, file: int) -> None:
    found = modes_found(root)
    for name in ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm", "blobs", "tmp",
                 f"blobs/{digest[:2]}/{digest}", "registry.json", "sgml/catalog", "sgml/memo.dtd", *KEYS):
        assert name in found, name
    assert found == expected(root, folder, file)


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o027, 0o077], ids=["022", "002", "027", "077"])
def test_a_new_archive_is_its_owners_alone_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "above" / "archive"
    _pdi(umask, "init", str(root))
    assert mode(root) == 0o700
    assert mode(root.parent) == 0o777 & ~umask  # a folder above DIR is not the archive's: as mkdir -p makes it
    digest = _fill(root, umask, tmp_path)
    with _held_open(root, umask):
        _check(root, digest, 0o700, 0o600)


def test_archive_init_in_python_makes_the_archive_its_owners_alone(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    subprocess.run([sys.executable, "-c", "from pdi.archive import Archive;"
                    f" Archive.init({str(root)!r}).close()"], check=True, timeout=300, umask=0o022, env=ENV)
    assert modes_found(root) == {"catalog.sqlite": 0o600, "blobs": 0o700, "tmp": 0o700}
    assert mode(root) == 0o700


@pytest.mark.parametrize("umask", [0o022, 0o077], ids=["022", "077"])
@pytest.mark.parametrize("shared", [0o750, 0o770], ids=["0750", "0770"])
def test_an_archive_folder_shared_with_its_group_gives_that_group_read_access(tmp_path: Path, umask: int,
                                                                              shared: int) -> None:
    """DIR there already, group-readable and closed to others (systemd's StateDirectoryMode=0750, or 0770): it
    keeps its mode, and its group may read what pdi makes in it, never write it; a key stays its owner's. Under
    umask 077 each folder and file is given back the group's read bit the umask took."""
    root = tmp_path / "archive"
    root.mkdir()
    root.chmod(shared)
    _pdi(umask, "init", str(root))
    digest = _fill(root, umask, tmp_path)
    with _held_open(root, umask):
        _check(root, digest, 0o750, 0o640)
    assert mode(root) == shared


def test_a_folder_there_already_open_to_every_user_keeps_its_mode_and_what_is_made_in_it_is_private(
        tmp_path: Path) -> None:
    """An operator's ``mkdir`` under umask 022 (0755): no one chose to share it, so what pdi makes in it is its
    owner's alone; the folder itself keeps its mode, and pdi init has nothing to warn of."""
    root = tmp_path / "archive"
    root.mkdir()
    root.chmod(0o755)
    done = _pdi(0o022, "init", str(root))
    assert done.stderr == b""
    digest = _fill(root, 0o022, tmp_path)
    with _held_open(root, 0o022):
        _check(root, digest, 0o700, 0o600)
    assert mode(root) == 0o755


def _as_an_earlier_pdi_left_it(root: Path) -> None:
    """What a pdi before this one made under umask 022: folders 0755, files 0644, a DTD 0444 (keys were 0600)."""
    for path in [root, *root.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
        elif path.name.endswith(".dtd"):
            path.chmod(0o444)
        elif path.name not in KEYS and path.parent.parent.name != "blobs":
            path.chmod(0o644)


def test_pdi_init_changes_no_mode_of_an_archive_there_already_and_says_who_can_read_it(tmp_path: Path) -> None:
    root = tmp_path / "archive"
    _pdi(0o022, "init", str(root))
    _fill(root, 0o022, tmp_path)
    _as_an_earlier_pdi_left_it(root)
    before = modes_found(root)
    done = _pdi(0o022, "init", str(root))
    assert modes_found(root) == before and mode(root) == 0o755  # nothing tightened (nor loosened) behind its back
    said = done.stderr.decode()
    assert said.startswith("note: the archive was there already: left as it was\npdi: warning: every local user"
                           f" can read the archive at {root}: catalog.sqlite (0644),")
    for shown in ("blobs (0755)", "registry.json (0644)", "sgml (0755)", "tmp (0755)"):
        assert shown in said, said
    assert "signing-key.pem" not in said  # 0600 already
    assert f"chmod -R go-rwx {root} makes it so" in said
    # a folder made in it from now on is of the rule (DIR 0755: no one chose to share it), not of the umask
    octets = os.urandom(100_000)
    while (root / "blobs" / hashlib.sha256(octets).hexdigest()[:2]).exists():
        octets = os.urandom(100_000)
    (tmp_path / "new.bin").write_bytes(octets)
    _pdi(0o022, "add", "--series", S, "--format", "octet-stream", str(tmp_path / "new.bin"), "--archive", str(root))
    assert mode(root / "blobs" / hashlib.sha256(octets).hexdigest()[:2]) == 0o700
    # a file written again keeps its mode, as the operator (or an earlier pdi) left it
    _pdi(0o022, "registry", "add", "other.example.us", "https://other.example.org/", "--archive", str(root))
    dtd = tmp_path / "other.dtd"
    dtd.write_text(DTD, encoding="ascii")
    _pdi(0o022, "sgml", "add", str(dtd), "--public-id", "-//ACME//DTD Other//EN", "--archive", str(root))
    assert "other.example.us" in (root / "registry.json").read_text()
    assert mode(root / "registry.json") == mode(root / "sgml" / "catalog") == 0o644
    assert mode(root / "sgml" / "other.dtd") == 0o400  # a new file: of the rule (sgml/ is 0755: not shared)
    # the advice taken, there is nothing to say, and the archive reads as before
    subprocess.run(["chmod", "-R", "go-rwx", str(root)], check=True)
    assert _pdi(0o022, "init", str(root)).stderr == b"note: the archive was there already: left as it was\n"  # (of the archive there, not of its modes)
    _pdi(0o022, "verify", "--archive", str(root))


def test_pdi_init_of_an_archive_closed_to_others_says_nothing_of_the_modes_inside(tmp_path: Path) -> None:
    """A catalog of 0644 in a folder of 0700: no one else can reach it, so there is nothing to say."""
    root = tmp_path / "archive"
    _pdi(0o022, "init", str(root))
    (root / "catalog.sqlite").chmod(0o644)
    assert _pdi(0o022, "init", str(root)).stderr == b"note: the archive was there already: left as it was\n"  # (of the archive there, not of its modes)


@pytest.mark.parametrize("copy", [False, True], ids=["linked", "copied"])
def test_a_restored_archive_is_made_as_pdi_init_makes_one(tmp_path: Path, copy: bool) -> None:
    root, dest, again = tmp_path / "archive", tmp_path / "backup", tmp_path / "new" / "restored"
    _pdi(0o022, "init", str(root))
    digest = _fill(root, 0o022, tmp_path)
    _pdi(0o022, "backup", str(dest), "--archive", str(root))
    _pdi(0o022, "restore", str(dest), "--to", str(again), *([] if copy else ["--link"]))
    assert mode(again) == 0o700
    with _held_open(again, 0o022):
        _check(again, digest, 0o700, 0o600)
    _pdi(0o022, "verify", "--archive", str(again))


def test_a_restore_into_a_folder_shared_with_its_group_gives_that_group_read_access(tmp_path: Path) -> None:
    root, dest, again = tmp_path / "archive", tmp_path / "backup", tmp_path / "restored"
    _pdi(0o022, "init", str(root))
    digest = _fill(root, 0o022, tmp_path)
    _pdi(0o022, "backup", str(dest), "--archive", str(root))
    again.mkdir()
    again.chmod(0o750)  # a StateDirectory= made for it
    _pdi(0o077, "restore", str(dest), "--to", str(again))
    assert mode(again) == 0o750
    with _held_open(again, 0o077):
        _check(again, digest, 0o750, 0o640)


# --- another local user, tried --------------------------------------------------------------------------------

NOBODY = 65534


def _as_nobody(argv: list[str], groups: list[int]) -> subprocess.CompletedProcess[str]:
    """``argv`` run as the user ``nobody``, in the supplementary ``groups``."""
    return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60, check=False,
                          user=NOBODY, group=NOBODY, extra_groups=groups)


@pytest.fixture(name="open_place")
def open_place_fixture() -> Iterator[Path]:
    """A folder every local user may enter (:func:`support.modes.open_place`)."""
    with open_place("pdi-modes-") as place:
        yield place


def test_another_local_user_cannot_read_a_new_archive(open_place: Path, tmp_path: Path) -> None:
    """Run as ``nobody``, even in the archive owner's group, ``cat`` and ``ls`` are refused each file and folder
    of an archive made under umask 022 (before, the catalog was 0644 in a 0755 folder: ``cat`` read it)."""
    root = open_place / "archive"
    _pdi(0o022, "init", str(root))
    digest = _fill(root, 0o022, tmp_path)
    group = os.stat(root).st_gid
    for argv in (["cat", str(root / "catalog.sqlite")], ["ls", str(root / "blobs")],
                 ["cat", str(root / "blobs" / digest[:2] / digest)], ["cat", str(root / "registry.json")],
                 ["ls", str(root)]):
        for groups in ([], [group]):
            refused = _as_nobody(argv, groups)
            assert refused.returncode != 0 and "Permission denied" in refused.stderr, (argv, groups, refused)
    _as_an_earlier_pdi_left_it(root)  # the test can tell: so an earlier pdi's archive was read by anyone
    assert _as_nobody(["cat", str(root / "catalog.sqlite")], []).returncode == 0


def test_a_member_of_a_shared_archives_group_may_read_it_and_not_write_it(open_place: Path, tmp_path: Path) -> None:
    root = open_place / "archive"
    root.mkdir()
    root.chmod(0o750)
    _pdi(0o022, "init", str(root))
    digest = _fill(root, 0o022, tmp_path)
    group = os.stat(root).st_gid
    catalog = root / "catalog.sqlite"
    for argv in (["cat", str(catalog)], ["cat", str(root / "blobs" / digest[:2] / digest)], ["ls", str(root)]):
        assert _as_nobody(argv, [group]).returncode == 0, argv
        refused = _as_nobody(argv, [])
        assert refused.returncode != 0 and "Permission denied" in refused.stderr, argv
    for argv in (["sh", "-c", f"echo >> {catalog}"], ["touch", str(root / "blobs" / "new")],
                 ["cat", str(root / "signing-key.pem")]):
        refused = _as_nobody(argv, [group])
        assert refused.returncode != 0 and "Permission denied" in refused.stderr, argv


# --- a member of a shared archive's group, running pdi ---------------------------------------------------------

#: nobody's own group (Debian's nogroup): the group an archive is shared with in the tests below, nobody a member.
NOGROUP = 65534


def _as_member(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """``pdi ARGS`` run as the user ``nobody``, whose only group is :data:`NOGROUP` (``setpriv``, as root runs
    Chromium as another user), with no write access to the archive: a read-only resolver or a backup operator."""
    return subprocess.run(_member_argv(*args), capture_output=True, timeout=timeout, check=False, env=_member_env())


def _member_argv(*args: str) -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOGROUP}", "--clear-groups", "--", sys.executable, "-m",
            "pdi", *args]


def _member_env() -> dict[str, str]:
    return {**ENV, "HOME": "/nonexistent"}


def _shared_with_nogroup(place: Path) -> Path:
    """An archive's folder as an operator shares it with a group before ``pdi init`` (``install -d -m 2750 -g
    nogroup DIR``): its owner root, whose own group is not that one; set-group-ID, so that what is made in it is
    the group's."""
    root = place / "archive"
    root.mkdir()
    os.chown(root, 0, NOGROUP)
    root.chmod(0o2750)
    return root


def _add(root: Path, octets: bytes, fmt: str) -> str:
    return _pdi(0o022, "add", "--series", S, "--format", fmt, "-", "--archive", str(root),
                input=octets).stdout.decode().strip()


def test_a_member_of_a_shared_archives_group_reads_it_with_pdi_and_may_not_write_it(open_place: Path) -> None:
    """``pdi get``, ``ls`` and ``verify`` as a member of the group, with no pdi of the owner's running: SQLite
    reads a WAL catalog it may not write only where its ``-wal`` and ``-shm`` are (https://sqlite.org/wal.html,
    "Read-Only Databases"), which the owner's pdi leaves, empty and group-readable. Before, each one failed (exit 8,
    "attempt to write a readonly database"). ``pdi add`` is refused, naming the archive and who may write it, and
    nothing the member ran changed the catalog."""
    root = _shared_with_nogroup(open_place)
    _pdi(0o077, "init", str(root))
    _pdi(0o077, "series", "add", S, "--archive", str(root))
    small, big = b"an embargoed memo\n", os.urandom(120_000)  # a row of the catalog; a blob file in blobs/ab/
    small_name, big_name = _add(root, small, "text"), _add(root, big, "octet-stream")
    digest = hashlib.sha256(big).hexdigest()
    for name in ("catalog.sqlite-wal", "catalog.sqlite-shm"):  # left by the owner's last command, for the group
        assert (root / name).stat().st_size == 0 and mode(root / name) == 0o640, name
    for name in ("catalog.sqlite", "catalog.sqlite-wal", "blobs", f"blobs/{digest[:2]}", f"blobs/{digest[:2]}/{digest}"):
        assert os.stat(root / name).st_gid == NOGROUP, name  # the group's, by the folder's set-group-ID bit
    assert mode(root / "blobs" / digest[:2]) == 0o2750
    before = hashlib.sha256((root / "catalog.sqlite").read_bytes()).hexdigest()

    got = _as_member("get", small_name, "--archive", str(root))
    assert (got.returncode, got.stdout) == (0, small), got.stderr
    got = _as_member("get", big_name, "--archive", str(root))
    assert (got.returncode, got.stdout == big) == (0, True), got.stderr
    listed = _as_member("ls", "--archive", str(root))
    assert listed.returncode == 0 and listed.stdout.decode().split() == [small_name, big_name], listed.stderr
    checked = _as_member("verify", "--archive", str(root))
    assert checked.returncode == 0 and b"0 problems" in checked.stdout, checked.stdout + checked.stderr

    for args, octets in ((("--format", "text", "-"), b"another memo\n"), (("--format", "octet-stream", "-"), big[::-1])):
        refused = subprocess.run(_member_argv("add", "--series", S, *args, "--archive", str(root)), input=octets,
                                 capture_output=True, timeout=120, check=False, env=_member_env())
        said = refused.stderr.decode()
        assert refused.returncode == 8, said  # a storage error
        assert said.startswith(f"pdi: storage error: cannot write the archive at {root}: this user (nobody) may read"
                               " it, not write it (its catalog"), said
        assert "of mode 0640, root's to write" in said and "write to it as root" in said, said
    assert hashlib.sha256((root / "catalog.sqlite").read_bytes()).hexdigest() == before
    assert (root / "catalog.sqlite-wal").stat().st_size == 0
    assert sorted(p.name for p in (root / "tmp").iterdir()) == []


def test_a_member_is_told_what_to_do_when_the_catalogs_log_is_not_there(open_place: Path) -> None:
    """An archive an earlier pdi left at rest has no ``-wal`` nor ``-shm`` (the last connection to close takes
    them away), and a member of its group may not make them: the member is told so and what the owner does; once
    the owner has run a pdi command on it, the member reads it."""
    root = _shared_with_nogroup(open_place)
    _pdi(0o022, "init", str(root))
    _pdi(0o022, "series", "add", S, "--archive", str(root))
    name = _add(root, b"a memo\n", "text")
    for end in ("-wal", "-shm"):
        (root / f"catalog.sqlite{end}").unlink()
    refused = _as_member("ls", "--archive", str(root))
    said = refused.stderr.decode()
    assert refused.returncode == 8, said
    assert said.startswith(f"pdi: storage error: cannot read the archive at {root}: {root}/catalog.sqlite-wal and"
                           f" {root}/catalog.sqlite-shm (SQLite's write-ahead log beside the catalog) are not there,"
                           " and this user (nobody) may read the archive, not make files in it. Run any pdi command"
                           f" on it once as its owner (root): pdi ls --archive {root}."), said
    _pdi(0o022, "ls", "--archive", str(root))
    listed = _as_member("ls", "--archive", str(root))
    assert listed.returncode == 0 and listed.stdout.decode().split() == [name], listed.stderr


def test_pdi_serve_as_a_member_of_the_group_serves_reads_and_refuses_writes(open_place: Path) -> None:
    """A read-only resolver run as a member of the archive's group: it says at its start that it may only read
    the archive, answers each read (a name deposited by the owner while it runs too) and refuses a write with a
    ``503`` problem saying why and where writes go, without the ``Retry-After`` of a storage error that passes."""
    root = _shared_with_nogroup(open_place)
    _pdi(0o022, "init", str(root))
    _pdi(0o022, "series", "add", S, "--archive", str(root))
    first = _add(root, b"a memo\n", "text")
    token = _pdi(0o022, "token", "add", "clerk", "--role", "deposit", "--series", S,
                 "--archive", str(root)).stdout.decode().split()[-1]
    with read_only_resolver(_member_argv("serve", "--port", "0", "--replay-port", "0", "--workers", "1",
                                         "--archive", str(root)), _member_env(), root) as base:
        answer = httpx.get(f"{base}/uri-res/N2R?{first}", timeout=30)
        assert (answer.status_code, answer.content) == (200, b"a memo\n")
        second = _add(root, b"another memo\n", "text")  # the owner deposits meanwhile: the resolver reads it
        answer = httpx.get(f"{base}/uri-res/N2R?{second}", timeout=30)
        assert (answer.status_code, answer.content) == (200, b"another memo\n")
        refused = httpx.post(f"{base}/api/deposit", params={"series": S, "format": "text"}, content=b"a third",
                             headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}, timeout=30)
        assert refused.status_code == 503 and "retry-after" not in refused.headers
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["detail"].startswith("this resolver may read the archive, not write it"), refused.json()
    listed = _pdi(0o022, "ls", "--archive", str(root)).stdout.decode().split()
    assert listed == [first, second]  # the refused deposit stored nothing


@pytest.mark.parametrize("workers", ["1", "2"])
def test_pdi_serve_indexer_as_a_member_of_the_group_is_refused_before_it_serves(open_place: Path, workers: str) -> None:
    """The indexer drains the catalog's queue, writing the full text it makes there: a member may not write the
    catalog, so ``pdi serve --indexer`` is refused before it serves, exit 8 with the member's refusal of a write
    and what to do (serve without it; the owner drains the queue), not a resolver whose indexer stops as it starts
    or is never started. Before, the resolver started and its indexer could never drain the queue."""
    root = _shared_with_nogroup(open_place)
    _pdi(0o022, "init", str(root))
    _pdi(0o022, "series", "add", S, "--archive", str(root))
    _add(root, b"a memo\n", "text")
    refused = _as_member("serve", "--port", "0", "--replay-port", "0", "--workers", workers, "--indexer",
                         "--archive", str(root), timeout=60)
    said = refused.stderr.decode()
    assert refused.returncode == 8, said
    assert said.startswith(f"pdi: storage error: cannot write the archive at {root}: this user (nobody) may read"
                           " it, not write it (its catalog"), said
    assert said.rstrip("\n").endswith(
        "; --indexer writes the full text of the texts queued in its catalog, so this user cannot run it: serve"
        " without --indexer (each read is served, each write refused), and let the archive's owner drain the queue"
        " (pdi index --watch, or pdi serve --indexer)"), said
    assert "pdi: serving" not in said and "Traceback" not in said and said.count("\n") == 1, said


def test_pdi_serve_as_a_member_of_an_archive_with_a_signing_key_serves_reads_and_says_what_is_signed_is_not_here(
        open_place: Path) -> None:
    """The key is its owner's alone (0600, whatever the group may read): a member's resolver cannot read it. Before,
    it did not start ("cannot read the signing key …: Permission denied"); now it serves every read, and what needs
    the key (the key set, a manifest) is answered ``503`` without ``Retry-After``, saying to ask the owner's."""
    root = _shared_with_nogroup(open_place)
    _pdi(0o022, "init", str(root))
    _pdi(0o022, "series", "add", S, "--archive", str(root))
    _pdi(0o022, "keys", "init", "--archive", str(root))
    assert mode(root / "signing-key.pem") == 0o600
    first = _add(root, b"a signed memo\n", "text")
    with read_only_resolver(_member_argv("serve", "--port", "0", "--replay-port", "0", "--workers", "1",
                                         "--archive", str(root)), _member_env(), root) as base:
        answer = httpx.get(f"{base}/uri-res/N2R?{first}", timeout=30)
        assert (answer.status_code, answer.content) == (200, b"a signed memo\n")
        for path in ("/api/keys", f"/api/manifest?series={S}"):
            refused = httpx.get(base + path, timeout=30)
            assert refused.status_code == 503 and "retry-after" not in refused.headers, (path, refused.text)
            assert refused.json()["detail"] == (
                "this resolver may read the archive, not its signing key (which is its owner's alone): ask a"
                " resolver its owner runs for what is signed"), refused.json()
