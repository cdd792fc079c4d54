"""Messages' body texts, each made once a process for the same octets (``docs/email.md`` §2).

Every ``char=``, ``line=`` and ``/view`` of a message, a citation's check, a
quote's re-anchoring, counts on its body text
(:func:`pdi.mail.message.body_text`). A text is indexed once, at deposit;
a message's body text was made again at each request, and an HTML body's
page text costs about a second a megabyte of markup (a 10 MB body of
``<div>``, 28 s a request on a busy machine), so a few readers asking for
one message kept every worker busy. :class:`BodyTexts` makes it once and
keeps it, keyed by the SHA-256 of the message's octets (the fixity of
record: the same octets, the same text), bounded: at most :data:`MAX_KEPT`
texts and :data:`MAX_KEPT_CHARACTERS` characters in all, least recently used
out first. A refusal of the octets themselves (a :class:`~pdi.errors.PDIError`:
no message, a part that cannot be read) is kept too, and said again without
reading the octets again (an HTML body past
:data:`pdi.mail.message.MAX_HTML_BODY` characters, said before the body is
read, among them); one of time (its reading past its deadline, which a
loaded machine may pass where a quiet one would not: a
:class:`~pdi.errors.LimitError` whose ``details`` name its ``seconds``) is
not kept. A second request for a message whose text is
being made waits for it, rather than making it a second time.
:func:`pdi.mail.message.message_body_text` is the process's one.

What one making may cost is bounded where the text is made
(:func:`pdi.mail.message.body_text`): an HTML body of more than
:data:`~pdi.mail.message.MAX_HTML_BODY` characters is refused before it is
read, and the reading of one has :data:`pdi.fragments.pagetext.MAX_SECONDS`.

No I/O; a cache is its process's own state, shared by its threads.
"""

from __future__ import annotations

import hashlib
import mmap
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from pdi.errors import LimitError, PDIError

#: The octets of a message, as a resolver holds them (pdi.fragments.results.Buffer).
Buffer = bytes | bytearray | memoryview | mmap.mmap

__all__ = ["MAX_KEPT", "MAX_KEPT_CHARACTERS", "BodyTexts"]

#: The most body texts kept (and refusals: each counts as one).
MAX_KEPT: Final = 256
#: The most characters of body texts kept in all (at most 4 octets each in memory: 64 MiB): a text longer
#: than this is made again at each request, which only a plain-text body can be (an HTML body's is at most
#: MAX_HTML_BODY characters), and decoding a plain text costs no more than reading its octets.
MAX_KEPT_CHARACTERS: Final = 16 << 20


class BodyTexts:
    """Body texts by the SHA-256 of their messages' octets, bounded (see the module docstring); thread-safe.

    ``make`` makes the body text of a message's octets, or raises the :class:`~pdi.errors.PDIError` it has.
    """

    def __init__(
        self, make: Callable[[bytes], str], max_kept: int = MAX_KEPT, max_characters: int = MAX_KEPT_CHARACTERS
    ) -> None:
        self.make = make
        self.max_kept, self.max_characters = max_kept, max_characters
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, str | PDIError] = OrderedDict()
        self._characters = 0
        self._making: dict[str, threading.Event] = {}

    def text_of(self, data: Buffer) -> str:
        """The body text of the message ``data``: kept, or made (and kept), or its refusal said again."""
        key = hashlib.sha256(data).hexdigest()
        while True:
            with self._lock:
                if key in self._kept:
                    self._kept.move_to_end(key)
                    return _said(self._kept[key])
                making = self._making.get(key)
                if making is None:
                    self._making[key] = threading.Event()
                    break
            making.wait()  # another thread makes it: then kept, or (an error not the octets' own) made here
        try:
            found: str | PDIError = self.make(bytes(data))
        except PDIError as exc:  # the octets' own: the same octets, the same refusal
            found = exc
        except BaseException:
            with self._lock:
                self._making.pop(key).set()
            raise
        with self._lock:
            if not (isinstance(found, LimitError) and "seconds" in found.details):  # a bound of time: not kept
                self._keep(key, found)
            self._making.pop(key).set()
        return _said(found)

    def clear(self) -> None:
        """Forget every text kept."""
        with self._lock:
            self._kept.clear()
            self._characters = 0

    def _keep(self, key: str, found: str | PDIError) -> None:
        size = len(found) if isinstance(found, str) else 0
        if size > self.max_characters:
            return
        self._kept[key] = found
        self._characters += size
        while len(self._kept) > self.max_kept or self._characters > self.max_characters:
            _, dropped = self._kept.popitem(last=False)
            self._characters -= len(dropped) if isinstance(dropped, str) else 0


def _said(found: str | PDIError) -> str:
    if isinstance(found, PDIError):
        raise found.within("")  # a new one each time: one raised again would pile up its tracebacks
    return found
