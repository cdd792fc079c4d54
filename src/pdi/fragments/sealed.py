"""The envelope of an index made once, at deposit: a magic, a version, the payload, a digest.

An index is kept beside the octets it describes and read back on every
fragment query; it must never answer for octets it was not made from, nor
answer at all once damaged. Every serialized index
(:meth:`pdi.fragments.text.TextTable.to_bytes`,
:meth:`pdi.fragments.markup.ElementIndex.to_bytes`) is therefore sealed the
same way::

    magic    4 octets   b"PDIT" (text block table), b"PDIM" (element index), b"PDIP" (a PDF's text layer), b"PDIV" (a video: what ffprobe read)
    version  u16 LE     the payload's layout; a reader refuses a version it does not know
    payload  …          the index's own fields, little-endian
    digest   16 octets  BLAKE2b-128 of everything before it

Opening an index checks all four and raises
:class:`~pdi.errors.IntegrityError`, saying which check failed, rather than
reading a damaged or foreign one. :class:`Reader` reads the payload's fields,
and a payload that ends too soon or runs on past its last field is damaged too.
Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any, Final

from pdi.errors import IntegrityError

#: Octets of the digest at the end of every sealed index.
DIGEST_SIZE: Final = 16
_HEAD: Final = struct.Struct("<4sH")
#: The length before a string, unless another is asked for.
U32: Final = struct.Struct("<I")
_MAGICS: Final = {b"PDIT": "text", b"PDIM": "markup", b"PDIP": "pdf", b"PDIV": "video"}


def _digest(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=DIGEST_SIZE).digest()


def seal(magic: bytes, version: int, payload: bytes) -> bytes:
    """``magic`` + ``version`` + ``payload`` + the BLAKE2b-128 digest of the three."""
    body = _HEAD.pack(magic, version) + payload
    return body + _digest(body)


def payload_start() -> int:
    """Where a sealed index's payload begins (after its magic and version)."""
    return _HEAD.size


def sealed_version(data: bytes) -> int:
    """The version a sealed index says it is of (its digest not checked: read it with :func:`unseal`)."""
    if len(data) < _HEAD.size:
        raise IntegrityError(f"a pdi index is at least {_HEAD.size} octets long, not {len(data)}")
    return int(_HEAD.unpack_from(data)[1])


def index_kind(data: bytes) -> str:
    """What a sealed index describes, by its magic: ``"text"``, ``"markup"``, ``"pdf"`` or ``"video"``.

    Raises :class:`~pdi.errors.IntegrityError` when ``data`` starts with no
    known magic (the digest is checked when the index is opened).
    """
    kind = _MAGICS.get(bytes(data[:4]))
    if kind is None:
        raise IntegrityError(f"not a pdi index: it starts with {bytes(data[:4])!r}, not b'PDIT' or b'PDIM'")
    return kind


def unseal(data: bytes, magic: bytes, version: int, what: str, *, also: tuple[int, ...] = ()) -> memoryview:
    """The payload of the sealed index ``data``, after checking its magic, version and digest.

    ``what`` names the index in the messages (``"text index"``); ``also``: earlier versions of the same layout,
    read as well (:func:`sealed_version` tells which one it is).
    """
    if len(data) < _HEAD.size + DIGEST_SIZE:
        raise IntegrityError(f"the {what} is {len(data)} octets long: too short to be one")
    found, found_version = _HEAD.unpack_from(data)
    if found != magic:
        raise IntegrityError(f"not a {what}: it starts with {found!r}, not {magic!r}")
    view = memoryview(data)
    if _digest(view[:-DIGEST_SIZE]) != view[-DIGEST_SIZE:]:
        raise IntegrityError(f"the {what} is damaged: its BLAKE2b digest does not match its contents")
    if found_version != version and found_version not in also:
        raise IntegrityError(f"the {what} has layout version {found_version}; this pdi reads version {version}")
    return view[_HEAD.size : -DIGEST_SIZE]


class Reader:
    """Reads the fields of a payload in order; running past its end is an :class:`~pdi.errors.IntegrityError`."""

    def __init__(self, payload: memoryview, what: str) -> None:
        self._data = payload
        self._at = 0
        self._what = what

    def damaged(self, detail: str) -> IntegrityError:
        """The error for a payload that does not hold together (``detail`` says how)."""
        return IntegrityError(f"the {self._what} is damaged: {detail}")

    def take(self, size: int) -> memoryview:
        """The next ``size`` octets."""
        if size < 0 or self._at + size > len(self._data):
            raise self.damaged(f"it ends within a field at octet {self._at}")
        chunk = self._data[self._at : self._at + size]
        self._at += size
        return chunk

    def unpack(self, layout: struct.Struct) -> tuple[Any, ...]:
        """The next fields, as ``layout`` packs them."""
        return layout.unpack(self.take(layout.size))

    def text(self, length_layout: struct.Struct = U32) -> str | None:
        """A UTF-8 string after its length (all ones in the length: ``None``)."""
        (length,) = self.unpack(length_layout)
        if length == (1 << (8 * length_layout.size)) - 1:
            return None
        try:
            return bytes(self.take(length)).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise self.damaged(f"a string before octet {self._at} is not UTF-8") from None

    def end(self) -> None:
        """Check that every octet has been read."""
        if self._at != len(self._data):
            raise self.damaged(f"{len(self._data) - self._at} octets follow its last field")


def pack_text(value: str | None, length_layout: struct.Struct = U32) -> bytes:
    """``value`` as :meth:`Reader.text` reads it back."""
    if value is None:
        return length_layout.pack((1 << (8 * length_layout.size)) - 1)
    octets = value.encode("utf-8", "surrogatepass")
    return length_layout.pack(len(octets)) + octets
