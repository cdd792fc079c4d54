"""The newest registry each ``pdi serve --registry`` source was issued, kept in the catalog (schema step 26).

A signed registry stays signed: one issued before the newest a resolver
loaded from the same source, served again (by the source's host, a cache,
anyone on the path of an ``http:`` URL), would point a series back at a
resolver it has left. :mod:`pdi.federation.authorities` refuses it; this
is where the newest time it saw is kept beyond one process, so that a
restart, another worker, or another resolver on the same archive refuses it
too (:meth:`Registries.see_registry`), until an operator who went back on
purpose forgets it (:meth:`Registries.forget_registry`, ``pdi registry
forget``). The sources are named as
:func:`pdi.federation.authorities.registry_source` names them (no userinfo:
the catalog holds no password).
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING

from pdi.archive.base import ArchiveBase
from pdi.archive.naming import timestamp
from pdi.archive.store import AuditRecord
from pdi.errors import NotFoundError, ParseError

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from pdi._later import dataclass

__all__ = ["Registries", "RegistryIssued", "issued_order"]

#: A registry's ``issued`` (:mod:`pdi.federation.registry`): UTC, to the second, perhaps with a fraction of one.
_ISSUED = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z")


def issued_order(issued: str) -> str:
    """``issued`` (``2026-11-25T10:00:00Z``, ``…:00.5Z``) written so that text order is time order: its fraction of
    a second always nine digits (``2026-11-25T10:00:00.000000000Z``); the text itself compares ``…:00.5Z`` before
    ``…:00Z``. A :class:`~pdi.errors.ParseError` for any other text."""
    found = _ISSUED.fullmatch(issued)
    if found is None:
        raise ParseError(f"a registry's issued time is YYYY-MM-DDTHH:MM:SS[.fraction]Z, not {issued[:100]!r}",
                         rule="registry")
    return f"{found[1]}.{(found[2] or '').ljust(9, '0')}Z"


@dataclass(frozen=True)
class RegistryIssued:
    """What the catalog says of a registry loaded (:meth:`Registries.see_registry`): ``newer``, the newest time a
    registry of its source was issued, recorded before, when it is later than this one's (then refuse it); and
    ``unwritable``, why nothing is recorded when this process may only read the archive (``None``: recorded)."""

    newer: str | None
    unwritable: str | None = None


class Registries(ArchiveBase):
    """The newest registry each source was issued (see the module's docstring)."""

    def see_registry(self, source: str, issued: str, *, ahead: float) -> RegistryIssued:
        """Record that a registry of ``source`` issued ``issued`` verified and is about to be taken, unless one
        issued later was seen before: then nothing is recorded, and that later time is :attr:`RegistryIssued.newer`.
        A time recorded more than ``ahead`` seconds ahead of the archive's clock holds nothing back (and is
        replaced): one signed by a clock years ahead would otherwise hold back every registry until then. This
        process may only read the archive (a member of its group, a read-only file system, a hot standby): compared,
        not recorded, and :attr:`RegistryIssued.unwritable` says why."""
        from pdi.errors import ReadOnlyArchiveError

        order = issued_order(issued)
        now = self.now()
        beyond = issued_order((now + datetime.timedelta(seconds=ahead)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
        unwritable = None
        if self.store.read_only:
            recorded = self.store.registry_seen(source)
            unwritable = self.store.read_only_said()
        else:
            try:
                recorded = self.store.see_registry(source, issued, order, timestamp(now), beyond)
            except ReadOnlyArchiveError as exc:
                recorded, unwritable = self.store.registry_seen(source), str(exc)
        if recorded is not None and order < recorded[1] <= beyond:
            return RegistryIssued(recorded[0], unwritable)
        return RegistryIssued(None, unwritable)

    def registries_seen(self) -> list[tuple[str, str, str]]:
        """Every source whose newest registry is recorded: ``(source, issued, seen_at)``, by source."""
        return self.store.registries_seen()

    def forget_registry(self, source: str) -> str:
        """Forget the newest registry of ``source`` recorded (audited), so that the next one loaded from it is
        taken however old; the time it was issued. A :class:`~pdi.errors.NotFoundError` naming the sources recorded
        when ``source`` is none of them."""
        self.store.refuse_if_read_only()
        audit = AuditRecord(timestamp(self.now()), self.who, "forget registry", source,
                            "the newest registry it was issued, recorded: the next one loaded is taken, older too")
        forgotten = self.store.forget_registry(source, audit)
        if forgotten is None:
            recorded = [seen[0] for seen in self.store.registries_seen()]
            listed = ", ".join(recorded[:10]) + (f" and {len(recorded) - 10} more" if len(recorded) > 10 else "")
            raise NotFoundError(f"no registry of {source} is recorded in the archive at {self.store.location}"
                                + (f" (it records {listed})" if recorded else " (it records none)"))
        return forgotten
