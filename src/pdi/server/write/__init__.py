"""The resolver's writes, behind bearer tokens: the write API and the W3C Web Annotation Protocol server.

:mod:`~pdi.server.write.api` (deposits, versions, formats, statements) and
:mod:`~pdi.server.write.annotations` (annotation containers: read by anyone
the catalog lets, written with a token).
"""
