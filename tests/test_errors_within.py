"""An error said of a place or a batch's item (:meth:`pdi.errors.PDIError.within`, :meth:`~pdi.errors.PDIError.of_item`)
says its message once, with the place before it, whatever its class adds to the message it is made with."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pdi.archive.blobs.files import _TemporaryGone
from pdi.errors import (
    AccessError,
    AmbiguousError,
    CharsetCheckError,
    CitationMismatchError,
    CommitUnknownError,
    ContentRefusal,
    DamagedError,
    DeletedError,
    FormatCheckError,
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    OlderSchemaError,
    OrphanedError,
    ParseError,
    PDIError,
    PreconditionError,
    ReadOnlyArchiveError,
    RemoteError,
    RemoteNotFoundError,
    ReplicaBehindError,
    ScopeError,
    SeriesNotRegisteredError,
    StoreError,
    UnknownSeriesError,
    UnreadableKeyError,
    UnsupportedError,
    WholeCaptureLimit,
    WithdrawnError,
)
from pdi.server.write.annotations import NotAcceptable
from pdi.signing import NotAKey, UnknownSigner


def test_a_commit_unknown_error_of_an_item_says_its_advice_once() -> None:
    lost = CommitUnknownError("the connection to db.example:5432 was lost as the batch was committed")
    said = lost.of_item(3)
    assert isinstance(said, CommitUnknownError)
    assert said.message == f"item 3: {lost.message}"
    assert said.message.count(CommitUnknownError.LOOK) == 1
    assert said.what == f"item 3: {lost.what}"
    assert said.item == 3
    # said of another place instead of the item (an mbox's message): the item's prefix replaced, the advice once
    again = said.item_said("list.mbox: message 2: ")
    assert again.message == f"list.mbox: message 2: {lost.message}"


def test_a_commit_unknown_error_with_its_own_advice_keeps_it_said_of_a_place() -> None:
    lost = CommitUnknownError("the import's commit was lost", look="pdi ls --series S shows what was imported")
    said = lost.within("the registry at r.example: ")
    assert said.message == ("the registry at r.example: the import's commit was lost:"
                            " pdi ls --series S shows what was imported")
    assert CommitUnknownError.LOOK not in said.message


#: How to make each kind of error of a message: every PDIError subclass, each with what its constructor needs.
MAKERS: dict[type[PDIError], Callable[[str], PDIError]] = {
    PDIError: PDIError,
    ParseError: lambda m: ParseError(m, text="a text", offset=3, rule="a-rule"),
    IntegrityError: IntegrityError,
    DamagedError: DamagedError,
    CitationMismatchError: CitationMismatchError,
    ContentRefusal: lambda m: ContentRefusal(m, declare=("format", "png"), note=" (unread)"),
    FormatCheckError: lambda m: FormatCheckError(m, declare=("format", None)),
    CharsetCheckError: lambda m: CharsetCheckError(m, declare=("charset", "utf-8", " (detected)")),
    NotFoundError: NotFoundError,
    UnknownSeriesError: UnknownSeriesError,  # its words are its own, made of the series
    SeriesNotRegisteredError: SeriesNotRegisteredError,  # so are these, and the command they end in
    RemoteNotFoundError: lambda m: RemoteNotFoundError(m, told_type="/api#problem-unknown-series"),
    ImmutabilityError: ImmutabilityError,
    UnsupportedError: UnsupportedError,
    LimitError: LimitError,
    WholeCaptureLimit: WholeCaptureLimit,
    StoreError: StoreError,
    CommitUnknownError: lambda m: CommitUnknownError(m, look="pdi ls shows it"),
    ReplicaBehindError: ReplicaBehindError,
    OlderSchemaError: OlderSchemaError,
    ReadOnlyArchiveError: ReadOnlyArchiveError,
    UnreadableKeyError: UnreadableKeyError,
    RemoteError: RemoteError,
    AccessError: AccessError,
    ScopeError: ScopeError,
    WithdrawnError: lambda m: WithdrawnError(m, reason="a court order", at="2026-11-20T00:00:00Z", who="admin",
                                             purged=True),
    OrphanedError: OrphanedError,
    AmbiguousError: AmbiguousError,
    PreconditionError: PreconditionError,
    DeletedError: DeletedError,
    NotAcceptable: NotAcceptable,
    NotAKey: NotAKey,
    UnknownSigner: UnknownSigner,  # its words are its own, made of the key id it names
    _TemporaryGone: lambda m: _TemporaryGone(Path(m)),  # its own words about the path
}


def _every_kind(kind: type[PDIError]) -> set[type[PDIError]]:
    return {kind}.union(*(_every_kind(sub) for sub in kind.__subclasses__()))


def test_every_kind_of_error_is_made_here() -> None:
    import pdi

    for module in pkgutil.walk_packages(pdi.__path__, "pdi."):  # every kind, wherever pdi declares it
        importlib.import_module(module.name)
    assert set(MAKERS) == _every_kind(PDIError)  # a new kind of error needs its maker, to be tried below


_WORDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_DETAILS = st.dictionaries(st.text(max_size=10), st.one_of(st.integers(), st.text(max_size=10),
                                                           st.lists(st.text(max_size=5), max_size=3)), max_size=4)


@given(kind=st.sampled_from(sorted(MAKERS, key=lambda k: k.__name__)), message=_WORDS, where=_WORDS,
       details=_DETAILS, notes=st.lists(_WORDS, max_size=3), forceable=st.booleans())
def test_an_error_said_of_a_place_keeps_its_details_and_notes(kind: type[PDIError], message: str, where: str,
                                                               details: dict[str, object], notes: list[str],
                                                               forceable: bool) -> None:
    error = MAKERS[kind](message)
    error.details = details
    for note in notes:
        error.add_note(note)
    if isinstance(error, ImmutabilityError):
        error.forceable = forceable
    for said in (error.within(where), error.of_item(2), error.of_item(2).item_said(where)):
        assert type(said) is kind
        assert said.details == details  # the problem's extension members (RFC 9457 §3.2), as they were
        assert getattr(said, "__notes__", []) == notes  # what else went wrong, as the error was told it
        assert said.exit_code == error.exit_code and said.http_status == error.http_status
        # and what each kind keeps besides
        kept = ("text", "offset", "rule", "declare", "note", "look", "at", "who", "purged", "forceable", "told_type")
        for name in (*kept, *(("reason",) if isinstance(error, WithdrawnError) else ())):  # a ParseError's is said
            assert getattr(said, name, None) == getattr(error, name, None), name
    said = error.within(where)
    # its words are those it would have been made with had the place been said first (_TemporaryGone's and
    # UnknownSeriesError's, SeriesNotRegisteredError's and UnknownSigner's: their own, made of a path, a series or a key)
    own = (_TemporaryGone, UnknownSeriesError, SeriesNotRegisteredError, UnknownSigner)
    made = where + error.message if kind in own else MAKERS[kind](where + message).message
    assert said.message == str(said) == made
    said.details["more"] = 1
    assert "more" not in error.details  # its own copy: a change to one is no change to the other


@given(kind=st.sampled_from(sorted(MAKERS, key=lambda k: k.__name__)), message=_WORDS)
def test_an_error_made_without_details_has_its_own(kind: type[PDIError], message: str) -> None:
    one, other = MAKERS[kind](message), MAKERS[kind](message)
    assert one.details == {} and other.details == {}
    one.details["pointer"] = "/0"  # a change to one error's (empty) details …
    assert other.details == {}  # … is no change to another's of its kind
    assert MAKERS[kind](message).details == {}  # nor to a new one's
    said = other.within("here: ")
    said.details["more"] = 1
    assert other.details == {}  # an error said of a place has its own too
    assert MAKERS[kind](message).details == {}



@given(series=_WORDS, where=_WORDS)
def test_an_unregistered_series_refused_names_the_keepers_command_once_wherever_it_is_said(series: str,
                                                                                           where: str) -> None:
    refused = SeriesNotRegisteredError(series)
    command = f" (pdi series add {series})"
    assert refused.message == f"series {series} is not registered{command}"
    for said, before in ((refused.within(where), where), (refused.of_item(2), "item 2: "),
                         (refused.of_item(2).item_said(where), where)):
        # on the command line: the place first, then the refusal, the keeper's command once at its end
        assert said.message == f"{before}series {series} is not registered{command}"
        # over HTTP: the same place and refusal, then what a client can do in place of the command
        assert said.over_http().startswith(f"{before}series {series} is not registered: ")
        assert said.over_http().endswith("(GET /api/series lists them), or ask the keeper to register this one")
