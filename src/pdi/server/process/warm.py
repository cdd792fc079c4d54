"""What a worker's first answers would import, imported once by ``pdi serve`` before it forks its workers.

The resolver imports a fragment's evaluator when it first meets one (so
that a command or a test that never evaluates one never pays for it): the
first ``#char=`` a fresh worker answered took 150-250 ms, most of it
importing numpy and the text index, and the first answer of all another
90 ms for the browser-fragment aliases. :func:`preload` imports them in
the supervisor, once, so every worker forked from it starts with them
(their pages shared with it until written) and a first read costs what the
next one does. tests/server/test_server_warm.py asks a fresh process for
every kind of answer after :func:`preload` and checks that none imported
a module of pdi, numpy or Pillow: this list is what the answers use.
"""

from __future__ import annotations

import importlib
from typing import Final

#: The modules a worker's answers import on first use.
ANSWERING: Final = (
    "pdi.interop.aliases",  # every N2R asks whether its fragment is a browser one (#:~:text=, #t=, #xywh=)
    "pdi.fragments.text.index",  # char= and line= (numpy, the compiled counter)
    "pdi.fragments.text.pdi_reading",
    "pdi.fragments.markup.index",  # elt= and name= in HTML and XML
    "pdi.fragments.image",  # regions of images (Pillow, below)
    "pdi.fragments.audio",  # intervals of sound
    "pdi.fragments.video",  # intervals of video, from what ffprobe read at deposit
)


def preload() -> None:
    """Import :data:`ANSWERING` and Pillow's common image plugins (once; what is imported already costs nothing)."""
    for name in ANSWERING:
        importlib.import_module(name)
    from PIL import Image

    from pdi.charsets import registry

    registry()  # the IANA charsets, read once (100-150 ms) for a text in a charset less common than UTF-8
    Image.preinit()  # what Image.open loads first (BMP, GIF, JPEG, PNG, PPM): the evaluator imports Pillow lazily
