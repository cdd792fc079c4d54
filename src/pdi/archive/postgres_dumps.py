"""What ``pdi restore`` checks of a PostgreSQL backup's ``catalog.dump`` before ``pg_restore`` runs it.

``pg_restore`` runs the statements a custom-format dump holds as the role it
connects as: a dump's table of contents (TOC) can hold any statement, in an
entry of any type (a ``FUNCTION``, ``TRIGGER``, ``EVENT TRIGGER``, ``RULE``,
``EXTENSION``; a ``TABLE``'s own definition; the ``SEARCHPATH`` entry, whose
text every session of the restore runs first; a ``TABLE DATA`` entry's
``COPY`` statement, which may be ``COPY … TO PROGRAM``), and a superuser's
restore may then run programs on the database's host. So a dump is held to
what pdi itself makes, before anything is written:

1. Its TOC is read here (:func:`read_toc`: the custom format of
   ``pg_backup_archiver.c``, versions 1.12 to 1.16, each string as
   ``pg_restore`` reads it, sizes bounded by the file's) and compared with
   ``pg_restore -l``'s list of it: an entry type pdi never makes
   (:data:`MADE`, beside :data:`NOT_RESTORED`, which the restore's options
   leave out) is refused, naming the entry.
2. The schema version is read from the dump's ``schema_migrations`` (and must
   be the marker's, when it says one).
3. A catalog of that schema version is made in a throw-away schema of the
   database restored into (pdi's own migrations), ``pg_dump``-ed, and the
   schema dropped again, however the check ends (Ctrl-C included:
   :func:`reference_dump`).
4. ``pg_restore --schema-only -f -`` of both (with the options of the restore
   itself, :data:`RESTORE_OPTIONS`) must be the same text, but for the
   throw-away schema's name, the versions of the server and ``pg_dump`` that
   made the dump, and ``\\restrict`` keys: any statement that differs is
   refused, naming its entry.
5. Each data entry is a ``TABLE DATA`` whose ``COPY`` statement is, word for
   word, the one pdi's dump has for that table (``COPY <schema>.<table>
   (<its columns>) FROM stdin;``, no other statement), or a ``SEQUENCE SET``
   of one of pdi's sequences to a number; neither holds any other statement.

The dump is opened once and handed to each ``pg_restore`` as its standard
input, so the file checked is the file restored (a name swapped meanwhile is not read).
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pdi._workdirs import WorkFolder
from pdi.archive.backup_files import tool_said
from pdi.errors import StoreError

#: The ``pg_restore`` options of a restore and of its checks (what is compared is what runs): no owner set, no
#: privileges granted, no comment, tablespace, security label, publication or subscription restored.
RESTORE_OPTIONS = ("--no-owner", "--no-privileges", "--no-comments", "--no-tablespaces", "--no-security-labels",
                   "--no-publications", "--no-subscriptions")
#: The TOC entry types of a ``pg_dump`` of a pdi catalog.
MADE = frozenset({"ENCODING", "STDSTRINGS", "SEARCHPATH", "SCHEMA", "FUNCTION", "TABLE", "SEQUENCE",
                  "SEQUENCE OWNED BY", "DEFAULT", "CONSTRAINT", "FK CONSTRAINT", "INDEX", "TABLE DATA",
                  "SEQUENCE SET"})
#: Entry types a dump of a pdi catalog may hold (its database's, made only by ``pg_restore --create``, which a
#: restore does not give; a grant to a reader's role, a comment) that :data:`RESTORE_OPTIONS` leave out.
NOT_RESTORED = frozenset({"DATABASE", "DATABASE PROPERTIES", "ACL", "DEFAULT ACL", "COMMENT"})
#: The versions of the custom format read (1.12: PostgreSQL 9.0; 1.16: PostgreSQL 17).
OLDEST, NEWEST = (1, 12), (1, 16)
#: Entries at most in a dump (one of a pdi catalog has about 200).
MAX_ENTRIES = 100_000
#: Octets of a dump's table of contents read at most (a pdi catalog's is about 100 KiB).
MAX_TOC = 64 << 20
#: Octets of ``pg_restore``'s SQL text read at most (a pdi catalog's schema is about 100 KiB).
MAX_SQL = 16 << 20
#: The prefix of the throw-away schema the catalog compared with is made in.
REFERENCE_PREFIX = "pdi_restore_check_"

_NOTHING_RESTORED = "nothing was restored"
#: A role's or a database's name that a shell and SQL read as written (lower case: SQL folds what is not quoted).
_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_SETVAL = re.compile(r"SELECT pg_catalog\.setval\('((?:[^']|'')*)', [0-9]{1,19}, (?:true|false)\);\n", re.DOTALL)
_VERSION_LINE = re.compile(r"-- Dumped (from database|by pg_dump) version [ -~]{1,200}")
_RESTRICT = re.compile(r"\\(un)?restrict [A-Za-z0-9]{1,100}")
_HEADER = re.compile(r"-- (?:Data for )?Name: .*; Type: .*; Schema: .*; Owner: .*")


@dataclass(frozen=True)
class Entry:
    """One entry of a dump's table of contents, as ``pg_restore`` reads it (a string ``None`` when absent)."""

    dump_id: int
    has_data: bool  #: ``hadDumper``: a block of data goes with it (``pg_restore`` runs one without COPY as SQL)
    tableoid: str
    oid: str
    tag: str | None
    desc: str | None
    defn: str | None
    copy: str | None
    namespace: str | None
    tablespace: str | None
    tableam: str | None

    def named(self) -> str:
        """How a message names it: its number, type, schema and name."""
        schema = f"{self.namespace}." if self.namespace else ""
        return f"{self.dump_id}; {self.desc} {schema}{self.tag}"[:160]


@dataclass(frozen=True)
class Toc:
    """A dump's header (what ``pg_restore`` prints of it) and its entries."""

    server_version: str
    dump_version: str
    entries: tuple[Entry, ...]


class _Reader:
    """``ReadInt``, ``ReadStr`` and ``ReadOffset`` of ``pg_backup_archiver.c``, each size checked against the file."""

    def __init__(self, f: IO[bytes], size: int, where: Path) -> None:
        self.f, self.size, self.where = f, size, where
        self.done = 0  # octets read
        self.int_size = self.off_size = 4

    def octets(self, n: int) -> bytes:
        if self.done + n > self.size:
            raise self.bad(f"it ends inside its table of contents ({n} octets said, {self.size - self.done} left)")
        if self.done + n > MAX_TOC:
            raise self.bad(f"its table of contents is longer than {MAX_TOC >> 20} MiB (a pdi catalog's is about"
                           " 100 KiB)")
        data = self.f.read(n)
        if len(data) != n:
            raise self.bad("it ends inside its table of contents")
        self.done += n
        return data

    def byte(self) -> int:
        return self.octets(1)[0]

    def number(self) -> int:
        sign = self.byte()
        value = int.from_bytes(self.octets(self.int_size), "little")
        return -value if sign else value

    def text(self) -> str | None:
        n = self.number()
        if n < 0:
            return None
        return self.octets(n).decode("utf-8", "surrogateescape")

    def offset(self) -> None:
        flag = self.byte()
        if flag not in (1, 2, 3):  # K_OFFSET_POS_NOT_SET, K_OFFSET_POS_SET, K_OFFSET_NO_DATA
            raise self.bad(f"an entry's data offset flag is {flag}")
        self.octets(self.off_size)

    def bad(self, what: str) -> StoreError:
        return StoreError(f"{self.where} is not a pg_dump custom-format dump pdi can read: {what};"
                          f" {_NOTHING_RESTORED}")


def read_toc(f: IO[bytes], where: Path) -> Toc:
    """The table of contents of the custom-format dump ``f`` (read from its start), as ``pg_restore`` reads it."""
    f.seek(0)
    read = _Reader(f, os.fstat(f.fileno()).st_size, where)
    if read.octets(5) != b"PGDMP":
        raise read.bad("it does not begin with PGDMP")
    version = (read.byte(), read.byte())
    read.byte()  # the revision
    if not OLDEST <= version <= NEWEST:
        raise read.bad(f"its format is version {version[0]}.{version[1]}, not one of"
                       f" {OLDEST[0]}.{OLDEST[1]} to {NEWEST[0]}.{NEWEST[1]}")
    read.int_size, read.off_size = read.byte(), read.byte()
    if (read.int_size, read.off_size) != (4, 8):
        raise read.bad(f"its integers are {read.int_size} octets and its offsets {read.off_size}, not 4 and 8")
    if read.byte() != 1:
        raise read.bad("it is not in the custom format (pg_dump -Fc)")
    if version >= (1, 15):
        read.byte()  # the compression algorithm
    else:
        read.number()  # the compression level
    for _ in range(7):  # when it was made
        read.number()
    read.text()  # the database's name
    server_version, dump_version = read.text() or "", read.text() or ""
    count = read.number()
    if not 0 < count <= MAX_ENTRIES:
        raise read.bad(f"it says it has {count} entries")
    entries = []
    for _ in range(count):
        dump_id = read.number()
        has_data = read.number() != 0
        tableoid, oid = read.text(), read.text()
        if not (tableoid and oid and tableoid.isascii() and tableoid.isdigit() and oid.isascii() and oid.isdigit()):
            raise read.bad(f"entry {dump_id} has the object id {str(oid)[:40]!r}")
        tag, desc = read.text(), read.text()
        read.number()  # its section
        defn = read.text()
        read.text()  # its DROP statement (a restore without --clean runs none)
        copy, namespace, tablespace = read.text(), read.text(), read.text()
        tableam = read.text() if version >= (1, 14) else None
        if version >= (1, 16):
            read.number()  # the relation's kind
        read.text()  # its owner (--no-owner: not used)
        read.text()  # "false": without OIDs
        while read.text() is not None:  # the entries it depends on
            pass
        read.offset()  # where its data is
        entries.append(Entry(dump_id, has_data, tableoid, oid, tag, desc, defn, copy, namespace, tablespace, tableam))
    return Toc(server_version, dump_version, tuple(entries))


def check_listed(toc: Toc, listed: str, where: Path) -> None:
    """:class:`StoreError` unless ``listed`` (``pg_restore -l``'s list of the dump) lists the entries :func:`read_toc`
    read, each with its number, object id and type, and their types are ones pdi makes (or leaves out)."""
    lines = [line for line in listed.splitlines() if line and not line.startswith(";")]
    by_id = {entry.dump_id: entry for entry in toc.entries}
    seen = set()
    for line in lines:
        number, _, _ = line.partition(";")
        entry = by_id.get(int(number)) if number.isdigit() else None
        if entry is None or not line.startswith(f"{entry.dump_id}; {entry.tableoid} {entry.oid} {entry.desc} "):
            raise StoreError(f"{where}: pg_restore lists an entry {line[:120]!r} that is not the one pdi read there:"
                             f" not a dump pdi can check; {_NOTHING_RESTORED}")
        seen.add(entry.dump_id)
    for entry in toc.entries:
        if entry.desc not in MADE | NOT_RESTORED:
            raise StoreError(f"{where} holds an entry pdi never makes ({entry.named()}), whose statements pg_restore"
                             f" would run: not a pdi backup, or one a stranger changed; {_NOTHING_RESTORED}")
        if entry.dump_id not in seen and entry.desc not in NOT_RESTORED | {"ENCODING", "STDSTRINGS", "SEARCHPATH"}:
            raise StoreError(f"{where}: pg_restore does not list its entry {entry.named()}: not a dump pdi can"
                             f" check; {_NOTHING_RESTORED}")


def check_data(toc: Toc, reference: Toc, schema: str, made_in: str, quoted: str, where: Path) -> None:
    """:class:`StoreError` unless each data entry of ``toc`` is one of ``reference``'s (made in the schema
    ``made_in``; ``quoted``: ``schema`` as ``pg_dump`` writes it) with the very same ``COPY`` statement, or sets one
    of its sequences to a number, and holds no other statement."""
    ours: dict[tuple[str | None, str | None], Entry] = {
        (e.desc, e.tag): e for e in reference.entries if e.desc in ("TABLE DATA", "SEQUENCE SET")}
    done: set[tuple[str | None, str | None]] = set()

    def same(text: str | None) -> str | None:
        return None if text is None else text.replace(made_in, quoted)

    for entry in toc.entries:
        key = (entry.desc, entry.tag)
        pdi = ours.get(key)
        if entry.desc not in ("TABLE DATA", "SEQUENCE SET"):
            if entry.has_data:  # its block of data would be run as statements after its definition
                raise StoreError(f"{where}: its entry {entry.named()} carries data, which pdi's do not (pg_restore"
                                 f" would run it as statements): not a pdi backup, or one a stranger changed;"
                                 f" {_NOTHING_RESTORED}")
            continue
        if pdi is None or key in done or entry.has_data != pdi.has_data:
            raise StoreError(f"{where} holds data pdi's catalog has no place for ({entry.named()}): not a pdi"
                             f" backup, or one a stranger changed; {_NOTHING_RESTORED}")
        done.add(key)
        fields = (entry.namespace, entry.tablespace, entry.tableam)
        if fields != (schema, pdi.tablespace, pdi.tableam) or (entry.copy or "") != (same(pdi.copy) or ""):
            raise StoreError(f"{where}: its data entry {entry.named()} is restored by {(entry.copy or '')[:200]!r},"
                             f" not by pdi's {str(same(pdi.copy))[:200]!r}: not a pdi backup, or one a stranger"
                             f" changed; {_NOTHING_RESTORED}")
        if entry.desc == "TABLE DATA":
            unlike = bool(entry.defn)
        else:
            said, wanted = _SETVAL.fullmatch(entry.defn or ""), _SETVAL.fullmatch(same(pdi.defn) or "")
            unlike = said is None or wanted is None or said.group(1) != wanted.group(1)
        if unlike:
            raise StoreError(f"{where}: its data entry {entry.named()} holds the statement {str(entry.defn)[:200]!r},"
                             f" which pdi's does not: not a pdi backup, or one a stranger changed; {_NOTHING_RESTORED}")


def schema_text(pg_restore: str, dump: IO[bytes], where: Path, only: list[int] | None = None) -> str:
    """What ``pg_restore --schema-only`` would run of ``dump`` (with :data:`RESTORE_OPTIONS`), at most
    :data:`MAX_SQL` octets (more is refused: no pdi catalog's schema is that long)."""
    return _text(pg_restore, dump, where, ["--schema-only"], only)


def data_text(pg_restore: str, dump: IO[bytes], where: Path, only: list[int]) -> str:
    """What ``pg_restore --data-only`` would run of the entries ``only`` of ``dump``, at most :data:`MAX_SQL` octets."""
    return _text(pg_restore, dump, where, ["--data-only"], only)


def _text(pg_restore: str, dump: IO[bytes], where: Path, part: list[str], only: list[int] | None) -> str:
    with WorkFolder("pdi-restore-") as scratch:
        argv = [pg_restore, *part, *RESTORE_OPTIONS, "--file=-"]
        if only is not None:
            listing = Path(scratch) / "list"
            listing.write_text("".join(f"{n}\n" for n in only))
            argv.append(f"--use-list={listing}")
        dump.seek(0)
        out = run_reading(argv, dump, "pg_restore")
    if len(out) > MAX_SQL:
        raise StoreError(f"{where} holds more than {MAX_SQL >> 20} MiB of statements, which no pdi catalog's dump"
                         f" does: not a pdi backup; {_NOTHING_RESTORED}")
    return out.decode("utf-8", "surrogateescape")


def run_reading(argv: list[str], stdin: IO[bytes] | None, what: str) -> bytes:
    """Run ``argv`` (``pg_restore``): its standard output, at most :data:`MAX_SQL` octets and one more (the rest is
    read and dropped, so that it ends); a failure a :class:`StoreError` with its message."""
    with subprocess.Popen(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as child, tempfile.TemporaryFile() as said:
        assert child.stdout is not None and child.stderr is not None
        errors = threading.Thread(target=_keep_tail, args=(child.stderr, said), daemon=True)
        errors.start()
        out = bytearray()
        while chunk := child.stdout.read(1 << 16):
            if len(out) <= MAX_SQL:
                out += chunk[:MAX_SQL + 1 - len(out)]
        status = child.wait()
        errors.join()
        said.seek(0)
        message = said.read().decode(errors="replace").strip()[-2000:]
    if status != 0:
        raise StoreError(f"{what} failed (exit {status}): {message}")
    return bytes(out)


def _keep_tail(stream: IO[bytes], into: IO[bytes]) -> None:
    tail = bytearray()
    while chunk := stream.read(8192):
        tail += chunk
        del tail[:-65536]
    into.write(tail)


def normalized(text: str, made_in: str | None = None, schema: str = "", quoted: str = "") -> list[str]:
    """The lines of ``pg_restore``'s SQL ``text``, the versions that made the dump and the ``\\restrict`` keys
    left out; ``made_in`` (the throw-away schema) written ``schema`` in the header comments, ``quoted`` elsewhere."""
    lines = []
    for line in text.split("\n"):
        if _VERSION_LINE.fullmatch(line):
            line = line.split(" version ")[0] + " version"
        elif _RESTRICT.fullmatch(line):
            line = line.split(" ")[0]
        elif made_in is not None:
            line = line.replace(made_in, schema if line.startswith("-- ") else quoted)
        lines.append(line)
    return lines


def check_schema(theirs: list[str], ours: list[str], version: int, where: Path) -> None:
    """:class:`StoreError` unless the lines ``theirs`` (a dump's schema as ``pg_restore`` runs it) are ``ours``
    (pdi's at schema version ``version``), naming the first entry pdi's has not (else the first that is out of
    place) and its first line that differs."""
    if theirs == ours:
        return
    mine, pdis = _entries(theirs), _entries(ours)
    known = {name: lines for name, lines in pdis}
    odd = next((entry for entry in mine if known.get(entry[0]) != entry[1]), None)
    if odd is None:  # each entry is pdi's, but one is missing or out of place
        odd = next((a for a, b in zip(mine, pdis, strict=False) if a != b), mine[-1])
    name, found = odd
    wanted = known.get(name, [])
    at = next((n for n, (a, b) in enumerate(zip(found, wanted, strict=False)) if a != b), min(len(found), len(wanted)))
    line = found[at] if at < len(found) else "(its end)"
    instead = repr(wanted[at][:200]) if at < len(wanted) else "nothing" if not wanted else "(its end)"
    raise StoreError(f"{where} holds a statement pdi's catalog at schema version {version} does not, in {name[:160]}:"
                     f" {line[:200]!r} where pdi's has {instead}; not a pdi backup, or one a stranger changed"
                     f" (pg_restore would run it as the role of --to); {_NOTHING_RESTORED}")


def _entries(lines: list[str]) -> list[tuple[str, list[str]]]:
    """``lines`` of ``pg_restore``'s SQL cut at the comment each entry begins with (and the ``SET default_…`` lines
    before it, which are its own): each entry's name and lines, the first (the session's settings) ``its header``."""
    entries: list[tuple[str, list[str]]] = [("its header", [])]
    for n, line in enumerate(lines):
        if line == "--" and n + 1 < len(lines) and _HEADER.fullmatch(lines[n + 1]):
            before = entries[-1][1]
            own: list[str] = []
            while before and (before[-1] == "" or before[-1].startswith(("SET default_tablespace = ",
                                                                          "SET default_table_access_method = "))):
                own.insert(0, before.pop())
            entries.append((f"its entry {lines[n + 1][3:]!r}", own))
        entries[-1][1].append(line)
    return entries


def migrations_version(text: str, copy: str, where: Path) -> int:
    """The schema version the rows of ``schema_migrations`` in ``text`` (``pg_restore --data-only`` of that table,
    restored by ``copy``) give: the greatest; a :class:`StoreError` when it gives none."""
    lines = iter(text.split("\n"))
    for line in lines:
        if line + "\n" == copy:
            break
    versions = []
    for line in lines:
        if line == "\\.":
            break
        first = line.split("\t", 1)[0]
        if not (first.isascii() and first.isdigit() and len(first) < 6):
            raise StoreError(f"{where}: its schema_migrations holds {line[:80]!r}, not a schema version;"
                             f" {_NOTHING_RESTORED}")
        versions.append(int(first))
    if not versions:
        raise StoreError(f"{where} holds no schema version (schema_migrations is empty): not a pdi backup;"
                         f" {_NOTHING_RESTORED}")
    return max(versions)


def role_and_database(url: str) -> tuple[str, str]:
    """The role and the database ``url`` names, as a command to copy names them: ``ROLE``, ``NAME`` where it names
    none (libpq's defaults, which pdi does not guess) or one a shell or SQL would read otherwise than written."""
    import psycopg.conninfo

    try:
        said = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        said = {}
    role, database = (str(said.get(key) or "") for key in ("user", "dbname"))
    return (role if _PLAIN_NAME.fullmatch(role) else "ROLE"), (database if _PLAIN_NAME.fullmatch(database) else "NAME")


def with_search_path(url: str, schema: str) -> str:
    """``url`` with its ``options`` a ``search_path`` of ``schema`` alone."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "options"]
    query.append(("options", f"-csearch_path={schema}"))
    return urlunsplit(parts._replace(query=urlencode(query)))


@contextmanager
def reference_dump(url: str, version: int, pg_dump: str) -> Iterator[tuple[IO[bytes], str]]:
    """A ``pg_dump -Fc`` of a catalog pdi makes at schema ``version`` in a throw-away schema of the database ``url``
    names, and that schema's name; the schema is dropped again however this ends.

    Once its ``CREATE SCHEMA`` is sent (it may have run even when Ctrl-C stops the wait for its answer), the drop
    runs in a ``finally``, with Ctrl-C held until it is done (:func:`drop_reference`): a Ctrl-C that landed on the
    drop itself (its ``connect``) left the schema behind, and every later backup of that database dumped it and
    was refused by the restore. It cannot be made in a transaction rolled back instead: ``pg_dump`` reads it from
    a session of its own, which sees only what was committed.
    """
    import psycopg
    from psycopg import sql

    from pdi.archive.postgres import PostgresStore

    made_in = REFERENCE_PREFIX + secrets.token_hex(8)
    asked = False
    try:
        try:
            with psycopg.connect(url, connect_timeout=30, autocommit=True) as conn:
                asked = True
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(made_in)))
        except psycopg.errors.InsufficientPrivilege as exc:  # a database made by another role (a bare createdb)
            role, database = role_and_database(url)
            raise StoreError(f"cannot make the schema {made_in} the backup's dump is compared in (the role of --to"
                             f" needs CREATE on its database, and its schema public): {exc}; make the database that role's"
                             f" own (createdb --owner {role} --template template0 --lc-ctype C.UTF-8 {database}, or"
                             f" ALTER DATABASE {database} OWNER TO {role}); {_NOTHING_RESTORED}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot make the schema {made_in} the backup's dump is compared in (the role of --to"
                             f" needs CREATE on its database): {exc}; {_NOTHING_RESTORED}") from exc
        catalog = PostgresStore(with_search_path(url, made_in), connections=1)
        try:
            catalog.migrate(version)
        finally:
            catalog.close()
        with tempfile.TemporaryFile() as dump:
            argv = [pg_dump, "--format=custom", "--no-owner", f"--schema={made_in}", f"--dbname={url}"]
            with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=dump, stderr=subprocess.PIPE) as child:
                assert child.stderr is not None
                said = child.stderr.read(65536)
                status = child.wait()
            if status != 0:
                raise StoreError(f"pg_dump failed (exit {status}): {tool_said(said.decode(errors='replace'), 'pg_dump')}")
            dump.seek(0)
            yield dump, made_in
    finally:
        if asked:
            drop_reference(url, made_in)


def drop_reference(url: str, made_in: str) -> None:
    """Drop the throw-away schema ``made_in`` (if it is there) of the database ``url`` names, with Ctrl-C held
    until it is done (:func:`sigint_held`) and raised then; one that came just before it was held is raised too,
    once the schema is dropped. Ctrl-C waits at most about a minute: 30 s to connect, 30 s for the ``DROP``
    (the locks of a ``pg_dump`` or a migration that was stopped)."""
    dropped = False
    try:
        with sigint_held():
            _drop_schema(url, made_in)
            dropped = True
    except KeyboardInterrupt:
        if not dropped:  # it came before it was held: the drop was not reached
            with sigint_held():
                _drop_schema(url, made_in)
        raise


def _drop_schema(url: str, made_in: str) -> None:
    import psycopg
    from psycopg import sql

    try:
        with psycopg.connect(url, connect_timeout=30, autocommit=True) as conn:
            conn.execute("SET statement_timeout = '30s'")
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(made_in)))
    except psycopg.Error as exc:
        raise StoreError(f"cannot drop the schema {made_in} the backup's dump was compared in: {exc}"
                         f" (drop it by hand: DROP SCHEMA {made_in} CASCADE)") from exc


@contextmanager
def sigint_held() -> Iterator[None]:
    """Ctrl-C (``SIGINT``) held while the block runs: once it is done, one that came meanwhile is given to the
    handler there was (Python's raises :class:`KeyboardInterrupt`); when the block raises, that error is raised
    instead. Only the main thread runs a signal's handler: in another this holds nothing, nor needs to."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # (None: a handler not set from Python, which cannot be set back)
        return
    came: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        signal.raise_signal(signal.SIGINT)


def check_dump(dump: IO[bytes], where: Path, url: str, schema: str | None, said_version: Any,
               pg_restore: str, pg_dump: str) -> int:
    """Check the dump ``dump`` (at ``where``) of a pdi catalog of the schema ``schema`` (``None``: ``public``),
    before it is restored into the database ``url`` names (see the module's docstring): its schema version, or a
    :class:`StoreError` naming what pdi does not make."""
    import psycopg

    toc = read_toc(dump, where)
    dump.seek(0)
    check_listed(toc, run_reading([pg_restore, "--list"], dump, "pg_restore --list").decode(
        "utf-8", "surrogateescape"), where)
    named = schema or "public"
    try:
        with psycopg.connect(url, connect_timeout=30) as conn:
            quoted = str(conn.execute("SELECT quote_ident(%s)", (named,)).fetchone()[0])  # type: ignore[index]
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the PostgreSQL server: {exc}") from exc
    migrations = [e for e in toc.entries if (e.desc, e.tag, e.namespace) == ("TABLE DATA", "schema_migrations", named)]
    if len(migrations) != 1:
        raise StoreError(f"{where} holds no schema_migrations of the schema {named!r} (the data that says its schema"
                         f" version): not a pdi backup; {_NOTHING_RESTORED}")
    if not re.fullmatch(rf"COPY {re.escape(quoted)}\.schema_migrations \(version, [a-z_, ]+\) FROM stdin;\n",
                        migrations[0].copy or ""):
        raise StoreError(f"{where}: its data entry {migrations[0].named()} is restored by"
                         f" {(migrations[0].copy or '')[:200]!r}, not by COPY … FROM stdin as pdi's: not a pdi backup, or"
                         f" one a stranger changed; {_NOTHING_RESTORED}")
    version = migrations_version(data_text(pg_restore, dump, where, [migrations[0].dump_id]),
                                 migrations[0].copy or "", where)
    if isinstance(said_version, int) and said_version != version:
        raise StoreError(f"{where.parent / 'pdi-backup.json'} says the catalog is at schema version {said_version},"
                         f" but {where} is at {version}: this backup is damaged, restore another one;"
                         f" {_NOTHING_RESTORED}")
    from pdi.archive.store import SCHEMA_VERSION

    if version > SCHEMA_VERSION:
        raise StoreError(f"{where} holds an archive at schema version {version}, newer than this pdi understands"
                         f" ({SCHEMA_VERSION}): restore it with the release that made it, or a newer one;"
                         " nothing was written")
    with reference_dump(url, version, pg_dump) as (reference, made_in):
        ours_toc = read_toc(reference, where)
        left_out = [e.dump_id for e in ours_toc.entries if not (schema is None and (e.desc, e.tag) == ("SCHEMA", made_in))]
        ours = normalized(schema_text(pg_restore, reference, where, left_out), made_in, named, quoted)
    check_schema(normalized(schema_text(pg_restore, dump, where)), ours, version, where)
    check_data(toc, ours_toc, named, made_in, quoted, where)
    return version
