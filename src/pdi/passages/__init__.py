"""Passages of a document's text, the pure cores below ``fragments/`` and ``archive/``: text in, positions out.

* :mod:`pdi.passages.scan`: the one lexical reading of HTML and XML source
  that the full-text index and the page text share (tags with their quoted
  attribute values, comments, raw-text and RCDATA elements, character
  references), and why html5lib and the standard ``HTMLParser`` stay beside it;
* :mod:`pdi.passages.fulltext`: the passages a document is indexed as for
  search, the reader's query, and what a match marks;
* :mod:`pdi.passages.reanchor`: re-anchoring a cited passage in another
  version of its document.

The archive's sides of these are :mod:`pdi.archive.search` and
:mod:`pdi.archive.anchoring`. Nothing here imports from pdi but
:mod:`pdi.errors`. Pure: no I/O.
"""
