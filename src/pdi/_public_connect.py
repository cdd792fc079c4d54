"""A stranger's host name looked up within a time and its addresses checked to be public: what a connection to it is
made to (:mod:`pdi._answer_head`'s client connects to the addresses checked, so a name whose address changes
between a check and the connection, DNS rebinding, still reaches no loopback, private or link-local address).

Whose host names are a stranger's: a peer that announced itself over HTTP with a token (``POST /api/mirrors``), and
a resolver the DNS names for a series (``pdi serve --dns`` without ``--dns-private``). An operator's own choices (a
registry loaded, a peer or origin recorded by ``pdi mirror add``) are connected to wherever they are. What is
public is :func:`pdi._addresses.not_public`'s to say, as for a capture.
"""

from __future__ import annotations

from pdi._lookups import look_up_within

__all__ = ["LOOKUP_SECONDS", "NotPublicError", "addresses_within", "public_addresses"]

#: Seconds a host name's lookup may take when the caller gives no time of its own (the system resolver's own is 30 s
#: and more, with its retries and search domains).
LOOKUP_SECONDS = 10.0


class NotPublicError(OSError):
    """A host name that resolves to an address that is not public (its message says which, and why)."""


def public_addresses(host: str, port: int, seconds: float = LOOKUP_SECONDS) -> list[str]:
    """Every address ``host`` resolves to, in the resolver's order, once each; :class:`NotPublicError` if any of
    them is not public (the name's every address is checked, as a capture's is: one of them would be tried), or
    ``host`` is such an address itself. :class:`OSError` if it resolves to none, or not within ``seconds``."""
    return addresses_within(host, port, seconds, public_only=True)


def addresses_within(host: str, port: int, seconds: float, *, public_only: bool = False) -> list[str]:
    """Every address ``host`` resolves to within ``seconds``, in the resolver's order, once each (:class:`OSError`
    if none, or not in time); with ``public_only``, as :func:`public_addresses`: each of them checked."""
    from pdi._addresses import host_not_public, not_public

    why = host_not_public(host) if public_only else None
    if why is not None:
        raise NotPublicError(f"{host} is not a public address ({why})")
    found: list[str] = []
    for info in look_up_within(host.strip("[]"), port, seconds):
        address = str(info[4][0])
        why = not_public(address) if public_only else None
        if why is not None:
            raise NotPublicError(f"{host} is at {address.split('%', 1)[0]}, not a public address ({why})")
        if address not in found:
            found.append(address)
    return found
