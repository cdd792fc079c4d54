"""ReplayWeb.page, opened in Chromium, replays a page from a WACZ that `pdi export --wacz` wrote.

ReplayWeb.page's static build (the npm package ``replaywebpage``, fetched by
``scripts/bootstrap --dev`` into ``.venv/share/replaywebpage``) is served with
the WACZ from 127.0.0.1 by a server that answers range requests, as the viewer
reads a WACZ by ranges. Its ``<replay-web-page>`` element is embedded in a page;
the test waits for the replayed page's frame and checks, inside it, the text, the
style sheet's background and the image as archived. The screenshot goes to
``tests/artifacts/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from warc_builder import DATA

from chromium_helpers import open_page
from pdi.archive import Archive
from pdi.capture.browser import devtools
from pdi.interop.wacz import export_wacz
from pdi.interop.warc import import_warc
from pdi.wacz_signing import WaczKey
from support.handler_server import handler_server

S = "web.example.us"
REPLAYWEBPAGE = Path(sys.prefix) / "share" / "replaywebpage"
SHOTS = Path(os.environ.get("PDI_SCREENSHOTS") or Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")
PAGE = "http://127.0.0.1:18080/"  # the URL the real WARC (tests/data/warc/site.warc.gz) recorded


class _RangeHandler(SimpleHTTPRequestHandler):
    """Static files, with single byte ranges (``bytes=a-b``, ``bytes=a-``) answered 206."""

    def log_message(self, format: str, *args: object) -> None:
        return

    def send_head(self) -> Any:
        wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        path = self.translate_path(self.path)
        if wanted is None or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        start = int(wanted.group(1))
        end = min(int(wanted.group(2)) if wanted.group(2) else size - 1, size - 1)
        if start >= size:
            self.send_error(416)
            return None
        with open(path, "rb") as fh:
            fh.seek(start)
            body = fh.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return io.BytesIO(body)


def _serve(tmp_path: Path, key: WaczKey | None = None, tamper: Callable[[Path], None] | None = None,
           ) -> contextlib.AbstractContextManager[str]:
    """ReplayWeb.page and a WACZ of the recorded site, exported by pdi (signed with ``key``; then changed by
    ``tamper``), at ``http://127.0.0.1:PORT/``."""
    assert (REPLAYWEBPAGE / "ui.js").is_file(), "ReplayWeb.page is missing: run scripts/bootstrap --dev"
    root = tmp_path / "www"
    shutil.copytree(REPLAYWEBPAGE, root)
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        import_warc(archive, DATA / "site.warc.gz", S)
        export_wacz(archive, root / "pages.wacz", key=key)
    if tamper is not None:
        tamper(root / "pages.wacz")
    (root / "embed.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><script src="./ui.js"></script></head>'
        '<body style="margin:0"><replay-web-page style="display:block;width:100%;height:560px"'
        f' source="pages.wacz" url="{PAGE}" replayBase="./"></replay-web-page></body></html>',
        encoding="utf-8",
    )

    class Handler(_RangeHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

    return handler_server(Handler)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """ReplayWeb.page and a WACZ of the recorded site, exported by pdi, at ``http://127.0.0.1:PORT/``."""
    with _serve(tmp_path) as base:
        yield base


def _frames(tree: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield tree["frame"]
    for child in tree.get("childFrames", []):
        yield from _frames(child)


def _wait_for_replay(pipe: Any, session: str) -> None:
    """Until the replayed page's frame shows the heading, logo and background as archived (90 s at most)."""
    deadline = time.monotonic() + 90
    checks = (
        "[document.querySelector('h1') && document.querySelector('h1').textContent,"
        " document.querySelector('img') && document.querySelector('img').complete"
        " && document.querySelector('img').naturalWidth,"
        " getComputedStyle(document.body).backgroundImage,"
        " getComputedStyle(document.body).backgroundColor]"
    )
    seen: object = None
    while True:
        assert time.monotonic() < deadline, f"ReplayWeb.page did not replay {PAGE}: {seen}"
        tree = pipe.call("Page.getFrameTree", None, session, deadline)["frameTree"]
        replayed = [f for f in _frames(tree) if f["url"].endswith(f"mp_/{PAGE}")]
        if replayed:
            world = pipe.call("Page.createIsolatedWorld", {"frameId": replayed[0]["id"]}, session, deadline)
            answer = pipe.call(
                "Runtime.evaluate",
                {"expression": checks, "contextId": world["executionContextId"], "returnByValue": True},
                session, deadline,
            )
            seen = answer["result"].get("value")
            # the heading as archived (UTF-8), logo.png (8×8) decoded, and style.css's url(bg.png) applied
            if isinstance(seen, list) and seen[0] == "Café notes" and seen[1] == 8 and "bg.png" in seen[2]:
                return
        else:
            seen = [f["url"] for f in _frames(tree)]
        time.sleep(0.5)


def test_replaywebpage_replays_the_exported_page(served: str) -> None:
    with devtools() as pipe:
        session = open_page(pipe, served + "embed.html", timeout=60)
        _wait_for_replay(pipe, session)
        time.sleep(1)  # let the background image paint before the screenshot
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, time.monotonic() + 30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "replaywebpage-exported-wacz.png").write_bytes(base64.b64decode(shot["data"]))


#: What ReplayWeb.page (wabac.js) recorded of a WACZ's signature: the rows of its IndexedDB store
#: "verification" ({id, expected, matched}), read from the page (the service worker's origin).
_VERIFICATION = """(async () => {
  const rows = [];
  for (const d of await indexedDB.databases()) {
    const db = await new Promise((ok, no) => { const r = indexedDB.open(d.name); r.onsuccess = () => ok(r.result);
                                               r.onerror = () => no(r.error); });
    if (db.objectStoreNames.contains("verification")) {
      rows.push(...await new Promise(ok => { const q = db.transaction("verification").objectStore("verification")
                                                         .getAll(); q.onsuccess = () => ok(q.result); }));
    }
    db.close();
  }
  return rows;
})()"""


def _verification(tmp_path: Path, key: WaczKey, tamper: Callable[[Path], None] | None = None) -> dict[str, Any]:
    """ReplayWeb.page opens the WACZ (signed with ``key``) and replays it: what it recorded of the signature."""
    with _serve(tmp_path, key, tamper) as base, devtools() as pipe:
        session = open_page(pipe, base + "embed.html", timeout=60)
        _wait_for_replay(pipe, session)
        answer = pipe.call("Runtime.evaluate", {"expression": _VERIFICATION, "awaitPromise": True,
                                                "returnByValue": True}, session, time.monotonic() + 30)
    return {row["id"]: row for row in answer["result"]["value"]}


def test_replaywebpage_verifies_the_signature(tmp_path: Path) -> None:
    """Its signature check (Web Crypto: ECDSA P-384 with SHA-256 of the hash, the key imported from
    signedData.publicKey) holds, and it shows the public key and software pdi signed with."""
    key = WaczKey.generate()
    rows = _verification(tmp_path, key)
    assert rows["signature"]["matched"] is True, rows
    assert rows["publicKey"]["expected"] == key.public
    assert rows["software"]["expected"].startswith("pdi ")
    assert rows["datapackageHash"]["expected"].startswith("sha256:")


def test_replaywebpage_refuses_a_signature_by_another_key(tmp_path: Path) -> None:
    """The same WACZ with another key put in signedData.publicKey: ReplayWeb.page's check fails."""

    def other_key(path: Path) -> None:
        import json
        import zipfile

        with zipfile.ZipFile(path) as zf:
            members = {i.filename: (i, zf.read(i)) for i in zf.infolist()}
        digest = json.loads(members["datapackage-digest.json"][1])
        digest["signedData"]["publicKey"] = WaczKey.generate().public
        with zipfile.ZipFile(path, "w") as zf:
            for name, (info, data) in members.items():
                zf.writestr(info, json.dumps(digest).encode() if name == "datapackage-digest.json" else data)

    rows = _verification(tmp_path, WaczKey.generate(), other_key)
    assert rows["signature"]["matched"] is False, rows
