"""Python's :mod:`email` parser, bounded: a message read within :class:`~pdi.mail.limits.MailLimits`.

:func:`parse` reads a message's octets with Python's feed parser under
:func:`bounded_policy` (``email.policy.default``, but each ``Content-…``
field bounded as it is read, each field parsed once a read, each entity's
nesting and count refused as the parser makes it, an enclosed message read
as a leaf), a long line held in pieces (:func:`_pieced_lines`) rather than
in Python's buffer. :mod:`pdi.mail.message` and :mod:`pdi.mail.large` read
messages with it.

Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Iterator
from email.message import EmailMessage, Message
from typing import Any, Final

from pdi.errors import LimitError
from pdi.mail.limits import MailLimits, too_deep, too_many_entities

__all__ = [
    "FEEDPARSER_INTERNALS", "MAX_COMMENT_DEPTH", "MAX_FIELD_MARKS", "FieldTooLong", "TooManyFields", "bounded_policy",
    "parse",
]

#: A line end, as :class:`io.StringIO` with ``newline=""`` cuts lines (Python's parser's buffer).
_LINE_END: Final = re.compile(r"\r\n|\r|\n")


def bounded_policy(limits: MailLimits) -> Any:
    """``email.policy.default``, but each ``Content-…`` field the parser reads is bounded as it is read
    (:meth:`~email.policy.Policy.header_source_parse`, which every header field of every entity passes through
    before the parser or anyone asks for it): one of more than ``max_content_field`` octets, its continuation
    lines counted, or more than ``max_content_fields`` of them in all, is a :class:`LimitError` (the parser
    reads such a field again each time the message's structure is asked about, in time that grows faster than
    its length). A body's line that only looks like such a field is never read as one, so never counted."""
    return _policy_class()(tally=[0], bounds=limits, deepest=[()], parsing=[False], entities=[1], fetched={},
                           fields=[0], current=[()], top=[None])


@functools.cache
def _policy_class() -> Any:
    """The class of :func:`bounded_policy`'s policies (made once: :mod:`email.policy` is imported when first read)."""
    import email.headerregistry
    import email.policy

    class BoundedMessage(EmailMessage):
        """An entity the parser makes under a BoundedPolicy: it knows its part numbers from the top (as
        :func:`pdi.mail.message._walk` numbers them), and one attached past ``max_depth`` is refused then, as the parser nests it,
        not after: Python's parser recurses a level an entity, so 1,000 multiparts one in another (33 KB) passed
        the interpreter's recursion limit, a refusal that could name neither the limit nor where."""

        pdi_path: tuple[int, ...] = ()

        def __init__(self, policy: Any = None) -> None:
            super().__init__(policy)
            top = getattr(policy, "top", None)
            if top is not None and top[0] is None:  # the first entity the parser makes: the message (a weak
                top[0] = weakref.ref(self)  # reference: each entity holds the policy, and a cycle outlives a read)

        def get_content_maintype(self) -> str:
            """``message`` of a ``message/*`` entity, but while the parser reads it (:func:`parse`), which enters an
            entity of that maintype and reads its body as a message of its own, recursing once an enclosed message
            (a message holding itself 400,000 times passed every interpreter's recursion limit, and 33 times was
            refused past ``max_depth`` where one read by its structure was kept): it reads the body as a leaf's,
            kept as written, not entered (``docs/email.md`` §1: an enclosed message is one part)."""
            maintype = super().get_content_maintype()
            parsing = getattr(self.policy, "parsing", None)
            if maintype == "message" and parsing is not None and parsing[0]:
                return "x-pdi-enclosed"  # (a message/delivery-status, told by get_content_type, is read as Python reads it)
            return maintype

        def _find_body(self, part: Any, preferencelist: Any) -> Iterator[tuple[int, Any]]:
            """The search of :meth:`~email.message.EmailMessage.get_body` (Python's, which recurses through this
            method), but a multipart the parser read as a leaf (no delimiter line in its body, or a close one first:
            its payload is its body's text) holds no body, as a reading by its structure finds: Python's took the
            first character of such a ``multipart/related`` nested in another multipart as its start part, and
            raised ``AttributeError: 'str' object has no attribute 'is_attachment'`` (a ``start`` parameter:
            ``TypeError``). Of any other such multipart it found nothing already."""
            if isinstance(part, Message) and part.get_content_maintype() == "multipart" and not part.is_multipart():
                return
            yield from super()._find_body(part, preferencelist)  # type: ignore[misc]  # (not in typeshed)

        def attach(self, payload: Any) -> None:  # every entity the parser nests in another comes here
            path = (*self.pdi_path, len(self.get_payload()) if self.is_multipart() else 0)
            payload.pdi_path = path  # an entity of another class (made by hand, not parsed): kept all the same
            bounds, deepest = getattr(self.policy, "bounds", None), getattr(self.policy, "deepest", None)
            if deepest is not None and len(path) > len(deepest[0]):
                deepest[0] = path
            current = getattr(self.policy, "current", None)
            if current is not None:  # the parser reads its header fields next (FeedParser._new_message attaches it)
                current[0] = path
            if bounds is not None and len(path) > bounds.max_depth:
                raise too_deep(path, bounds)
            entities = getattr(self.policy, "entities", None)
            if entities is not None and bounds is not None:  # the top's 1 and each nested, as the parser nests it
                entities[0] += 1
                if entities[0] > bounds.max_parts:  # (not millions of parts made first, then counted by _walk)
                    raise too_many_entities(bounds, path)
            super().attach(payload)

    class BoundedPolicy(email.policy.EmailPolicy):
        tally: list[int] | None = None  # octets of Content-… fields read so far (a list made for each parse)
        bounds: MailLimits | None = None
        deepest: list[tuple[int, ...]] | None = None  # the part numbers of the deepest entity nested so far
        parsing: list[bool] | None = None  # [True] while the parser reads (BoundedMessage.get_content_maintype)
        entities: list[int] | None = None  # the entities the parser has made so far, the top's counted
        fields: list[int] | None = None  # the header fields the parser has read so far, of every entity
        current: list[tuple[int, ...]] | None = None  # the part numbers of the entity whose fields it reads
        top: list[Any] | None = None  # a weak reference to the first entity made: the message
        #: Each field as parsed when first asked for, by its name and value (a dict made for each read): Python
        #: parses a field again each time anyone asks for it (a dozen times a part to read a message's structure,
        #: its facts and its body), in time that grows faster than the field's marks (:data:`MAX_FIELD_MARKS`).
        fetched: dict[tuple[str, str], Any] | None = None
        message_factory = BoundedMessage

        def header_source_parse(self, sourcelines: list[str]) -> tuple[str, str]:
            fields, parsing = self.fields, self.parsing
            if fields is not None and parsing is not None and parsing[0] and self.bounds is not None:
                # each header field of each entity the parser reads (parse), as it reads it: a body's line that only
                # looks like one is not (read by its structure, large.py counts each header block's before it parses)
                fields[0] += 1
                if fields[0] > self.bounds.max_fields:
                    raise TooManyFields(self.current[0] if self.current is not None else ())
            name = sourcelines[0].split(":", 1)[0].rstrip(" \t")
            if name[:8].lower() == "content-" and self.tally is not None and self.bounds is not None:
                last = sourcelines[-1]
                size = sum(len(line) for line in sourcelines) - (len(last) - len(last.rstrip("\r\n")))
                self.tally[0] += size
                if size > self.bounds.max_content_field:
                    raise FieldTooLong(name, size, "".join(sourcelines))
                text = "".join(sourcelines)
                nesting = 0 if self._unstructured(name) else _comment_depth(text)
                if nesting > MAX_COMMENT_DEPTH:
                    raise FieldTooLong(name, size, text, nesting)
                marks = 0 if self._unstructured(name) else _field_marks(text)
                if marks > MAX_FIELD_MARKS:
                    raise FieldTooLong(name, size, text, marks=marks)
                if self.tally[0] > self.bounds.max_content_fields:
                    raise LimitError(
                        f"the message's Content-… fields are more than {self.bounds.max_content_fields:,} octets in"
                        " all (its parts' MIME structure), the most read of one message"
                    )
            return super().header_source_parse(sourcelines)

        def header_fetch_parse(self, name: str, value: Any) -> Any:
            """The field as :class:`email.policy.EmailPolicy` parses it, but a ``Content-Type`` or
            ``Content-Disposition`` whose value ends with a parameter's ``*`` (``text/plain; a*``: RFC 2231's mark
            of a value in a charset, and no ``=`` nor value after it) is read as Python reads a parameter whose ``*``
            is followed by anything but ``=`` (``a* ``): an invalid one, left out (an ``InvalidHeaderDefect``).
            Python's parser of parameters read past the value's end there (``IndexError``, from the parser,
            ``get_content_type``, ``get_body``)."""
            fetched = self.fetched
            if fetched is None or not isinstance(value, str):
                return self._fetch_parse(name, value)
            key = (name.lower(), value)  # (a field's parse is the same each time it is asked for: kept, one read)
            parsed = fetched.get(key)
            if parsed is None:
                parsed = fetched[key] = self._fetch_parse(name, value)
            return parsed

        def _fetch_parse(self, name: str, value: Any) -> Any:
            if isinstance(value, str) and self._parameterized(name):
                if _LINE_ENDS.sub("", value).endswith("*"):
                    value += " "  # after it, no "=": the invalid parameter Python's parser reads up to the next ";"
                if "'" in value:  # RFC 2231's charset of a value: one that is no charset read as an unknown one
                    value = _RFC2231_CHARSET.sub(_unknown_unless_charset, value)
            return super().header_fetch_parse(name, value)

        def _parameterized(self, name: str) -> bool:
            """Whether the field ``name`` is parsed as a MIME value and its parameters (``Content-Type``)."""
            factory = self.header_factory
            return isinstance(factory, email.headerregistry.HeaderRegistry) and issubclass(
                factory[name], email.headerregistry.ParameterizedMIMEHeader)

        def _unstructured(self, name: str) -> bool:
            """Whether the field ``name`` is read as unstructured text (``Content-ID``, ``Content-Description``:
            no comment is read in it), not parsed (``Content-Type``, ``Content-Disposition``, …)."""
            factory = self.header_factory
            return isinstance(factory, email.headerregistry.HeaderRegistry) and issubclass(
                factory[name], email.headerregistry.UnstructuredHeader)

    return BoundedPolicy


class TooManyFields(Exception):
    """The parser read a header field past :attr:`MailLimits.max_fields`, in the header block of the entity at
    ``path`` (part numbers, as :attr:`pdi.mail.message.MailPart.path`)."""

    def __init__(self, path: tuple[int, ...]) -> None:
        super().__init__(path)
        self.path = path


class FieldTooLong(Exception):
    """A ``Content-…`` field past :attr:`MailLimits.max_content_field`, or whose comments nest more than
    :data:`MAX_COMMENT_DEPTH` deep (``nesting``), as the parser read it."""

    def __init__(self, name: str, size: int, text: str, nesting: int | None = None, *, marks: int | None = None
                 ) -> None:
        super().__init__(name)
        self.name, self.size, self.text, self.nesting, self.marks = name, size, text, nesting, marks

    def what(self, limits: MailLimits) -> str:
        """What is wrong with the field, after its name (``is 5,031 octets, more than …``)."""
        if self.marks is not None:
            return (f"has {self.marks:,} of the marks ';', '(' and '\"' that part its parameters, comments and quoted"
                    f" strings, more than the {MAX_FIELD_MARKS} pdi reads in a field of the message's MIME structure")
        if self.nesting is not None:
            return (f"has comments nested {self.nesting:,} deep, more than the {MAX_COMMENT_DEPTH} pdi reads in a"
                    " field of the message's MIME structure")
        return (f"is {self.size:,} octets, more than the limit of {limits.max_content_field:,} for a field of the"
                " message's MIME structure")

    def refusal(self, data: bytes, limits: MailLimits) -> LimitError:
        at = data.find(self.text.encode("ascii", "surrogateescape"))  # its line: as the parser counts them
        where = ""
        if at >= 0:
            line = data.count(b"\n", 0, at) + data.count(b"\r", 0, at) - data.count(b"\r\n", 0, at) + 1
            where = f"line {line}: "
        return LimitError(f"{where}the {self.name} field {self.what(limits)}")


#: The deepest comments (RFC 5322 §3.2.2: ``(`` … ``)``, nested in one another) of a ``Content-…`` field read
#: (one Python parses: ``Content-Type``, ``Content-Disposition``, ``Content-Transfer-Encoding``, not one it reads
#: as unstructured text), a :class:`LimitError` past it: Python's parser of those fields recurses once a level, so
#: that 1,000 ``(`` (of the 4,096 octets a field may hold) raised ``RecursionError`` wherever the field was read
#: (the parser, ``get_content_type``, ``get_body``), and fewer in a deeper stack; no message nests them more than
#: a level or two.
MAX_COMMENT_DEPTH: Final = 32
#: The line ends Python's policy takes out of a field's value before it parses it (``email.policy.linesep_splitter``).
_LINE_ENDS: Final = re.compile(r"[\r\n]")
#: The charset of an RFC 2231 value (``name*=charset'lang'…``, ``name*0*="charset'…"``), as Python's parser cuts it.
_RFC2231_CHARSET: Final = re.compile(r"""(\*[ \t]*=[ \t]*"?)([^'";\s]+)(?=')""")
#: What a charset that is none is made: a name no codec has, which Python's parser reads as an unknown charset
#: (the value as US-ASCII). It decoded with ``idna`` and ``undefined``, whose ``UnicodeError`` nothing caught.
_NO_CHARSET: Final = "x-pdi-not-a-charset"


def _unknown_unless_charset(found: re.Match[str]) -> str:
    from pdi._mime_params import is_charset

    return found.group(0) if is_charset(found.group(2)) else found.group(1) + _NO_CHARSET
#: The most of the marks that part a parsed ``Content-…`` field (``;`` between parameters, ``(`` opening a comment,
#: ``"`` a quoted string) read in one, a :class:`LimitError` past it: Python's parser of those fields takes time
#: that grows faster than their count (4,000 ``;`` took 0.1 s, 1,300 comments 0.6 s, each time the field was
#: read, a dozen times a part: a message of 120 KB took 35 s of CPU to show), where a field a mailer writes has a
#: few (a long file name in RFC 2231's pieces, 78 octets each, some 50 in a field of 4 KiB).
MAX_FIELD_MARKS: Final = 64


def _field_marks(text: str) -> int:
    """The marks of :data:`MAX_FIELD_MARKS` in a field."""
    return text.count(";") + text.count("(") + text.count('"')


#: What :func:`_comment_depth` reads: a backslash and the character it quotes, or a parenthesis.
_COMMENT_MARK: Final = re.compile(r"\\[\s\S]|[()]")


def _comment_depth(text: str) -> int:
    """How deep the comments of a field nest, as Python's parser of its value would nest them, or deeper: in a
    comment a backslash quotes the character after it (a quoted pair); outside one every ``(`` is counted, even in
    a quoted string (where Python opens no comment), so that no lexing of the value nests deeper than this says."""
    depth = deepest = 0
    for found in _COMMENT_MARK.finditer(text):
        mark = found.group()
        if depth > 0 and len(mark) == 2:  # a quoted pair in a comment: nothing opened or closed
            continue
        if mark[-1] == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif mark[-1] == ")" and depth > 0:
            depth -= 1
    return deepest


#: How many octets of a message the parser is given at a time (:func:`parse`).
_FEED: Final = 64 << 10

#: The private parts of Python's :mod:`email.feedparser` that :func:`parse` relies on, each with what relies on
#: it (checked by ``tests/test_mail_long_lines.py``, which fails naming the part that changed; on a Python where
#: they are not as expected, :func:`parse` reads with Python's own buffer).
FEEDPARSER_INTERNALS: Final[dict[str, str]] = {
    "email.feedparser.FeedParser.__init__": "it sets the parser's input, read through the attribute _input, which"
                                            " parse replaces with a _PiecedLines before the first feed",
    "email.feedparser.FeedParser.feed": "it gives each piece fed to _input.push, and nothing else holds it",
    "email.feedparser.FeedParser.close": "it ends the input with _input.close",
    "email.feedparser.BufferedSubFile": "_PiecedLines is one: the parser reads lines from it (readline,"
                                        " unreadline, the false-EOF matchers) as from the one it replaces",
    "email.feedparser.BufferedSubFile.push": "replaced by _PiecedLines.push, which cuts the same lines",
    "email.feedparser.BufferedSubFile.close": "replaced by _PiecedLines.close, which ends with the same last line",
    "email.feedparser.BufferedSubFile.pushlines": "_PiecedLines gives it each whole line, as push does",
    "email.feedparser.FeedParser._parsegen": "it enters an entity whose get_content_maintype() is 'message' and"
                                             " reads any other non-multipart's body as its payload, whole: a"
                                             " BoundedMessage answers otherwise for message/* while it parses",
}


@functools.cache
def _pieced_lines() -> Any:
    """The class of :func:`parse`'s input buffer (made once: :mod:`email.feedparser` is imported when first read),
    or None when this Python's buffer is not the one it was written against (:func:`_cuts_as_python`): the parser
    then reads with Python's own, as it did before (a message of one long line costs more, none is refused)."""
    import email.feedparser
    import io

    class _PiecedLines(email.feedparser.BufferedSubFile):  # type: ignore[name-defined,misc]  # (not in typeshed)
        """Python's buffer of the parser's lines, but a line not yet ended is held as the pieces it was fed in,
        joined once it ends: Python's writes it into an :class:`io.StringIO` (four octets a character, whatever
        the characters) and reads it out again as a string, so one line of several MiB (RFC 5322 §2.1.1 bounds
        a line at 998 octets; a body breaks that) cost six times its octets on top of the message, eight for
        8-bit octets, and a message of one long line took more to read than any other of its size. The lines
        are cut as Python's are (``StringIO(newline="")``: CR LF, CR or LF; a CR that ends what was fed so far is
        held until the next piece says whether an LF follows it)."""

        def __init__(self) -> None:
            super().__init__()
            self.pieces: list[str] = []  # the line not yet ended: at most its last piece ends with a CR

        def push(self, data: str) -> None:
            if not data:  # says nothing of a CR held: Python's buffer waits for the next piece to say
                return
            if "\n" not in data and "\r" not in data:  # no line ends here: held, unless it ended at a CR
                if self.pieces and self.pieces[-1].endswith("\r"):
                    self.pushlines(["".join(self.pieces)])
                    self.pieces = []
                self.pieces.append(data)
                return
            if self.pieces:  # the line held ends here: at a CR held (or its CR LF), else at data's first line end
                if self.pieces[-1].endswith("\r"):
                    cut = 1 if data.startswith("\n") else 0
                else:
                    ended = _LINE_END.search(data)
                    assert ended is not None
                    cut = ended.end()
                    if cut == len(data) and data.endswith("\r"):  # a CR last: perhaps the first half of CR LF
                        self.pieces.append(data)
                        return
                self.pieces.append(data[:cut])
                line = "".join(self.pieces)
                self.pieces = []
                self.pushlines([line])
                data = data[cut:]
            lines = io.StringIO(data, newline="").readlines()  # a few lines: at most one piece fed
            if lines and not lines[-1].endswith("\n"):
                self.pieces.append(lines.pop())
            self.pushlines(lines)

        def close(self) -> None:
            if self.pieces:
                self.pushlines(["".join(self.pieces)])
                self.pieces = []
            super().close()

    try:
        python = email.feedparser.BufferedSubFile  # type: ignore[attr-defined]
        return _PiecedLines if _cuts_as_python(_PiecedLines, python) else None
    except Exception:  # any internal moved (a method gone, renamed, of another signature)
        return None


#: Pieces that cut lines where :class:`_PiecedLines` must cut as Python's buffer cuts (:func:`_cuts_as_python`):
#: a CR last in a piece, a CR LF cut in two, a line over several pieces, empty pieces, a boundary and no end.
_SAMPLE_PIECES: Final = ("From: a\r", "\nB", "", "x\r", "y\r\n", "\r", "", "\n--b\r", "\n--b", "--\r\r\n", "\n", "tail\r")


def _cuts_as_python(pieced: Any, python: Any) -> bool:
    """Whether a buffer of class ``pieced`` gives the parser the lines a ``python`` buffer gives, fed
    :data:`_SAMPLE_PIECES` and read as the parser reads (a false-EOF matcher for a boundary, a line read back)."""

    def lines(buffer: Any) -> list[str]:
        read: list[str] = []
        buffer.push_eof_matcher(lambda line: line.startswith("--b"))
        matching = True
        for piece in (*_SAMPLE_PIECES, None):
            if piece is None:
                buffer.close()
            else:
                buffer.push(piece)
            while True:
                line = buffer.readline()
                if line == "" and matching:  # the false EOF: the boundary line is read next, then the rest
                    buffer.pop_eof_matcher()
                    matching = False
                    read.append("<eof>")
                    continue
                if not isinstance(line, str) or line == "":
                    break
                if line == "B\r":
                    buffer.unreadline(line)
                    line = buffer.readline()
                read.append(line)
        return read

    expected = lines(python())
    return len(expected) > 3 and lines(pieced()) == expected


def parse(data: bytes, policy: Any, feed: int = _FEED) -> Message:
    """``data`` read by Python's parser as :func:`email.message_from_bytes` reads it (the same feed parser, given
    the message a piece at a time, as :meth:`email.parser.Parser.parse` gives it a file), without the copies that
    function makes of the whole message first: its text (an ``str`` as long as the message) and a
    :class:`io.StringIO` of that text (four octets a character), which made a 60 MiB message cost 600 MiB to
    read. Given ``feed`` octets at a time, the parser holds at most the longest line beside what it keeps.
    ``policy``: :func:`bounded_policy`'s for the limits it is read within."""
    import email.parser

    parser = email.parser.BytesFeedParser(policy=policy)
    pieced = _pieced_lines()
    if pieced is not None and type(getattr(parser, "_input", None)) in pieced.__bases__:  # Python's, unread yet
        try:
            parser._input = pieced()  # type: ignore[attr-defined]  # a long line held in pieces (FEEDPARSER_INTERNALS)
        except AttributeError:  # not an attribute of its own here: the parser keeps Python's buffer
            pass
    parsing = getattr(policy, "parsing", None)
    if parsing is not None:
        parsing[0] = True  # an enclosed message is read as a leaf, not entered (BoundedMessage.get_content_maintype)
    try:
        for at in range(0, len(data), feed):
            parser.feed(data[at : at + feed])
        return parser.close()
    finally:
        if parsing is not None:
            parsing[0] = False
