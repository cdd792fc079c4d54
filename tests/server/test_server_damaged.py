"""Stored octets that fail their digests, or are cut short, are the archive's fault: ``500`` (RFC 9110 §15.6.1),
typed ``/api#problem-stored-octets-damaged``, counted in ``pdi_fixity_failures_total`` — with a fragment too, whose
index was made for the octets as deposited, and in each part of ``POST /api/octets``."""

from __future__ import annotations

import hashlib
from pathlib import Path

from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.http.metrics import counters
from support.stored_blobs import blob_file, rewrite_blob

S = "library.example.us"
#: a text of more than one 64 KiB block and an inline blob's limit: a file, with a line index made at deposit
TEXT = b"".join(b"line %06d of the text\n" % i for i in range(20_000))


def test_a_text_cut_short_or_altered_is_500_whole_or_by_fragment(tmp_path: Path) -> None:
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(S)
        cut = str(archive.add(S, TEXT, format="text"))
        altered = str(archive.add(S, TEXT + b"and one more\n", format="text"))
        client = TestClient(create_app(location, archive=archive))
        cut_sha = archive.get(cut).record.sha256
        assert blob_file(location, cut_sha).exists()
        rewrite_blob(location, cut_sha, TEXT[:1000])
        data = TEXT + b"and one more\n"
        rewrite_blob(location, hashlib.sha256(data).hexdigest(), data[:5] + b"X" + data[6:])
        before = counters().fixity_failures._value.get()
        for name in (cut, altered):
            for asked in (name, name + "%23line=5,6", name + "%23char=10,20"):
                answer = client.get(f"/uri-res/N2R?{asked}")
                assert answer.status_code == 500, (asked, answer.text)
                problem = answer.json()
                assert (problem["type"], problem["title"]) == ("/api#problem-stored-octets-damaged",
                                                                "stored octets damaged")
        assert counters().fixity_failures._value.get() - before == 6
        parts = client.post("/api/octets", json={"names": [cut]})
        assert parts.status_code == 200 and b'"status": 500' in parts.content
        # pdi verify still reads each to its real end and says which chunk is damaged, rather than stop at the first
        report = archive.verify()
        said = {p.kind: p.detail for p in report.problems}
        assert not report.ok and len(report.problems) == 2, report.problems
        assert all("chunk 0" in detail for detail in said.values()), said


def test_the_fixity_failures_help_says_what_is_answered() -> None:
    """The ``# HELP`` Prometheus shows beside ``pdi_fixity_failures_total`` says what a damaged read is answered:
    ``500``, ``stored octets damaged`` (docs/reference/operate.md's table of metrics; the test above), read from the
    exposition with ``prometheus_client``'s own parser."""
    from prometheus_client.parser import text_string_to_metric_families

    from pdi.server.http.metrics import exposition

    body, _ = exposition()
    helps = {family.name: family.documentation for family in text_string_to_metric_families(body.decode())}
    said = helps["pdi_fixity_failures"]
    assert "500" in said and "stored octets damaged" in said and "422" not in said, said
