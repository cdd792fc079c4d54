"""Running the resolver: worker processes, uvicorn, limits, the cache of whole answers, two origins by port.

:mod:`~pdi.server.process.run` (the socket, uvicorn, the workers),
:mod:`~pdi.server.process.limits` (the pool for expensive work, the body's
deadline), :mod:`~pdi.server.process.cache` (whole N2R answers kept in
memory), :mod:`~pdi.server.process.connection` (``pdi serve``'s HTTP/1.1
protocol: the one place that uses uvicorn's internals, pinned and
fingerprinted), :mod:`~pdi.server.process.zerocopy` (``sendfile`` of a
verified file) and :mod:`~pdi.server.process.origins` (the resolver's and
replay's apps told apart by port).
"""
