"""The resolver's answers to machines: RFC 2169 and the JSON read API, Memento and OAI-PMH, annotations.

:mod:`~pdi.server.protocol.resolver` (``/uri-res/…``, ``/api/resolve`` and
the rest of the read API), :mod:`~pdi.server.protocol.rfc2169` (the names
and URLs of RFC 2169's convention), :mod:`~pdi.server.protocol.memento_oaipmh`
(RFC 7089 TimeGates and TimeMaps, OAI-PMH 2.0),
:mod:`~pdi.server.protocol.web_annotation` (``/api/annotation``) and
:mod:`~pdi.server.protocol.reanchor` (``/api/anchor``). Their description,
``/openapi.json``, is :mod:`pdi.server.pages.api_docs`, with its page.
"""
