"""The pdi error family.

Every error a pdi function raises on bad input is a :class:`PDIError`. The
command line maps each class to an exit status and one line on stderr; the
resolver maps it to an HTTP status with an RFC 9457 problem body. The two
mappings live here, beside the classes, so they cannot drift apart.
"""

from __future__ import annotations

import copy
from typing import Self


class PDIError(Exception):
    """Base of every error pdi raises on purpose."""

    exit_code: int = 1
    http_status: int = 400
    title: str = "pdi error"
    #: RFC 9457 ``type`` of the problem the resolver answers: ``/api#problem-`` and the title's words joined by
    #: ``-`` (each described on the resolver's ``/api`` page), so that a client tells the kind of error apart
    #: whatever the status (an "unsupported" and a "syntax error" are both ``400`` to a ``GET``), and the
    #: ``title`` may be the class's own (RFC 9457 §4.2.1 keeps ``about:blank`` for the status phrase)
    problem_type: str = "/api#problem-pdi-error"
    _details: dict[str, object] | None = None

    @property
    def details(self) -> dict[str, object]:
        """RFC 9457 extension members of that problem: the error's own (an empty one made for it when first asked
        for, never one shared by errors made without ``details``, where a change to one would show on all)."""
        if self._details is None:
            self._details = {}
        return self._details

    @details.setter
    def details(self, details: dict[str, object]) -> None:
        self._details = details

    def __init_subclass__(
        cls,
        *,
        exit_code: int | None = None,
        http_status: int | None = None,
        title: str | None = None,
        problem_type: str | None = None,
        **kwargs: object,
    ) -> None:
        """A subclass names its two mappings in its class line (``class X(PDIError, exit_code=…, http_status=…)``)."""
        super().__init_subclass__(**kwargs)
        if title is not None and problem_type is None:
            problem_type = "/api#problem-" + "-".join(title.split())
        for name, value in (("exit_code", exit_code), ("http_status", http_status), ("title", title),
                            ("problem_type", problem_type)):
            if value is not None:
                setattr(cls, name, value)

    def __init__(self, message: str, *, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if details is not None:
            self.details = details

    def __str__(self) -> str:
        return self.message

    item: int | None = None
    """The item of a batch (counted from 0) an error of :meth:`of_item` is said of; its message begins ``item N: ``."""

    def within(self, where: str, cut: int = 0) -> Self:
        """The same error said of ``where`` (``"the registry …: "``), a new one of its class: its message with its
        first ``cut`` characters (an earlier ``where``) replaced by ``where``, and everything else it holds as it
        was: its :attr:`details` (a copy of them), its notes (``add_note``: what else went wrong), what its class
        keeps besides (a withdrawal's reason, a refusal's advice). Not its :attr:`item`, which :meth:`of_item`
        sets again, nor its traceback and cause: it is raised anew."""
        said = type(self).__new__(type(self))  # not made again by its constructor, whose words some classes add
        said.__dict__.update(self.__dict__)
        said.__dict__.pop("item", None)
        if self._details is not None:
            said.details = copy.deepcopy(self._details)
        if "__notes__" in self.__dict__:
            said.__notes__ = list(self.__notes__)
        said._reword(where + self._worded()[cut:])
        return said

    def _worded(self) -> str:
        """What a class says of the error before what it adds to it (:meth:`within` puts ``where`` before it)."""
        return self.message

    def _reword(self, text: str) -> None:
        """The error's message made of ``text``, as :meth:`_worded` gives it (a class that adds words adds them)."""
        self.message = text
        self.args = (text,)

    def of_item(self, index: int) -> PDIError:
        """The same error said of a batch's item ``index`` (``item 3: …``), which its :attr:`item` keeps: whoever
        knows the items by other names (an mbox's messages, a bag's files) says it of that name with
        :meth:`item_said`, never by reading the number back out of the message."""
        said = self.within(f"item {index}: ", self._item_prefix())
        said.item = index
        return said

    def item_said(self, where: str) -> PDIError:
        """An error of :meth:`of_item` said of ``where`` (``"list.mbox: message 2: "``) instead of ``item N: ``."""
        return self.within(where, self._item_prefix())

    def _item_prefix(self) -> int:
        return 0 if self.item is None else len(f"item {self.item}: ")

    def over_http(self) -> str:
        """The message as the resolver's answers say it (RFC 9457 ``detail``): the message, unless it names the
        command line's options, which the write API says in its own words (:class:`ContentRefusal`)."""
        return self.message


class ParseError(PDIError, ValueError, exit_code=1, http_status=400, title="syntax error"):
    """Input does not follow a grammar.

    ``rule`` names the grammar rule that failed, ``offset`` is the 0-based
    index into ``text`` where it failed (``None`` when the whole input is at
    fault), so the message can say *what* and *where*.
    """

    def __init__(
        self,
        message: str,
        *,
        text: str | None = None,
        offset: int | None = None,
        rule: str | None = None,
    ) -> None:
        self.text = text
        self.offset = offset
        self.rule = rule
        super().__init__(self._placed(message))
        self.reason = message

    def _placed(self, message: str) -> str:
        """``message`` and where in the text it is said of: ``(rule R, offset N)``."""
        where = []
        if self.rule:
            where.append(f"rule {self.rule}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        return f"{message} ({', '.join(where)})" if where else message

    def _worded(self) -> str:
        return self.reason

    def _reword(self, text: str) -> None:
        self.reason = text
        super()._reword(self._placed(text))


class IntegrityError(PDIError, exit_code=3, http_status=422, title="integrity check failed"):
    """Bytes are not what a check (fixity checksum, length=, md5=) says they must be."""


class DamagedError(IntegrityError, http_status=500, title="stored octets damaged"):
    """Octets the archive holds that fail their own digests, or are missing or cut short: the archive's fault, not
    the request's, so the resolver answers ``500`` (the command line exits 3, as for any integrity check);
    ``pdi verify --repair`` mends them from a mirror or the origin."""


class CitationMismatchError(IntegrityError, title="citation does not match"):
    """A citation's quotation is not at the position it names in the citing document (``pdi cite``)."""


class ContentRefusal(IntegrityError):
    """Octets a deposit's content checks refused, and how to deposit them after all: ``declare`` what to declare
    instead (``("format", "png")``, ``("charset", "utf-8")``, ``("format", None)`` for a format not known; an aside
    may follow the value, ``("format", "text", " (UTF-8 is then detected)")``), else nothing to declare; a forced
    deposit keeps them as declared (``note``: how, e.g. unread).

    The message names the command line's options (``--format``, ``--charset``, ``--force``);
    :meth:`over_http` says the same to a client of the write API, which declares a format or charset by its
    parameters or ``Content-Type`` and cannot force a deposit.
    """

    def __init__(self, problem: str, *, declare: tuple[str, str | None] | tuple[str, str | None, str] | None = None,
                 note: str = "") -> None:
        self.problem, self.declare, self.note = problem, declare, note
        super().__init__(self._advised(http=False))

    def _worded(self) -> str:
        return self.problem

    def _reword(self, text: str) -> None:
        self.problem = text
        super()._reword(self._advised(http=False))

    def over_http(self) -> str:
        return self._advised(http=True)

    def _advised(self, *, http: bool) -> str:
        """The problem and how to deposit the octets after all, in the command line's words or the write API's."""
        forced = (f"only pdi add --force, on the archive's own machine, deposits it as declared{self.note}" if http
                  else f"--force deposits it as declared{self.note}")
        if self.declare is None:
            return f"{self.problem}; {forced}"
        kind, value, aside = (*self.declare, "")[:3]
        if http:
            given = f"declare its {kind}" if value is None else f"declare the {kind} {value}{aside}"
            return f"{self.problem}; {given} ({forced})"
        given = f"give its {kind} (--{kind})" if value is None else f"give --{kind} {value}{aside}"
        return f"{self.problem}; {given}, or --force to deposit it as declared{self.note}"


class FormatCheckError(ContentRefusal, title="format check failed"):
    """Octets given to deposit are not the format declared (their file signature, or a reader that cannot read them)."""


class CharsetCheckError(ContentRefusal, title="charset check failed"):
    """A text given to deposit is UTF-8 but declared in another charset, in which its octets read otherwise."""


class NotFoundError(PDIError, LookupError, exit_code=4, http_status=404, title="not found"):
    """A name, part, series or file that was asked for does not exist."""


class UnknownSeriesError(NotFoundError, problem_type="/api#problem-unknown-series"):
    """A series that is not registered here, or one the reader may not know of (a hidden series is said alike).

    Its message ends with the command that lists the series (:data:`HINT`); an answer over HTTP names the
    request that does (:data:`HINT_OVER_HTTP`), which a client can make where the command is the operator's alone
    (a mirror's user asking an origin)."""

    #: What the message ends with: the command that lists the registered series.
    HINT = " (`pdi series ls` lists those that are)"
    #: What an answer over HTTP ends with in its place.
    HINT_OVER_HTTP = " (GET /api/series lists those that are)"

    def __init__(self, series: str, *, details: dict[str, object] | None = None) -> None:
        super().__init__(f"series {series} is not registered{self.HINT}", details=details)

    def over_http(self) -> str:
        return self.message.removesuffix(self.HINT) + self.HINT_OVER_HTTP


class SeriesNotRegisteredError(NotFoundError, problem_type="/api#problem-series-not-registered"):
    """A deposit (an import, a batch) into a series that is not registered here: only the archive's keeper
    registers a series, on the archive's own machine, and ``GET /api/series`` lists those that are.

    Its message ends with that keeper's command (``pdi series add S``, :meth:`hint`); an answer over HTTP
    (:meth:`over_http`) says instead what a client of the write API can do (:data:`HINT_OVER_HTTP`), which runs
    no command on the archive's machine."""

    #: What an answer over HTTP ends with in place of the command.
    HINT_OVER_HTTP = (": only the archive's keeper can register a series; deposit in one that is registered"
                      " (GET /api/series lists them), or ask the keeper to register this one")

    def __init__(self, series: str) -> None:
        self.series = series
        self.said = f"series {series} is not registered"
        super().__init__(self.said + self.hint())

    def hint(self) -> str:
        """What the message ends with: the command that registers the series."""
        return f" (pdi series add {self.series})"

    def _worded(self) -> str:
        return self.said  # the command it ends in is said once, after any place it is said of

    def _reword(self, text: str) -> None:
        self.said = text
        super()._reword(text + self.hint())

    def over_http(self) -> str:
        return self.said + self.HINT_OVER_HTTP


class RemoteNotFoundError(NotFoundError):
    """Another server's ``404`` (a mirror's origin, a registry): what it said, and the RFC 9457 ``type`` of its
    problem (:attr:`told_type`, ``None`` if it said none), by which a pdi resolver's kinds of not-found are told
    apart without reading its words (:class:`UnknownSeriesError`'s ``/api#problem-unknown-series``)."""

    def __init__(self, message: str, *, told_type: str | None = None, details: dict[str, object] | None = None) -> None:
        super().__init__(message, details=details)
        self.told_type = told_type


class ImmutabilityError(PDIError, exit_code=5, http_status=409, title="immutability conflict"):
    """An attempt to change what must never change (a minted name, deposited bytes)."""

    #: ``True`` on the refusal of octets a document's latest version holds when that version alone was withdrawn:
    #: a new version, forced, holds them, and a front end that can force one says how in its own words
    #: (:meth:`forced_by`). ``False`` on every other refusal, the same octets of a document withdrawn whole among
    #: them (its tombstone covers every version: nothing can be deposited in it).
    forceable: bool = False

    #: The generic name (``urn:pdi://…``) of the document a refused deposit would have minted again, on the refusal
    #: of a name minted already (a deposit under an ``--id`` in use): a front end says in its own words how a new
    #: version of it is deposited (:meth:`versioned_by`). ``None`` on every other refusal.
    minted: str | None = None

    def versioned_by(self, how: str) -> ImmutabilityError:
        """This refusal with ``how`` a front end deposits a new version of the name minted already (``pdi version
        NAME FILE``) when it is one (:attr:`minted`); else itself."""
        if self.minted is None:
            return self
        said = self.within("")
        said.message += f" ({how})"
        said.item = self.item
        return said

    def forced_by(self, how: str) -> ImmutabilityError:
        """This refusal with ``how`` a front end deposits the octets after all (``--force deposits them as a new
        version``) when it is :attr:`forceable`; else itself."""
        if not self.forceable:
            return self
        said = self.within("")
        said.message += f" ({how})"
        said.item = self.item
        return said


class UnsupportedError(PDIError, exit_code=6, http_status=415, title="unsupported"):
    """Well-formed input that pdi cannot act on (an unknown format, a scheme with no evaluator)."""


class LimitError(PDIError, exit_code=7, http_status=413, title="limit exceeded"):
    """A size, depth, count or time limit was exceeded."""


class WholeCaptureLimit(LimitError):
    """A limit of a whole capture (``pdi capture``) passed while one of its parts was fetched: the capture fails,
    where a part's own failure leaves that part missing."""


class StoreError(PDIError, exit_code=8, http_status=503, title="storage error"):
    """The archive's storage could not do what was asked (not a user mistake).

    Its message names the server's own places (a file's path, the catalog's ``postgresql://`` URL and user, a
    socket, a bucket) and what the database or the operating system said: the operator's to read, in the
    command's output or the server's log. Over HTTP (:meth:`over_http`) an answer says only that the storage
    failed and to ask again, since whoever sent the request, a stranger as often as not, has no business knowing
    where the archive keeps its parts."""

    #: What an answer over HTTP says of any storage error (the resolver logs the message itself).
    OVER_HTTP = ("the archive's storage (its catalog or its blob store) could not do this just now: ask again"
                 " shortly; what failed is in the server's log")

    def over_http(self) -> str:
        return self.OVER_HTTP


class CommitUnknownError(StoreError, problem_type="/api#problem-commit-unknown"):
    """A write whose COMMIT got no answer (the connection to the PostgreSQL server was lost as it was sent): the
    server may have applied it or not. The same request sent again with the same Idempotency-Key is answered with
    its first answer if it was applied (Idempotent-Replayed: true), and is made now if it was not; sent again
    without one, it may be stored twice: look first (GET /api/ls?series=SERIES).

    ``what`` says what was lost and where; ``look`` how to find out what happened on the command line (by
    default, a deposit's); :meth:`over_http` says it in the write API's words instead."""

    #: How to find out on the command line whether a deposit was applied, and how to do it again safely.
    LOOK = ("look before doing it again (pdi ls --series SERIES lists its names, pdi get NAME, pdi verify): pdi add"
            " again the same day with the same --id, or a write API request sent again with the same"
            " Idempotency-Key, is not stored twice")

    def __init__(self, what: str, *, look: str | None = None) -> None:
        super().__init__(f"{what}: {look or self.LOOK}")
        self.what = what
        self.look = look

    def _worded(self) -> str:
        return self.what  # made again from what was lost, not from the message: the advice it ends in is said once

    def _reword(self, text: str) -> None:
        self.what = text
        super()._reword(f"{text}: {self.look or self.LOOK}")

    #: What an answer over HTTP says was lost (:attr:`what` names the catalog's place: the server's log says it).
    LOST_OVER_HTTP = ("the connection to the catalog's database was lost as this write was committed, so whether it"
                      " was applied is unknown")

    def over_http(self, keyed: bool | None = None, *, again: str | None = None) -> str:
        """The message for a write API request that reads an Idempotency-Key and sent one (``keyed``), or sent none
        (``False``); ``None``: a request no Idempotency-Key replays (a withdrawal, an embargo, an annotation). It
        says what was lost in :data:`LOST_OVER_HTTP`'s words, not :attr:`what`'s, which name the server's places,
        and then :meth:`advice_over_http`."""
        return f"{self.LOST_OVER_HTTP}: {self.advice_over_http(keyed, again=again)}"

    @staticmethod
    def advice_over_http(keyed: bool | None = None, *, again: str | None = None) -> str:
        """What a client of the write API is told to do about a write of unknown outcome (``keyed`` as
        :meth:`over_http` reads it; the server's log says it too, after :attr:`what`). ``again``: a request whose
        route says it is applied once however often it is sent (a mirror's announcement, or its withdrawal), and
        what sending it again answers."""
        if again is not None:
            return f"send the same request again: {again}"
        if keyed is None:
            return "look whether it was applied before sending it again"
        if keyed:
            return ("send the same request again with the same Idempotency-Key: if it was applied, its first answer"
                    " comes back (Idempotent-Replayed: true) and nothing is stored twice; if not, it is made now")
        return ("this request had no Idempotency-Key, so sending it again may store it twice: look first whether it"
                " was applied (GET /api/ls?series=SERIES lists the series' names, the newest last), and send each"
                " write with an Idempotency-Key, whose retry is answered with the first answer")


class ReplicaBehindError(StoreError):
    """A snapshot of the catalog begun on a streaming replica (``--read-url``) asked for what only the primary has
    yet (a name minted meanwhile, the replica's replay behind): its reads so far are of the replica's view, and
    going on on the primary would mix two views in one. Nothing is answered from it; this process's next
    snapshots are read on the primary (until the replica has replayed as far), so asking again is answered in one
    view (:meth:`pdi.archive.Archive.in_one_view` asks again by itself). Over HTTP a ``503``, as any storage
    error: to be asked again."""


class OlderSchemaError(StoreError):
    """An archive whose catalog's schema is older than this pdi's, opened by anything but ``pdi init``
    (:meth:`pdi.archive.Archive.init`), which alone migrates it: refused before anything of it is changed, so that
    a newer pdi installed on one machine leaves a catalog the older resolvers still serve as it is until an
    operator backs it up and migrates it (``pdi init --archive X --backup DEST``). Exit 8, as any storage error."""


class ReadOnlyArchiveError(StoreError):
    """A write asked of an archive this process may read and not write: a member of the group of an archive shared
    with it reads it and never writes it (:mod:`pdi.archive.modes`), as a catalog on a read-only file system is
    read. Its message names the archive, its catalog's mode and owner, and who may write it. Over HTTP a ``503``,
    as any storage error, saying that this resolver reads the archive and that writes go to one its owner runs:
    asking this one again will not do."""

    OVER_HTTP = ("this resolver may read the archive, not write it (it runs as a user of the archive's group, which"
                 " reads the archive and never writes it): send writes to a resolver its owner runs")


class UnreadableKeyError(ReadOnlyArchiveError):
    """What is signed with the archive's signing key (a manifest, its key set, its registry), asked of a resolver
    that may read the archive and not its key: a member of the archive's group, to whom the key (0600, its owner's
    alone) is closed. Over HTTP a ``503`` without ``Retry-After``, as a write asked of such a resolver."""

    OVER_HTTP = ("this resolver may read the archive, not its signing key (which is its owner's alone): ask a"
                 " resolver its owner runs for what is signed")


class RemoteError(PDIError, exit_code=16, http_status=502, title="remote error"):
    """Another server pdi asked (a mirror's origin or peer, a registry's or a key set's URL, the server of a page
    ``pdi capture`` was asked for) could not be reached
    in time, or answered with a failure of its own: neither this archive's storage (:class:`StoreError`) nor the
    user's mistake, and perhaps over when it is asked again. Over HTTP ``502`` (RFC 9110 §15.6.3: a server
    acting for the client had no valid answer from the one it asked)."""


class AccessError(PDIError, exit_code=10, http_status=403, title="forbidden"):
    """A write (or a private read) that the token presented may not make: another series, or too small a role."""


class ScopeError(AccessError):
    """A token that is live but whose role or series does not cover what it asked (RFC 6750 §3.1's
    ``insufficient_scope``: the resolver's ``403`` says so in ``WWW-Authenticate``)."""


class WithdrawnError(PDIError, exit_code=11, http_status=410, title="gone", problem_type="/api#problem-withdrawn"):
    """A name that was withdrawn: it is kept (never minted again) and answers with its tombstone, not its bytes."""

    def __init__(self, message: str, *, reason: str, at: str, who: str, purged: bool = False) -> None:
        super().__init__(message)
        self.reason, self.at, self.who, self.purged = reason, at, who, purged


class OrphanedError(
    PDIError, exit_code=12, http_status=422, title="passage orphaned", problem_type="/api#problem-passage-orphaned"
):
    """A cited passage that cannot be found in the other version of its document (``pdi anchor``).

    ``details`` are the problem's extension members (what was looked for, in which version).
    """

class AmbiguousError(
    PDIError, exit_code=13, http_status=422, title="passage ambiguous", problem_type="/api#problem-passage-ambiguous"
):
    """A cited passage that stands in several places of the other version, none better than the rest (``pdi anchor``).

    ``details`` list the candidates' fragment names.
    """

class PreconditionError(PDIError, exit_code=15, http_status=412, title="precondition failed"):
    """A change made on a condition that no longer holds: an ``If-Match`` entity tag that is not the current one
    (RFC 9110 §13.1.1; the W3C Web Annotation Protocol §5.3, §5.4). Exit status 15: 14 is ``pdi import --partial``'s."""


class DeletedError(PDIError, exit_code=11, http_status=410, title="gone", problem_type="/api#problem-deleted"):
    """Something that was kept and has been deleted (an annotation): its name is never given again.

    Gone, as a withdrawn name is: the same exit status, 11."""
