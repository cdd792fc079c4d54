"""Replay of archived web pages: their own origin, and the resolver's page that frames them.

:mod:`~pdi.server.replay.origin` (the replay origin's app),
:mod:`~pdi.server.replay.page` (the resolver's banner page around the frame)
and :mod:`~pdi.server.replay.marks` (where a passage's marks go in a page's
source).
"""
