"""``/openapi.json`` is exact: schemathesis, an independent tester, finds no answer of a real ``pdi serve``
outside it.

A ``pdi serve`` of a small archive (a text, an HTML page, an image, a sound,
a captured page, a document of two versions, three days' captures of a URL)
is tested by schemathesis' command line with a fixed seed and a bounded
number of examples, with schema-valid and schema-violating data (examples,
coverage and fuzzing phases), and every check that needs no second user or
sequence of calls: no server error, each status, content type, header and
body as described, valid data accepted, invalid data refused, a missing
required header refused, an unsupported method answered 405 with its Allow
(left out: ignored_auth, use_after_free, ensure_resource_availability,
object_level_authorization). The run takes under a minute. The writes are
really exercised with an admin token (of every series), so they reach their
2xx, 409 and 410 answers, not only 401; series ``W`` holds documents they act on too.
What schemathesis is configured to expect besides its defaults, and why,
is in tests/server/schemathesis.toml; the values of the description's custom
formats come from tests/server/schemathesis_hooks.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from server_helpers import (
    CAPTURED_URL,
    CAPTURES_URL,
    S,
    captured_aggregate,
    deposit_captures,
    deposit_versions,
    serving,
)

from pdi.archive import Archive

HERE = Path(__file__).parent
EXAMPLES = HERE.parent.parent / "examples"
#: A second series, with documents for the writes to version, annotate and withdraw.
W = "writes.example.us"
#: The fixed seed of the run, so a failure is reproduced by running the test again.
SEED = "20261124"


def _archive(location: Path) -> tuple[dict[str, list[str]], str]:
    """An archive with deposits of each kind: the values of the description's custom formats, and a token."""
    archive = Archive.init(location)
    try:
        archive.add_series(S)
        archive.add_series(W)
        text = str(archive.add(S, (EXAMPLES / "declaration.txt").read_bytes(), format="text"))
        page_bytes = (EXAMPLES / "site" / "index.html").read_bytes()
        page = str(archive.add(S, page_bytes, format="html"))
        png = (EXAMPLES / "site" / "seal.png").read_bytes()
        image = str(archive.add(S, png, format="png"))
        sound = str(archive.add(S, (EXAMPLES / "bell.wav").read_bytes(), format="wav"))
        capture = str(archive.add(S, captured_aggregate(png), format="related", foreign_id=CAPTURED_URL))
        pdf = str(archive.add(S, (Path(__file__).resolve().parents[1] / "data" / "pdf" / "paragraph_and_link.pdf")
                              .read_bytes(), format="pdf"))
        archive.annotate(text, "title", "Declaration of Independence")
        writable_text = str(archive.add(W, b"a draft to be versioned, annotated and withdrawn\n", format="text"))
        writable_page = str(archive.add(W, b"<p>a page to add formats to</p>\n", format="html"))
        _, token = archive.add_token("schemathesis", role="admin")
    finally:
        archive.close()
    generic_versions = deposit_versions(str(location))
    deposit_captures(str(location))
    # where the text's 6th line stands in the page, counted as the page's char scheme counts (CRLF)
    source = page_bytes.decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    at = source.index("We hold these truths")
    missing = f"urn:pdi://{S}/2026/01/01/99.text.1"
    generic = generic_versions
    whole = [text, page, image, sound, capture, generic, f"{generic}.text.2", missing, writable_text, writable_page,
             writable_text.rsplit(".", 2)[0]]
    values = {
        "pdi": [*whole, f"{text}#char=0,10", f"{text}#line=5,6", f"{page}#char=0,20", f"{image}#rect=(0,0),(10,10)",
                f"{sound}#sec=0,1"],
        "pdi-whole": whole,
        "pdi-versioned": [n for n in whole if n.rsplit("/", 1)[1].count(".") >= 2],
        "pdi-text": [text, f"{generic}.text.2", missing],
        "pdi-pdf": [pdf, f"{pdf}#char=0,4", f"urn:pdi://{S}/2026/01/01/99.pdf.1"],
        "pdi-image": [image, text, f"urn:pdi://{S}/2026/01/01/99.png.1"],
        "pdi-passage": [f"{text}#char=0,10", f"{text}#line=5,6", f"{generic}.text.1#char=0,5"],
        "pdi-pattern": [f"urn:pdi://{S}/*/*/*/*", f"urn:pdi://{S}/2026/*/*/*.text", text],
        "pdi-citation": [f"{page}@{at}={text}#line=5,6", f"{page}@0={text}#line=5,6"],
        "pdi-fragment": [f"{text}#char=0,10", f"{text}#line=5,6", f"{page}@{at}={text}#line=5,6"],
        "pdi-series": [S, W, "unknown.example.us"],
        "memento-target": [CAPTURES_URL, generic, "http://www.example.com/never/captured"],
        "search-query": ["truths", '"self-evident"', "Declaration hold", "bell"],
        "rfc5147": ["char=0,10", "line=1,3", "char=5", "line=2"],
        "statement-key": ["title", "creator", "dc:subject", "note"],
        "batch-manifest": ['[{"format": "text"}]', '[{"format": "html", "id": "page"}]', "[{}]"],
        "charset": ["utf-8", "iso-8859-1", "us-ascii"],
        "pdi-moment": ["2030-01-01", "2030-06-01T12:00:00Z", "2031-02-03T04:05:06+02:00"],
        "pdi-format": ["text", "html", "xml", "utf-8"],
    }
    return values, token


@pytest.mark.slow  # half a minute of generated requests: started first in a parallel run
def test_schemathesis_finds_no_answer_outside_the_description(tmp_path: Path) -> None:
    values, token = _archive(tmp_path / "archive")
    with serving(tmp_path / "archive") as (_, port):
        base = f"http://127.0.0.1:{port}"
        # a cursor of a real page of hits, for /api/search's after=
        hits = httpx.get(f"{base}/api/search", params={"q": "truths", "limit": "1"}, timeout=30).json()
        values["search-cursor"] = [httpx.URL(hits["next"]).params["after"]] if hits.get("next") else ["20"]
        (tmp_path / "values.json").write_text(json.dumps(values), "utf-8")
        env = {**os.environ, "PDI_SCHEMATHESIS_VALUES": str(tmp_path / "values.json"),
               "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
               "PYTHONPATH": os.pathsep.join(filter(None, (str(HERE), os.environ.get("PYTHONPATH")))),
               "NO_COLOR": "1", "COLUMNS": "120"}
        run = subprocess.run(
            [sys.executable, "-m", "schemathesis.cli", "--config-file", str(HERE / "schemathesis.toml"),
             "run", f"{base}/openapi.json", "--seed", SEED,
             "-H", f"Authorization: Bearer {token}"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False,
        )
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-20000:]
    counted = re.search(r"(\d+) generated, (\d+) passed", report)
    assert counted is not None and counted[1] == counted[2] and int(counted[1]) > 500, report[-5000:]
    # the writes were answered as writes, not refused for want of a token
    assert "Authentication failed" not in report, report[-5000:]
