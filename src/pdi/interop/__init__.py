"""Other archives' formats, in and out: WARC and WACZ (:mod:`pdi.interop.warc`, :mod:`pdi.interop.wacz`).

Edges over the archive: they read and write files and call
:class:`pdi.archive.Archive`; what a page is made of is built by the
capture path (:mod:`pdi.capture.crawl`), never a second time here.
"""
