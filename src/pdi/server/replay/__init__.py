"""Replay of archived web pages from an origin of their own.

:mod:`~pdi.server.replay.origin` (the replay origin's app) and
:mod:`~pdi.server.replay.marks` (where a passage's marks go in a page's
source). The resolver's page that frames a replayed page is
:mod:`pdi.server.pages.replay_frame`.
"""
