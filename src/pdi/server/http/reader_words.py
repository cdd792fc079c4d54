"""What the reader's pages say of a refusal or a fault, in a reader's words: the line under a page's heading by its
status (:data:`STATUS_WORDS`), and what its heading says after *Cannot show this:* by the error's class
(:data:`HEADING_WORDS`) or, for a refusal that is no error of pdi's, by its status (:data:`REFUSAL_WORDS`).

Apart from the pages (:mod:`pdi.server.pages.problem_pages`) so that the replay origin
(:mod:`pdi.server.replay.origin`), which the pages import, says the same words without importing them.
"""

from __future__ import annotations

from pdi.errors import (
    AccessError,
    AmbiguousError,
    CharsetCheckError,
    CitationMismatchError,
    ContentRefusal,
    DamagedError,
    DeletedError,
    FormatCheckError,
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    OrphanedError,
    ParseError,
    PDIError,
    PreconditionError,
    RemoteError,
    StoreError,
    UnsupportedError,
    WithdrawnError,
)

#: What a status means, in a reader's words, by the status (RFC 9110 §15 says it for a programmer: "Gone",
#: "Unprocessable Content"): the line under each page's heading says this, the code after it, smaller, for those
#: who ask a program's help (:func:`status_line`). Every status the app's pages answer (a class's of
#: :mod:`pdi.errors`, a refusal's of RFC 2169's routes, a federation's 503 and 508) has its words here
#: (``tests/server/test_server_clerk_edges.py``).
STATUS_WORDS = {
    400: "This cannot be answered as asked",
    401: "Signing in is needed",
    403: "Not open to you",
    404: "Not found",
    405: "Not a way this address is read",
    406: "Not in a form that was asked for",
    409: "In conflict with what is kept",
    410: "Withdrawn",
    412: "Changed since it was read",
    413: "Too large",
    414: "The address is too long",
    415: "In a form not taken here",
    416: "Past the end of the document",
    422: "The check did not pass",
    429: "Too many requests: wait a moment",
    500: "A fault of the archive's",
    501: "Not offered here",
    502: "Another archive answered wrongly",
    503: "Unavailable for now",
    504: "Another archive took too long",
    507: "The archive has no room",
    508: "Sent round in a loop",
}


#: What the page of an error says in its heading after *Cannot show this:*, in a reader's words, by the error's
#: class (the nearest of its classes that has words here): its problem's ``title`` ("limit exceeded",
#: "unsupported", "storage error") is a program's, which the problem+json answers keep as they are (clients tell the
#: errors apart by them). Every class of :mod:`pdi.errors` has words here, a refusal's (4xx) and the archive's own
#: fault's (5xx) alike (``tests/server/test_server_reader_remaining_edges.py``, ``test_server_fault_pages.py``).
HEADING_WORDS: dict[type[PDIError], str] = {
    PDIError: "something in the request is wrong",
    ParseError: "not written right",
    IntegrityError: "it fails its check",
    CitationMismatchError: "the quotation is not where it is cited",
    ContentRefusal: "not what was declared",
    FormatCheckError: "not the format declared",
    CharsetCheckError: "not in the charset declared",
    NotFoundError: "not in this archive",
    ImmutabilityError: "what is kept may not change",
    UnsupportedError: "not something this archive can do",
    LimitError: "too large to show here",
    AccessError: "not open to you",
    WithdrawnError: "withdrawn",
    OrphanedError: "the passage is not in that version",
    AmbiguousError: "the passage stands in more than one place",
    PreconditionError: "changed since it was read",
    DeletedError: "deleted",
    # the archive's fault, not the request's (5xx): what the reader can do is said under it (ask again, tell …)
    DamagedError: "the archive's copy of it is damaged",
    StoreError: "the archive cannot read it just now",
    RemoteError: "another server did not answer as it should",
}

#: The same for a refusal that is no error of pdi's (an RFC 2169 address's, :func:`render_refused`), by its status:
#: its problem's title is HTTP's phrase ("Range Not Satisfiable", "Not Implemented"); a status without words here
#: says :data:`STATUS_WORDS`'s ("another archive took too long"), one without those its title.
REFUSAL_WORDS = {
    400: "not asked in a way it can be answered",
    404: "nothing is at this address",
    406: "not in a form your browser takes",
    410: "no longer here",
    412: "changed since it was read",
    416: "the passage is past the document's end",
    428: "the request needs a condition",
    429: "too many requests for now",
    500: "something went wrong in the archive",
    501: "not a service this archive offers",
    503: "not available just now",
}


def heading_words(error: PDIError) -> str:
    """What the heading of ``error``'s page says after *Cannot show this:* (:data:`HEADING_WORDS`)."""
    return next(HEADING_WORDS[kind] for kind in type(error).__mro__ if kind in HEADING_WORDS)


def refusal_words(status: int, title: str) -> str:
    """What the heading of a refusal's page says after *Cannot show this:* (:data:`REFUSAL_WORDS`)."""
    said = REFUSAL_WORDS.get(status) or STATUS_WORDS.get(status)
    return title.lower() if said is None else said[0].lower() + said[1:]
