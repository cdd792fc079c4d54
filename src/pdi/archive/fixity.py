"""What a fixity audit (:meth:`pdi.archive.Archive.verify`) reports, and how it judges a representation's description.

``verify`` checks every blob's octets against its SHA-256 and its chunk
digests, and every representation's description (format, media type,
charset, line-ending convention) against what a deposit would have written.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from pdi import charsets, formats
from pdi.archive.store import BlobUse
from pdi.errors import PDIError

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass


@dataclass(frozen=True)
class Problem:
    """One fixity problem found by :meth:`Archive.verify`."""

    kind: str  # "missing" | "altered" | "size" | "unpurged" | "catalog-<what>" (sha256 then empty) | "purged" (a note)
    sha256: str
    names: tuple[str, ...]
    detail: str


@dataclass
class VerifyReport:
    """The result of a fixity audit."""

    checked_blobs: int = 0
    checked_representations: int = 0
    problems: list[Problem] = field(default_factory=list)
    unreferenced: list[str] = field(default_factory=list)
    #: Names whose octets were purged on purpose (a legal takedown): notes, not problems.
    purged: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every stored representation is present and unaltered."""
        return not self.problems


#: What a representation's recorded line-ending convention may be (:func:`pdi.fragments.text.line_ending_convention`).
LINE_ENDINGS = frozenset({"crlf", "lf", "cr", "nel", "crnel", "mixed", "none"})


def description_problem(
    format: str, media_type: str, charset: str | None, line_ending: str | None
) -> tuple[str, str] | None:
    """A catalog problem in how a representation is described: what a deposit would not have written."""
    try:
        expected = formats.media_type_for(format)
    except PDIError:
        return ("catalog-representation", f"format {format!r} is not a format token")
    if media_type != expected:
        return ("catalog-representation", f"format {format} is {expected}, but the catalog says {media_type}")
    if charset is not None:
        try:
            charsets.codec_for(charset)
        except PDIError:
            return ("catalog-representation", f"charset {charset!r} is not a charset")
    if line_ending is not None and line_ending not in LINE_ENDINGS:
        return ("catalog-representation", f"line-ending convention {line_ending!r} is not one pdi records")
    return None


def described_problem(
    use: BlobUse, seen: dict[tuple[str, str, str | None, str | None], tuple[str, str] | None]
) -> tuple[str, str] | None:
    """The first problem in the descriptions of one blob's representations; ``seen`` remembers each description's answer."""
    for description in use.descriptions:
        if description not in seen:
            seen[description] = description_problem(*description)
        if (found := seen[description]) is not None:
            return found
    return None
