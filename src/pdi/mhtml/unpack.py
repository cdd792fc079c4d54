"""Planning a safe unpacking of an MHTML aggregate into a folder (pure: no I/O).

:func:`plan` decides, for every part, a file name and the bytes to write, and
rewrites the references in HTML and CSS parts so the page opens offline from
the folder. :func:`pdi.capture.local.unpack_to` then writes the plan.

File names are *made*, never taken: a ``Content-Location`` is a label, not a
path (it may be ``../../etc/passwd``, ``C:\\x``, ``/dev/zero`` or
``file:///``). A name is built from the label's last path segment, keeping
only ``A-Z a-z 0-9 . _ -``; it never starts with ``.`` or ``-``, never is or
starts with a Windows device name (``CON``, ``NUL``, ``COM1`` …, whatever the
extension), is at most 80 characters, carries an extension that matches the
part's media type (so a part labelled ``x.html`` but typed ``image/png``
becomes ``x.html.png`` and cannot run as a page), and is unique in the folder
even on case-insensitive file systems (``-2``, ``-3`` … before the
extension). The root becomes ``index.html`` (``index.<ext>`` for another
type). All files sit directly in the folder: no sub-folders, so no path can
climb out of it.

References are rewritten in place, using the reader's source offsets
(:mod:`pdi.mhtml.refs`, which reads markup as a browser's HTML parser does, so
that no tag a browser sees is missed): every kind the reader knows, the navigating
ones included (links, ``<meta http-equiv=refresh>``, form ``action`` and
``formaction``, ``ping``), and those of the documents in ``<iframe srcdoc>``
values, at any depth. One satisfied inside the aggregate (RFC 2557 §8.2
by resolved Content-Location, §8.3 ``cid:`` by Content-ID, then Chromium's
``cid:`` Content-Location; and, for a style sheet Chromium labelled ``cid:…``
from a ``<style>`` element, relative ``url()``s resolved against the page
that uses it: :class:`pdi.mhtml.resolve.Resolver`, the reader's own rules) becomes the local file name (its ``#fragment``
kept); one not satisfied becomes its absolute URI, so links still lead to the
web, if its scheme is one of :data:`KEPT_SCHEMES` (``http``, ``https``; ``cid`` and ``mid``,
which name nothing offline). Any other scheme becomes ``about:blank``, whatever the
reference was (a relative one too, resolved against a base of another scheme): ``file:``,
``smb:``, a drive letter, ``thismessage:``, ``ms-word:``, ``javascript:``, ``mailto:``,
``blob:`` and every scheme an application on the reader's machine may have registered
— an allow-list, since a deny-list of what could reach the local disk, a network share
or a local application can never be complete. So does a reference that cannot be
resolved. ``data:`` stays only where it loads an image, a style sheet, a font or media
(:data:`DATA_KINDS`), never where it would be a document or a place to go (a link, a
form, a frame, ``<object>``, ``<embed>``, a refresh); ``about:blank`` and references to
a place in the page itself (``#top``) stay. The ``<base href>`` becomes ``./``, so the local names resolve against
the folder. What is written into a ``srcdoc`` value is escaped once for each value
it sits in (``&``, and the value's quote; white space and markup when unquoted).
Scripts could lead anywhere (``location = "file:///…"``), so every HTML page gets
:data:`NO_SCRIPTS` first, a Content-Security-Policy ``<meta>`` that lets none run
(after the doctype, so the page keeps its rendering mode; just inside ``<head>`` in
XHTML). Not covered yet: SVG parts are written as they came (shown as an image they
load nothing and run nothing, but in a frame, ``<object>`` or ``<embed>`` they are
documents), and entities declared in an XML DOCTYPE can make markup the reader does
not see. A part's text is decoded with the charset the reader found and
encoded back with it (undecodable bytes are carried through unchanged with
``surrogateescape``), so bytes outside the rewritten references and that ``<meta>``
do not change.

Limits (part count, part size, total size) give a :class:`LimitError`
before anything is written; reading and rewriting each page or style sheet charges
its part's :class:`~pdi.mhtml.limits.Budget` (time, references), so one that would
take minutes is a :class:`LimitError` too. Memory: a page's bytes, its text to scan
(one byte a character for ASCII-compatible encodings; for UTF-16 and the CJK
encodings of ``_ASCII_UNSAFE`` the decoded text and one byte a character for where
each starts) and the rewritten bytes, joined once from views of the original.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
import urllib.parse
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from pdi import charsets
from pdi._wording import plural
from pdi.charsets.sniff import codec_name
from pdi.errors import LimitError
from pdi.mhtml.limits import Budget
from pdi.mhtml.locations import clean_reference
from pdi.mhtml.model import Aggregate, Part
from pdi.mhtml.refs import Reference, css_references, html_references
from pdi.mhtml.resolve import Resolver
from pdi.passages.scan import unescape

__all__ = ["PlannedFile", "UnpackLimits", "UnpackPlan", "plan", "safe_name"]

_DEVICE = re.compile(r"^(con|prn|aux|nul|clock\$|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])$", re.I)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 80

_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "text/html": (".html", ".htm"),
    "application/xhtml+xml": (".xhtml",),
    "text/css": (".css",),
    "text/javascript": (".js", ".mjs"),
    "application/javascript": (".js", ".mjs"),
    "application/x-javascript": (".js",),
    "application/json": (".json",),
    "text/plain": (".txt",),
    "text/xml": (".xml",),
    "application/xml": (".xml",),
    "image/png": (".png",),
    "image/jpeg": (".jpg", ".jpeg"),
    "image/gif": (".gif",),
    "image/webp": (".webp",),
    "image/avif": (".avif",),
    "image/svg+xml": (".svg",),
    "image/x-icon": (".ico",),
    "image/vnd.microsoft.icon": (".ico",),
    "image/bmp": (".bmp",),
    "font/woff": (".woff",),
    "font/woff2": (".woff2",),
    "font/ttf": (".ttf",),
    "font/otf": (".otf",),
    "application/font-woff": (".woff",),
    "application/pdf": (".pdf",),
    "audio/mpeg": (".mp3",),
    "video/mp4": (".mp4",),
    "video/webm": (".webm",),
}


@dataclass(frozen=True)
class UnpackLimits:
    """Bounds of one unpacking (bytes and counts)."""

    max_parts: int = 10_000
    max_part_bytes: int = 200 * 1024 * 1024
    max_total_bytes: int = 1024 * 1024 * 1024


@dataclass(frozen=True)
class PlannedFile:
    """One file to write: its ``name`` inside the folder, its bytes, the part it comes from."""

    name: str
    data: bytes
    part: int
    label: str | None
    rewritten: int


@dataclass(frozen=True)
class UnpackPlan:
    """The files to write (root first) and the references left pointing at the web."""

    files: tuple[PlannedFile, ...]
    unsatisfied: tuple[str, ...]


def _label_segment(label: str | None) -> str:
    if not label:
        return ""
    text = label
    if text[:4].lower() == "cid:":
        return text[4:].split("@", 1)[0]
    text = text.split("#", 1)[0].split("?", 1)[0]
    text = text.replace("\\", "/")
    if "://" in text:  # drop scheme and authority: the host is not a file name
        after = text.split("://", 1)[1]
        text = after.split("/", 1)[1] if "/" in after else ""
    segment = text.rsplit("/", 1)[-1]
    if ":" in segment and "/" not in text:
        segment = segment.split(":", 1)[1]  # "mid:x", "C:x"
    return urllib.parse.unquote(segment, encoding="utf-8", errors="replace")


def safe_name(label: str | None, media_type: str, taken: set[str], *, stem: str | None = None) -> str:
    """A file name for a part, safe on every common file system and not in ``taken`` (casefolded).

    Adds the chosen name (casefolded) to ``taken``.
    """
    if stem is None:
        raw = unicodedata.normalize("NFKD", _label_segment(label))
        raw = raw.encode("ascii", "ignore").decode("ascii")
        name = re.sub(r"_+", "_", _UNSAFE.sub("_", raw))
    else:
        name = stem
    wanted = _EXTENSIONS.get(media_type.lower())
    ext = wanted[0] if wanted else ".bin"
    lower = name.lower()
    if wanted and any(lower.endswith(e) for e in wanted):
        ext = name[-len(next(e for e in wanted if lower.endswith(e))) :]
        name = name[: -len(ext)]
    elif not wanted and "." in name:
        own = name[name.rfind(".") :]
        # Keep an unknown type's own extension unless it would make the file a page or a script.
        if re.fullmatch(r"\.[A-Za-z0-9]{1,8}", own) and own.lower() not in _ACTIVE:
            ext = own
            name = name[: -len(own)]
    name = name.strip("._-") or "part"
    if _DEVICE.match(name.split(".", 1)[0]):
        name = "_" + name
    name = name[: _MAX_NAME - len(ext) - 4]
    candidate = name + ext
    n = 1
    while candidate.casefold() in taken:
        n += 1
        candidate = f"{name}-{n}{ext}"
    taken.add(candidate.casefold())
    return candidate


_ACTIVE = frozenset(
    {".html", ".htm", ".xhtml", ".shtml", ".svg", ".js", ".mjs", ".xml", ".xsl", ".hta", ".exe", ".bat", ".cmd",
     ".com", ".scr", ".lnk", ".url", ".desktop", ".sh", ".ps1", ".jar", ".php"}
)


def _check_limits(aggregate: Aggregate, limits: UnpackLimits) -> None:
    if len(aggregate.parts) > limits.max_parts:
        raise LimitError(f"{plural(len(aggregate.parts), 'part')}, more than the limit of {limits.max_parts}")
    total = 0
    for i, part in enumerate(aggregate.parts):
        if len(part.data) > limits.max_part_bytes:
            raise LimitError(f"part {i} is {plural(len(part.data), 'byte')}, more than the limit of {limits.max_part_bytes}")
        total += len(part.data)
        if total > limits.max_total_bytes:
            raise LimitError(f"the parts add up to more than the limit of {plural(limits.max_total_bytes, 'byte')}")


def _escape_for(text: str, in_css: bool) -> str:
    """An absolute URI written back into HTML or CSS: ASCII, no quotes, spaces or markup
    (``in_css``: where character references mean nothing, so ``&`` stays as it is)."""
    out: list[str] = []
    for ch in text:
        if ch in " \"'<>`\\\t\n\r\f()" or not ch.isascii() or ord(ch) < 32:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        elif ch == "&" and not in_css:
            out.append("&amp;")
        else:
            out.append(ch)
    return "".join(out)


def escape_for_value(text: str, quote: str) -> str:
    """``text`` written into an attribute value quoted with ``quote`` (``""``: unquoted),
    so that the value decodes to ``text`` (WHATWG HTML §13.1.2.3)."""
    out: list[str] = []
    for ch in text:
        if ch == "&" or ch == quote or (not quote and (ch in "\"'<>=`" or ch in "\t\n\f\r ")):
            out.append(f"&#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


_BOM = re.compile(r"^(?:\ufeff|\xef\xbb\xbf)")  # a BOM, as a character or as UTF-8 read one byte a character
_PROLOGUE = re.compile(r"(?:[\t\n\f\r ]+|<!--.*?(?:--!?>|\Z)|<\?[^>]*>?)*", re.S)
_DOCTYPE = re.compile(r"<!doctype[^>]*>?", re.I)
_HEAD = re.compile(r"<head(?:[\t\n\f\r ][^>]*)?>", re.I)
_XHTML_ROOT = re.compile(r"<html(?:[\t\n\f\r ][^>]*)?>", re.I)

#: Put first in every unpacked page: a script could lead anywhere (``location = "file:…"``).
NO_SCRIPTS = "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"


def _policy_at(text: str, xhtml: bool) -> tuple[int, str] | None:
    """Where to put :data:`NO_SCRIPTS` in a page, and how it is written there.

    HTML: after the doctype if one comes before any element (so the page keeps its
    rendering mode), else at the start (after a byte order mark); the parser puts it in
    the ``<head>`` it makes (§13.2.6.4.2–.4). XHTML: just inside ``<head>`` (in XML it
    counts only there), or in a ``<head>`` of its own after ``<html>``; ``None`` when
    there is neither.
    """
    if xhtml:
        head = _HEAD.search(text)
        if head is not None and not head.group(0).endswith("/>"):
            return head.end(), NO_SCRIPTS[:-1] + "/>"
        root = _XHTML_ROOT.search(text)
        if root is not None and not root.group(0).endswith("/>"):
            return root.end(), "<head>" + NO_SCRIPTS[:-1] + "/></head>"
        return None
    start = _BOM.match(text)
    at = start.end() if start else 0
    prologue = _PROLOGUE.match(text, at)
    end = prologue.end() if prologue else at
    doctype = _DOCTYPE.match(text, end)
    return (doctype.end() if doctype else at), NO_SCRIPTS


def plan(
    aggregate: Aggregate,
    *,
    limits: UnpackLimits | None = None,
    nowhere: bool = False,
    policy: bool = True,
    insertions: Sequence[tuple[int, str]] = (),
) -> UnpackPlan:
    """Name every part, rewrite references, and return what to write.

    The defaults make a folder that opens offline (the module's docstring).
    Replay (:mod:`pdi.server.replay.origin`) asks for ``nowhere``: an unsatisfied
    reference becomes ``about:blank``, never its URI on the web; and no
    ``policy`` ``<meta>`` (its Content-Security-Policy header says more).
    ``insertions`` are ``(byte offset into the root's bytes, ASCII markup)``
    to write into the root at those places (where no reference is), as replay
    marks a passage; they are written in the root's encoding.
    """
    limits = limits or UnpackLimits()
    _check_limits(aggregate, limits)
    taken: set[str] = set()
    names: dict[int, str] = {}
    order = [aggregate.root, *(p for p in aggregate.parts if p is not aggregate.root)]
    for part in order:
        stem = "index" if part is aggregate.root else None
        label = part.content_location
        if not label and part.content_id:
            label = "cid:" + part.content_id
        names[id(part)] = safe_name(label, part.content_type, taken, stem=stem)

    resolver = Resolver(aggregate)
    files: list[PlannedFile] = []
    unsatisfied: list[str] = []
    for part in order:
        extra = insertions if part is aggregate.root else ()
        data, count = _rewrite(resolver, part, names, unsatisfied, nowhere=nowhere, policy=policy, insertions=extra)
        files.append(PlannedFile(names[id(part)], data, part.index, part.content_location, count))
    return UnpackPlan(tuple(files), tuple(dict.fromkeys(unsatisfied)))


# Encodings whose multi-byte characters hold bytes below 0x80 (Shift_JIS and Big5 trail
# bytes include "\\"; gb18030's include digits; ISO-2022-JP is all 7-bit): read one byte
# per character, their text would show markup that is not there.
_ASCII_UNSAFE = frozenset({"Shift_JIS", "Big5", "GBK", "gb18030", "ISO-2022-JP"})


class _Starts:
    """Where each character of a decoded text starts in its bytes: ``starts[i]`` for
    ``0 <= i <= len(text)`` (``starts[len(text)]`` is the length of the bytes).

    Kept as one byte a character (how many bytes it took, 255 meaning "see
    ``_long``"), with the absolute offset of every 4,096th: no integer object per
    character (a list of them took 36 bytes a character).
    """

    __slots__ = ("_checkpoints", "_last", "_long", "_long_at", "_widths")

    _SHIFT = 12

    def __init__(self) -> None:
        self._widths = bytearray()  # widths[i] = starts[i + 1] - starts[i], at most 254
        self._checkpoints = array("q")  # starts[k << _SHIFT]
        self._long: dict[int, int] = {}  # i: widths[i] when 255 or more (escape sequences in a row)
        self._long_at = array("q")  # the keys of _long, in order
        self._last = -1  # starts[len(widths)], -1 before the first

    def add(self, start: int) -> None:
        """The next character starts at byte ``start`` (never before the previous one)."""
        i = len(self._widths) + (0 if self._last < 0 else 1)
        if self._last >= 0:
            width = start - self._last
            if width >= 255:
                self._long[len(self._widths)] = width
                self._long_at.append(len(self._widths))
                width = 255
            self._widths.append(width)
        if not i & ((1 << self._SHIFT) - 1):
            self._checkpoints.append(start)
        self._last = start

    def add_run(self, start: int, end: int) -> None:
        """Characters of one byte each start at ``start`` … ``end - 1``."""
        if start >= end:
            return
        self.add(start)
        pos = start + 1  # where the next character starts
        mask = (1 << self._SHIFT) - 1
        while pos < end:
            before = -(len(self._widths) + 1) & mask  # characters before the next checkpoint
            if not before:
                self.add(pos)
                pos += 1
                continue
            step = min(before, end - pos)
            self._widths.extend(b"\x01" * step)  # one bytes operation for up to 4,095
            self._last = pos + step - 1
            pos += step

    def __getitem__(self, i: int) -> int:
        k = i >> self._SHIFT
        first = k << self._SHIFT
        with memoryview(self._widths) as widths:
            at = self._checkpoints[k] + sum(widths[first:i])
        lo = bisect_left(self._long_at, first)
        hi = bisect_left(self._long_at, i)
        for j in self._long_at[lo:hi]:
            at += self._long[j] - 255
        return at


class _Utf16Starts:
    """Where each character of a UTF-16 text starts: two bytes each, four for one outside
    the Basic Multilingual Plane (a surrogate pair; an unpaired surrogate became one
    U+FFFD of two bytes). Only those are noted."""

    __slots__ = ("_astral",)

    _ASTRAL = re.compile("[\U00010000-\U0010ffff]")

    def __init__(self, text: str) -> None:
        self._astral = array("q", (m.start() for m in self._ASTRAL.finditer(text)))

    def __getitem__(self, i: int) -> int:
        return 2 * i + 2 * bisect_left(self._astral, i)


@dataclass(frozen=True)
class _View:
    """A part's bytes as text to scan, and where each character starts in the bytes.

    ``starts[i]`` is the byte offset of character ``i`` (``starts[len(text)]`` is the
    length); ``None`` means one byte per character. ``decoded`` says whether the text is
    the page's own characters (else non-ASCII references are decoded from their bytes).
    """

    text: str
    starts: _Starts | _Utf16Starts | None
    codec: str
    decoded: bool

    def byte(self, i: int) -> int:
        return i if self.starts is None else self.starts[i]


_NON_ASCII = re.compile(rb"[\x80-\xff]")


def _offsets(data: bytes, codec: str, budget: Budget) -> tuple[str, _Starts | _Utf16Starts]:
    """Decode, noting where each character starts (an escape sequence or a lead byte
    belongs to the character it introduces).

    UTF-16 is decoded at once (each character's width follows from it). The others
    byte by byte with an incremental decoder, except that a run of ASCII bytes met with
    nothing pending is one character a byte, taken at once (in ISO-2022-JP, whose
    escape sequences make ASCII bytes mean other characters, every byte is fed).
    """
    if codec in ("utf-16-le", "utf-16-be"):
        text = codecs.decode(data, codec, "replace")
        return text, _Utf16Starts(text)
    decoder = codecs.getincrementaldecoder(codec)("replace")
    chunks: list[str] = []
    chars: list[str] = []  # joined into chunks now and then: no object a character kept
    starts = _Starts()
    ascii_runs = codec != "iso2022_jp"
    begun = 0
    i = 0
    n = len(data)
    while i < n:
        budget.tick()
        if ascii_runs and begun == i and data[i] < 0x80 and not decoder.getstate()[0]:
            m = _NON_ASCII.search(data, i)
            j = n if m is None else m.start()
            chars.append(data[i:j].decode("ascii"))
            starts.add_run(i, j)
            i = begun = j
            continue
        out = decoder.decode(data[i : i + 1])
        if out:
            if len(out) > 1 and out[-1] == chr(data[i]) and data[i] < 0x80:
                # a broken sequence cut short by an ASCII byte: U+FFFD…, then that byte
                for _ in range(len(out) - 1):
                    starts.add(begun)
                starts.add(i)
            else:
                starts.add(begun)
                for _ in range(len(out) - 1):
                    starts.add(i + 1)
            chars.append(out)
            if len(chars) >= 65536:
                chunks.append("".join(chars))
                chars.clear()
            begun = i + 1
        i += 1
    tail = decoder.decode(b"", final=True)
    for _ in range(len(tail)):
        starts.add(begun)
    chars.append(tail)
    starts.add(n)
    chunks.append("".join(chars))
    return "".join(chunks), starts


def _view(part: Part, budget: Budget) -> _View | None:
    """How to read the part for rewriting (``None``: it cannot be rewritten safely)."""
    return text_view(part.data, part.encoding, budget)


def text_view(data: bytes, encoding: str, budget: Budget | None = None) -> _View | None:
    """How to read ``data`` in ``encoding`` for rewriting (``None``: it cannot be rewritten safely).

    For ASCII-compatible encodings each byte becomes one character (latin-1):
    offsets are byte offsets, and the markup HTML and CSS are scanned for (``<``,
    ``>``, quotes, ``=``, white space, parentheses, ``\\``) is ASCII that no such
    encoding uses inside a character. UTF-16 and the encodings of ``_ASCII_UNSAFE``
    are decoded, each character's byte offset noted. Either way, every byte outside
    a rewritten reference comes back unchanged.
    """
    if encoding in ("UTF-16LE", "UTF-16BE"):
        if len(data) % 2:
            return None
        codec = "utf-16-le" if encoding == "UTF-16LE" else "utf-16-be"
        text, starts = _offsets(data, codec, budget or Budget("the page"))
        return _View(text, starts, codec, True)
    if encoding in _ASCII_UNSAFE:
        codec = codec_name(encoding)
        text, starts = _offsets(data, codec, budget or Budget("the page"))
        return _View(text, starts, codec, True)
    return _View(data.decode("latin-1"), None, "latin-1", False)


def _true_url(part: Part, ref: Reference, raw_bytes: bytes) -> str:
    """The reference as the page means it: non-ASCII bytes decoded with the part's encoding,
    then character references, once for each attribute value it sits in."""
    if ref.url.isascii():
        return ref.url
    decoded = charsets.whatwg_decode(raw_bytes, part.encoding)
    if part.is_html:
        for _level in range(len(ref.quoting) + (0 if ref.raw_text else 1)):
            decoded = unescape(decoded)
    return decoded


#: The schemes a reference keeps in an unpacked page: the web's, and RFC 2392's (``cid:``, ``mid:``,
#: which name nothing offline). Any other scheme becomes ``about:blank``.
KEPT_SCHEMES = frozenset({"http", "https", "cid", "mid"})

#: The kinds of reference (:mod:`pdi.mhtml.refs`) that may keep a ``data:`` URI: it loads an image, a style
#: sheet, a font or media there. Elsewhere it would be a document (a frame, ``<object>``, ``<embed>``) or a
#: place to go (a link, a form, ``ping``, a refresh), and becomes ``about:blank``.
DATA_KINDS = frozenset({"src", "srcset", "stylesheet", "icon", "poster", "background", "style-url", "import"})

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def _scheme(uri: str) -> str | None:
    """The scheme of a URI as a browser reads it (leading and trailing space, tabs and line breaks dropped),
    lower-cased; ``None`` for a relative reference."""
    found = _SCHEME.match(clean_reference(uri))
    return found.group(1).lower() if found else None


def _unsatisfied(absolute: str | None) -> str:
    """What an unsatisfied reference becomes in the folder: its absolute URI if its scheme is one of
    :data:`KEPT_SCHEMES`; else, or when it could not be resolved, ``about:blank``."""
    if absolute is None or _scheme(absolute) not in KEPT_SCHEMES:
        return "about:blank"
    return absolute


def _kept_as_written(reference: str, ref: Reference) -> bool:
    """Whether a reference that names no part (:mod:`pdi.mhtml.resolve`'s ``ignored``) may stay as it is:
    empty, a place in this page (``#top``), ``about:blank``, or a ``data:`` URI where :data:`DATA_KINDS` allows."""
    text = clean_reference(reference)
    if text == "" or text.startswith("#"):
        return True
    scheme = _scheme(text)
    if scheme == "about":
        return text.lower() == "about:blank"
    if scheme == "data":
        return ref.kind in DATA_KINDS and ref.element not in ("embed", "object", "iframe", "frame")
    return scheme is None


def _rewrite(
    resolver: Resolver, part: Part, names: dict[int, str], unsatisfied: list[str], *,
    nowhere: bool = False, policy: bool = True, insertions: Sequence[tuple[int, str]] = (),
) -> tuple[bytes, int]:
    if not (part.is_html or part.is_css):
        return part.data, 0
    resolver.base_of(part)  # read now (the page's own text, once), not beside the view
    budget = part.budget()
    view = _view(part, budget)
    if view is None:
        return part.data, 0
    refs: list[Reference] = (
        html_references(view.text, budget) if part.is_html else css_references(view.text, budget)
    )
    data = memoryview(part.data)  # the pieces between references are views, not copies
    pieces: list[bytes | memoryview] = []
    last = 0
    count = 0
    policy_meta = _policy_at(view.text, part.content_type == "application/xhtml+xml") if part.is_html and policy else None
    policy_at = view.byte(policy_meta[0]) if policy_meta is not None else -1
    inserts = sorted(insertions, key=lambda insertion: insertion[0])  # stable: same place, given order

    def put_inserts(upto: int) -> None:
        nonlocal last
        while inserts and inserts[0][0] <= upto:
            at, markup = inserts.pop(0)
            if at >= last:  # never inside what was just rewritten
                pieces.extend((data[last:at], markup.encode(view.codec)))
                last = at

    def put_policy() -> None:
        nonlocal last, policy_at
        if policy_meta is not None and policy_at >= 0 and last <= policy_at:
            put_inserts(policy_at - 1)
            pieces.extend((data[last:policy_at], policy_meta[1].encode(view.codec)))
            last, policy_at = policy_at, -1

    for ref in sorted(refs, key=lambda r: r.start):
        budget.tick()
        start, end = view.byte(ref.start), view.byte(ref.end)
        if start >= policy_at >= 0:
            put_policy()
        put_inserts(start)
        if start < last:
            continue
        if ref.kind == "base":
            replacement = "./"
        else:
            url = ref.url if view.decoded else _true_url(part, ref, part.data[start:end])
            found = resolver.resolve(part, url, ref.kind, srcdoc=bool(ref.quoting))
            in_css = part.is_css or ref.raw_text
            if found.status == "ignored":
                if _kept_as_written(url, ref):
                    continue
                replacement = "about:blank"  # javascript:, mailto:, blob:, about:other, data: as a document …
            elif found.target is not None:
                absolute = found.uri or ""
                cut = absolute.find("#")
                fragment = absolute[cut:] if cut >= 0 and not absolute.lower().startswith("cid:") else ""
                replacement = names[id(found.target)] + _escape_for(fragment, in_css)
            else:
                unsatisfied.append(found.uri or url)
                replacement = "about:blank" if nowhere else _escape_for(_unsatisfied(found.uri), in_css)
        for quote in reversed(ref.quoting):  # inside <iframe srcdoc="…">, once for each level
            replacement = escape_for_value(replacement, quote)
        pieces.append(data[last:start])
        pieces.append(replacement.encode(view.codec))  # ASCII text: no escape sequence in ISO-2022-JP
        last = end
        count += 1
    put_policy()
    put_inserts(len(part.data))
    if count == 0 and policy_meta is None and not insertions:
        return part.data, 0
    pieces.append(data[last:])
    return b"".join(pieces), count
