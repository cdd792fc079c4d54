"""Text fragments: RFC 5147, draft-wilde-text-fragment-00 and the PDI ``char``/``line`` reading.

The door of the text fragment engine; the work is done in:

* :mod:`~pdi.fragments.text.lines` — line endings: :func:`to_crlf`,
  :func:`line_ending_convention`;
* :mod:`~pdi.fragments.text.charset` — charsets and byte-order marks;
* :mod:`~pdi.fragments.text.index` — :class:`TextIndex`, positions ↔ octets
  over ``bytes`` or a memory map, at memory speed for UTF-8;
* :mod:`~pdi.fragments.text.table` — :class:`TextTable`, the index's block
  table made once from a stream of chunks, kept as sealed octets;
* :mod:`~pdi.fragments.text.counting` — the block counter of cold queries
  (one pass of the compiled ``_count`` module, or numpy passes where it was
  not built; blocks shared between threads);
* :mod:`~pdi.fragments.text.rfc5147` — RFC 5147: :class:`TextFragment`,
  :func:`evaluate_rfc5147`, :func:`make_rfc5147`;
* :mod:`~pdi.fragments.text.wilde` — draft-wilde-text-fragment-00:
  :class:`WildeFragment`, :func:`evaluate_wilde`;
* :mod:`~pdi.fragments.text.bre` — POSIX BRE on linear-time RE2;
* :mod:`~pdi.fragments.text.pdi_reading` — the PDI ``char``/``line`` schemes
  (``PDI-GRAMMAR.md`` §3) and the conversion to and from RFC 5147 counts.

Pure: no I/O (a memory map is made by the caller).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pdi._lazy import exports

if TYPE_CHECKING:
    from pdi.fragments.text.bre import bre_to_re2, compile_bre
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
        parse_pdi_text_fragment,
        pdi_to_rfc5147_char,
        rfc5147_to_pdi_char,
    )
    from pdi.fragments.text.rfc5147 import (
        CheckOutcome,
        IntegrityCheck,
        TextFragment,
        TextSelection,
        evaluate_rfc5147,
        make_rfc5147,
        run_checks,
    )
    from pdi.fragments.text.table import TextTable
    from pdi.fragments.text.wilde import WildeFragment, WildePart, evaluate_wilde
else:  # loaded when first asked for (pdi._lazy): a char= fragment loads no BRE compiler
    __getattr__, __dir__ = exports(__name__, {
        "bre": "bre_to_re2 compile_bre", "charset": "DEFAULT_CHARSET codec_name same_charset",
        "index": "TextIndex", "lines": "LINE_ENDINGS from_crlf line_ending_convention to_crlf",
        "pdi_reading": "canonical_index canonical_octets evaluate_pdi parse_pdi_text_fragment pdi_to_rfc5147_char rfc5147_to_pdi_char",
        "rfc5147": "CheckOutcome IntegrityCheck TextFragment TextSelection evaluate_rfc5147 make_rfc5147 run_checks",
        "table": "TextTable", "wilde": "WildeFragment WildePart evaluate_wilde",
    })

__all__ = [
    "DEFAULT_CHARSET", "LINE_ENDINGS", "CheckOutcome", "IntegrityCheck", "TextFragment",
    "TextIndex", "TextSelection", "TextTable", "WildeFragment", "WildePart", "bre_to_re2",
    "canonical_index", "canonical_octets", "codec_name", "compile_bre", "evaluate_pdi",
    "evaluate_rfc5147", "evaluate_wilde", "from_crlf", "line_ending_convention", "make_rfc5147",
    "parse_pdi_text_fragment", "pdi_to_rfc5147_char", "rfc5147_to_pdi_char", "run_checks",
    "same_charset", "to_crlf",
]
