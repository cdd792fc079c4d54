"""A version number past 64 bits is a name no archive holds (404), not a failure (found by a tester: 500s).

The grammar bounds a number's digits, not its value (PDI-GRAMMAR; ``pdi.identifier``: at most 100 digits), so
``…/1.text.9223372036854775808`` (2**63) is a well-formed name. No catalog holds such a version — SQLite's integers
end at 2**63 - 1, PostgreSQL's ``bigint`` too — so every read path answers it as it answers version 9 of a
document that has one: not found, naming the versions there are. On both catalogs, through the general path and
``pdi serve``'s own fast path, and on the command line.
"""

from __future__ import annotations

import urllib.parse

import httpx
from click.testing import CliRunner
from server_helpers import on_own_protocol
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.cli import cli
from pdi.server import create_app

S = "library.example.us"
PAST = 2**63


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def test_a_version_past_64_bits_is_not_found_on_every_read_path(location: str) -> None:
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"the minutes\n", format="text"))
    past = name.removesuffix(".1") + f".{PAST}"
    said = f"no version {PAST} (versions: 1)"
    paths = [f"/uri-res/N2R?{past}", f"/uri-res/N2L?{past}", f"/uri-res/N2C?{past}", f"/uri-res/N2R?{past}%23char=0,3",
             f"/api/resolve?pdi={_q(past)}", f"/api/meta?pdi={_q(past)}"]
    client = TestClient(create_app(location))
    for path in paths:
        answer = client.get(path, follow_redirects=False)
        assert (answer.status_code, answer.json()["title"]) == (404, "not found"), (path, answer.text)
        assert said in answer.json()["detail"], path
    if not location.startswith("postgresql:"):  # pdi serve's own protocol answers plain N2R and N2L of SQLite
        with on_own_protocol(create_app(location), public=True) as url:
            for path in paths[:2]:
                answer = httpx.get(url + path)
                assert answer.status_code == 404 and said in answer.json()["detail"], (path, answer.text)
    runner = CliRunner()
    for args in (["get", past], ["meta", past], ["anchor", f"{name}#char=0,3", "--to", str(PAST)]):
        result = runner.invoke(cli, [*args, "--archive", location])
        assert result.exit_code == 4, (args, result.output)  # not found (docs/reference/exit-codes.md)
        assert f"no version {PAST}" in result.output and "Traceback" not in result.output, result.output
