"""What the ``pdi`` command knows before it loads any command: their modules, their help, the error line.

Below :mod:`pdi.cli`, :mod:`pdi.cli.group` and :mod:`pdi.cli.top_help`
(which all take these from here), and importing nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pdi.errors import ParseError, PDIError


def one_line(text: str) -> str:
    """``text`` with every control character (CR, LF, ESC …), line separator and bidirectional control escaped, so
    it prints as one line that does not drive the terminal (:func:`pdi._wording.printable`: one rule for all
    that pdi prints)."""
    from pdi._wording import printable

    return printable(text)


def error_line(exc: PDIError) -> str:
    """The one line ``pdi`` prints for ``exc``: ``pdi: not found: …``, or ``pdi: …`` for the base class.

    The base class has no kind of its own to name (its title, "pdi error",
    would only repeat the prefix). The message is escaped as :func:`one_line` escapes, and cut in its middle
    past :data:`pdi._wording.MESSAGE_MOST` characters (:func:`pdi._wording.clipped`), so a message that quotes
    what a stranger wrote whole is still one line of a terminal's scroll-back, its start (what was wrong) and its
    end (the rule and the offset) kept. A syntax error in a name pasted from a resolver's address, its ``#`` written
    ``%23``, offers the name meant, as the resolver and the reader's pages do (:func:`pdi.identifier.saying_name_meant`);
    so does one in a resolver's address pasted whole (``http://…/view?pdi=NAME``, ``…/uri-res/N2R?NAME``), as the
    reader's pages do (:func:`pdi.server.protocol.rfc2169.name_in_address`).
    """
    from pdi._wording import MESSAGE_MOST, clipped
    from pdi.errors import ParseError, PDIError

    kind = "" if exc.title == PDIError.title else f"{exc.title}: "
    if isinstance(exc, ParseError) and exc.text and exc.text.lower().startswith(("http://", "https://")):
        exc = _saying_name_in_address(exc)
    elif isinstance(exc, ParseError) and exc.text and "%23" in exc.text:
        from pdi.identifier import saying_name_meant

        exc = saying_name_meant(exc)
    return f"pdi: {kind}{clipped(str(exc), MESSAGE_MOST)}"


def _saying_name_in_address(exc: ParseError) -> ParseError:
    """``exc`` (raised on a resolver's address given where a name is asked for) ending with the name the address
    holds, to give instead; else ``exc`` itself."""
    from pdi._wording import NAME_MOST, clipped
    from pdi.errors import ParseError
    from pdi.server.protocol.rfc2169 import name_in_address

    held = name_in_address(exc.text or "")
    if held is None:
        return exc
    name, browsers = held
    aside = f" (the #{browsers} after the address is the browser's, no part of the name)" if browsers else ""
    return ParseError(f"{exc.reason}; this is a resolver's address of the PDI '{clipped(name, NAME_MOST)}': give"
                      f" the name itself, in single quotes{aside}", text=exc.text, offset=exc.offset, rule=exc.rule)


def named_charset(ctx: object, param: object, value: str | None) -> str | None:
    """A click callback for an option naming a charset (``--charset``): ``value`` as it is when
    :func:`pdi.charsets.codec_for` reads it, else its :class:`~pdi.errors.UnsupportedError` (exit 6) beginning with
    the option's name, and ending with the near names where there are some (``; did you mean 'UTF-8'?``), before
    anything is read or deposited."""
    if value is None:
        return None
    from pdi.charsets import codec_for
    from pdi.errors import UnsupportedError

    try:
        codec_for(value)
    except UnsupportedError as exc:
        opts = getattr(param, "opts", None) or ["--charset"]
        option = next((o for o in opts if o.startswith("--")), opts[0])
        raise UnsupportedError(f"{option}: {exc}") from None
    return value


#: Exit status of bad command-line usage (click's own), and of ``pdi get`` refusing binary output to a terminal.
EXIT_USAGE = 2
#: Exit status of a fragment that lies wholly past the end of its document (a warning: nothing is selected).
EXIT_PAST_END = 9
#: Exit status of a command interrupted by Ctrl-C (SIGINT): 128 + 2, as a shell reports a process SIGINT ended.
EXIT_INTERRUPTED = 130
#: The line a command interrupted by Ctrl-C prints: what was being written is taken back.
INTERRUPTED_LINE = "pdi: interrupted: nothing it was writing was kept"


#: The modules that add each top-level command (``register(cli)`` in each).
#: ``mhtml`` is one group whose commands two modules add (reading; packing).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "uri": ("uri_cmd",),
    "parse": ("parse_cmd",),
    "text": ("text_cmd",),
    **dict.fromkeys(("init", "series", "verify", "export", "import"), ("archive_cmd",)),
    **dict.fromkeys(("add", "version"), ("deposit_cmd",)),
    **dict.fromkeys(("get", "cite", "ls", "meta"), ("read_cmd",)),
    "mhtml": ("mhtml_cmd", "capture_cmd"),
    "capture": ("capture_cmd",),
    "serve": ("serve_cmd",),
    **dict.fromkeys(("token", "audit", "withdraw", "embargo"), ("token_cmd",)),
    **dict.fromkeys(("search", "reindex", "index"), ("search_cmd",)),
    "anchor": ("anchor_cmd",),
    "annotate": ("annotate_cmd",),
    **dict.fromkeys(("keys", "manifest"), ("keys_cmd",)),
    "registry": ("registry_cmd",),
    "sgml": ("sgml_cmd",),
    "mirror": ("mirror_cmd",),
    **dict.fromkeys(("backup", "restore"), ("backup_cmd",)),
    "docs": ("docs_cmd",),
}


#: The one-line help ``pdi --help`` shows for each top-level command: the first
#: sentence of the command's own help, which is all click shows of it, so the
#: list is printed without importing a command's module (a test checks that
#: each equals its command's and that ``pdi --help`` prints what click prints
#: with every command loaded).
COMMAND_HELP: dict[str, str] = {
    "add": "Mint a PDI for each FILE ('-' = stdin) today (GMT) and deposit it; prints each PDI as it is made.",
    "anchor": "Find the passage NAME cites (NAME#char=a,b, #line=a,b, #elt=… or #name=…) in the version --to names.",
    "annotate": "Export a name as a W3C Web Annotation, or find the names annotations point at.",
    "audit": "The audit log, oldest first: who (a user, or token:NAME), when, what, and from where.",
    "backup": "Back up the archive to the directory DEST while deposits go on; again into DEST: only what is new.",
    "capture": "Capture the web page at URL with everything it needs, as RFC 2557 MHTML.",
    "cite": "Resolve both ends of CITATION (A@position=B#fragment) and check the quotation.",
    "docs": "The manual's pages and the deployment files (nginx, systemd units), from the installed package.",
    "embargo": "Embargo NAME until a date: a generic name the whole document, a versioned name that version.",
    "export": "Write the archive (or a series) to DIRECTORY as a BagIt bag, or with --wacz as a WACZ file.",
    "get": "Write the bytes PDI[#fragment] names; a generic PDI lists its versions.",
    "import": "Import a BagIt bag, or the captures of a WARC or WACZ file.",
    "index": "Make the full-text passages large deposits left to the indexer's queue (safe in several processes).",
    "init": "Create an archive at DIR or in a postgresql:// database (default: --archive; both: refused).",
    "keys": "The archive's signing keys, Ed25519 for manifests and ECDSA P-384 for WACZ exports: made once, shown.",
    "ls": "List names in date, then serial order, as the catalog is read.",
    "manifest": "Write the signed manifest of a series (a day of it, or every day): a compact JWS (RFC 7515, EdDSA).",
    "meta": "Add statements (Dublin Core: title=, creator=, date= … or free keys) about PDI, or show them.",
    "mhtml": "Read, check, pack and unpack RFC 2557 MHTML files.",
    "mirror": "Mirror series of other pdi resolvers: add, sync, audit (pdi docs how-to/mirrors).",
    "parse": "Parse PDI (urn:pdi://… or pdi://…) and print its components, canonical form and warnings.",
    "registry": "The archive's registry: series and their resolvers, the authority first, then mirrors (add, remove, show);"
                " and forget, of the registries pdi serve --registry loads.",
    "reindex": "Make the full-text index again from the stored octets (one transaction: a failure keeps the old index).",
    "restore": "Restore the backup in SRC (made by pdi backup) to an empty place; then run pdi verify on it.",
    "search": 'Find the passages holding every one of WORDS ("a phrase" in quotes; no operators).',
    "series": "Register and list document series (issuing authority, ISO 3166 country last).",
    "serve": "Serve the archive: RFC 2169 /uri-res/N2R?urn:pdi:… and friends, /api/… (writes need a token), and a viewer at /.",
    "sgml": "The archive's own SGML DTDs, read before the system's when SGML is parsed (add, list).",
    "text": "Print the passage of text FILE that FRAGMENT identifies (a leading '#' is allowed).",
    "token": "Bearer tokens of the write API: made, listed, revoked (only their SHA-256 is kept).",
    "uri": "Parse, resolve and normalize URIs (RFC 3986; RFC 2396 resolution as a mode).",
    "verify": "Recompute every stored representation's SHA-256 and check the catalog; exit 3 on any problem.",
    "version": "Deposit FILES as the next version of PDI (every format it is to have); prints the PDIs.",
    "withdraw": "Withdraw NAME for good: a versioned name withdraws that version, a generic one the whole document.",
}



#: The top-level help of ``pdi`` (``pdi --help`` above the options).
GROUP_HELP = """\
Persistent document identifiers: mint, archive and resolve urn:pdi names.

Exit status: 0 success, 1 syntax error (or another failure, such as a
port already in use), 2 bad command-line usage (also: pdi get refusing
to write binary content to a terminal), 3 integrity check failed
(also named as: stored octets damaged, citation does not match, format
check failed, charset check failed), 4 not found, 5 immutability conflict, 6 unsupported, 7 limit exceeded,
8 storage error (also: an archive whose schema is older than this pdi's,
which every command but pdi init refuses; pdi init migrates it), 9 a fragment lies wholly past the end of its document
(pdi get: a warning; nothing is selected), 10 forbidden (a token's
role or series does not cover it), 11 gone (a withdrawn name resolves to
its tombstone; an annotation deleted), 12 passage orphaned in the version
asked for (pdi anchor), 13 passage ambiguous there (several places fit as
well), 14 pdi import --partial imported the whole records of a damaged
WARC or WACZ and dropped the rest, 15 precondition failed (an If-Match
entity tag that is not the current one), 16 remote error (another server,
such as a mirror's origin or a captured page's, could not be reached or failed), 130 interrupted (Ctrl-C: what
was being written is taken back).
"""
