"""Other archives: who answers for a series this archive does not hold (an edge, like :mod:`pdi.capture`).

* :mod:`pdi.federation.registry` — the registry document: a signed JSON list
  of series and their resolvers' base URLs (the authority first, then
  mirrors), kept in ``registry.json`` and served signed at
  ``/.well-known/pdi-registry``.
* :mod:`pdi.federation.naptr` — DNS per RFC 3404: the NAPTR records of a
  series' domain that lead to its THTTP (RFC 2169) resolver.
* :mod:`pdi.federation.authorities` — the two put together, with caches
  (DNS TTL, the registry's max-age) and a short liveness probe, so that a
  resolver can answer ``302`` to a series' authority or, when it is down,
  to a mirror.
* :mod:`pdi.federation.rescue` — the 1990s ``I2R`` names of captured URLs
  answered from a capture held here or by a resolver the registry names.

``docs/how-to/federation.md`` is the user's guide; ``docs/reference/federation.md`` states every rule.
"""
