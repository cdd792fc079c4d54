"""pdi.charsets is a core: it uses nothing of pdi's above it (ARCHITECTURE.md, "arrows point inward").

MHTML, fragments of HTML, the archive and the server all use it; if it imported any of
them back, a cycle would tie the cores to the edges. Checked in a fresh interpreter,
after calling every entry point (a function-level import would load only then).
"""

from __future__ import annotations

import subprocess
import sys
import types

ABOVE = ("pdi.mhtml", "pdi.fragments", "pdi.archive", "pdi.server", "pdi.capture", "pdi.cli")

SCRIPT = """
import sys
from pdi import charsets

charsets.lookup("csUTF8"); charsets.codec_for("latin-1"); charsets.iana_name("mac-cyrillic")
charsets.same_charset("utf8", "csUTF8"); charsets.registry(); charsets.registry_updated()
page = b'<meta charset="koi8-r"><p>\\xc1'
encoding, _, _ = charsets.sniff_encoding(page, declared=None, media_type="text/html")
charsets.whatwg_decode(page, encoding); charsets.whatwg_encoding("latin1")
charsets.bom_encoding(page); charsets.meta_charset(page); charsets.css_charset(b'@charset "x";')
from pdi.charsets.sniff import codec_name, single_byte_table
codec_name("UTF-8"); single_byte_table("KOI8-U")
print(encoding)
print("\\n".join(sorted(m for m in sys.modules if m == "pdi" or m.startswith("pdi."))))
"""


def test_charsets_imports_nothing_above_the_cores() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    encoding, *loaded = result.stdout.split()
    assert encoding == "KOI8-R"  # the script did reach the sniffer
    assert {"pdi.charsets", "pdi.charsets.iana", "pdi.charsets.sniff"} <= set(loaded)
    above = [m for m in loaded if m.startswith(tuple(p + "." for p in ABOVE)) or m in ABOVE]
    assert above == [], f"pdi.charsets imports modules above the cores: {above}"


def test_the_door_hides_no_submodule() -> None:
    """``pdi.charsets.sniff`` is the module (its function is ``sniff_encoding`` at the door)."""
    import pdi.charsets.iana
    import pdi.charsets.sniff

    assert isinstance(pdi.charsets.sniff, types.ModuleType)
    assert isinstance(pdi.charsets.iana, types.ModuleType)
    assert pdi.charsets.sniff_encoding is pdi.charsets.sniff.sniff
    assert pdi.charsets.lookup is pdi.charsets.iana.lookup
