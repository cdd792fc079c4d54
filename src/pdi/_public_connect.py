"""A TCP connection to a stranger's host name, made only to a public address: resolved, checked, then connected to
the address checked (so a name whose address changes between a check and the connection, DNS rebinding, still
reaches no loopback, private or link-local address).

Whose host names are a stranger's: a peer that announced itself over HTTP with a token (``POST /api/mirrors``), and
a resolver the DNS names for a series (``pdi serve --dns`` without ``--dns-private``). An operator's own choices (a
registry loaded, a peer or origin recorded by ``pdi mirror add``) are connected to wherever they are. What is
public is :func:`pdi.capture.addresses.not_public`'s to say, as for a capture.
"""

from __future__ import annotations

import logging
import socket

__all__ = ["NotPublicError", "connect_public", "public_addresses"]

log = logging.getLogger("pdi")


class NotPublicError(OSError):
    """A host name that resolves to an address that is not public (its message says which, and why)."""


def public_addresses(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, in the resolver's order, once each; :class:`NotPublicError` if any of
    them is not public (the name's every address is checked, as a capture's is: one of them would be tried), or
    ``host`` is such an address itself. :class:`OSError` if it resolves to none."""
    from pdi.capture.addresses import host_not_public, not_public

    why = host_not_public(host)
    if why is not None:
        raise NotPublicError(f"{host} is not a public address ({why})")
    found: list[str] = []
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except UnicodeError as exc:  # a label IDNA cannot encode
        raise OSError(f"{host[:200]} is not a host name that can be looked up: {exc}") from exc
    for info in infos:
        address = str(info[4][0])
        why = not_public(address)
        if why is not None:
            raise NotPublicError(f"{host} is at {address.split('%', 1)[0]}, not a public address ({why})")
        if address not in found:
            found.append(address)
    return found


def connect_public(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to ``host`` at one of its public addresses (the first that takes it within ``timeout``);
    :class:`NotPublicError` (logged) if the name leads anywhere else, :class:`OSError` if none takes it."""
    try:
        addresses = public_addresses(host, port)
    except NotPublicError as exc:
        log.warning("pdi: not connecting to %s: %s", host[:200], exc)
        raise
    last: OSError = OSError(f"{host} resolves to no address")
    for address in addresses:
        try:
            return socket.create_connection((address, port), timeout=timeout)
        except OSError as exc:
            last = exc
    raise last
