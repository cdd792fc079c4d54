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
(:mod:`pdi.mhtml.refs`): one satisfied inside the aggregate (RFC 2557 §8.2
by resolved Content-Location, §8.3 ``cid:`` by Content-ID, then Chromium's
``cid:`` Content-Location; and, for a style sheet Chromium labelled ``cid:…``
from a ``<style>`` element, relative ``url()``s resolved against the page
that uses it: :class:`pdi.mhtml.resolve.Resolver`, the reader's own rules) becomes the local file name (its ``#fragment``
kept); one not satisfied becomes its absolute URI, so links still lead to the
web and ``thismessage:`` or ``cid:`` ones name nothing, except that a ``file:`` URI or
one that cannot be resolved becomes ``about:blank`` (nothing in the folder may lead to
the local disk or a network share); the ``<base href>`` becomes ``./``, so the local names resolve against
the folder. A part's text is decoded with the charset the reader found and
encoded back with it (undecodable bytes are carried through unchanged with
``surrogateescape``), so bytes outside the rewritten references do not change.

Limits (part count, part size, total size) give a :class:`LimitError`
before anything is written.
"""

from __future__ import annotations

import html
import re
import unicodedata
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

from pdi.errors import LimitError
from pdi.mhtml import charset as _charset
from pdi.mhtml.model import Aggregate, Part
from pdi.mhtml.refs import Reference, css_references, html_references
from pdi.mhtml.resolve import Resolver

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


def extension_for(media_type: str) -> str:
    """The file extension a part of this media type gets (``.bin`` when unknown)."""
    return _EXTENSIONS.get(media_type.lower(), (".bin",))[0]


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
        raise LimitError(f"{len(aggregate.parts)} parts, more than the limit of {limits.max_parts}")
    total = 0
    for i, part in enumerate(aggregate.parts):
        if len(part.data) > limits.max_part_bytes:
            raise LimitError(f"part {i} is {len(part.data)} bytes, more than the limit of {limits.max_part_bytes}")
        total += len(part.data)
        if total > limits.max_total_bytes:
            raise LimitError(f"the parts add up to more than the limit of {limits.max_total_bytes} bytes")


def _escape_for(text: str, in_css: bool) -> str:
    """An absolute URI written back into HTML or CSS: ASCII, no quotes, spaces or markup."""
    out: list[str] = []
    for ch in text:
        if ch in " \"'<>`\\\t\n\r\f()" or not ch.isascii() or ord(ch) < 32:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        elif ch == "&" and not in_css:
            out.append("&amp;")
        else:
            out.append(ch)
    return "".join(out)


def plan(aggregate: Aggregate, *, limits: UnpackLimits | None = None) -> UnpackPlan:
    """Name every part, rewrite references, and return what to write."""
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
        data, count = _rewrite(resolver, part, names, unsatisfied)
        files.append(PlannedFile(names[id(part)], data, part.index, part.content_location, count))
    return UnpackPlan(tuple(files), tuple(dict.fromkeys(unsatisfied)))


def _source_text(part: Part) -> tuple[str, Callable[[str], bytes]] | None:
    """The part's bytes as a string whose offsets map back exactly, and the way back.

    For ASCII-compatible encodings (all but UTF-16) each byte becomes one character
    (latin-1): offsets are byte offsets, and the markup HTML and CSS are scanned for
    (``<``, ``>``, quotes, ``=``, white space, parentheses) is ASCII that no
    multi-byte encoding uses inside a character, so every byte outside a rewritten
    reference comes back unchanged. UTF-16 is decoded and encoded back losslessly.
    """
    if part.encoding in ("UTF-16LE", "UTF-16BE"):
        codec = "utf-16-le" if part.encoding == "UTF-16LE" else "utf-16-be"
        if len(part.data) % 2:
            return None
        return part.data.decode(codec, "surrogatepass"), lambda s: s.encode(codec, "surrogatepass")
    return part.data.decode("latin-1"), lambda s: s.encode("latin-1")


def _true_url(part: Part, ref: Reference, raw_bytes: bytes) -> str:
    """The reference as the page means it: non-ASCII bytes decoded with the part's encoding."""
    if ref.url.isascii():
        return ref.url
    decoded = _charset.decode(raw_bytes, part.encoding)
    return html.unescape(decoded) if part.is_html else decoded


_OFFLINE_SAFE = re.compile(r"^(?!file:)[A-Za-z][A-Za-z0-9+.\-]+:")


def _unsatisfied(absolute: str | None) -> str:
    """What an unsatisfied reference becomes in the folder.

    Its absolute URI (``http:``, ``https:`` and ``ftp:`` still lead to the web;
    ``thismessage:``, ``cid:`` … name nothing offline). A ``file:`` URI, a
    one-letter scheme (a Windows drive) or a reference that could not be resolved
    would, from a page opened out of the folder, reach the local disk or a network
    share: it becomes ``about:blank``.
    """
    if absolute is None or not _OFFLINE_SAFE.match(absolute):
        return "about:blank"
    return absolute


def _rewrite(resolver: Resolver, part: Part, names: dict[int, str], unsatisfied: list[str]) -> tuple[bytes, int]:
    if not (part.is_html or part.is_css):
        return part.data, 0
    source = _source_text(part)
    if source is None:
        return part.data, 0
    text, back = source
    single_byte_view = part.encoding not in ("UTF-16LE", "UTF-16BE")
    refs: list[Reference] = html_references(text) if part.is_html else css_references(text)
    pieces: list[str] = []
    last = 0
    count = 0
    for ref in sorted(refs, key=lambda r: r.start):
        if ref.start < last:
            continue
        if ref.kind == "base":
            replacement = "./"
        else:
            url = _true_url(part, ref, part.data[ref.start : ref.end]) if single_byte_view else ref.url
            found = resolver.resolve(part, url, ref.kind)
            if found.status == "ignored":
                continue
            if found.target is not None:
                absolute = found.uri or ""
                cut = absolute.find("#")
                fragment = absolute[cut:] if cut >= 0 and not absolute.lower().startswith("cid:") else ""
                replacement = names[id(found.target)] + _escape_for(fragment, part.is_css)
            else:
                unsatisfied.append(found.uri or url)
                replacement = _escape_for(_unsatisfied(found.uri), part.is_css)
        pieces.append(text[last : ref.start])
        pieces.append(replacement)
        last = ref.end
        count += 1
    if count == 0:
        return part.data, 0
    pieces.append(text[last:])
    return back("".join(pieces)), count
