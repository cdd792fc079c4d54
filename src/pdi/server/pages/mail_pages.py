"""The reader's pages of an e-mail message: the message itself, and its thread (``docs/email.md``).

``/view?pdi=NAME`` of a message (``message/rfc822``) shows its header fields
(From, To, Cc, Date, Subject, Message-ID, In-Reply-To), a link to its thread,
its parts (each fetched by ``#part=N`` with its own media type), and its
body's text in the text viewer's ``<pre>`` (:mod:`pdi.server.pages.viewer`), a page at a time
(:mod:`pdi.server.pages.body_pages`):
the passage a ``char`` or ``line`` fragment names marked, and select → cite
naming ``#char=a,b`` of the body's text, checked against ``N2R`` as for a
text.

``/thread?pdi=NAME`` lists the message's thread: the messages its
``References`` (and ``In-Reply-To``) name, oldest first, each linked where
the archive holds it, else said missing; then the message; then its
replies, a reply's replies under it (at most :data:`MAX_SCANNED`, said so
when there are more; nested at most :data:`MAX_DEPTH` deep), and the messages whose References name it though the
message they reply to is missing, each under the nearest message it names
that is listed. Messages are found through the archive's thread index
(:meth:`pdi.archive.Archive.messages_by_id`, :meth:`~pdi.archive.Archive.message_replies`):
by Message-ID and by the id a message replies to, in any series and on any
day, whatever name it was deposited under. ``/thread?mid=mid:ID`` (an RFC 2392 URL; or ``<ID>``) is the
thread of the message with that Message-ID, found so; a message's In-Reply-To ids link there. Everything is
escaped; nothing is loaded from elsewhere. What the sender wrote (a header field's value, a part's name) is
shown isolated, each control and bidirectional override in it as its escape (:func:`shown_field`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from pdi._wording import byte_size, counted
from pdi.archive import Archive, Generic, Resolved
from pdi.errors import NotFoundError, PDIError
from pdi.identifier import PDI
from pdi.server.pages.layout import breakable, esc, n2r_href, page

if TYPE_CHECKING:
    from pdi.mail.message import Mail

#: The most replies (replies to replies among them) a thread page lists.
MAX_SCANNED = 500
#: The deepest a reply is nested under its parent (lists in lists); deeper replies are listed at that depth, each
#: after its parent, in thread order: a back-and-forth of hundreds of replies stays readable (each list is indented),
#: and no browser lays it out flat on its own (Chromium's HTML parser nests no element deeper than 512).
MAX_DEPTH = 16

#: The most octets of a text part (an attachment's words: ``text/plain``, ``text/csv`` …) the page of its
#: ``#part=N`` shows (:func:`part_text`); past them, a link fetches it whole.
MAX_PART_TEXT = 64 << 10

_STYLE = """
dl.message{display:grid;grid-template-columns:8rem 1fr;gap:0.15rem 0.8rem} dl.message dd{margin:0;overflow-wrap:anywhere}
ol.thread{list-style:none;padding-left:0} ol.thread ol{list-style:none;padding-left:1.4rem;border-left:2px solid #d5dbe3}
ul.parts li.chosen{background:#fff3c4;outline:2px solid #c99a00;outline-offset:2px}
section.part-text h2{font-size:1.1rem} section.part-text pre{max-height:32rem;overflow:auto;white-space:pre-wrap;
overflow-wrap:anywhere;border:1px solid #c8d3e0;padding:0.5rem;background:#fafbfc}
span.control{font-family:monospace;font-size:0.85em;border:1px solid currentColor;border-radius:2px;padding:0 1px}
ol.thread li{margin:0.35rem 0} ol.thread .this-message{font-weight:bold} ol.thread .missing{color:#8a5a00}
h1.subject{margin-bottom:0.2rem} p.name-line{margin-top:0}
@media (prefers-color-scheme:dark){ol.thread ol{border-left-color:#3e4a5a} ul.parts li.chosen{background:#3a3010}
section.part-text pre{border-color:#3e4a5a;background:#1c2026}
ol.thread .missing{color:#f0c060}}
"""


#: What :func:`shown_field` shows as its escape: the C0 and C1 controls (a NUL, which the HTML parser drops; an ESC,
#: a BEL) and the bidirectional embeddings, overrides and isolates (UAX #9 §2: LRE, RLE, PDF, LRO, RLO, LRI, RLI,
#: FSI, PDI), which reorder the characters after them: ``report\u202efdp.exe`` reads ``reportexe.pdf``. Not the
#: marks (LRM, RLM, ALM), which right-to-left text writes and which reorder no letter.
_SHOWN_ESCAPED = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown_field(text: object) -> str:
    """What a message's sender wrote (a header field's value, a part's file name, a Message-ID) as its page shows
    it: escaped in a ``<bdi>`` (:func:`pdi.server.pages.layout.isolated`: no override in it reorders what follows
    it), and each character of :data:`_SHOWN_ESCAPED` in it shown as its escape (``\u202e``), marked, not as itself:
    the ``<bdi>`` keeps an override from what follows it, not from the sender's own words (a file name
    ``\u202efdp.exe`` shown ``exe.pdf``, a sender's ``\u202egro.elpmaxe`` shown ``example.org``)."""
    value, pieces, at = str(text), [], 0
    for found in _SHOWN_ESCAPED.finditer(value):
        escape = found.group().encode("unicode_escape").decode("ascii")
        pieces.append(f'{esc(value[at : found.start()])}<span class="control">{escape}</span>')
        at = found.end()
    return f"<bdi>{''.join(pieces)}{esc(value[at:])}</bdi>"


#: An address's ``@`` and the domain after it, dot-separated labels (RFC 5322 §3.4.1's dot-atom form of a domain).
_DOMAIN = re.compile(r"@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")


def shown_addresses(text: object) -> str:
    """A From, To or Cc field as :func:`shown_field` shows it, with a line-break opportunity (``<wbr>``) after each
    address's ``@`` and before each dot of its domain, so that a narrow column wraps ``<cravindogs@`` above
    ``cravindogs.com>``, never inside a label (``cravindogs.c`` above ``om>``); the field's characters are
    unchanged."""
    return _DOMAIN.sub(lambda found: "@<wbr>" + found.group(1).replace(".", "<wbr>."), shown_field(text))


def _view(name: str) -> str:
    return "/view?pdi=" + quote(name, safe="")



def message_section(
    whole: Resolved, chosen: int | None = None, mail: Mail | None = None
) -> tuple[str, str, str | None]:
    """The header fields, thread link and parts of the message ``whole`` (escaped HTML), its body's text (whole:
    its page shows a page of it, :mod:`pdi.server.pages.body_pages`), and its Subject (:func:`subject_of`, what
    its page is headed with); the part numbered ``chosen`` (the one a ``#part=`` name names) marked, and said so
    above the list.

    ``mail``: the message read by its structure (:func:`pdi.mail.large.read_large`; ``whole`` only located, its
    octets never held): each part listed with its size as written, and its body's text, or a note where its body
    is past what is read of it."""
    from pdi.errors import LimitError
    from pdi.fragments.email_text import message_body_text
    from pdi.mail.large import read_mail

    large = mail is not None
    if mail is None:  # whole, or by its structure where it has more lines than Python's parser is given
        mail = read_mail(whole.data)
    name = str(whole.pdi)
    rows = []
    for label, key in (("From", "From"), ("To", "To"), ("Cc", "Cc"), ("Date", "Date"), ("Subject", "Subject")):
        value = mail.header(key)
        if value is not None:
            field = shown_addresses(value) if key in ("From", "To", "Cc") else shown_field(value)
            rows.append(f"<dt>{label}</dt><dd>{field}</dd>")
    if mail.message_id:
        rows.append(f"<dt>Message-ID</dt><dd><code>{shown_field(mail.message_id)}</code></dd>")
    if mail.in_reply_to:
        replied = " ".join(f'<a href="/thread?mid={quote(i, safe="")}"><code>{shown_field(i)}</code></a>'
                           for i in mail.in_reply_to)
        rows.append(f"<dt>In-Reply-To</dt><dd>{replied}</dd>")
    rows.append(f'<dt>Thread</dt><dd><a href="/thread?pdi={quote(name, safe="")}">the thread of this message</a></dd>')
    body_at = mail.body_index()
    items = []
    for part in mail.parts:
        label = part.filename or (f"cid:{part.content_id}" if part.content_id else part.location or "")
        role = " (the body's text)" if part.index == body_at else ""
        link = f"{name}#part={part.index}"
        marked = ' class="chosen" aria-current="true"' if part.index == chosen else ""
        size = f", {byte_size(part.span[2] - part.span[1])} as written" if part.span is not None else ""
        items.append(
            f'<li{marked}><a href="{html.escape(n2r_href(link))}">part {part.index}</a>: {html.escape(part.media_type)}'
            + (f" <code>{shown_field(label)}</code>" if label else "")
            + f"{html.escape(size)}{role} <code class=\"name\">{breakable(link)}</code></li>"
        )
    named = ""
    if chosen is not None and 0 <= chosen < len(mail.parts):
        part = mail.parts[chosen]
        link = f"{name}#part={chosen}"
        named = (f'<p class="note">The name asked for names part {chosen} of this message'
                 f' ({html.escape(part.media_type)}), marked below: <a href="{html.escape(n2r_href(link))}">fetch it</a>.'
                 "</p>")
    section = (
        f'<dl class="message">{"".join(rows)}</dl>{named}'
        f'<p>{counted(len(mail.parts), "part")}, each fetched by its name:</p>'
        f'<ul class="parts">{"".join(items)}</ul>'
    )
    subject = subject_of(mail)
    if large:
        return (*_large_body(section, mail, name, whole.record.sha256), subject)
    try:
        text = message_body_text(whole.data, mail)  # made once a process (pdi.fragments.email_text)
    except LimitError as exc:  # its header fields and parts are shown all the same
        section += f'<p class="note">Its body text is not shown: {html.escape(str(exc))}</p>'
        return section, "", subject
    if not text:
        section += '<p class="note">This message has no body text (no text/plain or text/html part that is not an attachment).</p>'
    return section, text, subject


def subject_of(mail: Mail) -> str | None:
    """A message's Subject as its page's heading says it: decoded as its field is shown (RFC 2047), its folding and
    runs of white space one space; ``None`` when it has none, or one of white space alone."""
    subject = mail.header("Subject")
    said = " ".join(subject.split()) if subject is not None else ""
    return said or None


def is_text_part(media_type: str) -> bool:
    """Whether a part of ``media_type`` is words a reader reads (``text/*``, JSON, XML), shown on its page."""
    kind = media_type.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind in ("application/json", "application/xml") or kind.endswith(("+json", "+xml"))


def part_text(name: str, index: int, media_type: str, charset: str | None, head: bytes, size: int) -> str:
    """The words of part ``index`` of the message ``name``, a text part the page's name names (``#part=N``): its
    first :data:`MAX_PART_TEXT` octets ``head`` (of ``size``, its transfer encoding removed), decoded in its
    ``charset`` (US-ASCII when it has none, RFC 2046 §4.1.2; one pdi does not know, as UTF-8, as the body's text
    is read: docs/email.md §2), escaped in a ``<pre>``; past them, a note with a link that fetches it whole. A
    character cut at the bound is left out, not shown as U+FFFD."""
    import codecs

    from pdi import charsets

    try:
        codec = charsets.codec_for(charset or "us-ascii")
    except PDIError:  # a charset pdi does not know: read as UTF-8
        codec = "utf-8"
    codec = charsets.byte_order(codec, head[:4])  # UTF-16 without a BOM: big-endian (RFC 2781 §4.3)
    cut = size > len(head) or len(head) > MAX_PART_TEXT
    words = codecs.getincrementaldecoder(codec)("replace").decode(head[:MAX_PART_TEXT], final=not cut)
    link = html.escape(n2r_href(f"{name}#part={index}"))
    note = (f'<p class="note" id="part-cut">The first {MAX_PART_TEXT >> 10} KiB of its {byte_size(size)} are shown:'
            f' <a href="{link}">fetch it whole</a>.</p>' if cut else "")
    return (f'<section class="part-text" aria-labelledby="part-text-h"><h2 id="part-text-h">The text of part {index}'
            f" ({html.escape(media_type)})</h2>{note}"
            f'<pre id="part-text" dir="auto" tabindex="0">\n{html.escape(words)}</pre></section>')  # its own first line end kept


def _large_body(section: str, mail: Mail, name: str, sha256: str) -> tuple[str, str]:
    """The body's text of a message read by its structure (made once a process for its octets, whose SHA-256 is
    ``sha256``, as its passages' is: :func:`pdi.fragments.email_text.large_message_body_text`), with the note that
    says what is not shown: a body past :data:`pdi.mail.large.MAX_BODY_OCTETS` is not read (its part's name
    fetches it)."""
    from pdi.errors import LimitError
    from pdi.fragments.email_text import body_text, large_message_body_text
    from pdi.mail.large import MAX_BODY_OCTETS, body_unread

    unread = body_unread(mail)
    if unread is not None:
        assert unread.span is not None
        link = f"{name}#part={unread.index}"
        section += (
            f'<p class="note" id="body-unread">Its body text (part {unread.index}, {html.escape(unread.media_type)})'
            f" is {html.escape(byte_size(unread.span[2] - unread.span[1]))} as written, more than the"
            f" {html.escape(byte_size(MAX_BODY_OCTETS))} the reader reads of a message's body: it is"
            f' <a href="{html.escape(n2r_href(link))}">fetched by its part\'s name</a>.</p>'
        )
        return section, ""
    try:
        text = large_message_body_text(sha256, lambda: body_text(mail))
    except LimitError as exc:  # its header fields and parts are shown all the same
        section += f'<p class="note">Its body text is not shown: {html.escape(str(exc))}</p>'
        return section, ""
    if not text:
        section += '<p class="note">This message has no body text (no text/plain or text/html part that is not an attachment).</p>'
    return section, text


MESSAGE_STYLE = _STYLE


@dataclass
class _Message:
    """One message of a thread as its page lists it."""

    name: str | None
    message_id: str
    subject: str
    sender: str
    date: str
    parent: str | None
    replies: list[_Message]
    #: the id it replies to when that message is not in the archive (it is listed under one its References name)
    gap: str | None = None


def _read_message(
    archive: Archive, name: PDI | str, *, quiet: bool = True
) -> tuple[str, _Message, tuple[str, ...]] | None:
    """A message's versioned name, its line in the thread, and the ids it refers to (References, In-Reply-To).

    ``None`` for a name that is no message, or (``quiet``) one the reader may not read or the archive lacks:
    another message of the thread is left out then, as the day's and a URL's lists leave it out. Only the
    message's first :data:`~pdi.mail.message.THREAD_HEAD` octets are read, and only its header fields parsed
    (:func:`~pdi.mail.message.read_head`): a thread of hundreds of messages with large attachments costs a
    page no more than their headers.
    """
    from pdi.mail.message import THREAD_HEAD, read_head

    if not quiet:
        archive.locate(name)  # the message asked for: not found, withdrawn or forbidden as /view says
    try:
        located = archive.locate(name)
        if isinstance(located, Generic):
            names = [n for n in located.names if n.format is not None and n.format.lower() in ("rfc822", "header")]
            if not names:
                return None
            located = archive.locate(names[-1])
            assert not isinstance(located, Generic)
        if located.record.media_type != "message/rfc822":
            return None
        with archive.open_located(located) as opened:
            head = b"".join(opened.reader.chunks(0, min(opened.size, THREAD_HEAD)))
        mail = read_head(head)
    except PDIError:
        return None
    thread = mail.thread
    found = _Message(str(located.pdi), thread.message_id or "", mail.header("Subject") or "(no subject)",
                     mail.header("From") or "", mail.header("Date") or "", thread.parent, [])
    return str(located.pdi), found, thread.references


def render_thread(archive: Archive, name: str) -> str:
    """The page of the thread of the message ``name`` (see the module docstring)."""
    parsed = PDI.parse(name).without_fragment()
    read = _read_message(archive, parsed, quiet=False)
    if read is None:
        raise NotFoundError(f"{parsed} is not an e-mail message the archive holds")
    own_name, this, refs = read
    # an id named again is the same message, said once; at most MAX_SCANNED of them, the nearest the message (a
    # header of 1 MiB may name 100,000s, each a read of up to THREAD_HEAD octets and a line of the page)
    named = list(dict.fromkeys(refs))
    listed = named[-MAX_SCANNED:]
    held: dict[str, Generic] = {}
    for message_id, document in archive.messages_by_id(listed, limit=MAX_SCANNED) if listed else ():
        held.setdefault(message_id, document)
    ancestors: list[str] = []
    for message_id in listed:
        if message_id not in held:
            ancestors.append(f'<li class="missing"><code>{shown_field(message_id)}</code>: not in the archive</li>')
            continue
        got = _read_message(archive, held[message_id].pdi)
        if got is None:
            ancestors.append(f'<li class="missing"><code>{shown_field(message_id)}</code>: not readable</li>')
            continue
        ancestors.append(f"<li>{_line(got[1])}</li>")
    found, more = _replies(archive, own_name, this)
    by_parent: dict[str, list[_Message]] = {}
    for message in found:
        assert message.parent is not None
        by_parent.setdefault(message.parent, []).append(message)
    replies = _tree(this.message_id, by_parent, set()) if this.message_id else ""
    note = (
        f'<p class="note">Only the first {MAX_SCANNED} replies (and replies to them) are shown; there are more.</p>'
        if more else ""
    )
    if len(named) > len(listed):
        note += (f'<p class="note">Only the last {MAX_SCANNED} of the {len(named):,} messages its References and'
                 " In-Reply-To name are listed.</p>")
    body = (
        f"<h1>Thread: {shown_field(this.subject)}</h1>"
        f'<p>of <a href="{html.escape(_view(own_name))}"><code class="name">{breakable(own_name)}</code></a></p>{note}'
        '<ol class="thread" aria-label="The thread, oldest first">'
        + "".join(ancestors)
        + f'<li class="this"><span class="this-message">{_line(this)} (this message)</span>{replies}</li></ol>'
    )
    return page(f"Thread of {own_name}", body, style=_STYLE)


def render_thread_of_id(archive: Archive, mid: str) -> str:
    """The page of the thread of the message whose Message-ID a ``mid:`` URL (RFC 2392) or ``<id>`` names, found
    through the thread index in any series and on any day (the first the reader may read, if several hold it)."""
    from pdi.mail.message import message_id_of_mid

    message_id = message_id_of_mid(mid)
    found = archive.messages_by_id([message_id], limit=1)
    if not found:
        raise NotFoundError(f"no message with the Message-ID {message_id} is in the archive")
    return render_thread(archive, str(found[0][1].pdi))


def _replies(archive: Archive, own_name: str, this: _Message) -> tuple[list[_Message], bool]:
    """The replies to ``this`` and theirs from the archive's thread index (in any series, on any day), at most
    :data:`MAX_SCANNED` of them, and whether there are more.

    First by the id each replies to, a generation at a time (a document is listed under the message its latest
    version replies to); then the messages whose References name ``this`` but whose own parent is not in the
    archive (a message between them is missing), each under the last message its References name that is
    listed, with its replies.
    """
    found: list[_Message] = []
    seen = {this.message_id}
    if not this.message_id:
        return found, False
    if _descend(archive, own_name, [this.message_id], found, seen):
        return found, True
    skipped: list[_Message] = []
    for _, document in archive.message_referrers([this.message_id], limit=MAX_SCANNED + 1):
        got = _read_message(archive, document.pdi)
        if got is None or got[0] == own_name or got[1].message_id in seen or got[1].parent in seen:
            continue
        message, refs = got[1], got[2]
        message.gap = message.parent
        message.parent = next((r for r in reversed(refs) if r in seen), this.message_id)
        skipped.append(message)
    for message in skipped:
        if len(found) >= MAX_SCANNED:
            return found, True
        found.append(message)
        seen.add(message.message_id)
        if _descend(archive, own_name, [message.message_id], found, seen):
            return found, True
    return found, False


def _descend(archive: Archive, own_name: str, frontier: list[str], found: list[_Message], seen: set[str]) -> bool:
    """The replies to the ids ``frontier`` and theirs, a generation at a time, added to ``found`` (each id once:
    ``seen``); whether :data:`MAX_SCANNED` was passed."""
    while frontier:
        following: list[str] = []
        for parent, document in archive.message_replies(frontier, limit=MAX_SCANNED + 1):
            got = _read_message(archive, document.pdi)
            if got is None or got[0] == own_name or got[1].parent != parent:
                continue
            if len(found) >= MAX_SCANNED:
                return True
            found.append(got[1])
            if got[1].message_id and got[1].message_id not in seen:
                seen.add(got[1].message_id)
                following.append(got[1].message_id)
        frontier = following
    return False


def _line(message: _Message) -> str:
    subject = shown_field(message.subject)
    linked = f'<a href="{html.escape(_view(message.name))}">{subject}</a>' if message.name else subject
    gap = (f' <span class="missing">(a reply to <code>{shown_field(message.gap)}</code>, not in the archive)</span>'
           if message.gap else "")
    return (
        f"{linked} — {shown_field(message.sender)}, <time>{shown_field(message.date)}</time>"
        f' <code class="name">{shown_field(message.message_id)}</code>{gap}'
    )


def _tree(message_id: str, by_parent: dict[str, list[_Message]], seen: set[str]) -> str:
    """The replies to ``message_id`` and theirs, nested at most :data:`MAX_DEPTH` lists deep, each once.

    Made a list at a time from a stack, not by recursion: a thread where each message replies to the one before
    is :data:`MAX_SCANNED` deep (a ``RecursionError`` past Python's limit, a ``500``, it was).
    """
    if message_id in seen or message_id not in by_parent:
        return ""
    seen.add(message_id)
    made = ["<ol>"]
    # each list being written: its messages still to write, its depth, and what closes it once they are written
    stack: list[tuple[Iterator[_Message], int, str]] = [(iter(by_parent[message_id]), 1, "</ol>")]
    while stack:
        messages, depth, closing = stack[-1]
        message = next(messages, None)
        if message is None:
            stack.pop()
            made.append(closing)
            continue
        replied = message.message_id not in seen and message.message_id in by_parent
        if not replied:
            made.append(f"<li>{_line(message)}</li>")
            continue
        seen.add(message.message_id)
        if depth < MAX_DEPTH:  # its replies in a list of their own, in its item
            made.append(f"<li>{_line(message)}<ol>")
            stack.append((iter(by_parent[message.message_id]), depth + 1, "</ol></li>"))
        else:  # as deep as a list goes: its replies after it, in the same list
            made.append(f"<li>{_line(message)}</li>")
            stack.append((iter(by_parent[message.message_id]), depth, ""))
    return "".join(made)
