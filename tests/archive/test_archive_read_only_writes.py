"""Each command that writes a file in an archive's folder refuses an archive this user may read and not write,
before anything is written, with the message a write to its catalog gets (docs/reference/backup.md, "A member of
the group, running pdi" and "An archive on read-only media"), exit 8: not the file system's "Permission denied" or
"Read-only file system" of one file (a key, the registry, the SGML folder, an export named inside the archive), nor
a fetch from another server first (``pdi mirror add``, ``pdi mirror sync``), nor a success that would have written
had there been something to repair or re-parse (``pdi verify --repair``, ``pdi reindex --elements``).

Both ways of reading an archive one may not write are tried, on one archive made by root in a folder shared with
``nogroup`` (``install -d -m 2750 -g nogroup``): as the user ``nobody``, a member of that group (``setpriv``, as
tests/archive/test_archive_modes.py does), and as root in a mount namespace of its own where the folder holding
the archive is bind-mounted read-only (``unshare --mount``, as tests/archive/test_archive_read_only_media.py does).
The messages expected are the ones docs/reference/backup.md gives; after each command every file under the folder
is byte for byte, mode for mode and time for time as before."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.modes import open_place

S = "readonly.example.us"
NOBODY = NOGROUP = 65534
ENV = {**os.environ, "PDI_SIGNING_KEY": "", "PDI_WACZ_KEY": "", "PDI_SGML_CATALOG": "", "PDI_REGISTRY": "",
       "PDI_ARCHIVE": "", "HOME": "/nonexistent"}


def _pdi(*args: str, input: bytes | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "pdi", *args], capture_output=True, timeout=300, check=False,
                          env=ENV, input=input, umask=0o022)
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")
    return done.stdout.decode()


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    """A folder every local user may enter, holding ``archive`` (shared with nogroup: 2750) and files a member
    may read: a DTD to add, a signing key kept outside the archive (``--key-file``)."""
    with open_place("pdi-read-only-") as top:
        root = top / "archive"
        root.mkdir()
        os.chown(root, 0, NOGROUP)
        root.chmod(0o2750)
        where = ("--archive", str(root))
        _pdi("init", str(root))
        _pdi("series", "add", S, *where)
        _pdi("add", "--series", S, "--format", "text", "-", *where, input=b"a memo\n")
        _pdi("add", "--series", S, "--format", "octet-stream", "-", *where, input=os.urandom(120_000))  # a file
        _pdi("registry", "add", S, "https://resolver.example.org/", *where)
        (top / "memo.dtd").write_text("<!ELEMENT memo - - (#PCDATA)>\n", encoding="ascii")
        _pdi("sgml", "add", str(top / "memo.dtd"), "--public-id", "-//ACME//DTD Memo//EN", *where)
        (top / "other.dtd").write_text("<!ELEMENT other - - (#PCDATA)>\n", encoding="ascii")
        _pdi("keys", "init", "--key-file", str(top / "outside-key.pem"), *where)
        for name in ("memo.dtd", "other.dtd", "outside-key.pem"):
            (top / name).chmod(0o644)
        yield top


def _files(top: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every file and folder under ``top``: its mode, owner, modification time and octets."""
    found = {}
    for path in sorted([top, *top.rglob("*")]):
        st = path.lstat()
        found[str(path)] = (st.st_mode, st.st_uid, st.st_mtime_ns, b"" if path.is_dir() else path.read_bytes())
    return found


def _as_member(args: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOGROUP}", "--clear-groups", "--",
                           sys.executable, "-m", "pdi", *args], capture_output=True, timeout=120, check=False, env=ENV)


def _on_read_only_mount(top: Path, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    script = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
    return subprocess.run(["unshare", "--mount", "sh", "-c", script, "sh", str(top), sys.executable, "-m", "pdi",
                           *args], capture_output=True, timeout=120, check=False, env=ENV)


#: Each command, ``{top}`` and ``{root}`` standing for the folder and the archive; what it would write.
WRITES = {
    "keys-init": ["keys", "init"],  # signing-key.pem
    "keys-init-wacz": ["keys", "init", "--wacz"],  # wacz-key.pem
    "registry-add": ["registry", "add", "other.example.us", "https://other.example.org/"],  # registry.json
    "registry-remove": ["registry", "remove", S],
    "sgml-add": ["sgml", "add", "{top}/other.dtd", "--public-id", "-//ACME//DTD Other//EN"],  # sgml/
    "verify-repair": ["verify", "--repair"],  # a blob fetched again, a table made again
    "reindex-elements": ["reindex", "--elements"],  # an element index, a parse kept
    "mirror-add": ["mirror", "add", "https://127.0.0.1:9/", "--series", S],  # asked of it first, before
    "mirror-sync": ["mirror", "sync"],  # a "mirrors no series" (exit 4) before
    "export-bag": ["export", "{root}/bag"],
    "export-wacz": ["export", "--wacz", "{root}/out.wacz"],
    "capture-series": ["capture", "http://127.0.0.1:9/", "--allow-private", "--series", S],  # fetched first, before
    "manifest-output": ["manifest", "--series", S, "--key-file", "{top}/outside-key.pem", "-o", "{root}/m.jws"],
}


@pytest.mark.parametrize("how", ["member", "read-only-mount"])
@pytest.mark.parametrize("command", list(WRITES))
def test_a_write_in_an_archive_this_user_may_only_read_is_refused_first(place: Path, command: str,
                                                                        how: str) -> None:
    root = place / "archive"
    args = [a.format(top=place, root=root) for a in WRITES[command]] + ["--archive", str(root)]
    before = _files(place)
    done = _as_member(args) if how == "member" else _on_read_only_mount(place, args)
    said = done.stderr.decode(errors="replace")
    if how == "member":
        assert said == (f"pdi: storage error: cannot write the archive at {root}: this user (nobody) may read it,"
                        f" not write it (its catalog {root}/catalog.sqlite is of mode 0640, root's to write; an"
                        " archive shared with its group is read by that group, never written): write to it as root,"
                        " or through a resolver root runs\n"), said
    else:
        assert said == f"pdi: storage error: cannot write the archive at {root}: it is on a read-only file system\n"
    assert (done.returncode, done.stdout) == (8, b""), said  # exit 8: the archive's storage
    assert _files(place) == before

