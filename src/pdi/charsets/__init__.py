"""Charsets in one place: what a charset name means, and which encoding a browser reads bytes in.

The door of the package. Two standards name the encodings of text, and they disagree
on purpose (``iso-8859-1`` is ISO-8859-1 to IANA and windows-1252 to a browser), so
each has its own module:

* :mod:`pdi.charsets.iana` — charset names by the IANA Character Sets registry
  (RFC 2978 §2; "the same charset" of RFC 5147 §2.3): for a charset someone names —
  ``--charset``, a deposit's charset, a format token, an integrity check, an RFC 2047
  encoded word. :func:`lookup`, :func:`codec_for`, :func:`iana_name`,
  :func:`same_charset`, :func:`registry`, :class:`Charset`.
* :mod:`pdi.charsets.sniff` — the encoding of bytes a browser would read, and their
  decoding (WHATWG Encoding §4.2 labels, §6.1 *BOM sniff*; HTML §13.2.3.2 *prescan*;
  CSS Syntax §3.2 ``@charset``): the text parts of MHTML files, HTML stored without a
  charset, the resolver's viewer. Its entry points are here under names that say they
  are WHATWG's (the module's own names are ``sniff``, ``lookup`` and ``decode``, and
  ``lookup`` is the IANA one here): :func:`sniff_encoding`, :func:`whatwg_encoding`,
  :func:`whatwg_decode`, :func:`bom_encoding`, :func:`meta_charset`,
  :func:`css_charset`. The finer pieces (the label table ``LABELS``,
  ``single_byte_table``, ``codec_name``) are imported from the module itself.
* :mod:`pdi.charsets.rfc2047` — a header field's RFC 2047 encoded words, found and
  decoded as :func:`email.header.decode_header` does, in linear time.

Pure: no I/O but reading the package's own registry file, and nothing of pdi's but
:mod:`pdi.errors` and :mod:`pdi._lazy` (the cores use nothing of pdi's above them; a test
checks it). The WHATWG names load :mod:`pdi.charsets.sniff` when first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pdi._lazy import exports
from pdi.charsets.iana import (
    CODEC_TABLE,
    NOT_CHARSETS,
    Charset,
    byte_order,
    codec_for,
    iana_name,
    lookup,
    near_charsets,
    registry,
    registry_updated,
    same_charset,
)

if TYPE_CHECKING:
    from pdi.charsets.sniff import (
        bom_encoding,
        css_charset,
        meta_charset,
        sniff_encoding,
        whatwg_decode,
        whatwg_encoding,
    )
else:  # the WHATWG side is loaded when first asked for (a name's charset needs only IANA's)
    __getattr__, __dir__ = exports(__name__, {
        "sniff": "bom_encoding css_charset meta_charset sniff_encoding whatwg_decode whatwg_encoding",
    })

__all__ = [
    "CODEC_TABLE",
    "NOT_CHARSETS",
    "Charset",
    "bom_encoding",
    "byte_order",
    "codec_for",
    "css_charset",
    "iana_name",
    "lookup",
    "meta_charset",
    "near_charsets",
    "registry",
    "registry_updated",
    "same_charset",
    "sniff_encoding",
    "whatwg_decode",
    "whatwg_encoding",
]
