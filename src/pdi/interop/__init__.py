"""Other protocols over the archive: Memento (RFC 7089), HTTP negotiation (RFC 9110 §12) and OAI-PMH 2.0.

Pure modules, values in and header values or XML out: :mod:`pdi.interop.memento`,
:mod:`pdi.interop.accept` and :mod:`pdi.interop.oaipmh`. The routes that serve
them over HTTP are :mod:`pdi.server.interop`.
"""
