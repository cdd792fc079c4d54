"""Header values: RFC 2047 encoded words (RFC 2557 §4.4.3), as ``email.header`` reads them
(:mod:`pdi.charsets.rfc2047`); an MHTML file's own Content-Type as HTTP must carry it
(:func:`served_content_type`)."""

from __future__ import annotations

import email.errors
import email.utils
import re
from email.message import Message
from email.policy import compat32

from pdi import charsets, formats
from pdi._mime_params import collapsed, header_params
from pdi._wording import clipped
from pdi.charsets.rfc2047 import decode_header, without_languages
from pdi.errors import UnsupportedError

#: A fold of a header field: a line break (CR LF; a CR or an LF alone, as Python's mail parser cuts lines) followed
#: by white space (RFC 5322 §2.2.3).
_FOLD = re.compile(r"(?:\r\n|\r|\n)(?=[ \t])")


def decode_words(value: str) -> tuple[str, list[str]]:
    """``value`` unfolded, its RFC 2047 encoded words decoded, and warnings about what could not be.

    Unfolded first (RFC 5322 §2.2.3: each line break followed by white space removed, the white space kept, in one
    pass over the value), so a field is shown on one line, the rest of one past
    :data:`~pdi.charsets.rfc2047.MAX_ENCODED_WORDS` encoded words (shown as written) too. Text outside encoded
    words is kept as written; a malformed encoded word is kept as written (warning); an unknown charset, or a codec
    that is not a charset (``idna``), is read as Latin-1 (warning).
    """
    value = _FOLD.sub("", value)
    if "=?" not in value:
        return value, []
    warnings: list[str] = []
    try:
        # email.header's reading, in time linear in the words (a field may hold 100,000); the text between encoded
        # words as written (text=True: its raw-unicode-escape bytes read "\\u0041", written so, as "A")
        chunks = without_languages(decode_header(value, text=True))  # RFC 2231 §5: =?UTF-8*FR?…
    except email.errors.HeaderParseError as exc:
        return value, [f"bad RFC 2047 encoded word kept as written: {exc}"]
    out: list[str] = []
    for chunk, cs in chunks:
        if isinstance(chunk, str):
            out.append(chunk)
        elif cs is None:  # (text=True gives it as str, but for Python's own answer when no line holds a word)
            out.append(chunk.decode("raw-unicode-escape"))
        else:
            try:
                codec = charsets.codec_for(cs)  # a charset, never a codec such as idna or zlib
            except UnsupportedError:
                warnings.append(f"unknown charset '{clipped(cs)}' in an encoded word: read as Latin-1")
                out.append(chunk.decode("latin-1"))
            else:
                out.append(chunk.decode(charsets.byte_order(codec, chunk[:4]), "replace"))  # RFC 2781 §4.3
    return "".join(out), warnings


def decoded(value: str | None) -> str | None:
    """``value`` unfolded, its RFC 2047 encoded words decoded (:func:`decode_words`; ``None`` stays ``None``)."""
    return None if value is None else decode_words(value)[0]


#: The most octets of a file's start :func:`served_content_type` reads: a header block
#: (:attr:`pdi.mhtml.Limits.max_header_bytes`), a first body part's, and their lines.
SERVED_TYPE_OCTETS = 2 * 256 * 1024 + 4096
#: The parameters a served ``multipart/related`` keeps: RFC 2046 §5.1.1's and RFC 2387 §3.1–3.3's.
_SERVED_PARAMS = ("boundary", "type", "start", "start-info")
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(r"\r\n|\r|\n")


def served_content_type(start: bytes) -> str | None:
    """The ``Content-Type`` to serve an MHTML file with over HTTP, read from the file's first octets.

    A multipart body means nothing without its ``boundary`` (RFC 2046
    §5.1.1: it is required), and a ``multipart/related`` names its root's
    type (RFC 2387 §3.1: ``type`` is required): a client given the bare
    ``multipart/related`` cannot read the body. So the file's own top-level
    ``Content-Type`` is served with its ``boundary``, ``type``, ``start`` and
    ``start-info``, each quoted, on one line. A file whose field has no
    ``type`` (some writers leave it out) and no ``start`` gets its first body
    part's type, which is then its root (RFC 2387 §3.2), when that part's
    header block lies in ``start``. The body served is the whole file: its
    own header block comes before the first delimiter, where a multipart
    parser reads it as the preamble (RFC 2046 §5.1.1) and leaves it.

    ``start`` is the file's first octets (:data:`SERVED_TYPE_OCTETS` is
    enough). ``None`` when they hold no whole header block, or one whose
    Content-Type is not a multipart media type (RFC 9110 §8.3.1) with a boundary of printable ASCII.
    """
    end = _BLANK_LINE.search(start)
    if end is None:
        return None
    top = Message(policy=compat32)
    for name, value in _fields(start[: end.start()]):
        if name.lower() == "content-type" and "Content-Type" not in top:
            top["Content-Type"] = value
    if top.get_content_maintype() != "multipart" or not formats.is_media_type(top.get_content_type()):
        return None  # not multipart, or no media type: compat32 keeps any octets but a second "/" (a\x01b)
    params = {k.lower(): collapsed(v)
              for k, v in header_params(str(top["Content-Type"]))[1:]}  # cut as RFC 2045 cuts it
    if "start" in params:  # a Content-ID (RFC 2387 §3.2), whose angle brackets compat32 strips with the quotes
        params["start"] = f"<{params['start'].strip('<>')}>"
    if not _printable(params.get("boundary", "")):
        return None
    if "type" not in params and "start" not in params:
        first = _first_part_type(start[end.end():], params["boundary"])
        if first is not None:
            params["type"] = first
    served = Message(policy=compat32)
    served["Content-Type"] = top.get_content_type()
    for key in _SERVED_PARAMS:
        if _printable(params.get(key, "")):
            served.set_param(key, params[key])
    return str(served["Content-Type"])


def _fields(block: bytes) -> list[tuple[str, str]]:
    """The header fields of a block, continuation lines unfolded (RFC 5322 §2.2.3); bytes read as Latin-1, lines cut
    where Python's mail parser cuts them (CR LF, CR, LF), not at every line boundary of ``str.splitlines`` (``\x85``,
    a Windows-1252 ellipsis, ``\x0c``, ``\x1c``), which a field's value may hold."""
    fields: list[tuple[str, str]] = []
    for line in _LINE_END.split(block.decode("latin-1")):
        if line[:1] in (" ", "\t") and fields:
            fields[-1] = (fields[-1][0], fields[-1][1] + " " + line.strip())
            continue
        name, colon, value = line.partition(":")
        if colon and name and not any(c in name for c in " \t"):
            fields.append((name, value.strip()))
    return fields


def _first_part_type(body: bytes, boundary: str) -> str | None:
    """The media type of the first body part after ``--boundary`` (RFC 2046 §5.1.1: text/plain when it says none)."""
    delimiter = re.compile(rb"(?:^|\n)--" + re.escape(boundary.encode("ascii")) + rb"[ \t]*\r?\n")
    found = delimiter.search(body)
    if found is None:
        return None
    rest = body[found.end():]
    if rest.startswith((b"\r\n", b"\n")):
        block = b""  # no fields: the part's body follows at once
    else:
        end = _BLANK_LINE.search(rest)
        if end is None:
            return None
        block = rest[: end.start()]
    part = Message(policy=compat32)
    for name, value in _fields(block):
        if name.lower() == "content-type" and "Content-Type" not in part:
            part["Content-Type"] = value
    return part.get_content_type()


def _printable(value: str) -> bool:
    return bool(value) and value.isascii() and value.isprintable()
