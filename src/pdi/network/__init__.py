"""Other archives: mirrors of a series and polls of their copies (:mod:`.mirrors`). An edge, like :mod:`pdi.capture`."""
