"""How an SGML document (``text/sgml``) is read into :class:`~pdi.fragments.markup.element.Element` values.

What counts as an element is what an SGML parser reports given the
document's DTD (issue 25; PDI-GRAMMAR.md §3): the parser is OpenSP's
``onsgmls`` (Debian's ``opensp``), run as a subprocess on the CRLF-canonical
text written as UTF-8, with an archive's own SGML catalog first
(:class:`SgmlCatalog`: a folder holding a ``catalog`` file and the DTDs and
entities it names, ``sgml/`` in an archive's directory) and then the
system's (``$SGML_CATALOG_FILES``, by default ``/etc/sgml/catalog``) to find
the DTD a document type declaration names. Every element the parser
reports counts, in the order of its start events, whether its start tag is
in the source or was implied (an omitted ``<HTML>``, ``<HEAD>``, ``<BODY>``).

Where an element starts and ends, in code points of the CRLF-canonical text
(the same positions ``char`` counts; ``onsgmls`` reports line numbers only):

* An explicit start tag (``<name``, or SHORTTAG's empty ``<>``) is found in
  the source from the line ``onsgmls`` reports it on, after the markup found
  before it; comment declarations, processing instructions and the content
  of marked sections the parser ignores (``IGNORE``) or reads as data
  (``CDATA``, ``RCDATA``) are skipped (:func:`unparsed_spans`). The element
  starts at its ``<``.
* An explicit end tag (``</name``, ``</>``) ends the element after its ``>``
  (an unclosed end tag, before the ``<`` that ends it); a NET-enabling start
  tag (``<b/``) ends at the ``/`` that closes it.
* An omitted end tag (the parser implied it) ends the element where the
  next markup or character data that made the parser close it begins: the
  next start or end tag found, or the first character of data other than
  white space; a declared-``EMPTY`` element (``<br>``) is its start tag. An
  element still open at the end of the document ends at the end.
* An omitted start tag starts the element at that same place: where the
  markup or data that made the parser imply it begins.
* An element the parser reads from another entity (the replacement text of
  an entity, or an external text entity) counts, and spans nothing of this
  text: a zero-length place where the reference (``&name;``) stands. That the
  next start and end tags are an internal entity's, not ones of the same name
  written after the reference, ``onsgmls -oentity`` says: it gives the
  entity's definition where the content refers to it (and again for each
  reference in its replacement text, which stands at the outer one), and as
  many of the tags that follow as its replacement text holds are the
  entity's. What an entity's tag closes or implies ends or starts at the
  reference; an element whose end tag the entity holds ends after it. A
  reference not found from the markup before it to the line of the next
  event is placed where the entity's data shows it (the first character
  other than white space after that markup), else where the document's next
  markup begins.

These places are found by the reference concrete syntax's delimiters and
reserved names: a document whose own SGML declaration changes the delimiters
of tags, comments or marked sections, or renames marked sections' statuses,
is refused (:func:`changed_syntax`) rather than cut where its tags are not,
and so is one whose short reference maps send a delimiter to an entity that
may hold tags (:func:`tagged_short_reference`): ``onsgmls`` does not say
where a short reference stands, as it says where an entity reference does.

A document whose DTD cannot be found (no document type declaration, a
public identifier no catalog knows, a system identifier that is not there)
is parsed as ``onsgmls`` parses it without one: every element is
undefined, its content ``ANY``, its end tag omitted only where an
ancestor's end tag closes it. :class:`SgmlReading` says which, and how many
errors the parser reported.

A stranger's document must not hang or exhaust the process, nor read what
it should not: ``onsgmls`` runs with ``-R`` (no local file but the
catalogs' DTDs and entities: none outside :data:`SGML_DIRECTORIES`, the
archive's catalog folder and the document's own, whatever its document type
declaration's system identifier says; the archive's folder is refused if it
holds a symbolic link or anything but plain files, which could lead out of
it), bounded in time (:data:`MAX_SECONDS`), in
output (:data:`MAX_OUTPUT`) and memory, and without the network: OpenSP fetches
an entity whose system identifier is an ``http`` URL (OpenSP's ``sysid.htm``),
and ``-R`` restricts files only, so ``onsgmls`` runs under a seccomp filter
(:data:`_WITHOUT_NETWORK`, through the system's ``libseccomp``) that refuses it
any socket. A document that names an entity by URL is refused: before it is
parsed where the text shows it plainly (a system identifier alone), else when
``onsgmls`` reports that it tried (a URL spelt through character references,
a comment between a declaration's parameters, a formal system identifier's
``<url>`` with attributes, a public identifier no catalog knows). A public
identifier the catalogs know is read from them, though a URL stands beside it
(HTML 4.01's doctype), as ``onsgmls`` reads it. One whose
parse reports more than :data:`~pdi.fragments.markup.bounds.MAX_START_TAGS`
elements (as HTML and XML are bounded; in SGML a few hundred octets of
nested entities can expand to millions) is refused before its events are read.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Final

from pdi._workdirs import WorkFolder
from pdi.errors import LimitError, StoreError, UnsupportedError
from pdi.fragments.markup.bounds import MAX_START_TAGS, OTHERWISE
from pdi.fragments.markup.element import Element
from pdi.fragments.markup.sgml_source import (
    _BLANK,
    _REFERENCE_OR_COMMENT,
    _keyword,
    _Locator,
    _Tags,
    unparsed_spans,
)

#: How long ``onsgmls`` may take on one document (seconds).
MAX_SECONDS: Final = 30.0
#: The most ESIS and error output one document may make (octets), beyond 16 per octet of the text.
MAX_OUTPUT: Final = 64 * 1024 * 1024
#: The address space ``onsgmls`` may take (octets).
MAX_MEMORY: Final = 1024 * 1024 * 1024
#: Where the parser may read DTDs and entities (beside the document itself and an archive's :class:`SgmlCatalog`).
SGML_DIRECTORIES: Final = ("/etc/sgml", "/usr/share/sgml", "/usr/share/xml", "/var/lib/sgml-base")
#: The catalog file of an archive's :class:`SgmlCatalog` folder (an OASIS TR9401 catalog, as Debian's are).
CATALOG_FILE: Final = "catalog"


@dataclass(frozen=True)
class SgmlCatalog:
    """An archive's own SGML catalog: the folder ``directory``, holding the catalog file :data:`CATALOG_FILE`
    (``PUBLIC "-//ACME//DTD Filing//EN" "filing.dtd"``) and the DTDs and entities it names, as plain files.

    ``onsgmls`` reads its catalog before the system's, and may read any file in the folder (``-D``), so the
    folder is for DTDs and entities alone: :meth:`checked` refuses one that holds a symbolic link or anything but
    plain files, which could lead a document's system identifier out of it.
    """

    directory: str

    @property
    def catalog(self) -> str:
        """The catalog file's path."""
        return os.path.join(self.directory, CATALOG_FILE)

    def checked(self) -> bool:
        """Whether the folder and its catalog file are there to be read (``False``: only the system's catalogs
        are read). A :class:`~pdi.errors.StoreError` naming what is wrong when the folder holds a symbolic link, a
        folder or anything else that is not a plain file, or is itself a link or no folder: the archive is not as
        pdi keeps it, and a document parsed now would be read otherwise than it will be once that is mended."""
        name = f"the archive's SGML catalog folder {self.directory}"
        if os.path.islink(self.directory.rstrip("/") or "/"):
            raise StoreError(f"{name} is a symbolic link: onsgmls would read what it leads to; make it a folder")
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return False
        except NotADirectoryError:
            raise StoreError(f"{name} is not a folder") from None
        except OSError as exc:
            raise StoreError(f"cannot read {name}: {exc.strerror or exc}") from None
        for entry in entries:
            if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                what = "a symbolic link" if entry.is_symlink() else "not a plain file"
                raise StoreError(
                    f"{name} holds {entry.name!r}, {what}: a document's system identifier could lead the parser"
                    " through it out of the folder, so no SGML is parsed until it is taken out (pdi sgml add copies"
                    " DTDs in as plain files)")
        return any(entry.name == CATALOG_FILE for entry in entries)


#: What ``onsgmls`` says when an entity names a URL: where it could not open a socket (:data:`_WITHOUT_NETWORK`),
#: resolve a host, or read the URL at all (OpenSP's ``URLStorageMessages``).
_URL_MESSAGE: Final = re.compile(
    r"cannot create socket|could not resolve host|no address record for host|host \S+ not found|cannot connect to"
    r"|only HTTP scheme supported|URL not supported|empty host in HTTP URL|port number in HTTP URL"
    r"|invalid host number|could not get \S+ from|error connecting to"
)
#: Runs ``argv[1:]`` (``onsgmls``) under a seccomp filter that refuses every ``socket()`` (so no URL is fetched, no
#: host looked up); exits 120 saying why when the filter cannot be made (no ``libseccomp.so.2``), rather than run
#: without it. A filter outlives ``execv`` and cannot be lifted by the program it holds.
_WITHOUT_NETWORK: Final = """
import ctypes, errno, os, signal, sys
def refuse(why):
    sys.stderr.write("cannot keep onsgmls off the network: " + why + "\\n")
    sys.stderr.flush()
    os._exit(120)  # not 1, which is onsgmls's status for a document with errors
for ignored in (signal.SIGXFSZ, signal.SIGPIPE):  # Python ignores them, and execv would keep that: the output bound
    signal.signal(ignored, signal.SIG_DFL)  # must stop onsgmls, not leave it writing nothing until its time is up
try:
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
except OSError as exc:
    refuse(str(exc) + " (Debian: apt-get install libseccomp2)")
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
context = lib.seccomp_init(0x7FFF0000)  # SCMP_ACT_ALLOW but what is ruled out
for call in (b"socket", b"socketpair"):
    number = lib.seccomp_syscall_resolve_name(call)
    if not context or number < 0 or lib.seccomp_rule_add(context, 0x00050000 | errno.EACCES, number, 0) != 0:
        refuse("libseccomp refused the filter")
if lib.seccomp_load(context) != 0:
    refuse("the kernel refused the seccomp filter")
os.execv(sys.argv[1], sys.argv[1:])
"""
#: Keywords here and below are matched in ASCII (``re.A``), as onsgmls reads them: ``ſYſTEM`` (a long s) or ``PUBLıC``
#: (a dotless i) is no keyword, though Python's Unicode case folding makes them one.
#: An entity named by URL alone. (A public identifier with a URL beside it is left to the parse: the catalogs may know
#: it, as they know HTML 4.01's, which its own doctype names with a URL; if they do not, onsgmls tries the URL and says so.)
_URL_ENTITY: Final = re.compile(r"""(?ai)<url>|SYSTEM\s*["']\s*[a-z][a-z0-9+.-]*://""")
_NO_DTD: Final = (
    "DTD did not contain element declaration for document type name",
    "no document type declaration",
    "cannot find",
    "could not resolve",
    "no system identifier could be generated",
)


@dataclass(frozen=True)
class SgmlReading:
    """What ``onsgmls`` made of one document: its elements, whether its DTD was found, how many errors it reported."""

    elements: tuple[Element, ...]
    dtd_found: bool
    errors: int
    first_error: str | None


#: How far into a document its document type declaration is looked for (:func:`declared_dtd`).
DOCTYPE_WITHIN: Final = 64 * 1024
_DOCTYPE: Final = re.compile(
    r"""<!DOCTYPE\s+([^\s>\[]+)(?:\s+(?:PUBLIC\s*("[^"]*"|'[^']*')(?:\s*("[^"]*"|'[^']*'))?|SYSTEM\s*("[^"]*"|'[^']*')))?""",
    re.I | re.A,
)


def declared_dtd(text: str) -> str | None:
    """The DTD the document type declaration near the start of ``text`` names, for people: its public
    identifier (``-//TEI P3//DTD Main Document Type//EN``), else its system identifier, else its document type's
    name (``DOCTYPE memo``, an internal subset only); ``None`` when there is no declaration."""
    found = _DOCTYPE.search(text, 0, DOCTYPE_WITHIN)
    if found is None:
        return None
    identifier = found.group(2) or found.group(4) or found.group(3)
    return identifier[1:-1] if identifier else f"DOCTYPE {found.group(1)}"


#: Delimiters whose change leaves tags, comments and marked sections where they were: those of references.
_HARMLESS_DELIMITERS: Final = frozenset({"CRO", "HCRO", "ERO", "PERO", "REFC"})
#: Reserved names :func:`unparsed_spans` reads (marked sections' statuses, parameter entities' declarations).
_READ_NAMES: Final = frozenset({"IGNORE", "INCLUDE", "CDATA", "RCDATA", "TEMP", "ENTITY"})
_DECLARATION_WORD: Final = re.compile(r"[^\s\"'>-]+|-")


def changed_syntax(text: str) -> str | None:
    """What an SGML declaration at the start of ``text`` (ISO 8879 §13) changes of the reference concrete syntax that
    the finder of tags reads: general delimiters other than references' (``DELIM GENERAL SGMLREF STAGO "{"``, §13.4.6)
    and the reserved names of marked sections and entity declarations (``NAMES SGMLREF IGNORE SKIP``, §13.4.7),
    said for people (``the delimiters STAGO, TAGC``); ``None`` when it changes none of them, or there is none."""
    at = _BLANK.match(text, 0).end()  # type: ignore[union-attr]
    if _keyword(text[at : at + 6]) != "<!SGML":
        return None
    tokens: list[str] = []
    at += 6
    end = min(len(text), at + DOCTYPE_WITHIN)
    while at < end:
        if text[at].isspace():
            at += 1
        elif text.startswith("--", at):  # a comment
            close = text.find("--", at + 2, end)
            at = end if close < 0 else close + 2
        elif text[at] in "\"'":  # a literal
            close = text.find(text[at], at + 1, end)
            tokens.append(text[at : (end if close < 0 else close + 1)])
            at = end if close < 0 else close + 1
        elif text[at] == ">":
            break
        else:
            word = _DECLARATION_WORD.match(text, at)
            tokens.append(_keyword(word.group(0)))  # type: ignore[union-attr]
            at = word.end()  # type: ignore[union-attr]

    def assignments(opening: list[str], closing: str) -> list[str]:
        for i in range(len(tokens) - len(opening) + 1):
            if tokens[i : i + len(opening)] == opening:
                after = tokens[i + len(opening) :]
                return after[: after.index(closing) if closing in after else len(after)][::2]
        return []

    delimiters = [d for d in assignments(["DELIM", "GENERAL", "SGMLREF"], "SHORTREF") if d not in _HARMLESS_DELIMITERS]
    names = [n for n in assignments(["NAMES", "SGMLREF"], "QUANTITY") if n in _READ_NAMES]
    said = ([f"the delimiters {', '.join(delimiters)}"] if delimiters else []) + (
        [f"the reserved names {', '.join(names)}"] if names else [])
    return " and ".join(said) or None


_SHORT_REFERENCE_MAP: Final = re.compile(
    r"""<!SHORTREF\s++[^\s>]++((?:\s++(?:"[^"]*+"|'[^']*+'|[^\s"'>]++))*+)\s*+>""", re.I | re.A)
_MAPPED: Final = re.compile(r"""(?:"[^"]*+"|'[^']*+')\s++([^\s"'>]++)""")
_GENERAL_ENTITY: Final = re.compile(
    r"""<!ENTITY\s++([^\s%"'>]++)\s++(?:(CDATA|SDATA|PI|STARTTAG|ENDTAG|MS|MD)\s++)?("[^"]*+"|'[^']*+')?""", re.I | re.A)


def tagged_short_reference(text: str) -> str | None:
    """An entity that a short reference map declared in ``text`` (ISO 8879 §11.5) maps a delimiter to and whose
    replacement text may hold tags (declared ``STARTTAG``, ``ENDTAG``, ``MS`` or ``MD``, or with ``<`` in its
    literal, or not declared in ``text``); ``None`` if there is none. ``onsgmls`` says nothing where a short
    reference stands (its ESIS has no event for it, as it has for an entity reference), so the elements its entity
    holds could not be told from tags of the same name written after it."""
    declarations: dict[str, tuple[str, str | None]] | None = None  # name -> (kind, literal), the first (made once)
    for found in _SHORT_REFERENCE_MAP.finditer(text):
        for mapped in _MAPPED.finditer(found.group(1)):
            entity = mapped.group(1)
            if entity.upper() in ("#EMPTY", "EMPTY"):
                continue
            if declarations is None:
                declarations = {}
                for declared in _GENERAL_ENTITY.finditer(text):
                    declarations.setdefault(declared.group(1), ((declared.group(2) or "").upper(), declared.group(3)))
            kind, literal = declarations.get(entity, ("", None))
            if literal is None or kind in ("STARTTAG", "ENDTAG", "MS", "MD") or (not kind and "<" in literal):
                return entity
    return None


def onsgmls_path() -> str | None:
    """The ``onsgmls`` program on ``PATH``, or ``None`` (Debian: ``apt-get install opensp``)."""
    return shutil.which("onsgmls")


def sgml_elements(text: str, catalog: SgmlCatalog | None = None) -> list[Element]:
    """Every element ``onsgmls`` reports in the CRLF-canonical SGML ``text``, with its extent (see the module docstring)."""
    return list(read_sgml(text, catalog=catalog).elements)


def read_sgml(text: str, *, seconds: float = MAX_SECONDS, catalog: SgmlCatalog | None = None) -> SgmlReading:
    """Parse ``text`` with ``onsgmls`` and map its element events to code points of ``text``.

    ``catalog``: an archive's own SGML catalog, read before the system's
    (its folder checked first: :meth:`SgmlCatalog.checked`, whose
    :class:`~pdi.errors.StoreError` is raised). Raises :class:`~pdi.errors.UnsupportedError` when ``onsgmls`` is not
    installed or the document names an entity by URL, and
    :class:`~pdi.errors.LimitError` when the parse takes longer than
    ``seconds``, more output than its bound, or more memory.
    """
    program = onsgmls_path()
    if program is None:
        raise UnsupportedError("elt on SGML needs OpenSP's onsgmls (Debian: apt-get install opensp)")
    if _URL_ENTITY.search(text):
        raise UnsupportedError("the SGML document names an entity by URL: pdi does not fetch it, and cannot parse it")
    mapped = tagged_short_reference(text) if "SHORTREF" in text.upper() else None
    if mapped is not None:
        raise UnsupportedError(f"the SGML document maps a short reference to the entity {mapped!r}, whose tags elt"
                               f" cannot tell from tags written in the text (onsgmls does not say where a short"
                               f" reference stands){OTHERWISE}")
    changed = changed_syntax(text)
    if changed:
        raise UnsupportedError(f"the document's SGML declaration changes {changed} (ISO 8879 §13.4.6, §13.4.7): elt finds tags,"
                               f" comments and marked sections as the reference concrete syntax writes them, and"
                               f" cannot place this document's elements{OTHERWISE}")
    output_limit = MAX_OUTPUT + 16 * len(text)
    with WorkFolder("pdi-sgml-") as directory:
        os.mkdir(os.path.join(directory, "in"))  # the document alone: what it may name by a relative path
        document = os.path.join(directory, "in", "document.sgml")
        with open(document, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        esis_path = os.path.join(directory, "esis")
        errors_path = os.path.join(directory, "errors")
        command = [program, "-R", "-E0", "-oline", "-otagomit", "-oentity", "-D", os.path.dirname(document)]
        if catalog is not None and catalog.checked():  # (its catalog first: the archive's DTD is the one kept)
            folder = os.path.abspath(catalog.directory)
            command += ["-D", folder, "-c", os.path.join(folder, CATALOG_FILE)]
        for allowed in SGML_DIRECTORIES:
            command += ["-D", allowed]
        command.append(document)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SP_CHARSET_FIXED": "1", "SP_ENCODING": "utf-8",
               "SGML_CATALOG_FILES": os.environ.get("SGML_CATALOG_FILES", "/etc/sgml/catalog")}

        limited = _limited(command, output_limit, seconds)
        with open(esis_path, "wb") as esis, open(errors_path, "wb") as err:
            try:
                process = subprocess.run(limited, stdin=subprocess.DEVNULL, stdout=esis, stderr=err, env=env,
                                         cwd=os.path.dirname(document), timeout=seconds, check=False)
            except subprocess.TimeoutExpired:
                raise LimitError(f"onsgmls took longer than {seconds:g} s on the SGML document") from None
        if process.returncode in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):  # written past RLIMIT_FSIZE (signal(7))
            raise LimitError(f"onsgmls wrote more than its bound of {output_limit:,} octets of output"
                             f" ({MAX_OUTPUT:,} and 16 an octet of the document): its entities and tags expand to"
                             " more than pdi reads of one parse")
        if process.returncode < 0 or process.returncode > 128:  # a signal (the shell's way: 128 + its number)
            raise LimitError(f"onsgmls was stopped (status {process.returncode}): the document needs more"
                             " time, memory or output than pdi gives one parse")
        with open(errors_path, encoding="utf-8", errors="replace") as err_file:
            messages = err_file.read().splitlines()
        if process.returncode not in (0, 1):  # onsgmls: 1 when it reported errors; else the shell failed
            raise UnsupportedError(f"onsgmls could not run (status {process.returncode}):"
                                   f" {messages[0] if messages else 'no message'}")
        fetched = next((m for m in messages if _URL_MESSAGE.search(m)), None)
        if fetched is not None:
            where = fetched.split(document + ":", 1)[-1].split(":E:", 1)[0] if document + ":" in fetched else None
            raise UnsupportedError("the SGML document names an entity by URL"
                                   + (f" (line {where.replace(':', ', column ')})" if where else "")
                                   + f": pdi does not fetch it, and cannot parse it ({fetched.split(':E:')[-1].strip()})")
        count = _start_events(esis_path)
        if count > MAX_START_TAGS:  # read before one Python object is made for each
            raise LimitError(f"this SGML ({len(text):,} characters) has {count:,} elements, its entities' replacement"
                             f" text and implied tags counted, more than the {MAX_START_TAGS:,} element fragments"
                             f" (elt, name) are evaluated on{OTHERWISE}")
        elements = _Locator(text, document).run(_esis_events(esis_path))
    error_lines = [m for m in messages if ":E:" in m or ":X:" in m]
    dtd_found = not any(any(sign in m for sign in _NO_DTD) for m in messages if ":E:" in m or ":W:" in m)
    first = error_lines[0].split(":E:", 1)[-1].strip() if error_lines else None
    return SgmlReading(tuple(elements), dtd_found, len(error_lines), first)


def _limited(command: list[str], output_limit: int, seconds: float) -> list[str]:
    """``command`` (``onsgmls`` and its arguments) run within its bounds and off the network: the limits are set by
    the shell that then becomes onsgmls (not by a preexec_fn, unsafe in a threaded server): output in 512-octet
    blocks, address space in KiB, processor time in seconds."""
    return [
        "/bin/sh", "-c",
        f"ulimit -f {output_limit // 512 + 1} && ulimit -v {MAX_MEMORY // 1024} && ulimit -t {int(seconds) + 1}"
        ' && exec "$0" "$@"',
        sys.executable, "-I", "-S", "-c", _WITHOUT_NETWORK, *command,
    ]


#: The document type name of the document :func:`dtd_errors` reads a DTD with (none declares it: its error is not
#: the DTD's).
_CHECK_DOCTYPE: Final = "pdi-dtd-check"


def dtd_errors(data: bytes, name: str, catalog: SgmlCatalog | None = None, *, shown: str | None = None,
               seconds: float = MAX_SECONDS) -> list[str]:
    """The errors ``onsgmls`` reports in the DTD (or DTD module, entity set) ``data``, read as the external subset
    of a document that names it as ``SYSTEM "name"``, with the archive's SGML ``catalog`` and folder (for the files
    it names) and the machine's catalogs, as a document's parse reads them: each ``file:line:column: message``,
    ``file`` being ``shown`` (default ``name``) for ``data`` itself. None: it parses. An error of the document that names it (its
    document type name, which no DTD declares) is not the DTD's and is left out. Raises
    :class:`~pdi.errors.UnsupportedError` where ``onsgmls`` is not installed, :class:`~pdi.errors.LimitError`
    past its bounds."""
    program = onsgmls_path()
    if program is None:
        raise UnsupportedError("checking a DTD needs OpenSP's onsgmls (Debian: apt-get install opensp)")
    with WorkFolder("pdi-dtd-") as directory:
        os.mkdir(os.path.join(directory, "in"))
        folder = os.path.join(directory, "in")
        with open(os.path.join(folder, name), "wb") as out:
            out.write(data)
        with open(os.path.join(folder, "check.sgml"), "w", encoding="ascii") as out:
            out.write(f'<!DOCTYPE {_CHECK_DOCTYPE} SYSTEM "{name}">\n')
        command = [program, "-R", "-p", "-s", "-D", folder]
        if catalog is not None:  # (its files, the modules a DTD names, whether or not its catalog is written yet)
            archive = os.path.abspath(catalog.directory)
            command += ["-c", os.path.join(archive, CATALOG_FILE)] if catalog.checked() else []
            command += ["-D", archive] if os.path.isdir(archive) else []
        for allowed in SGML_DIRECTORIES:
            command += ["-D", allowed]
        command.append("check.sgml")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SP_CHARSET_FIXED": "1", "SP_ENCODING": "utf-8",
               "SGML_CATALOG_FILES": os.environ.get("SGML_CATALOG_FILES", "/etc/sgml/catalog")}
        errors_path = os.path.join(directory, "errors")
        with open(errors_path, "wb") as err:
            try:
                process = subprocess.run(_limited(command, MAX_OUTPUT, seconds), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=folder,
                                         timeout=seconds, check=False)
            except subprocess.TimeoutExpired:
                raise LimitError(f"onsgmls took longer than {seconds:g} s on the DTD {name}") from None
        if process.returncode not in (0, 1):
            raise LimitError(f"onsgmls was stopped or could not run on the DTD {name} (status {process.returncode})")
        with open(errors_path, encoding="utf-8", errors="replace") as err_file:
            messages = err_file.read().splitlines()
    found = []
    for message in messages:
        where, kind, said = message.partition(":E:")
        if not kind:
            continue
        file, line, column = [*where.removeprefix(f"{program}:").rsplit(":", 2), "", ""][:3]
        if file == os.path.join(folder, "check.sgml"):
            continue
        # onsgmls -R lists no place it tried ("cannot find \"x.ent\"; tried "): the dangling "tried" said nothing
        said = re.sub(r";\s*tried\s*$", "", said.strip())
        found.append(f"{shown or name if file == os.path.join(folder, name) else file}:{line}:{column}: {said}")
    return found


def _start_events(path: str) -> int:
    """The element start events (``(`` lines) of an ESIS file, counted a block at a time: each ESIS line begins
    with its command, and data's own line ends are escaped (``\\n``)."""
    count = 0
    last = b"\n"
    with open(path, "rb") as esis:
        while block := esis.read(1 << 20):
            count += (last + block).count(b"\n(")
            last = block[-1:]
    return count


#: What :func:`_esis_events` keeps of a data line: that it holds data other than white space, or only white space.
_DATA, _BLANK_DATA = "-x", "-"


def _esis_events(path: str) -> list[str]:
    """The lines of an ESIS file that place elements: ``L`` (line and file), ``o`` (omitted tag), ``(`` and ``)``,
    ``-`` (data) as :data:`_DATA` or :data:`_BLANK_DATA`, and ``I`` (a reference to an internal entity whose
    replacement text holds tags) as ``I`` and the start and end tags it holds (:func:`_entity_tags`).

    Read a piece at a time, so that what is kept is a few octets for each element (whose number is bounded
    before this is called) and not the parse's whole output (64 MiB and 16 octets for each of the document's:
    an attribute's line for every attribute the DTD declares on every element, data expanded from entities).
    What is left out never comes between an ``o`` and the start or end it marks (``A`` lines come before
    the ``o``); data lines with nothing kept between them are one (what matters is whether any holds data),
    and so are ``L`` lines (the first and last of a run: the line after the events before them, and where the
    events after them are).
    """
    kept: list[str] = []
    started = False  # (-oentity gives every entity's definition first, before the document's events)
    references = 0
    nested = 0  # references still to come that stand in the replacement text of entities referred to, not in the text
    in_attributes: dict[bytes, list[int]] = {}  # since the last event: each entity referred to (its text's first
    # 4 KiB), and where its I event is kept, until an attribute's value shows it was referred to there
    with open(path, "rb") as esis:
        while line := esis.readline(1 << 16):
            command = line[:1]
            if command == b"I":  # an internal entity's definition, written again where the content refers to it
                definition = _rest(esis, line)
                if not started:
                    continue
                inner = nested > 0  # (onsgmls writes an I for a reference in an entity's text too, where it is read)
                nested += _entity_references(definition) - inner
                starts, ends = _entity_tags(definition)
                if not (starts or ends):
                    continue
                references += 1
                if references > 2 * MAX_START_TAGS:
                    raise LimitError(f"this SGML refers to entities that hold tags more than {2 * MAX_START_TAGS:,}"
                                     f" times, more than element fragments (elt) are evaluated on{OTHERWISE}")
                name = "-" if inner else definition.partition(b" ")[0].decode("utf-8", "replace")
                event = f"I{starts} {ends} {name}"  # (a name to look for in the text; "-": the reference is not in it)
                if kept and kept[-1] == "o":  # an o is for the very next start or end
                    kept.insert(len(kept) - 1, event)
                else:
                    kept.append(event)
                replacement = definition.partition(b" ")[2].partition(b" ")[2][:4096]
                in_attributes.setdefault(replacement, []).append(len(kept) - 1 - (kept[-1] == "o"))
                continue
            if command == b"A":  # an attribute: an entity referred to in its value holds data there, not tags
                value = _rest(esis, line)
                for replacement in [r for r in in_attributes if r in value]:
                    for index in in_attributes.pop(replacement):
                        kept[index] = "!"  # (an event that places nothing)
                continue
            if command in (b"(", b")"):  # an element's attributes come before it (and a record end may too): done
                in_attributes.clear()
            if command == b"(":
                started = True
            if command in (b"L", b"("):  # short: a line number and a file name, an element's name
                while not line.endswith(b"\n") and (more := esis.readline(1 << 16)):
                    line += more
                event = line.rstrip(b"\n").decode("utf-8", "replace")
                if command == b"L" and len(kept) >= 2 and kept[-1][0] == "L" and kept[-2][0] == "L":
                    kept[-1] = event  # the middle of a run of L lines tells nothing
                else:
                    kept.append(event)
            elif command in (b"o", b")"):
                kept.append("o" if command == b"o" else ")" + _rest(esis, line).decode("utf-8", "replace"))
            elif command == b"-":
                blank = True
                carry = b""
                piece = line[1:]
                while True:  # an escaped record end (\\n) may be cut between two pieces
                    whole = carry + piece.rstrip(b"\n")
                    carry = b"\\" if whole.endswith(b"\\") and not piece.endswith(b"\n") else b""
                    if blank and (whole[:-1] if carry else whole).replace(b"\\n", b"").strip():
                        blank = False
                    if piece.endswith(b"\n") or not (piece := esis.readline(1 << 16)):
                        break
                if kept and kept[-1] in (_DATA, _BLANK_DATA):
                    kept[-1] = _BLANK_DATA if blank and kept[-1] == _BLANK_DATA else _DATA
                else:
                    kept.append(_BLANK_DATA if blank else _DATA)
            else:
                _rest(esis, line)
                if kept and kept[-1] == "o":  # (never so: but an o is for the very next event)
                    kept.append("!")
    return kept


def _entity_tags(definition: bytes) -> tuple[int, int]:
    """How many start tags, and how many end tags (a NET-enabling start tag's ``/`` counted), the replacement text
    of an internal text entity holds, given its ESIS definition (``I`` name, type, text; its first 64 KiB), as
    :class:`_Tags` finds tags: those of the parse's elements that come from it, which are not in the document."""
    kind, _, replacement = definition.partition(b" ")[2].partition(b" ")
    if kind != b"TEXT":  # CDATA, SDATA, PI: data, no markup
        return 0, 0
    text = re.sub(r"\\(\\|n)", lambda m: "\n" if m.group(1) == "n" else "\\",
                  replacement.decode("utf-8", "replace"))
    unparsed = unparsed_spans(text)
    starts = ends = span = 0
    for match in _Tags._OPEN.finditer(text):
        name = match.group(2)
        if name is None:  # a comment declaration
            continue
        while span < len(unparsed) and unparsed[span][1] <= match.start():
            span += 1
        if span < len(unparsed) and unparsed[span][0] <= match.start():
            continue
        if not (name[:1].isalpha() or (not name and text.startswith(">", match.end()))):
            continue  # "<" and no name: data
        if match.group(1) == "/":
            ends += 1
        else:
            starts += 1
            ends += text.startswith("/", match.end())  # <b/…/: its "/" ends it
    return starts, ends


def _entity_references(definition: bytes) -> int:
    """How many entity references (ISO 8879 §9.4.4: ``&`` and a name; ``&#`` is a character reference) the
    replacement text of an internal text entity holds outside comment declarations and unparsed marked sections,
    given its ESIS definition: ``onsgmls`` writes an ``I`` for each where it reads it, after the entity's own."""
    kind, _, replacement = definition.partition(b" ")[2].partition(b" ")
    if kind != b"TEXT" or b"&" not in replacement:
        return 0
    text = replacement.decode("utf-8", "replace")
    unparsed = unparsed_spans(text)
    count = span = 0
    for match in _REFERENCE_OR_COMMENT.finditer(text):
        if not match.group(0).startswith("&"):
            continue
        while span < len(unparsed) and unparsed[span][1] <= match.start():
            span += 1
        count += not (span < len(unparsed) and unparsed[span][0] <= match.start())
    return count


def _rest(esis: io.BufferedReader, line: bytes) -> bytes:
    """Reads to the end of the ESIS line that ``line`` began; what is after its command, up to 64 KiB."""
    while not line.endswith(b"\n") and (more := esis.readline(1 << 16)):
        if len(line) < 1 << 16:
            line += more[: (1 << 16) - len(line)]
    return line[1:].rstrip(b"\n")
