"""Running the resolver: worker processes, uvicorn, limits, the cache of whole answers, two origins by port.

:mod:`~pdi.server.process.run` (the socket, uvicorn, the workers),
:mod:`~pdi.server.process.limits` (the pool for expensive work, the body's
deadline), :mod:`~pdi.server.process.cache` (whole N2R answers kept in
memory), :mod:`~pdi.server.process.http11` (``pdi serve``'s own HTTP/1.1
protocol and ASGI request cycle: uvicorn's server makes it, the contract
between them pinned and fingerprinted), :mod:`~pdi.server.process.connection`
(that protocol with the request-head and send deadlines and the answers it
writes itself), :mod:`~pdi.server.process.zerocopy` (``sendfile`` of a
verified file) and :mod:`~pdi.server.process.origins` (the resolver's and
replay's apps told apart by port).
"""
