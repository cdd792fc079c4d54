"""References (URIs) inside HTML and CSS, with their source offsets (RFC 2557 §8).

HTML tokenizer: the standard library's :class:`html.parser.HTMLParser`. It is the
tokenizer ARCHITECTURE.md names, it has no dependency, it never raises on bad
markup (it is tolerant like a browser's: unclosed quotes, stray ``<``, junk
attributes), and its parts (where a start tag ends, its attribute grammar, end tags,
declarations) can be driven one construct at a time. Where it reads markup otherwise than
HTML's tokenizer (WHATWG HTML §13.2.5) so that it would miss a tag a browser sees, it
is corrected here (:class:`~pdi.mhtml.refs.collector.Collector`): comments end at ``-->``, ``--!>`` or at once
(``<!-->``); ``<![…`` is a bogus comment to the first ``>`` (html.parser took
``<![x[`` for an SGML marked section and raised ``AssertionError``); ``<script>``,
``<style>``, ``<title>``, ``<textarea>``, ``<xmp>``, ``<iframe>``, ``<noembed>``,
``<noframes>``, ``<noscript>`` and ``<plaintext>`` hold text up to their own end tag
(``</style `` and ``</style/`` end it too; a script's text follows the escaped and
double-escaped states), but not inside ``<svg>`` or ``<math>``, whose namespaces are
tracked as the tree builder does (§13.2.6.5: integration points, the tags that break
out); an SVG ``<style>``'s text and CDATA sections are CSS all the same. What a
browser reads as text and html.parser as a tag is left so (one reference too many).
``<noscript>`` is read both ways (scripting on and off). Attribute value offsets are
not reported by html.parser, so each start tag is read here in place, with the
parser's attribute grammar, white space being HTML's
(ASCII only: a no-break space belongs to a value); an entity in a
value (``&amp;``, ``&quot;``) is decoded in :attr:`Reference.url` while
``start``/``end`` span the raw text, so a writer can replace ``text[start:end]``.
The document in an ``<iframe srcdoc>`` value is read the same way, recursively (at
most :data:`MAX_SRCDOC_DEPTH` deep), its references given offsets in the outer text.
html5lib would give a spec-exact tree but no source offsets for attributes, and
lxml none at all; html5lib is the oracle the tests compare with.

Cost: the collector runs html.parser's main loop itself (:meth:`~pdi.mhtml.refs.collector.Collector.goahead`),
keeping the index of what it reads instead of html.parser's line and column (which
would need a table of line starts: 36 bytes a line), passing over runs of text, end
tags and plain start tags (``<p>``) in one regular-expression search, and copying out
neither text nor tags nor attribute values except the values it reports. Memory is the
text and the references found; time is linear, and bounded: reading charges a
:class:`~pdi.mhtml.limits.Budget` (time, and references found), a
:class:`~pdi.errors.LimitError` past either. A tag is read an attribute at a time (html.parser
read a start tag in one match of a regular expression, which keeps some 150 octets for each
repetition of a group: a tag of millions of attributes or spaces took gigabytes), and a start
tag of more than :data:`~pdi.mhtml.limits.MAX_ATTRIBUTES` attributes is a
:class:`~pdi.errors.LimitError`.

CSS: a small scanner for what CSS Syntax Level 3 tokenizes as ``url(…)`` (quoted or
not), ``@import "…"`` and ``@import url(…)``, and the strings of ``image-set(…)``
(CSS Images 4: they are URLs too), passing over comments and other strings;
CSS escapes are decoded in ``url``.

Kinds: ``src`` (img, script, input, embed, audio, video, source, track, and the
``href``/``xlink:href`` of inline SVG's image, use and feImage, and the values an SVG
``<set>`` or ``<animate>`` of ``href`` gives one of them), ``frame`` (frame and iframe
``src``), ``srcset`` (one reference per candidate of ``srcset`` and of link
``imagesrcset``), ``stylesheet`` (link rel=stylesheet), ``icon`` (link rel=icon and
similar), ``href`` (a, area, other links: navigation, not needed to render the page; and
the values an SVG ``<set>`` or ``<animate>`` of ``href`` gives any other element, its
``to``, ``from``, ``by`` and each item of its ``values``: a browser follows them as the
element's link), ``action`` (form ``action``, button and input ``formaction``), ``ping``
(a and area, one reference per URL), ``refresh`` (the URL of ``<meta http-equiv=refresh>``,
WHATWG HTML §7.11.1), ``poster`` (video), ``data`` (object), ``background`` (the old
``background`` attribute), ``style-url`` (``url()`` in a ``style`` attribute, a
``<style>`` element, an SVG presentation attribute such as ``fill`` or a CSS part),
``import`` (CSS ``@import``) and ``base`` (``<base href>``).

The parts: :mod:`~pdi.mhtml.refs.reference` (:class:`Reference`, the kinds, and the
value helpers: entities with their offsets, ``srcset``, ``refresh``),
:mod:`~pdi.mhtml.refs.markup` (how a browser splits HTML into markup and text, and a
start tag's attributes read in place), :mod:`~pdi.mhtml.refs.collector` (html.parser
driven over a page) and :mod:`~pdi.mhtml.refs.css`; they import one way, in that
order, but :mod:`~pdi.mhtml.refs.css` before the collector.
"""

from __future__ import annotations

from pdi.mhtml.refs.collector import MAX_SRCDOC_DEPTH, html_base, html_references, scan_html
from pdi.mhtml.refs.css import css_references
from pdi.mhtml.refs.reference import INLINE_KINDS, Reference, refresh_url

__all__ = [
    "INLINE_KINDS",
    "MAX_SRCDOC_DEPTH",
    "Reference",
    "css_references",
    "html_base",
    "html_references",
    "refresh_url",
    "scan_html",
]
