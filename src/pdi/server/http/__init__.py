"""What every answer of the resolver shares: query parameters, RFC 9457 problems, preconditions, who reads.

:mod:`~pdi.server.http.params` reads a request's query (each key once, each
value in its range); :mod:`~pdi.server.http.problems` answers every error as
an RFC 9457 problem; :mod:`~pdi.server.http.conditional` reads RFC 9110's
conditional fields and one byte range; :mod:`~pdi.server.http.bodies` reads
a small body whole within its bound; :mod:`~pdi.server.http.readers` sets
each request's reader from its bearer token or sign-in cookie;
:mod:`~pdi.server.http.forwarded` reads what a trusted reverse proxy says of
the client (its scheme, host and address); :mod:`~pdi.server.http.cors` says which other
origins' scripts may read the public answers (CORS); :mod:`~pdi.server.http.middleware` is the shape of every ASGI middleware
here (HTTP requests handled, other scopes passed on). The lowest
floor of :mod:`pdi.server`: it imports nothing of the rooms above it.
"""
