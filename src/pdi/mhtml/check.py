"""Checks of an aggregate: what RFC 2557 §7 forbids and what the page misses.

Errors (the file breaks a MUST): two body parts of one multipart/related with the
same Content-ID, or whose Content-Locations resolve to the same URI (§7; compared as
the reader compares them, percent-encoded and with their fragment, so ``a.png`` and
``a.png#x``, which Chromium writes for one image shown both ways, are two URIs;
Content-IDs are compared across the whole file, since they must be globally unique) unless the
two are the same resource (same type, charset and bytes: Chromium saves an SVG
document once for each ``<object>`` or frame that shows it, each with its own
``cid:``, and a reference by URI gets the same bytes whichever part it finds); a
``start`` parameter naming no body part (RFC 2387).

Warnings: parts nobody references (the root, and the other alternatives of a used
multipart/alternative, excepted), references a page needs to
render (``img src``, stylesheets, frames, CSS ``url()`` …) that no part satisfies,
and every recovery the parser made. Unsatisfied ``<a href>`` links are counted but
are not findings: a saved page is not expected to hold the pages it links to.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdi.mhtml.locations import location_key
from pdi.mhtml.model import Aggregate, Multipart, Part
from pdi.mhtml.resolve import ResolvedReference


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: ``severity`` is ``"error"`` or ``"warning"``; ``code`` a stable name."""

    severity: str
    code: str
    message: str
    part: int | None = None

    def __str__(self) -> str:
        where = f" (part {self.part})" if self.part is not None else ""
        return f"{self.severity}: {self.code}{where}: {self.message}"


@dataclass(frozen=True)
class CheckReport:
    """The findings of :func:`check` and the resolved references they come from."""

    findings: tuple[Finding, ...]
    references: tuple[ResolvedReference, ...]
    unsatisfied_links: int

    @property
    def errors(self) -> tuple[Finding, ...]:
        """Findings of severity ``error``."""
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        """Findings of severity ``warning``."""
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when there is no error."""
        return not self.errors


def _label(node: Part | Multipart) -> str:
    return f"part {node.index}" if isinstance(node, Part) else f"multipart {node.id}"


def _same_resource(first: Part | Multipart, other: Part | Multipart) -> bool:
    """Two parts that are one resource twice: a reference to their URI gets the same bytes
    whichever it finds (Chromium saves an SVG document once for each frame showing it)."""
    return (
        isinstance(first, Part)
        and isinstance(other, Part)
        and first.content_type == other.content_type
        and (first.charset or "").lower() == (other.charset or "").lower()
        and first.data == other.data
    )


def check(agg: Aggregate) -> CheckReport:
    """Check ``agg`` (see the module docstring for what is an error and what a warning)."""
    findings: list[Finding] = []
    for w in agg.warnings:
        findings.append(Finding("warning", "parse-recovery", w))

    nodes: list[Part | Multipart] = list(agg.tree.walk()) if agg.tree is not None else [agg.root]
    seen_cid: dict[str, Part | Multipart] = {}
    for node in nodes:
        if node.content_id is None:
            continue
        first = seen_cid.setdefault(node.content_id, node)
        if first is not node:
            findings.append(
                Finding(
                    "error",
                    "duplicate-content-id",
                    f"Content-ID <{node.content_id}> of {_label(node)} already labels {_label(first)} "
                    "(the first wins)",
                    node.index if isinstance(node, Part) else None,
                )
            )
    for mp in agg.multiparts:
        seen_loc: dict[str, Part | Multipart] = {}
        for child in mp.children:
            if child.location is None:
                continue
            key = location_key(child.location)  # a.png and a.png#x are two URIs (§7), as Chromium writes them
            first = seen_loc.setdefault(key, child)
            if first is not child and not _same_resource(first, child):
                findings.append(
                    Finding(
                        "error",
                        "duplicate-location",
                        f"Content-Location of {_label(child)} resolves to {child.location}, "
                        f"as that of {_label(first)} does (the first wins)",
                        child.index if isinstance(child, Part) else None,
                    )
                )
        if mp.start is not None and not mp.start_found:
            findings.append(
                Finding(
                    "error",
                    "missing-start",
                    f"start=<{mp.start}> of multipart {mp.id} names no body part",
                )
            )

    refs = agg.references
    targeted = {id(r.target) for r in refs if r.target is not None}
    targeted.add(id(agg.root))
    by_id = {mp.id: mp for mp in agg.multiparts}
    for part in agg.parts:
        parent = by_id.get(part.scope[-1]) if part.scope else None
        if (
            parent is not None
            and parent.content_type == "multipart/alternative"
            and id(parent.root) in targeted
        ):
            continue  # another rendering of a part that is used
        if id(part) not in targeted:
            findings.append(
                Finding(
                    "warning",
                    "unreferenced-part",
                    f"{part.content_type} {part.location or part.content_id or ''} is referenced by no part".replace(
                        "  ", " "
                    ),
                    part.index,
                )
            )
    links = 0
    for r in refs:
        if r.status != "unsatisfied":
            continue
        if not r.reference.inline:
            links += 1
            continue
        findings.append(
            Finding(
                "warning",
                "unsatisfied-reference",
                f"{r.reference.kind} {r.reference.url!r} -> {r.uri} is in no part",
                r.source.index,
            )
        )
    return CheckReport(tuple(findings), refs, links)
