"""What reading one e-mail message may cost (:class:`MailLimits`), and the refusals of one past them.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdi._wording import clipped
from pdi._work_deadline import WorkDeadline
from pdi.errors import LimitError

__all__ = ["MailClock", "MailLimits", "dotted", "too_deep", "too_deep_for_python", "too_many_entities",
           "too_many_fields"]


@dataclass(frozen=True)
class MailLimits:
    """What reading one message may cost, each past it a clear :class:`~pdi.errors.LimitError`.

    ``max_bytes`` 64 MiB of message (a transfer encoding never decodes to
    more than it is written in, so no part's decoded octets pass it);
    ``max_parts`` 1,000 entities; ``max_depth`` 32 nested entities (the
    parser recurses once a level; an enclosed message is not entered, so the
    entities in it are neither counted nor nested); ``max_lines`` 2,000,000 lines (LF, CR
    or CR LF ended: the parser keeps each line it reads as a string of its
    own, some 90 octets beside the line, so that 28 MB of two-letter lines
    took 900 MB; a 64 MiB attachment in base64 is some 880,000 lines),
    counted before the parser runs: a bound on the lines given to Python's
    parser, so on a message read whole alone (one read by its structure,
    :mod:`pdi.mail.large`, gives it its header blocks, never a body's lines,
    and is read whatever its lines: a message of more lines than this is
    read so, whatever its size, :func:`pdi.mail.large.by_structure`); ``max_delimiters`` 20,000 boundary
    delimiter lines (a line that starts ``--`` and the boundary of the
    multipart whose body holds it, up to its close delimiter; a line that
    starts ``--`` and none, a patch's or a log's, is not counted), counted
    after the parser has read the message, the parts it makes counted
    against ``max_parts`` as it makes them, by the code that counts those of
    a message read by its structure (:class:`pdi.mail.delimiters.Delimiters`), so
    both refuse the same messages; ``max_fields`` 100,000 header fields
    in the message's header blocks, the top's and each entity's (an
    enclosed message's not: it is not entered), counted as the parser
    reads each (:func:`pdi.mail.parser.bounded_policy`), so that it never
    builds millions of objects, and a body's line that only looks like one
    (a log's ``12:00:00 GET``, a YAML file's ``key: value``) is not
    counted (of a message read by its structure, :mod:`pdi.mail.large`,
    the lines of its header blocks that may be fields, counted before each
    block is parsed: the same count); ``max_content_field`` 4 KiB of one
    ``Content-…`` field, its continuation lines counted (the parser reads
    one again each time the message's structure is asked about, in time
    that grows faster than its length: 14 KB of parameters cost a second),
    and ``max_content_fields`` 128 KiB of them in all (999 parts of 4,000
    octets each cost 115 s), both counted as the parser reads each header
    field of each entity (:func:`pdi.mail.parser.bounded_policy`), so a body's line that
    only looks like one is not; ``max_seconds`` 30 CPU seconds (:mod:`pdi._work_deadline`: the
    thread's processor time, with a backstop of ten times that on the clock) that reading a
    message by its structure may take (:func:`pdi.mail.large.read_large`: its pass for NUL, its
    header blocks, its delimiter lines, the body's part decoded; a 200 MB message takes a few),
    and a part's decoding between two pieces handed out (:func:`pdi.mail.large.part_pieces`,
    :func:`~pdi.mail.large.part_range`) or its whole map (:func:`~pdi.mail.large.part_map`):
    their loops look at it a window at a time (:class:`MailClock`), so that a loop that stops
    moving (a bug: a uuencode ``begin`` line unended at a body's end once spun forever) ends in a
    :class:`~pdi.errors.LimitError` rather than holding its thread.
    """

    max_bytes: int = 64 << 20
    max_parts: int = 1000
    max_depth: int = 32
    max_lines: int = 2_000_000
    max_delimiters: int = 20_000
    max_fields: int = 100_000
    max_content_field: int = 4096
    max_content_fields: int = 128 << 10
    max_seconds: float = 30.0


class MailClock:
    """The processor time a reading of a message by its structure may still take (``limits.max_seconds``, measured
    as :class:`~pdi._work_deadline.WorkDeadline` measures it), looked at by its loops once a window (:meth:`check`,
    some 0.7 µs beside a window's slice of a mebibyte) or every 16th small step (:meth:`tick`). Past it,
    a :class:`~pdi.errors.LimitError` saying what took how long and where, its ``details`` naming its ``seconds``
    (a bound of time, which a quiet machine may keep: not kept as the octets' own refusal,
    :class:`pdi.fragments.email_text.BodyTexts`)."""

    __slots__ = ("deadline", "seconds", "what")

    def __init__(self, seconds: float, what: str = "reading the message by its structure") -> None:
        self.seconds, self.what = seconds, what
        self.deadline = WorkDeadline(seconds)

    def restart(self) -> None:
        """The whole time again from now (a part's decoding, once it has handed a piece out)."""
        self.deadline = WorkDeadline(self.seconds)

    def check(self, offset: int) -> None:
        """:class:`~pdi.errors.LimitError` once the time has passed, the work then at ``offset`` of the message."""
        if self.deadline.passed():
            raise LimitError(f"{self.what} took {self.deadline.words()} (the limit MailLimits.max_seconds), at"
                             f" offset {offset}", details={"seconds": self.seconds})

    def tick(self, offset: int) -> None:
        """One small step at ``offset``: :meth:`check` every 16th."""
        if self.deadline.tick():
            self.check(offset)


def dotted(path: tuple[int, ...]) -> str:
    return ".".join(map(str, path)) or "0"


def too_deep(path: tuple[int, ...], limits: MailLimits) -> LimitError:
    """The refusal of the entity at ``path``, the first found past ``limits.max_depth`` (that many part numbers)."""
    return LimitError(f"the message nests more than {limits.max_depth} entities deep (the limit"
                      f" MailLimits.max_depth): part {dotted(path)} is {len(path)} deep")


def too_many_entities(limits: MailLimits, path: tuple[int, ...]) -> LimitError:
    """The refusal of the entity at ``path``, the first past ``limits.max_parts`` (depth first)."""
    return LimitError(f"the message has more than {limits.max_parts:,} entities (parts and multiparts, the limit"
                      f" MailLimits.max_parts): part {clipped(dotted(path), 120)} is past it")


def too_many_fields(limits: MailLimits, path: tuple[int, ...], offset: int | None) -> LimitError:
    """The refusal of a message whose header blocks hold more than ``limits.max_fields`` header fields, past it in
    that of the entity at ``path`` (which starts at ``offset``, when known)."""
    where = "the message's" if not path else f"part {clipped(dotted(path), 120)}'s"
    at = "" if offset is None else f" (offset {offset})"
    return LimitError(f"the message's header blocks hold more than {limits.max_fields:,} header fields in all (the"
                      f" limit MailLimits.max_fields), past it in {where} header block{at}")


def too_deep_for_python(deepest: tuple[int, ...], limits: MailLimits, what: str) -> LimitError:
    """The refusal of a message nested deeper than Python recurses, though within a ``max_depth`` set that high."""
    return LimitError(f"the message nests its entities deeper than {what} (part {clipped(dotted(deepest), 120)} is"
                      f" {len(deepest):,} deep), though within the limit of {limits.max_depth:,}"
                      " (MailLimits.max_depth): a lower limit refuses it naming the first part past it")
