"""The reader's web app: the HTML pages a person opens on the resolver.

:mod:`~pdi.server.pages.layout` (the frame every page shares),
:mod:`~pdi.server.pages.reader` (``/view``), :mod:`~pdi.server.pages.browse`
(the catalogue), :mod:`~pdi.server.pages.viewer` and its script,
:mod:`~pdi.server.pages.cite` (what the viewer needs to offer citable names,
and ``/api/cite``), :mod:`~pdi.server.pages.text_search` (``/search``) and
:mod:`~pdi.server.pages.signin` (a browser's sign-in).
"""
