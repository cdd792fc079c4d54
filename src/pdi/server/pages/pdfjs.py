"""pdf.js, served by pdi itself to its viewer: the built files of npm's ``pdfjs-dist``, vendored.

The viewer renders PDFs with Mozilla's pdf.js. No CDN: the two built files
the page loads (``pdf.min.mjs``, the library, and ``pdf.worker.min.mjs``, its
worker), the image decoders the worker loads (``*.wasm`` and their fallbacks:
CCITT and JBIG2 scans, JPEG 2000, ICC colour), the CMaps (``cmaps/*.bcmap``:
the predefined CJK encodings a PDF names without embedding them) and standard
fonts (``standard_fonts/``: what pdf.js draws a non-embedded standard-14 font
with) and the licences are copied from npm's own tarball of a pinned
``pdfjs-dist`` into ``src/pdi/data/pdfjs/`` by ``scripts/vendor-pdfjs``, with
``MANIFEST.json`` (the version, the tarball's sha512 integrity, each file's
sha256). So a pdi installed as a package carries them, and serves them from
``/static/pdfjs/VERSION/NAME`` (:class:`PdfJsAssets`): each file's octets are
checked against the manifest's sha256 when first read (a damaged copy is a
``500`` naming the file, never served), and answered with that digest as the
``ETag``, ``immutable`` (the version is in the path), as JavaScript, nosniff.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pdi.server.http.conditional import tag_matches
from pdi.server.http.problems import Problem

#: What each served file is sent as.
_TYPES = {".mjs": "text/javascript; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".wasm": "application/wasm",
          ".bcmap": "application/octet-stream", ".pfb": "application/octet-stream", ".ttf": "font/ttf",
          "": "text/plain; charset=utf-8"}
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Manifest:
    """``src/pdi/data/pdfjs/MANIFEST.json``: which pdfjs-dist the copy is, and each file's sha256."""

    version: str
    integrity: str
    files: dict[str, str]

    def url(self, name: str = "") -> str:
        """Where the viewer loads ``name`` from (a path on pdi's own origin); no name: the folder (pdf.js's ``wasmUrl``)."""
        if name and name not in self.files:
            raise KeyError(name)
        return f"/static/pdfjs/{self.version}/{name}"


def _folder() -> resources.abc.Traversable:
    return resources.files("pdi") / "data" / "pdfjs"


@functools.cache
def manifest() -> Manifest:
    """The vendored copy's manifest (read once)."""
    said = json.loads((_folder() / "MANIFEST.json").read_text(encoding="utf-8"))
    return Manifest(said["version"], said["integrity"], {name: f["sha256"] for name, f in said["files"].items()})


@functools.cache
def checked(name: str) -> bytes:
    """The octets of the vendored file ``name``, checked against the manifest's sha256 (read once)."""
    expected = manifest().files[name]
    octets = (_folder() / name).read_bytes()
    got = hashlib.sha256(octets).hexdigest()
    if got != expected:
        raise Problem(500, "damaged copy of pdf.js",
                      f"src/pdi/data/pdfjs/{name} has sha256 {got}, not the {expected} of MANIFEST.json:"
                      " run scripts/vendor-pdfjs again")
    return octets


class PdfJsAssets:
    """``GET /static/pdfjs/VERSION/NAME``: a file of the vendored pdf.js."""

    def routes(self) -> list[Route]:
        return [Route("/static/pdfjs/{version}/{name:path}", self.file, methods=["GET", "HEAD"])]

    async def file(self, request: Request) -> Response:
        version, name = request.path_params["version"], request.path_params["name"]
        known = manifest()
        if version != known.version or name not in known.files:
            top = sorted(n for n in known.files if "/" not in n)
            raise Problem(404, "not found",
                          f"/static/pdfjs/{version}/{name[:200]}: pdi serves pdf.js {known.version},"
                          f" files {', '.join(top)}, and the CMaps and standard fonts of MANIFEST.json")
        octets = checked(name)
        tag = f'"{known.files[name]}"'
        headers = {"ETag": tag, "Cache-Control": IMMUTABLE, "X-Content-Type-Options": "nosniff"}
        held = request.headers.get("if-none-match")
        if held is not None and tag_matches(held, tag):  # weakly, and "*" (RFC 9110 §13.1.2)
            return Response(status_code=304, headers=headers)
        base = name.rpartition("/")[2]
        media_type = _TYPES["." + base.rpartition(".")[2] if "." in base else ""]
        return Response(octets, media_type=media_type, headers=headers)
