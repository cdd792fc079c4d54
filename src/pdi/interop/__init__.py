"""Interoperation: pdi names and archived documents in the formats, syntaxes and protocols of other tools.

* :mod:`pdi.interop.aliases`: browser fragment syntaxes on a PDI (WICG text
  directives ``#:~:text=``, Media Fragments ``#t=`` and ``#xywh=``) named as
  the native fragment they equal;
* :mod:`pdi.interop.annotation`: W3C Web Annotations (and Hypothesis
  exports) of fragment names and citations, out and back in;
* :mod:`pdi.interop.warc` and :mod:`pdi.interop.wacz`: other archives'
  formats, in and out (what a page is made of is built by the capture path,
  :mod:`pdi.capture.crawl`, never a second time here);
* :mod:`pdi.interop.memento`, :mod:`pdi.interop.accept` and
  :mod:`pdi.interop.oaipmh`: Memento (RFC 7089), HTTP negotiation (RFC 9110
  §12) and OAI-PMH 2.0, pure modules (values in, header values or XML out)
  that :mod:`pdi.server.protocol.memento_oaipmh` serves over HTTP.

Edges over the archive: they read it (and the WARC import deposits through
:class:`pdi.archive.Archive`); the cores know nothing of them.
"""
