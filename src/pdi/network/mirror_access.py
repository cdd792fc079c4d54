"""A mirror's access to its origin and the origin's access rules kept: the token a mirror reads private and
embargoed names with, and the series' access and each name's embargo, as the origin's signed manifest says,
applied in the mirror's catalog (:mod:`pdi.network.mirrors` calls both).

**The token.** A mirror reads as anyone unless ``pdi mirror add … --token-file
FILE`` (or ``--token-env VARIABLE``, by default ``$PDI_MIRROR_TOKEN``) names
where a token of the origin is kept: a ``read`` token of its write API whose
scope covers the series (``pdi token add NAME --role read --series S`` on the
origin). The catalog records *where* it is kept (``file:PATH``,
``env:VARIABLE``), never the token, as the archive's signing key is a file
of mode 0600 and not a row of the catalog: a catalog is backed up, copied and
read by more people than its secrets should be, and a token changed in its
file is used at the next sync without touching the catalog. A file readable
by its group or by others is refused, as ``ssh`` refuses such a key. The
token is sent as ``Authorization: Bearer`` (RFC 6750 §2.1) to that origin
only (redirects are not followed), and no message, log or audit line holds it.

**The rules.** A page of an origin's manifest says the series' effective
``access`` and each name's ``embargo`` (the document's and the version's
ends), signed with the rest (:mod:`pdi.archive.manifests`), so no one
between the two archives can change a rule without the signature failing. At
each sync the mirror gives the series that access (before any name of the
page is fetched), embargoes each new name in the transaction that brings it
in (so no reader without access may read it here even for a moment), and
sets, changes or lifts the embargo of each name held whose rule changed at
the origin; each change is an audit line from the origin's address. An
embargo ends by itself by this archive's clock, as at the origin by its own.
An origin whose manifests do not say (an earlier pdi) leaves the rules as
they are.

**An older page.** A signature holds for ever, so a page signed before the
origin set an embargo or closed a series still verifies: re-served to the
mirror (a stale cache, a copy kept by someone between the two archives) it
would lift what the origin set since. A page also signs how many times the
series' rules have changed at the origin (``rules``), and the mirror
records the most it has followed (schema step 25): a page that says fewer,
or none after pages that said, is refused before anything it says is
followed or fetched (:meth:`pdi.archive.Archive.follow_origin_rules_count`).
What no signature can tell is a page withheld: one who can answer for the
origin can keep serving its last pages, as one who can cut the two archives
apart can keep the mirror from syncing at all, and the mirror then keeps
the rules it last followed (never looser ones).

**A name hidden since it was copied.** Read as anyone, an origin lists
no name it withholds from anyone (embargoed, say): one it embargoes after
the mirror copied it simply goes from its manifest. So when a sync as anyone
reads a count of rules changes higher than the one this mirror followed
before (the only time a name may have been hidden), and walks the manifest
to its end, it compares the versions held here of the series with those
listed (withdrawn ones too), and withholds here each held one no longer
listed, as an embargo on the origin's word (audited from its address) until
:data:`~pdi.archive.mirroring.WITHHELD_UNTIL`, which says "until the origin
lists it again": the sync that finds it listed follows the origin's rule for
it and shows it again (:func:`follow_rules`). A page replayed from before
does not, as it does not lift any embargo: it is refused. A sync stopped
before the manifest's end compares nothing; nor does one whose count rose
only after its first page: the next one whose count rises again does.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pdi._wording import clipped, shown_url
from pdi.archive.access import ACCESS, parse_until
from pdi.archive.fixity import Problem
from pdi.archive.mirroring import WITHHELD_UNTIL
from pdi.archive.naming import key_of, parse_pdi
from pdi.archive.store import DocumentKey
from pdi.errors import (
    AccessError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    StoreError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from pdi.archive import Archive
    from pdi.archive.mirroring import MirrorRecord
    from pdi.identifier import PDI
    from pdi.signing import Manifest

__all__ = ["TOKEN_ENV", "Embargoes", "describe_source", "follow_rules", "read_token", "token_source"]

#: The environment variable a mirror's token is read from by default (``--token-env``).
TOKEN_ENV = "PDI_MIRROR_TOKEN"
#: The longest token file read.
MAX_TOKEN = 4096
#: A bearer token's characters (RFC 6750 §2.1, ``b64token``): nothing that could end a header or start another.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: The embargoes to bring in with new names: (name, version embargoed or ``None``: its document, until when).
Embargoes = list[tuple[str, int | None, str]]


def token_source(file: str | None, env: str | None) -> str | None:
    """Where a token is kept, as the catalog records it: ``file:`` and the file's absolute path, or ``env:`` and
    a variable's name; ``None`` for neither. The token is read once now (:func:`read_token`) to refuse at once a
    source that cannot give one."""
    if file is not None and env is not None:
        raise UnsupportedError("a token is kept in a file (--token-file) or a variable (--token-env), not both")
    if file is not None:
        source = f"file:{Path(file).expanduser().resolve()}"
    elif env is not None:
        if not _VARIABLE.fullmatch(env):
            raise ParseError(f"{env[:80]!r} is not an environment variable's name", text=env[:80], rule="token-env")
        source = f"env:{env}"
    else:
        return None
    read_token(source)
    return source


def describe_source(source: str) -> str:
    """A token's source as said to an operator (never the token): ``the file PATH`` or ``$VARIABLE``."""
    kind, _, where = source.partition(":")
    return f"the file {where}" if kind == "file" else f"${where}"


def read_token(source: str) -> str:
    """The token kept where ``source`` says: a file of mode 0600 (or stricter) of at most :data:`MAX_TOKEN`
    octets, or an environment variable; its surrounding white space removed. The errors name the source, never
    what it holds."""
    kind, _, where = source.partition(":")
    if kind == "env":
        value = os.environ.get(where)
        if not value:
            raise NotFoundError(f"${where} holds no token (it names the token of a mirror's origin: set it, or"
                                " pdi mirror add … --token-file FILE)")
    elif kind == "file":
        value = _token_file(Path(where))
    else:
        raise ParseError(f"a token's source is file:PATH or env:VARIABLE, not {source[:80]!r}", rule="token-source")
    token = value.strip()
    if not _B64TOKEN.fullmatch(token):
        raise ParseError(f"{describe_source(source)} does not hold a bearer token (one line of letters, digits and"
                         " -._~+/, RFC 6750 §2.1)", rule="token")
    return token


def _token_file(path: Path) -> str:
    try:
        with path.open("rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise AccessError(f"the token file {path} may be read by others (mode {stat.S_IMODE(mode):04o}):"
                                  f" chmod 600 {path}")
            data = f.read(MAX_TOKEN + 1)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no token file at {path}") from exc
    except OSError as exc:
        raise StoreError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if len(data) > MAX_TOKEN:
        raise LimitError(f"the token file {path} is larger than a token may be ({MAX_TOKEN} octets)")
    return data.decode("ascii", errors="replace")


def entry_embargo(entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """A manifest entry's embargo: its document's end and its version's (``None``: none set), each a catalog
    timestamp; :class:`ParseError` for anything else."""
    said = entry.get("embargo")
    if said is None:
        return None, None
    if not isinstance(said, dict) or not set(said) <= {"document", "version"}:
        raise ParseError(f"its embargo {str(said)[:120]!r} is not {{\"document\"?, \"version\"?}}", rule="manifest")
    ends: list[str | None] = []
    for which in ("document", "version"):
        until = said.get(which)
        if until is not None and (not isinstance(until, str) or len(until) != 27 or parse_until(until) != until):
            raise ParseError(f"its {which}'s embargo {str(until)[:60]!r} is not a catalog timestamp", rule="manifest")
        ends.append(until)
    return ends[0], ends[1]


def follow_rules(archive: Archive, record: MirrorRecord, page: Manifest, wanted: Sequence[Mapping[str, Any]],
                 problem: Callable[[Problem], None], parsed_names: Mapping[str, PDI] | None = None,
                 shown: list[str] | None = None) -> tuple[list[Mapping[str, Any]], Embargoes, int]:
    """Apply the access rules a verified ``page`` of ``record``'s origin says: the series' access, the embargoes
    of the names held (set, changed or lifted). Returns the ``wanted`` entries whose rules could be read (the
    others are problems, each told to ``problem``: not fetched), the embargoes to bring in with them, and how many
    rules changed here. A name found in ``parsed_names`` (the sync parsed it already) is not parsed again. The
    caller refused first a page older than one followed (:meth:`pdi.archive.Archive.follow_origin_rules_count`).
    A name held that a sync withheld because the origin no longer listed it (its version embargoed until
    :data:`~pdi.archive.mirroring.WITHHELD_UNTIL`), listed again, is shown again: its embargo is the origin's
    now (none, or one over), and the name is added to ``shown``."""
    if page.access is None:  # an origin that does not say (an earlier pdi): the rules stay as they are
        if record.token_source is not None:
            raise UnsupportedError(
                f"{shown_url(record.base_url)}'s manifest of {record.series} does not say its access rules (an earlier pdi):"
                " read with a token, its private and embargoed names would be served here to anyone; nothing of"
                " it is copied (sync it without a token, or once it is upgraded)")
        return list(wanted), [], 0
    if page.access not in ACCESS:  # signed, but no rule: said as the origin's, not as this operator's word
        raise IntegrityError(f"{shown_url(record.base_url)}'s signed manifest of {record.series} says its access is"
                             f" {clipped(repr(page.access), 80)}, which is none of {', '.join(ACCESS)}: refused,"
                             " and nothing it lists is fetched")
    changed = 1 if archive.follow_origin_access(record, page.access) else 0
    asked = {str(e["name"]) for e in wanted}
    rules: dict[str, tuple[DocumentKey, int, str | None, str | None]] = {}
    for entry in page.names:
        name = str(entry["name"])
        if "withdrawn" in entry:
            continue
        try:
            parsed = parsed_names.get(name) if parsed_names is not None else None
            if parsed is None:
                parsed = parse_pdi(name)
        except PDIError:
            continue  # reported by the sync already
        if parsed.version is None or parsed.series_name.lower() != record.series:
            continue  # reported by the sync already: an origin's rules are of its own series' names alone
        try:
            document, version = entry_embargo(entry)
        except PDIError as exc:  # not fetched, nor its rule followed
            problem(Problem("manifest-name", "", (name[:200],), f"listed by {shown_url(record.base_url)}: {exc}"))
            asked.discard(name)
            continue
        rules[name] = (key_of(parsed), parsed.version, document, version)
    here = archive.embargoes_held(list(dict.fromkeys(key for key, _, _, _ in rules.values())))
    done: set[DocumentKey] = set()
    versions: set[tuple[DocumentKey, int]] = set()
    bring: Embargoes = []
    for name, (key, number, document, version) in rules.items():
        if name in asked:  # a new name: its embargoes come in with it (its document's with each of its names,
            # whichever of them is kept first; the import sets each once)
            if document is not None and document != here.get((key, None)):
                bring.append((name, None, document))
            if version is not None and (key, number) not in versions and here.get((key, number)) != version:
                bring.append((name, number, version))
            continue
        try:
            if key not in done and here.get((key, None)) != document:
                archive.follow_origin_embargo(record, name, None, document)
                changed += 1
            done.add(key)
            if (key, number) not in versions and here.get((key, number)) != version:
                archive.follow_origin_embargo(record, name, number, version)
                changed += 1
                if shown is not None and here.get((key, number)) == WITHHELD_UNTIL:
                    shown.append(name)
            versions.add((key, number))  # another format of the same version: once
        except NotFoundError:
            continue  # not held here (a name the sync refused): nothing to follow
        except PDIError as exc:
            problem(Problem("unembargoed", "", (name[:200],), f"embargo at {shown_url(record.base_url)}: {exc}"))
    return [e for e in wanted if str(e["name"]) in asked], bring, changed
