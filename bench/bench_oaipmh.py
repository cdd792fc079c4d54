"""Benchmark: one OAI-PMH ListRecords page of 100 oai_dc records, written by pdi and by pyoai.

Times :mod:`pdi.interop.oaipmh` (the request read, the page of records and
its resumption token written as the XML response) against pyoai's server
(``oaipmh.server.BatchingServer.handleRequest``, the same verb and page
size, records handed over from memory), on the same 100 records of eight
Dublin Core values each. Neither reads a catalog: this is the protocol's
own cost. Prints the median over several rounds of milliseconds per page,
and the ratio.

    python3 bench/run_all.py oaipmh
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import statistics
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def _pkg_resources_for_pyoai() -> None:
    """pyoai 2.5 imports ``pkg_resources`` (gone from setuptools 81 on) only to print its own version
    in an Identify answer: give it that much from importlib.metadata when setuptools has none."""
    if importlib.util.find_spec("pkg_resources") is not None:
        return
    module = types.ModuleType("pkg_resources")

    class Requirement:
        def __init__(self, name: str) -> None:
            self.name = name

        @staticmethod
        def parse(name: str) -> Requirement:
            return Requirement(name)

    class WorkingSet:
        @staticmethod
        def find(requirement: Requirement) -> types.SimpleNamespace | None:
            try:
                return types.SimpleNamespace(version=importlib.metadata.version(requirement.name))
            except importlib.metadata.PackageNotFoundError:
                return None

    module.Requirement = Requirement  # type: ignore[attr-defined]
    module.working_set = WorkingSet()  # type: ignore[attr-defined]
    sys.modules["pkg_resources"] = module


_pkg_resources_for_pyoai()

from oaipmh import common, metadata, server  # noqa: E402  (pyoai, the peer)

import readme  # noqa: E402
from pdi.interop import oaipmh  # noqa: E402

PAGE = 100
ROUNDS = 7
REPEAT = 20
BASE = "http://resolver.example.org/oai"
NOW = datetime.datetime(2026, 11, 23, 12, 0, tzinfo=datetime.UTC)


def make_records() -> list[tuple[str, datetime.datetime, dict[str, list[str]]]]:
    """100 documents: identifier, datestamp and eight Dublin Core values each."""
    out = []
    for i in range(PAGE):
        name = f"urn:pdi://library.example.us/2026/11/{1 + i % 28:02d}/{i + 1}"
        values = {
            "title": [f"Report number {i} on the state of the archive & its <holdings>"],
            "creator": ["A. Writer", "B. Editor"],
            "subject": ["archives"],
            "date": [f"2026-11-{1 + i % 28:02d}"],
            "format": ["text/plain"],
            "identifier": [name, f"{BASE[:-4]}/uri-res/N2R?{name}"],
        }
        out.append((name, NOW - datetime.timedelta(hours=i), values))
    return out


def ours(records: list[tuple[str, datetime.datetime, dict[str, list[str]]]]) -> bytes:
    request = oaipmh.parse_request([("verb", "ListRecords"), ("metadataPrefix", "oai_dc")])
    page = [
        oaipmh.Record(oaipmh.Header(name, stamp, ("library.example.us",)),
                      tuple((k, v) for k in oaipmh.DC_ELEMENTS for v in values.get(k, ())))
        for name, stamp, values in records
    ]
    token = oaipmh.Resumption(records[-1][0], PAGE, oaipmh.Selection("oai_dc")).encode()  # after the last record
    return oaipmh.response(BASE, NOW, request, oaipmh.list_records("ListRecords", page, token, 0, resumed=False))


class _Repository:
    """pyoai's IBatchingOAI over the same records, from memory."""

    def __init__(self, records: list[tuple[str, datetime.datetime, dict[str, list[str]]]]) -> None:
        self.records = [
            (common.Header(None, name, stamp.replace(tzinfo=None), ["library.example.us"], False),
             common.Metadata(None, values), None)
            for name, stamp, values in records
        ]

    def identify(self) -> Any:
        return common.Identify("pdi archive", BASE, "2.0", ["archivist@library.example.org"],
                               datetime.datetime(2026, 1, 1), "persistent", "YYYY-MM-DDThh:mm:ssZ", [])

    def listRecords(self, metadataPrefix: str, set: Any = None, from_: Any = None, until: Any = None,
                    cursor: int = 0, batch_size: int = 10) -> list[Any]:
        return self.records[cursor : cursor + batch_size]


def peer(records: list[tuple[str, datetime.datetime, dict[str, list[str]]]]) -> Callable[[], bytes]:
    registry = metadata.MetadataRegistry()
    registry.registerWriter("oai_dc", server.oai_dc_writer)
    # one more record than a page: pyoai, too, then writes a resumption token
    repository = _Repository([*records, records[0]])
    serving = server.BatchingServer(repository, registry, resumption_batch_size=PAGE)

    def page() -> bytes:
        answer = serving.handleRequest({"verb": "ListRecords", "metadataPrefix": "oai_dc"})
        return answer if isinstance(answer, bytes) else answer.encode()

    return page


def _median_ms(work: Callable[[], bytes]) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(REPEAT):
            work()
        times.append((time.perf_counter() - start) / REPEAT * 1000)
    return statistics.median(times)


def main() -> None:
    global ROUNDS, REPEAT
    args = readme.arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]),
                            markdown=True).parse_args()
    if args.small:
        ROUNDS, REPEAT = 1, 1
    records = make_records()
    mine = ours(records)
    theirs = peer(records)()
    assert mine.count(b"<dc:title>") == PAGE and theirs.count(b"<dc:title>") == PAGE
    ours_ms = _median_ms(lambda: ours(records))
    peer_ms = _median_ms(peer(records))
    print(f"OAI-PMH ListRecords, {PAGE} oai_dc records a page (median of {ROUNDS} rounds of {REPEAT}):")
    print(f"  pdi.interop.oaipmh   {ours_ms:8.2f} ms a page  ({len(mine):,} bytes)")
    print(f"  pyoai BatchingServer {peer_ms:8.2f} ms a page  ({len(theirs):,} bytes)")
    print(f"  ratio pdi / pyoai    {ours_ms / peer_ms:8.2f}")
    readme.write(args.markdown, f"Medians of {ROUNDS} rounds of {REPEAT} pages:\n\n" + readme.table(
        ["what", "pdi", "pyoai", "ratio"],
        [[f"a page of {PAGE} records", f"{ours_ms:.1f} ms ({len(mine) / 1000:.0f} KB)",
          f"{peer_ms:.1f} ms ({len(theirs) / 1000:.0f} KB)", f"**{ours_ms / peer_ms:.2f}×**"]]))


if __name__ == "__main__":
    main()
