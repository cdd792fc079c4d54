"""pdf.js as pdi serves it (:mod:`pdi.server.pages.pdfjs`): the vendored copy of npm's pdfjs-dist.

The copy in ``src/pdi/data/pdfjs/`` is checked against its manifest, the
manifest against the version ``scripts/bootstrap`` pins, and each file against
npm's own tarball of that version (``npm pack pdfjs-dist@VERSION``, which
``scripts/bootstrap --dev`` puts in ``.venv/share/pdfjs-dist``; its sha512 is
the registry's ``integrity``, written in the manifest by ``scripts/vendor-pdfjs``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import tarfile
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.server import create_app

ROOT = Path(__file__).resolve().parents[2]
VENDORED = ROOT / "src" / "pdi" / "data" / "pdfjs"
MANIFEST = json.loads((VENDORED / "MANIFEST.json").read_text())
FETCHED = Path(os.environ.get("PDI_PDFJS_DIST") or Path(sys.prefix) / "share" / "pdfjs-dist")


def test_the_copy_is_the_manifests_and_the_version_bootstrap_pins() -> None:
    for name, said in MANIFEST["files"].items():
        assert hashlib.sha256((VENDORED / name).read_bytes()).hexdigest() == said["sha256"], name
    pinned = re.search(r"^pdfjs_version=(\S+)$", (ROOT / "scripts" / "bootstrap").read_text(), re.M)
    assert pinned and pinned.group(1) == MANIFEST["version"]
    assert MANIFEST["license"] == "Apache-2.0" and "Apache License" in (VENDORED / "LICENSE").read_text()
    assert {"LICENSE", "pdf.min.mjs", "pdf.worker.min.mjs", "jbig2.wasm", "openjpeg.wasm"} <= set(MANIFEST["files"])


def test_the_copy_is_byte_for_byte_npms_tarball() -> None:
    tarball = FETCHED / f"pdfjs-dist-{MANIFEST['version']}.tgz"
    assert tarball.is_file(), f"{tarball} is missing: run scripts/bootstrap --dev (or set PDI_PDFJS_DIST)"
    octets = tarball.read_bytes()
    assert "sha512-" + base64.b64encode(hashlib.sha512(octets).digest()).decode() == MANIFEST["integrity"]
    with tarfile.open(tarball) as archive:
        for name, said in MANIFEST["files"].items():
            member = archive.extractfile(said["from"])
            assert member is not None, said["from"]
            assert member.read() == (VENDORED / name).read_bytes(), name


def test_served_from_pdis_own_origin_checked_and_immutable(archive: Archive) -> None:
    client = TestClient(create_app(archive.location, archive=archive))
    version = MANIFEST["version"]
    for name in ("pdf.min.mjs", "pdf.worker.min.mjs"):
        got = client.get(f"/static/pdfjs/{version}/{name}")
        assert got.status_code == 200, got.text
        assert got.content == (VENDORED / name).read_bytes()
        assert got.headers["content-type"] == "text/javascript; charset=utf-8"  # a module script must be JavaScript
        assert got.headers["x-content-type-options"] == "nosniff"
        assert got.headers["etag"] == f'"{MANIFEST["files"][name]["sha256"]}"'
        assert "immutable" in got.headers["cache-control"]
        again = client.get(f"/static/pdfjs/{version}/{name}", headers={"If-None-Match": got.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
    wasm = client.get(f"/static/pdfjs/{version}/jbig2.wasm")
    assert wasm.headers["content-type"] == "application/wasm" and wasm.content.startswith(b"\0asm")
    licence = client.get(f"/static/pdfjs/{version}/LICENSE")
    assert licence.headers["content-type"] == "text/plain; charset=utf-8"
    assert licence.content == (VENDORED / "LICENSE").read_bytes()
    for wrong in ("/static/pdfjs/0.0.1/pdf.min.mjs", f"/static/pdfjs/{version}/MANIFEST.json",
                  f"/static/pdfjs/{version}/pdf.mjs", f"/static/pdfjs/{version}/..%2FMANIFEST.json"):
        missing = client.get(wrong)
        assert missing.status_code == 404, wrong
        assert missing.headers["content-type"] == "application/problem+json"


def test_the_viewers_policy_lets_its_own_script_and_pdfjs_worker_run_and_nothing_from_elsewhere(archive: Archive) -> None:
    name = str(archive.add("library.example.us", (ROOT / "tests" / "data" / "pdf" / "sizes.pdf").read_bytes(),
                           format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    page = client.get("/view", params={"pdi": name})
    assert page.status_code == 200
    policy = dict(part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";"))
    inline = re.findall(r"<script>(.*?)</script>", page.text, re.S)
    assert len(inline) == 1  # the one inline script runs by its digest; no 'unsafe-inline' for scripts
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    # scripts: pdf.js's folder of the origin the page was asked at (TestClient's), not all of 'self', where N2R
    # serves what a depositor stored
    pdfjs = "http://testserver/static/pdfjs/"
    assert policy["script-src"].split() == [pdfjs, f"'sha256-{digest}'"]
    assert policy["worker-src"] == pdfjs and policy["connect-src"] == "'self'" and policy["default-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["base-uri"] == "'none'"
    for directive, sources in policy.items():  # no other origin, no scheme-wide source, nowhere
        assert not re.search(r"\*|https?:|//", sources.replace(pdfjs, "")), (directive, sources)
    # pdf.js and its worker are asked for at pdi's own paths
    for file in ("pdf.min.mjs", "pdf.worker.min.mjs"):
        assert f"/static/pdfjs/{MANIFEST['version']}/{file}" in page.text


def test_the_cmaps_and_standard_fonts_are_vendored_served_and_given_to_pdfjs(archive: Archive) -> None:
    """pdf.js reads a CJK PDF's predefined CMap (``/Encoding /UniJIS-UCS2-H``, not embedded) from ``cMapUrl`` and
    draws a non-embedded Helvetica with ``standardFontDataUrl``'s Liberation Sans: both from pdi's own origin."""
    version = MANIFEST["version"]
    cmaps = [name for name in MANIFEST["files"] if name.startswith("cmaps/")]
    fonts = [name for name in MANIFEST["files"] if name.startswith("standard_fonts/")]
    assert len(cmaps) == 169 and "cmaps/UniJIS-UCS2-H.bcmap" in cmaps and "cmaps/LICENSE" in cmaps
    assert "standard_fonts/LiberationSans-Regular.ttf" in fonts and "standard_fonts/LICENSE_FOXIT" in fonts
    name = str(archive.add("library.example.us", (ROOT / "tests" / "data" / "pdf" / "sizes.pdf").read_bytes(),
                           format="pdf"))
    client = TestClient(create_app(archive.location, archive=archive))
    page = client.get("/view", params={"pdi": name}).text
    cmap_url = re.search(r'data-cmaps="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    font_url = re.search(r'data-fonts="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    assert cmap_url == f"/static/pdfjs/{version}/cmaps/" and font_url == f"/static/pdfjs/{version}/standard_fonts/"
    assert "cMapUrl: pdfView.dataset.cmaps, cMapPacked: true" in page
    assert "standardFontDataUrl: pdfView.dataset.fonts" in page
    cmap = client.get(cmap_url + "UniJIS-UCS2-H.bcmap")  # what pdf.js asks for: cMapUrl + name + ".bcmap"
    assert cmap.status_code == 200 and cmap.headers["content-type"] == "application/octet-stream"
    assert cmap.content == (VENDORED / "cmaps" / "UniJIS-UCS2-H.bcmap").read_bytes()
    assert cmap.headers["etag"] == f'"{MANIFEST["files"]["cmaps/UniJIS-UCS2-H.bcmap"]["sha256"]}"'
    font = client.get(font_url + "LiberationSans-Regular.ttf")
    assert font.status_code == 200 and font.headers["content-type"] == "font/ttf"
    assert font.content.startswith(b"\0\1\0\0")  # a TrueType font's sfnt version
    for wrong in (cmap_url + "Nothing-H.bcmap", cmap_url + "..%2F..%2FMANIFEST.json", font_url + "pdf.min.mjs"):  # a file of another folder
        assert client.get(wrong).status_code == 404, wrong


@pytest.mark.parametrize("host", ["evil.example 'unsafe-inline'", "a;script-src *", "x:1/static/", "[::1", ""])
def test_a_host_field_that_is_no_origin_adds_nothing_to_the_policy(archive: Archive, host: str) -> None:
    """The viewer names the origin it was asked at in its policy (CSP 3 §2.3.1's host-source): a Host field of
    other characters would write sources or directives of its own there. Such a request is a 400 (RFC 9112 §3.2:
    a Host that is no uri-host [":" port]); with none, the policy says 'self'."""
    name = str(archive.add("library.example.us", b"plain text\n", format="text"))
    client = TestClient(create_app(archive.location, archive=archive))
    page = client.get("/view", params={"pdi": name}, headers={"host": host})
    policy = page.headers.get("content-security-policy", "")
    if host:
        assert page.status_code == 400 and "the Host field is" in page.json()["detail"]
        assert "unsafe-inline" not in policy and "*" not in policy and "/static/" not in policy
        return
    assert page.status_code == 200
    sources = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert sources["script-src"].split()[0] == "'self'" and len(sources["script-src"].split()) == 2, policy
