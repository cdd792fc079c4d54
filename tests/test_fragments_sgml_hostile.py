"""elt on a stranger's SGML (:mod:`pdi.fragments.markup.sgml`): nothing fetched, bounded in time and memory.

OpenSP's ``onsgmls`` fetches an entity whose system identifier is an ``http`` URL, or a formal system
identifier's ``<url>`` storage object (OpenSP's ``sysid.htm``); ``-R`` restricts files only. A document must
never make the archive fetch anything, however its declarations spell the URL.
"""

from __future__ import annotations

import http.server
from typing import ClassVar

import pytest

from pdi.errors import UnsupportedError
from pdi.fragments.markup.sgml import onsgmls_path, read_sgml
from support.handler_server import handler_server

pytestmark = pytest.mark.skipif(onsgmls_path() is None, reason="needs OpenSP's onsgmls")

#: Ways to name a URL that OpenSP fetches (each was fetched before the fix, checked with a loopback server).
URL_SPELLINGS = {
    "formal sysid with an attribute": '<!ENTITY e SYSTEM "<url bctf=utf-8>{u}a">',
    "public text holding a quote": """<!ENTITY e PUBLIC "-//it's//EN" "{u}b">""",
    "comment between parameters": '<!ENTITY e SYSTEM -- c -- "{u}c">',
    "declaration built from character references": '<!ENTITY % d "<!ENTITY e SYSTEM &#34;{u}d&#34;>"> %d;',
    "external parameter entity": '<!ENTITY % p SYSTEM -- c -- "{u}e"> %p;',
}


class _Recorder(http.server.BaseHTTPRequestHandler):
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        body = b"<x>fetched</x>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("declaration", URL_SPELLINGS.values(), ids=URL_SPELLINGS.keys())
def test_an_entity_named_by_url_is_never_fetched_however_it_is_spelt(declaration: str) -> None:
    _Recorder.asked = []
    with handler_server(_Recorder) as url:
        text = f"<!DOCTYPE r [<!ELEMENT r - - ANY>{declaration.format(u=url)}]>\r\n<r>&e;</r>\r\n"
        with pytest.raises(UnsupportedError, match="by URL"):
            read_sgml(text)
        doctype = f'<!DOCTYPE r SYSTEM -- c -- "{url}f">\r\n<r></r>\r\n'
        with pytest.raises(UnsupportedError, match="by URL"):
            read_sgml(doctype)
    assert _Recorder.asked == []


def test_without_a_seccomp_filter_onsgmls_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from pdi.fragments.markup import sgml

    monkeypatch.setattr(sgml, "_WITHOUT_NETWORK", sgml._WITHOUT_NETWORK.replace("libseccomp.so.2", "libnone.so.0"))
    with pytest.raises(UnsupportedError, match=r"\(status 120\): cannot keep onsgmls off the network: libnone.so.0"):
        read_sgml("<!DOCTYPE r [<!ELEMENT r - - ANY>]>\r\n<r></r>\r\n")
