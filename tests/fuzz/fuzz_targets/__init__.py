"""One module per fuzz target; each defines ``TARGET``, a :class:`fuzz_harness.Target` named as the module.

Adding a parser (WARC, say) is one file here, ``warc.py``::

    from fuzz_harness import Target

    def run(data: bytes) -> None:
        records = pdi.interop.warc.read(data)   # returns, or raises a pdi.errors.PDIError
        ...                                      # assert what must hold (a round trip)

    TARGET = Target("warc", run, warmup=b"WARC/1.1\\r\\n...", tokens=(b"WARC/1.1", b"\\r\\n\\r\\n"))

and a folder of seed inputs, ``tests/data/fuzz/warc/``, with a line in
``tests/data/README.md`` naming where they came from.
"""
