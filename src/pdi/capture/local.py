"""Packing local files into MHTML and unpacking MHTML into a folder (an edge: the file system).

Packing maps URIs to files under one root folder and nowhere else: the
folder's URI is ``base`` (``thismessage:/`` unless given; give the site's
real URL to keep the original URIs, RFC 2557 §7), a file ``css/a b.css``
under it is ``base + "css/a%20b.css"``. A reference that resolves outside
``base``, to a missing file, a folder, a device, or (through a symbolic link)
to anything outside the root folder is not packed, and is reported.

Unpacking writes an :class:`pdi.mhtml.unpack.UnpackPlan`: every name is a
plain file name made by :func:`pdi.mhtml.unpack.safe_name`; files are created
relative to the folder's descriptor with ``O_CREAT | O_EXCL | O_NOFOLLOW``,
so nothing existing is overwritten and no link is followed; if any planned
name already exists, nothing is written at all.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
import stat
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from pdi._wording import plural
from pdi.capture.crawl import Crawl, Failure, crawl, pack_crawl
from pdi.capture.fetch import Fetched, Limits
from pdi.errors import ImmutabilityError, LimitError, NotFoundError, StoreError, UnsupportedError
from pdi.mhtml.unpack import UnpackPlan
from pdi.mhtml.write import THISMESSAGE

__all__ = ["Packed", "media_type_for_name", "pack_path", "unpack_to"]

_BY_EXTENSION = {
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".css": "text/css",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".txt": "text/plain",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".bmp": "image/bmp",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".pdf": "application/pdf",
    ".mp3": "audio/mpeg",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
}
# Python's built-in table only (not the machine's /etc/mime.types), so every machine packs alike.
_BUILTIN_TYPES = mimetypes.MimeTypes(filenames=())


def media_type_for_name(name: str) -> str:
    """The media type a file name's extension says (``application/octet-stream`` when unknown)."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _BY_EXTENSION:
        return _BY_EXTENSION[suffix]
    guessed, _ = _BUILTIN_TYPES.guess_type("x" + suffix, strict=True)
    return guessed or "application/octet-stream"


@dataclass(frozen=True)
class Packed:
    """An MHTML file made from local files, with what went into it and what was left out."""

    mhtml: bytes
    root_url: str
    files: tuple[tuple[str, str], ...]  # (URI, path relative to the root folder)
    failures: tuple[Failure, ...]


def _url_for(base: str, relative: Path) -> str:
    # A file name that is not UTF-8 (surrogate-escaped by Python) keeps its raw bytes, %-encoded.
    return base + "/".join(
        urllib.parse.quote(part, safe="!$&'()*+,;=:@~", errors="surrogateescape") for part in relative.parts
    )


def pack_path(
    index: str | os.PathLike[str],
    *,
    base: str = THISMESSAGE,
    root: str | os.PathLike[str] | None = None,
    limits: Limits | None = None,
) -> Packed:
    """Pack the HTML file ``index`` and the local files it needs (recursively) into MHTML.

    ``root`` is the folder files may come from (default: the folder of
    ``index``); ``base`` is that folder's URI: absolute, ending with ``/``.
    """
    limits = limits or Limits()
    index_path = Path(index)
    if not index_path.is_file():  # there, but a folder or a FIFO (which would be waited on): said, not "no such file"
        what = "a directory" if index_path.is_dir() else "not a regular file" if index_path.exists() else None
        raise NotFoundError(f"{index_path} is {what}, not an HTML file to pack" if what
                            else f"no such file: {index_path}")
    root_dir = Path(root) if root is not None else index_path.parent
    root_real = Path(os.path.realpath(root_dir))
    index_real = Path(os.path.realpath(index_path))
    if root_real != index_real.parent and root_real not in index_real.parents:
        raise UnsupportedError(f"{index_path} is not inside the root folder {root_dir}")
    if not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", base):
        raise UnsupportedError(f"the base URI of the root folder must be absolute (RFC 2557 §5): {base}")
    if not base.endswith("/"):
        raise UnsupportedError(f"the base URI of the root folder must end with '/': {base}")
    if "#" in base or "?" in base:
        raise UnsupportedError(f"the base URI of the root folder must have no query or fragment: {base}")
    index_url = _url_for(base, index_real.relative_to(root_real))
    files: list[tuple[str, str]] = []

    def path_for(url: str) -> Path:
        plain = url.split("#", 1)[0].split("?", 1)[0]
        if not plain.startswith(base):
            raise NotFoundError(f"{url} is outside the packed folder {base}")
        try:
            relative = urllib.parse.unquote(plain[len(base) :], errors="strict")
        except UnicodeDecodeError as exc:
            raise NotFoundError(f"{url} does not name a file (not UTF-8 once decoded)") from exc
        segments = relative.split("/")
        if any(s in ("", ".", "..") or "\\" in s or "\0" in s for s in segments):
            raise NotFoundError(f"{url} does not name a file under {base}")
        candidate = root_real.joinpath(*segments)
        real = Path(os.path.realpath(candidate))
        if root_real not in real.parents:
            raise NotFoundError(f"{url} leads outside the packed folder")
        return real

    async def fetch(url: str) -> Fetched:
        path = path_for(url)
        try:
            info = path.stat()
        except OSError as exc:
            raise NotFoundError(f"{url}: no such file ({exc.strerror})") from exc
        if not stat.S_ISREG(info.st_mode):
            raise NotFoundError(f"{url} is not a regular file")
        if info.st_size > limits.max_resource_bytes:
            raise LimitError(f"{path} is {plural(info.st_size, 'byte')}, more than the limit of {limits.max_resource_bytes}")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise NotFoundError(f"cannot read {path}: {exc.strerror}") from exc
        files.append((url, str(path.relative_to(root_real))))
        return Fetched(url, url, 200, media_type_for_name(path.name), None, data)

    result: Crawl = asyncio.run(crawl(index_url, fetch, limits=limits))
    return Packed(pack_crawl(result), index_url, tuple(files), result.failures)


def unpack_to(plan: UnpackPlan, directory: str | os.PathLike[str]) -> list[Path]:
    """Write ``plan`` into ``directory`` (created if missing); never overwrite, never follow links."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise StoreError(f"cannot use {folder} as the output folder: {exc.strerror}") from exc
    written: list[Path] = []
    try:
        existing = {name.casefold() for name in os.listdir(dir_fd)}
        clash = [f.name for f in plan.files if f.name.casefold() in existing]
        if clash:
            raise ImmutabilityError(f"{folder} already has {', '.join(sorted(clash)[:5])}: refusing to overwrite")
        for planned in plan.files:
            if "/" in planned.name or planned.name in (".", "..") or "\0" in planned.name:
                raise UnsupportedError(f"unsafe file name in the plan: {planned.name!r}")
            try:
                fd = os.open(
                    planned.name,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                    0o644,
                    dir_fd=dir_fd,
                )
            except FileExistsError as exc:
                raise ImmutabilityError(f"{folder / planned.name} appeared while unpacking: refusing to overwrite") from exc
            except OSError as exc:
                raise StoreError(f"cannot create {folder / planned.name}: {exc.strerror}") from exc
            with os.fdopen(fd, "wb") as out:
                out.write(planned.data)
            written.append(folder / planned.name)
    finally:
        os.close(dir_fd)
    return written
