"""Scale: the same figures at 10 thousand names and at N names (default 10 million) on PostgreSQL.

Issue 15 asks that nothing grow beyond the logarithmic with the size of the
catalog. Each catalog is made on a PostgreSQL cluster this benchmark starts
itself (:class:`support.pgcluster.TemporaryCluster`, a unix socket,
fsync off), a few real deposits first and then the bulk names by SQL
(``generate_series``), each pointing at one of those deposits' blobs, with
the daily serial counters and day counts a deposit leaves: ``PER_DAY``
names on each of as many consecutive GMT days as it takes, the last name
of each day with its version withdrawn (one name in ``PER_DAY``: 10,000
tombstones in 10 million names). The cluster's ``shared_buffers`` is what a
deployment of such a catalog would give it: PostgreSQL's documentation
suggests a quarter of the machine's memory to start with, and that is the
default here (``--shared-buffers`` to set another; PostgreSQL's own default,
128 MB, is a size for a machine it knows nothing about). Then, through
:class:`pdi.archive.Archive` as a resolver uses it:

1. minting: small text deposits a second (each a new serial of a new day's
   counter, its blob uploaded, its catalog transaction committed);
2. N2R of a small document, p50 and p99: ``Archive.get`` of names picked at
   random over the whole catalog (look-up, access checks, blob read and
   checked: the archive's part of an ``N2R`` answer), and the resolver's
   whole answer to the same names, a cache miss each
   (:meth:`pdi.server.protocol.resolver.Resolver.representation`: the archive's part and
   the memento's headers, which read the document's withdrawals);
3. listing one day (``PER_DAY`` names) from the middle of the catalog;
4. one keyset page of ``ls`` (100 names after a name in the middle);
5. for comparison, one ``--offset`` page as deep (what keyset pages replace).

Both catalogs are made first, then measured in turn ``--rounds`` times
(each figure's best round is kept: the machine is shared). Run:
``python3 bench/bench_scale.py [--names N] [--rounds R] [--shared-buffers 6GB]`` (1 million names
take one to two minutes to make on two cores, 10 million about seven; 6.5 GB of disk).
Figures side by side, with the ratio of the large catalog's to the small
one's; ``--markdown FILE`` writes them as the README's table.
``PDI_BENCH_SCALE_NAMES`` sets the default of ``--names`` (for
``run_all.py --write-readme scale``, which passes no arguments).
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# the throw-away cluster is a test tool (tests/support/), not part of the package
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import readme
from pdi.archive import Archive
from pdi.server.process.limits import WorkLimits
from pdi.server.protocol.resolver import Resolver
from support.pgcluster import TemporaryCluster

S = "scale.example.us"
SMALL = 10_000
#: Names on each day of a catalog (a day listed is this long at every size).
PER_DAY = 1_000
#: The day of the real deposits; the bulk names start on the day after.
FIRST = datetime.date(2000, 1, 1)
MINTS = 200
RESOLVES = 1_000
PAGES = 50
TEXT = b"a small document of the scale benchmark\n" * 10


@dataclass
class Figures:
    """What one catalog measured (seconds, or deposits a second)."""

    names: int
    fill_seconds: float
    mint_rate: float
    n2r_p50: float
    n2r_p99: float
    resolver_p50: float
    resolver_p99: float
    day_listing: float
    keyset_page: float
    offset_page: float


def _fill(url: str, names: int) -> tuple[int, float]:
    """Make ``names`` names at ``url`` (3 deposited, the rest by SQL); the number of bulk days and the time taken."""
    started = time.perf_counter()

    def clock() -> datetime.datetime:
        return datetime.datetime(FIRST.year, FIRST.month, FIRST.day, 12, tzinfo=datetime.UTC)

    with Archive.init(url, clock=clock) as archive:
        archive.add_series(S)
        for i in range(3):
            archive.add(S, TEXT + str(i).encode() + b"\n", format="text")
        store = archive.store
        bulk = names - 3
        days = -(-bulk // PER_DAY)
        q = store._query  # type: ignore[attr-defined]
        with store._write():  # type: ignore[attr-defined]
            # name k (0-based) is serial (k mod PER_DAY) + 1 of day FIRST + 1 + k // PER_DAY
            q(
                "INSERT INTO documents (series, day, year, month, dom, unique_id, serial, created_at)"
                " SELECT ?, to_char(d, 'YYYY-MM-DD'), extract(year FROM d), extract(month FROM d),"
                " extract(day FROM d), CAST(mod(k, ?) + 1 AS TEXT), mod(k, ?) + 1, to_char(d, 'YYYY-MM-DD') || 'T12:00:00.000000Z'"
                " FROM (SELECT k, DATE '2000-01-02' + CAST(k / ? AS INTEGER) AS d FROM generate_series(0, ? - 1) k) g",
                (S, PER_DAY, PER_DAY, PER_DAY, bulk),
            )
            q(
                "INSERT INTO daily_serials (series, day, last) SELECT series, day, MAX(serial) FROM documents"
                " WHERE day > ? GROUP BY series, day", (FIRST.isoformat(),),
            )
            q(
                "INSERT INTO document_days (series, day, documents, last_deposit)"
                " SELECT series, day, COUNT(*), MAX(created_at) FROM documents WHERE day > ? GROUP BY series, day",
                (FIRST.isoformat(),),
            )
            q("INSERT INTO versions (document, version, created_at) SELECT id, 1, created_at FROM documents"
              " WHERE day > ?", (FIRST.isoformat(),))
            # the last name of each bulk day has its version withdrawn: a resolver's answers meet tombstones
            q("INSERT INTO withdrawals (document, version, reason, who, at)"
              " SELECT id, 1, 'withdrawn by the scale benchmark', 'bench', created_at FROM documents"
              " WHERE day > ? AND serial = ?", (FIRST.isoformat(), PER_DAY))
            blobs = q("SELECT sha256, size, charset, line_ending FROM representations ORDER BY sha256")
            for index, (sha, size, charset, ending) in enumerate(blobs):
                q(
                    "INSERT INTO representations (document, version, format, media_type, charset, line_ending,"
                    " sha256, size, created_at, stored) SELECT id, 1, 'text', 'text/plain', ?, ?, ?, ?, created_at,"
                    " 'exact' FROM documents WHERE day > ? AND mod(serial, ?) = ?",
                    (charset, ending, sha, size, FIRST.isoformat(), len(blobs), index),
                )
        for table in ("documents", "versions", "representations", "daily_serials", "document_days", "withdrawals"):
            q(f"ANALYZE {table}")
    return days, time.perf_counter() - started


def _name(day: datetime.date, serial: int) -> str:
    return f"urn:pdi://{S}/{day.year:04d}/{day.month:02d}/{day.day:02d}/{serial}.text.1"


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def make(cluster: TemporaryCluster, names: int) -> tuple[str, int, float]:
    """A catalog of ``names`` names: its URL, its bulk days and how long it took to make."""
    url = cluster.create_database(f"scale_{names}")
    days, seconds = _fill(url, names)
    return url, days, seconds


def measure(url: str, names: int, days: int, fill_seconds: float, round_: int) -> Figures:
    """Measure the catalog at ``url`` once (``round_`` mints on a day of its own)."""
    mint_day = FIRST + datetime.timedelta(days=days + 1 + round_)

    def clock() -> datetime.datetime:
        return datetime.datetime(mint_day.year, mint_day.month, mint_day.day, 12, tzinfo=datetime.UTC)

    rng = random.Random(15 + round_)
    with Archive.open(url, clock=clock) as archive:
        minting = _timed(lambda: archive.add(S, TEXT + rng.randbytes(8).hex().encode(), format="text"), MINTS)
        full_days = max(1, (names - 3) // PER_DAY)
        # serials 1 .. PER_DAY - 1: the last of each day is withdrawn
        picks = [_name(FIRST + datetime.timedelta(days=1 + rng.randrange(full_days)), 1 + rng.randrange(PER_DAY - 1))
                 for _ in range(RESOLVES)]
        for name in picks[:20]:  # the connection and the plans warm
            archive.get(name)
        resolving = []
        for name in picks:
            start = time.perf_counter()
            got = archive.get(name)
            resolving.append(time.perf_counter() - start)
            assert got.data.startswith(b"a small document")
        resolver = Resolver(archive, WorkLimits())  # no response cache: every answer is a miss
        answering = []
        for name in picks:
            start = time.perf_counter()
            answer = resolver.representation(name, "http://resolver.example/")
            answering.append(time.perf_counter() - start)
            assert getattr(answer, "body", b"").startswith(b"a small document"), answer
            assert any(field == b"memento-datetime" for field, _ in getattr(answer, "headers", ())), answer
        middle = FIRST + datetime.timedelta(days=1 + full_days // 2)
        listing = _timed(lambda: archive.ls(series=S, year=middle.year, month=middle.month, day=middle.day), 5)
        assert len(archive.ls(series=S, year=middle.year, month=middle.month, day=middle.day)) == PER_DAY
        after = _name(middle, PER_DAY // 2)
        paging = _timed(lambda: archive.ls(series=S, limit=100, after=after), PAGES)
        deep = (names - 3) // 2
        # once a round: at 10 million names one such page reads 5 million rows (two minutes)
        offset = _timed(lambda: archive.ls(series=S, limit=100, offset=deep), 1)
    return Figures(names, fill_seconds, MINTS / sum(minting), statistics.median(resolving),
                   _p(resolving, 0.99), statistics.median(answering), _p(answering, 0.99), statistics.median(listing), statistics.median(paging), statistics.median(offset))


def best(rounds: list[Figures]) -> Figures:
    """Each figure's best round: the one the shared machine disturbed least."""
    first = rounds[0]
    return Figures(
        first.names, first.fill_seconds, max(r.mint_rate for r in rounds),
        *(min(getattr(r, f) for r in rounds) for f in ("n2r_p50", "n2r_p99", "resolver_p50", "resolver_p99", "day_listing", "keyset_page", "offset_page")),
    )


def report(small: Figures, large: Figures) -> str:
    """The figures side by side, with the ratio of the large catalog's to the small one's."""
    rows = [
        ("catalog made in", small.fill_seconds, large.fill_seconds, "s"),
        ("minting (deposits/s)", small.mint_rate, large.mint_rate, "/s"),
        ("N2R small document p50", small.n2r_p50, large.n2r_p50, "ms"),
        ("N2R small document p99", small.n2r_p99, large.n2r_p99, "ms"),
        ("resolver's N2R answer p50", small.resolver_p50, large.resolver_p50, "ms"),
        ("resolver's N2R answer p99", small.resolver_p99, large.resolver_p99, "ms"),
        (f"listing one day ({PER_DAY} names)", small.day_listing, large.day_listing, "ms"),
        ("ls keyset page (100 names)", small.keyset_page, large.keyset_page, "ms"),
        ("ls offset page as deep (100)", small.offset_page, large.offset_page, "ms"),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'':{width}}  {small.names:>14,} {large.names:>14,}   ratio",
             f"{'':{width}}  {'names':>14} {'names':>14}"]
    for label, a, b, unit in rows:
        shown_a, shown_b = (f"{a * 1000:11.3f} ms", f"{b * 1000:11.3f} ms") if unit == "ms" else (
            (f"{a:12.1f}/s", f"{b:12.1f}/s") if unit == "/s" else (f"{a:12.1f} s", f"{b:12.1f} s"))
        lines.append(f"{label:{width}}  {shown_a:>14} {shown_b:>14}   {b / a:6.2f}")
    return "\n".join(lines)


def markdown(small: Figures, large: Figures, rounds: int, shared_buffers: str) -> str:
    """The README's table: the same figures as :func:`report`."""

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.2f} ms"

    def s(seconds: float) -> str:
        return f"{seconds:,.0f} s" if seconds >= 10 else f"{seconds:.1f} s"

    rows = [
        ("catalog made (by SQL)", small.fill_seconds, large.fill_seconds, s),
        ("minting (deposits a second)", small.mint_rate, large.mint_rate, lambda rate: f"{rate:,.0f}/s"),
        ("`N2R` of a small document (`Archive.get`), p50", small.n2r_p50, large.n2r_p50, ms),
        ("same, p99", small.n2r_p99, large.n2r_p99, ms),
        ("the resolver's `N2R` answer, p50", small.resolver_p50, large.resolver_p50, ms),
        ("same, p99", small.resolver_p99, large.resolver_p99, ms),
        (f"listing one day ({PER_DAY:,} names)", small.day_listing, large.day_listing, ms),
        ("`ls` keyset page (100 names)", small.keyset_page, large.keyset_page, ms),
        ("`ls --offset` page as deep (100 names)", small.offset_page, large.offset_page, ms),
    ]
    body = [[label, show(a), show(b), f"{b / a:,.2f}" if b / a < 10 else f"{b / a:,.0f}"] for label, a, b, show in rows]
    return (f"N = {large.names:,} names, best of {rounds} rounds, shared_buffers {shared_buffers}:\n\n"
            + readme.table(["", f"{small.names:,} names", f"{large.names:,} names", "ratio"], body))


def quarter_of_memory() -> str:
    """A quarter of this machine's memory, in MB as PostgreSQL spells it (24 GiB: ``6144MB``)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{memory // 4 // (1 << 20)}MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=int(os.environ.get("PDI_BENCH_SCALE_NAMES", "10000000")),
                        help="Names in the large catalog (default 10 million, or PDI_BENCH_SCALE_NAMES).")
    parser.add_argument("--rounds", type=int, default=3, help="Times each catalog is measured, in turn (best kept).")
    parser.add_argument("--shared-buffers", default=quarter_of_memory(),
                        help="The cluster's shared_buffers (default a quarter of this machine's memory, as"
                             " PostgreSQL's documentation suggests to start with; here %(default)s).")
    readme.arguments(parser, markdown=True)
    args = parser.parse_args(argv)
    if args.small:
        global SMALL, MINTS, RESOLVES, PAGES
        SMALL, MINTS, RESOLVES, PAGES = 2_000, 10, 30, 5
        args.names, args.rounds, args.shared_buffers = 5_000, 1, "128MB"
    if args.names <= SMALL:
        parser.error(f"--names must be more than {SMALL} (the small catalog it is compared with)")
    print(f"shared_buffers = {args.shared_buffers}", file=sys.stderr, flush=True)
    with TemporaryCluster(shared_buffers=args.shared_buffers) as cluster:
        made = {}
        for names in (SMALL, args.names):
            made[names] = make(cluster, names)
            print(f"{names:,} names made in {made[names][2]:.1f} s", file=sys.stderr, flush=True)
        # the two catalogs measured in turn, ROUNDS times: both see the same load on a shared machine
        rounds: dict[int, list[Figures]] = {SMALL: [], args.names: []}
        for round_ in range(args.rounds):
            for names, (url, days, seconds) in made.items():
                rounds[names].append(measure(url, names, days, seconds, round_))
                print(f"round {round_ + 1}, {names:,} names: {rounds[names][-1]}", file=sys.stderr, flush=True)
    print(report(best(rounds[SMALL]), best(rounds[args.names])))
    readme.write(args.markdown, markdown(best(rounds[SMALL]), best(rounds[args.names]), args.rounds, args.shared_buffers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
