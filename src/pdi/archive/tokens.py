"""Bearer tokens of the write API: made, scoped, checked and revoked; only their digests are kept.

A token is ``pdi_`` and 43 characters of :func:`secrets.token_urlsafe`
(256 random bits). It is shown once, when it is made; the catalog keeps
its SHA-256 only (a token has too much entropy for a slow password hash to
add anything: GitHub and PyPI keep theirs the same way), so a copy of the
catalog reveals no token.

A token has one **role**, each including the ones before it:

* ``read`` — read the private series and embargoed documents of its scope
  (every role may: :mod:`pdi.archive.access`), and write nothing;
* ``deposit`` — mint and deposit, add versions and formats;
* ``curate`` — also make statements and withdraw;
* ``admin`` — also read the audit log and purge withdrawn octets (series and tokens themselves are
  made on the command line, by whoever holds the archive).

and a **scope**: the series it may write, each with its subseries
(``oma.eop.gov.us`` covers ``press.oma.eop.gov.us``); a token made without
series covers every series.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pdi._wording import clipped
from pdi.archive.store import TokenRecord
from pdi.errors import ParseError, ScopeError

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

#: The roles, weakest first; each may do what the ones before it may. ``mirror`` reads, and announces an archive
#: holding a copy of its series (``POST /api/mirrors``, :mod:`pdi.archive.mirroring`).
ROLES = ("read", "mirror", "deposit", "curate", "admin")

#: What a token's name may be: it names the writer in the audit log.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}\Z")

#: Every token begins so, which lets secret scanners and a reader tell what it is.
PREFIX = "pdi_"


def new_secret() -> str:
    """A new token: ``pdi_`` and 256 random bits in URL-safe base64."""
    import secrets

    return PREFIX + secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """What the catalog keeps of a token: the hex SHA-256 of its UTF-8 octets."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """A token's name as given, if it may be one (letters, digits, ``._@-``; up to 100)."""
    if not _NAME.match(name):
        raise ParseError(
            "a token's name is 1 to 100 letters, digits, '.', '_', '@' or '-', starting with a letter or digit",
            text=name, rule="token-name",
        )
    return name


def check_role(role: str) -> str:
    """``role`` if it is one of :data:`ROLES`."""
    if role not in ROLES:
        raise ParseError(f"a token's role is one of {', '.join(ROLES)}, not '{clipped(role)}'", text=role, rule="token-role")
    return role


def covers(scope: Sequence[str], series: str) -> bool:
    """Whether a token over ``scope`` (empty: every series) may write ``series``."""
    return not scope or any(series == s or series.endswith("." + s) for s in scope)


@dataclass(frozen=True)
class Writer:
    """Who writes through the API: the token presented, and the address the request came from."""

    token: TokenRecord
    address: str | None = None

    @property
    def name(self) -> str:
        """The writer as the audit log names it."""
        return f"token:{self.token.name}"

    def require(self, role: str, series: str | None = None) -> None:
        """Refuse (:class:`AccessError`) what this token's role or series does not cover."""
        if ROLES.index(self.token.role) < ROLES.index(role):
            raise ScopeError(f"token {self.token.name!r} has the role {self.token.role}; this needs {role}")
        if series is not None and not covers(self.token.series, series):
            raise ScopeError(
                f"token {self.token.name!r} may write {', '.join(self.token.series)}, not series {series}"
            )
