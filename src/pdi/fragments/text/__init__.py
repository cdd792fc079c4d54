"""Text fragments: RFC 5147, draft-wilde-text-fragment-00 and the PDI ``char``/``line`` reading.

The door of the text fragment engine; the work is done in:

* :mod:`~pdi.fragments.text.lines` — line endings: :func:`to_crlf`,
  :func:`line_ending_convention`;
* :mod:`~pdi.fragments.text.charset` — charsets and byte-order marks;
* :mod:`~pdi.fragments.text.index` — :class:`TextIndex`, positions ↔ octets
  over ``bytes`` or a memory map, at bytes-primitive speed for UTF-8;
* :mod:`~pdi.fragments.text.pdi_reading` — the PDI ``char``/``line`` schemes
  (``PDI-GRAMMAR.md`` §3) and the conversion to and from RFC 5147 counts.

Pure: no I/O (a memory map is made by the caller).
"""

from __future__ import annotations

from pdi.fragments.text.charset import DEFAULT_CHARSET, codec_name, same_charset
from pdi.fragments.text.index import TextIndex
from pdi.fragments.text.lines import (
    LINE_ENDINGS,
    from_crlf,
    line_ending_convention,
    to_crlf,
)
from pdi.fragments.text.pdi_reading import (
    canonical_index,
    canonical_octets,
    evaluate_pdi,
    pdi_to_rfc5147_char,
    rfc5147_to_pdi_char,
)

__all__ = [
    "DEFAULT_CHARSET",
    "LINE_ENDINGS",
    "TextIndex",
    "canonical_index",
    "canonical_octets",
    "codec_name",
    "evaluate_pdi",
    "from_crlf",
    "line_ending_convention",
    "pdi_to_rfc5147_char",
    "rfc5147_to_pdi_char",
    "same_charset",
    "to_crlf",
]
