"""The reader's web app: the HTML pages a person opens on the resolver; the top room of :mod:`pdi.server`.

:mod:`~pdi.server.pages.layout` (the frame every page shares),
:mod:`~pdi.server.pages.reader` (``/view``), :mod:`~pdi.server.pages.browse`
(the catalogue; :mod:`~pdi.server.pages.document_page` a document's page, and
:mod:`~pdi.server.pages.catalogue` what both share), :mod:`~pdi.server.pages.viewer` and its script,
:mod:`~pdi.server.pages.replay_frame` (an archived page under a banner,
framed from the replay origin), :mod:`~pdi.server.pages.cite` (what the
viewer needs to offer citable names, and ``/api/rfc5147``),
:mod:`~pdi.server.pages.text_search` (``/search``),
:mod:`~pdi.server.pages.signin` (a browser's sign-in) and
:mod:`~pdi.server.pages.api_docs` (``/openapi.json`` and its page ``/api``,
made from every room's routes and the catalogue of what each is,
:mod:`~pdi.server.pages.api_operations`).
"""
