"""A series' resolvers found in the DNS: NAPTR records (RFC 3403) read as RFC 3404 says for URNs.

pdi names are delegated by series, and a series is a domain name (the
draft's §2.2), so the lookup starts at the series' domain: for
``urn:pdi://oma.eop.gov.us/…`` the NAPTR records of ``oma.eop.gov.us``.
(RFC 3404 §3's first well-known rule would start at ``pdi.urn.arpa``; a
rule published there would be ``!^urn:pdi://([^/]+)/.*$!\\1!``, which
yields the same domain, so it is taken as read.) Then, for each record,
lowest ``order`` first and within one order lowest ``preference`` first
(RFC 3403 §4.1: once a record of one order matches, no other order is
considered):

* the flags (RFC 3404 §4.3, one letter, case-insensitive): ``U`` — terminal,
  the ``regexp`` applied to the whole URN gives a URI, the resolver's
  THTTP base (an output holding ``/uri-res/`` is cut before it); ``S`` —
  terminal, the ``replacement`` is looked up as SRV (RFC 2782) and each
  target and port makes ``http://target:port/`` (a target of ``.``,
  "decidedly not available", or port 0, at which no service is reached:
  skipped, and logged); ``A`` — terminal, the
  ``replacement`` is the host, ``http://host/``; empty — not terminal, the
  next NAPTR lookup is at the ``replacement`` (or the ``regexp``'s output),
  at most :data:`MAX_HOPS` times (a chain that leads on further, such as a
  loop, is a failure: said, when no resolver is found, never "no records"); ``P`` — what follows is the
  protocol's own rules (§4.3), and THTTP has none: skipped, and logged; any other flag, or more than one: skipped,
  and logged (RFC 3403 §4.1);
* the ``service`` field (RFC 3404 §4.4: ``[ [protocol] *("+" rs)]``, each
  label a letter and at most 31 more letters or digits; a terminal
  record's field outside that grammar, ``THTTP+N2R+`` or ``+2NR``, is
  malformed: skipped, and logged): the protocol must be ``THTTP`` (RFC
  2169's convention, ``http``; ``http`` and ``https`` are read too) or none
  (``+N2R``, or the empty field: the ABNF makes the protocol optional in
  any record, and RFC 3404, unlike RFC 2168 which it obsoletes, does not
  require one of a terminal record; THTTP is the only protocol §4.4.2
  defines for URI resolution, so it is the one meant), and a terminal
  record is used for the resolution services it lists
  (``THTTP+N2R+N2L+N2Ls``, ``+N2R``; none listed: all). A record for
  another protocol (``z3950``, ``rcds``, ``E2U+sip``) is skipped, and so is
  ``N2R`` alone, a protocol by that grammar (said in the log);
* the ``regexp`` (RFC 3402 §3.2: ``delim ere delim repl delim [i]``) is
  matched with RE2, in linear time, whoever wrote it, leftmost-longest as a
  POSIX ERE is (``(a|ab)`` takes ``ab``); ``\\1``–``\\9`` in
  ``repl`` are the groups, ``\\0`` none ("0 is not an allowed backref"): a rule that holds it is malformed,
  skipped and logged, as is any rule that is no substitution expression. In the ERE and in ``repl`` a
  backslash before any other character is that character, literally (the delimiter's among them: ``\\.``
  with ``.`` as the delimiter is a dot, not any character), ``\\\\`` a backslash; a backslash before a digit
  in the ERE (a backreference, which an ERE has not) makes the rule malformed.

Only ``http`` and ``https`` base URLs are ever produced; anything else a
record yields (``ftp:``, ``javascript:``, a malformed URL) is dropped. Every
answer is kept for its TTL (at most :data:`MAX_TTL`), a domain with no
records for :data:`NEGATIVE_TTL` seconds; a query the server could not answer
(no answer in time, ``SERVFAIL``, a malformed message) is a failure, kept as
one for :data:`FAILED_TTL` seconds and never as "no records": when no resolver
is found, :meth:`NaptrFinder.services` raises :class:`~pdi.errors.RemoteError`
naming the server, the domain and what went wrong. Each query has a deadline
(:data:`QUERY_SECONDS`), one name costs at most :data:`MAX_LOOKUPS`
look-ups within :data:`NAME_SECONDS`, and at most :data:`MAX_RECORDS` records of an answer are read, the best ranked.
"""

from __future__ import annotations

import functools
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pdi._wording import clipped
from pdi.errors import ParseError, RemoteError
from pdi.federation.registry import base_url

__all__ = ["MAX_HOPS", "NaptrFinder", "Service", "apply_regexp"]

log = logging.getLogger("pdi.federation")

#: Seconds one DNS query may take (the resolver answers a stranger: no long waits).
QUERY_SECONDS = 2.0
#: Non-terminal NAPTR records followed for one name.
MAX_HOPS = 4
#: Seconds all the look-ups of one name may take.
NAME_SECONDS = 4.0
#: DNS look-ups (NAPTR and SRV, answered from the cache or not) one name may cost.
MAX_LOOKUPS = 12
#: Records of one answer read (an answer is bounded by the DNS message, 64 KiB over TCP, anyway).
MAX_RECORDS = 32
#: The longest an answer is kept, whatever its TTL.
MAX_TTL = 86_400
#: How long a domain with no NAPTR records (or a failed query) is remembered as such.
NEGATIVE_TTL = 60
#: How long a query the DNS server could not answer is remembered as a failure (RFC 2308 §7.1: at most 5 minutes).
FAILED_TTL = 10
#: Domains whose answers are kept at once.
MAX_KEPT = 4096
_PROTOCOLS = {"thttp": "http", "http": "http", "https": "https"}


@dataclass(frozen=True)
class Service:
    """A resolver the DNS names: its base URL, the RFC 2169 services its record lists (empty: all), and the
    record's order and preference."""

    base: str
    services: frozenset[str]
    order: int
    preference: int

    def offers(self, service: str) -> bool:
        return not self.services or service.lower() in self.services


def apply_regexp(regexp: str, subject: str) -> str | None:
    """An RFC 3402 §3.2 substitution expression applied to ``subject``: its output, or ``None`` if it does
    not match; :class:`ParseError` if it is not one."""
    if len(regexp) < 3:
        raise ParseError("a NAPTR regexp is delim ere delim repl delim [i]", text=regexp[:200], rule="naptr-regexp")
    if "\0" in regexp:  # BIND refuses such a record too (txt_valid_regex: "Don't allow embedded NULs")
        raise ParseError("a NAPTR regexp holds a NUL octet", text=regexp[:200], rule="naptr-regexp")
    delim = regexp[0]
    if delim == "\\" or delim.isdigit() or delim == "i":
        raise ParseError(f"{delim!r} cannot delimit a NAPTR regexp (RFC 3402 §3.2)", text=regexp[:200],
                         rule="naptr-regexp")
    fields: list[str] = []
    current: list[str] = []
    escaped = False
    for char in regexp[1:]:
        if escaped:  # kept escaped, the delimiter too: a literal in the ERE and in repl (_literal_ere, below)
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == delim:
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    flags = "".join(current)
    # a backslash that ends the expression escapes nothing: it is no flag, and no part of one (nor of ``repl``)
    # ``*flags``, each ``"i"`` (RFC 3402 §3.2): ``ii`` is the flag said twice, as BIND's check of a zone reads it
    if len(fields) != 2 or flags.strip("i") or escaped:
        raise ParseError("a NAPTR regexp is delim ere delim repl delim [i]", text=regexp[:200], rule="naptr-regexp")
    ere, repl = fields
    pattern = _compiled(_literal_ere(ere), not flags)
    pieces: list[str | int] = []  # the repl's text and group numbers, read whether the rule matches or not
    i = 0
    while i < len(repl):
        char = repl[i]
        if char == "\\" and i + 1 < len(repl):
            following = repl[i + 1]
            if "1" <= following <= "9":  # POS_DIGIT, %x31-39 (str.isdigit is true of "²" and "١" too)
                group = int(following)
                if group > pattern.groups:
                    raise ParseError(f"the NAPTR regexp's repl names group {group} of {pattern.groups}",
                                     text=repl[:200], rule="naptr-regexp")
                pieces.append(group)
            elif following == "0":
                # "0 is not an allowed backref" (RFC 3402 §3.2): GNU sed's whole match, or a zone's \DDD octet
                # (\046, a ".") that reached the wire as written (dnsmasq's --naptr-record sends it so): read as "0",
                # it made another host ("r\046example.org" gave r046example.org)
                raise ParseError("the NAPTR regexp's repl holds \\0, which is no backref (RFC 3402 §3.2: groups are"
                                 " \\1 to \\9, \"0 is not an allowed backref\"), nor an octet (a \\DDD escape of"
                                 " a zone file is an octet before it reaches the wire)", text=repl[:200],
                                 rule="naptr-regexp")
            else:
                pieces.append(following)
            i += 2
            continue
        pieces.append(char)
        i += 1
    found = pattern.search(subject)
    if found is None:
        return None
    return "".join(piece if isinstance(piece, str) else found.group(piece) or "" for piece in pieces)


#: The characters RE2 reads as themselves after a backslash (its escapes of punctuation); a backslash before any
#: other (a letter: ``\\d``, ``\\x``, ``\\p``; a space; a non-ASCII character) would be one of RE2's own classes or
#: escapes, or no expression at all.
_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _literal_ere(ere: str) -> str:
    """The ERE of a NAPTR regexp (its escapes as written, the delimiter's among them) as RE2 reads it to the same
    effect: a backslash before any character but a digit is that character, literally (RFC 3402 §3.2's
    ``escapeddelim``; POSIX leaves ``\\`` before an ordinary character undefined, and RE2 would read ``\\d``,
    ``\\w`` or ``\\b`` as its own classes: found in review, 2026-12-01, ``\\.`` with ``.`` as the delimiter, and
    ``\\|`` with ``|``, were a wildcard and an alternation); ``\\\\`` a backslash. Before a digit it would be a
    backreference, which an ERE has not (RE2 neither; and ``\\0`` was a NUL octet): :class:`ParseError`."""
    if "\\" not in ere:
        return ere
    made: list[str] = []
    i = 0
    while i < len(ere):
        char = ere[i]
        if char != "\\":
            made.append(char)
            i += 1
            continue
        following = ere[i + 1]  # every backslash of a field is followed (the split keeps them in pairs)
        if "0" <= following <= "9":
            raise ParseError(f"the NAPTR regexp's ERE holds \\{following}, a backreference, which a POSIX ERE has not"
                             " (RFC 3402 §3.2)", text=ere[:200], rule="naptr-regexp")
        made.append("\\" + following if following in _PUNCTUATION else following)
        i += 2
    return "".join(made)


@functools.lru_cache(maxsize=256)
def _compiled(ere: str, case_sensitive: bool) -> Any:
    """An ERE compiled by RE2 (at most 1 MiB of its memory), kept: the same few rules come back at each TTL."""
    import re2

    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.longest_match = True  # a POSIX ERE (RFC 3402 §3.2) matches leftmost-longest, not first-alternative-first
    options.max_mem = 1 << 20
    options.log_errors = False  # RE2 would write a stranger's expression, escapes and all, to standard error
    try:
        return re2.compile(ere, options)
    except re2.error as exc:
        raise ParseError(f"the NAPTR regexp's ERE does not compile: {exc}", text=ere[:200],
                         rule="naptr-regexp") from None


def _thttp_base(uri: str) -> str | None:
    """The THTTP base URL of a ``U`` record's output (``…/uri-res/N2R?…`` cut to ``…/``), if it is http(s)."""
    cut = uri.find("/uri-res/")
    try:
        return base_url(uri[:cut + 1] if cut >= 0 else uri.split("?", 1)[0].split("#", 1)[0])
    except ParseError:
        return None


#: A protocol or a resolution service of a service field (RFC 3404 §4.4: ``ALPHA *31ALPHANUM``, ASCII as RFC 2234's
#: ALPHA and DIGIT are: "limited to 32 characters and must start with an alphabetic").
_LABEL = r"[A-Za-z][A-Za-z0-9]{0,31}"
#: RFC 3404 §4.4's ``service_field = [ [protocol] *("+" rs)]``.
_SERVICE_FIELD = re.compile(rf"(?:{_LABEL})?(?:\+{_LABEL})*")


def _parse_service(field: str) -> tuple[str, frozenset[str]] | None:
    """``(scheme, services)`` of a terminal NAPTR record's service field, ``[ [protocol] *("+" rs)]`` (RFC 3404
    §4.4: an optional protocol, then each service after a ``+``; the empty field too), when its protocol is THTTP
    (or http, https) or none: THTTP is the one protocol RFC 3404 §4.4.2 defines for URI resolution, over http. Else
    ``None``: another protocol's record (``z3950``, ``N2R`` alone: a protocol by that grammar). A field the grammar
    does not make (a ``+`` with no service after it, a label of more than 32 characters or that starts with a
    digit or holds another character) is a :class:`ParseError` saying so: a malformed record, skipped."""
    if _SERVICE_FIELD.fullmatch(field) is None:
        raise ParseError(f"the service field {clipped(field, 80)!r} is not [protocol] *(\"+\" service), each a letter"
                         " and at most 31 more letters or digits (RFC 3404 §4.4)", text=field, rule="naptr-service")
    protocol, *services = field.split("+")
    scheme = _PROTOCOLS.get(protocol.lower()) if protocol else "http"
    if scheme is None:
        return None
    return scheme, frozenset(s.lower() for s in services)


#: RFC 2483's resolution services (I2L, N2Rs, …): a service field of one alone names it as a protocol (RFC 3404
#: §4.4), a zone's slip for ``+N2R`` said in the log.
_RESOLUTION_SERVICE = re.compile(r"[IN]2[LRCN]S?", re.IGNORECASE)


class NaptrFinder:
    """The THTTP resolvers of a URN's series, from the DNS server ``host:port`` (dnspython), answers kept for
    their TTL."""

    def __init__(self, server: str, *, timeout: float = QUERY_SECONDS, private: bool = False) -> None:
        import dns.resolver

        host, port = _server(server)
        self.resolver = dns.resolver.Resolver(configure=False)
        self.resolver.nameservers = [host]
        self.resolver.port = port
        self.resolver.timeout = timeout
        self.resolver.lifetime = timeout
        self.server = server
        #: Whether a resolver the DNS names at an address that is not public (loopback, private, link-local) is
        #: asked too (``pdi serve --dns-private``: a private network's, tests'); by default it is left out: a
        #: stranger's zone names it, and this resolver would probe its own network for him.
        self.private = private
        #: (domain, kind) -> (until when, records, why the server could not answer: ``None`` when it did)
        self._kept: dict[tuple[str, str], tuple[float, list[object], str | None]] = {}
        self._lock = threading.Lock()

    def services(self, domain: str, urn: str) -> list[Service]:
        """The resolvers the DNS names for ``urn``, starting at ``domain`` (its series), best first; none found
        because a query failed: :class:`~pdi.errors.RemoteError` saying which and why."""
        found: list[Service] = []
        failures: list[str] = []
        start = domain.lower().rstrip(".")
        self._follow(start, urn, 0, found, [MAX_LOOKUPS, time.monotonic() + NAME_SECONDS], failures)
        if not found and failures:
            raise RemoteError(f"the DNS server {self.server} gave no resolver for {start}: {failures[0]}")
        if self.private:
            return found
        from urllib.parse import urlsplit

        from pdi._addresses import host_not_public

        kept = []
        for service in found:
            why = host_not_public(urlsplit(service.base).hostname or "")
            if why is None:
                kept.append(service)
            else:  # said, as every record skipped is: on one machine, the guide's record names 127.0.0.1
                log.info("pdi: the DNS names %s for %s, at an address that is not public (%s): left out, as a"
                         " stranger's zone may name this network (pdi serve --dns-private asks it)",
                         clipped(service.base, 200), clipped(start, 200), why)
        return kept

    def _follow(self, domain: str, urn: str, hops: int, found: list[Service], budget: list[float],
                failures: list[str]) -> None:
        records = sorted(self._records(domain, "NAPTR", budget, failures),
                         key=lambda r: (r.order, r.preference))  # type: ignore[attr-defined]
        matched_order: int | None = None
        for record in records:
            order, preference = int(record.order), int(record.preference)  # type: ignore[attr-defined]
            if matched_order is not None and order != matched_order:
                break
            flags = record.flags.decode("ascii", "replace").lower()  # type: ignore[attr-defined]
            if flags == "p":
                log.info("pdi: the NAPTR record of %s with flag P is skipped: what follows it is its protocol's own"
                         " rules (RFC 3404 §4.3), and THTTP, the one protocol this resolver speaks, has none",
                         clipped(domain, 200))
                continue
            if flags not in ("", "u", "s", "a"):  # an unknown flag, or more than one (RFC 3404 §4.3: exclusive)
                log.info("pdi: the NAPTR record of %s with flags %r is skipped: a record whose flags are unknown is"
                         " skipped (RFC 3403 §4.1), and this resolver knows one of U, S, A or P, or none"
                         " (RFC 3404 §4.3)", clipped(domain, 200),
                         clipped(record.flags.decode("ascii", "replace"), 40))  # type: ignore[attr-defined]
                continue
            regexp = record.regexp.decode("utf-8", "replace")  # type: ignore[attr-defined]
            replacement = record.replacement.to_text(omit_final_dot=True)  # type: ignore[attr-defined]
            output: str | None = None
            if regexp:
                try:
                    output = apply_regexp(regexp, urn)
                except ParseError as exc:  # a bad rule is no rule: skipped, the next one tried
                    log.info("pdi: the NAPTR record of %s is skipped: %s", clipped(domain, 200), exc.reason)
                    continue
                if output is None:
                    continue  # the rule does not match this URN
            if flags == "":
                next_domain = output if output is not None else replacement
                if next_domain and next_domain != ".":
                    if hops >= MAX_HOPS:  # a loop, or a chain deeper than any zone needs
                        failures.append(f"its NAPTR records lead on more than {MAX_HOPS} times (the last, of"
                                        f" {clipped(domain, 200)}, to {clipped(next_domain, 200)})")
                        continue
                    matched_order = order
                    self._follow(next_domain.lower().rstrip("."), urn, hops + 1, found, budget, failures)
                continue
            field = record.service.decode("ascii", "replace")  # type: ignore[attr-defined]
            try:
                service = _parse_service(field)
            except ParseError as exc:  # a record that breaks RFC 3404 §4.4: skipped, the next one tried
                log.info("pdi: the NAPTR record of %s is skipped: %s", clipped(domain, 200), exc.reason)
                continue
            if service is None:
                if _RESOLUTION_SERVICE.fullmatch(field):
                    log.info("pdi: the NAPTR record of %s with service %r is skipped: that names a protocol %s"
                             " (RFC 3404 §4.4: [protocol] *(\"+\" rs)); a service is written after a +: '+%s' or"
                             " 'THTTP+%s'", clipped(domain, 200), field, field, field, field)
                continue
            scheme, services = service
            if flags == "u":
                base = _thttp_base(output) if output is not None else None
                if base is not None:
                    found.append(Service(base, services, order, preference))
                    matched_order = order
            elif flags == "a" and replacement not in ("", "."):
                base = _host_base(scheme, replacement, None)
                if base is not None:
                    found.append(Service(base, services, order, preference))
                    matched_order = order
            elif flags == "s" and replacement not in ("", "."):
                targets = srv_order(self._records(replacement.lower(), "SRV", budget, failures))
                for target in targets:
                    host = target.target.to_text(omit_final_dot=True)
                    port = int(target.port)
                    unusable = _unusable(host, port)
                    if unusable is not None:
                        log.info("pdi: the SRV record of %s naming %s:%d is skipped: %s", clipped(replacement, 200),
                                 clipped(host or ".", 200), port, unusable)
                        continue
                    base = _host_base(scheme, host, port)
                    if base is not None:
                        found.append(Service(base, services, order, preference))
                        matched_order = order

    def _records(self, domain: str, kind: str, budget: list[float], failures: list[str]) -> list[object]:
        """The records of ``kind`` at ``domain``, kept for their TTL (none: :data:`NEGATIVE_TTL`); none once the
        name's ``budget`` (look-ups left, and the deadline) is spent. A query the server could not answer gives
        none too, and says why in ``failures`` (kept :data:`FAILED_TTL`, as a failure)."""
        import dns.exception
        import dns.name
        import dns.resolver

        if budget[0] <= 0 or time.monotonic() >= budget[1]:
            failures.append(f"one name's look-ups were spent ({MAX_LOOKUPS} within {NAME_SECONDS:g} s) before its"
                            f" {kind} query for {clipped(domain, 200)}")
            return []
        budget[0] -= 1
        key = (domain, kind)
        now = time.monotonic()
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] > now:
                if kept[2] is not None:
                    failures.append(kept[2])
                return kept[1]
        ttl: float = NEGATIVE_TTL
        records: list[object] = []
        failure: str | None = None
        lifetime = max(0.1, min(self.resolver.lifetime, budget[1] - now))
        try:
            answer = self.resolver.resolve(domain, kind, raise_on_no_answer=False, search=False,
                                           lifetime=lifetime)
            if answer.rrset is not None:
                # the best first, then cut: an rrset is a set, in no order, so the cut alone dropped any 32 of them
                records = sorted(answer.rrset, key=_rank(kind))[:MAX_RECORDS]
                ttl = min(answer.rrset.ttl, MAX_TTL)
        except dns.exception.Timeout:
            failure = f"its {kind} query had no answer within {lifetime:.1f} s"
        except dns.resolver.NoNameservers as exc:
            failure = _unanswered(exc, kind)
        except OSError as exc:
            failure = f"its {kind} query failed: {exc.strerror or exc}"
        except (dns.exception.DNSException, dns.name.EmptyLabel, ValueError):
            records = []  # NXDOMAIN, or a name no query can ask (a stranger's rule's output): nothing there
        if failure is not None:
            failure = f"{failure} (asked for {clipped(domain, 200)})"  # a stranger's rule may have named it
            failures.append(failure)
            ttl = FAILED_TTL
        with self._lock:
            if len(self._kept) >= MAX_KEPT:
                self._kept.clear()
            if ttl > 0:
                self._kept[key] = (now + ttl, records, failure)
        return records


def _unanswered(exc: Any, kind: str) -> str | None:
    """Why every server failed a query (dnspython's ``NoNameservers``): ``None`` when each refused it (``REFUSED``:
    the server holds nothing for that domain and forwards it nowhere, an answer as NXDOMAIN is), else what each
    answered or how it failed (``SERVFAIL``, a malformed message)."""
    import dns.rcode

    errors = exc.kwargs.get("errors") or []
    said: list[str] = []
    for error in errors:
        response = error[4] if len(error) > 4 else None
        if response is not None and response.rcode() == dns.rcode.REFUSED:
            continue
        said.append(dns.rcode.to_text(response.rcode()) if response is not None else str(error[3])[:200])
    if errors and not said:
        return None
    return f"its {kind} query failed: " + "; ".join(dict.fromkeys(said) or ["no server answered"])


def srv_order(records: Sequence[Any], pick: Callable[[int], int] | None = None) -> list[Any]:
    """SRV ``records`` in the order a client tries them (RFC 2782, "Usage rules"): by priority, the lowest
    first; within a priority, each next one chosen at random in proportion to its weight: those of weight 0
    first, then a number drawn uniformly from 0 to the sum of the weights left (inclusive), and the first
    record whose running sum of weights reaches it is taken. So the load spreads over targets of equal
    priority as their weights ask, not all to the heaviest. ``pick(n)`` draws from 0 to ``n`` (default:
    :func:`random.randint`)."""
    draw = pick if pick is not None else functools.partial(random.randint, 0)
    ordered: list[Any] = []
    for priority in sorted({int(r.priority) for r in records}):
        group = [r for r in records if int(r.priority) == priority]
        group = [r for r in group if int(r.weight) == 0] + [r for r in group if int(r.weight) != 0]
        while group:
            drawn = draw(sum(int(r.weight) for r in group))
            running = 0
            for at, record in enumerate(group):
                running += int(record.weight)
                if running >= drawn:
                    ordered.append(group.pop(at))
                    break
    return ordered


def _rank(kind: str) -> Callable[[Any], tuple[int, int]]:
    """How records of ``kind`` are ranked, the best first: NAPTR by order then preference (RFC 3403 §4.1), SRV
    by priority then the greater weight (which of several a cache keeps; they are tried in :func:`srv_order`)."""
    if kind == "SRV":
        return lambda r: (int(r.priority), -int(r.weight))
    return lambda r: (int(r.order), int(r.preference))


def _unusable(target: str, port: int) -> str | None:
    """Why an SRV record's ``target`` and ``port`` name no service to send a reader to, or ``None``: a target of
    ``.`` (RFC 2782: "the service is decidedly not available at this domain"); port 0, to which RFC 2782 (its
    range 0-65535) gives no meaning, reserved by IANA (RFC 6335 §6) and never connected to (it was taken for no
    port, and so the scheme's default: a service the zone never named)."""
    if target in ("", "."):
        return "its target . says the service is decidedly not available there (RFC 2782)"
    if port == 0:
        return "its port 0 is no port a service is reached at (RFC 6335 §6 reserves it)"
    return None


def _host_base(scheme: str, host: str, port: int | None) -> str | None:
    default = 443 if scheme == "https" else 80
    shown = f"[{host}]" if ":" in host else host
    try:
        return base_url(f"{scheme}://{shown}" + (f":{port}" if port and port != default else "") + "/")
    except ParseError:
        return None


def _server(server: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``HOST``, port 53; ``[v6]:PORT``) of ``--dns``."""
    host, port = server, "53"
    if server.startswith("[") and "]" not in server:
        host = ""
    elif server.startswith("["):
        host, _, rest = server[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else "53"
    elif server.count(":") == 1:
        host, port = server.split(":")
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536 or not host:
        raise ParseError("the DNS server is HOST:PORT (127.0.0.1:5353), HOST, or [IPv6]:PORT", text=server[:200],
                         rule="dns-server")
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ParseError("the DNS server is named by its IP address (127.0.0.1:5353)", text=server[:200],
                         rule="dns-server") from None
    return host, int(port)
