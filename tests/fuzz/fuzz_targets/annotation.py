"""W3C Web Annotation and Hypothesis JSON, imported: :func:`pdi.interop.annotation.import_annotations`.

The input is the JSON file ``pdi annotate --import`` (and ``POST
/annotations/import``) reads; JSON that does not parse is their
:class:`~pdi.errors.ParseError` and ends the call. The annotations are
imported against an archive the worker makes once (in a temporary folder,
clock fixed, so the names are always the same): a text, an HTML page
(``tests/data/annotation/essay.html``), a PNG and a WAV, named in
:data:`NAMES`. A target whose source is not a PDI is imported again against
the HTML page, as ``--pdi`` does for a Hypothesis export. What must hold:
every name found lies in its document; and each one, exported
(:func:`~pdi.interop.annotation.export_annotation`) and imported again,
gives back the same name, but for a ``rect`` reaching past the image, which
exports clipped to it: then the two names select the same pixels.
"""

from __future__ import annotations

import atexit
import datetime
import io
import json
import wave
from pathlib import Path

from fuzz_harness import REPO, Target
from PIL import Image

from pdi._workdirs import WorkFolder
from pdi.archive import Archive
from pdi.errors import PDIError, UnsupportedError
from pdi.interop.annotation import export_annotation, import_annotations

SERIES = "library.example.us"
TEXT = b"Hello, world.\nThe quick brown fox\njumps over the lazy dog.\n"
#: The archived documents' names (the clock is fixed, so they never change).
NAMES = {
    "text": "urn:pdi://library.example.us/2026/11/23/1.text.1",
    "html": "urn:pdi://library.example.us/2026/11/23/2.html.1",
    "png": "urn:pdi://library.example.us/2026/11/23/3.png.1",
    "wav": "urn:pdi://library.example.us/2026/11/23/4.wav.1",
}
_archive: Archive | None = None


def _picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 20), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


def _sound() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(bytes(2 * 8000))
    return out.getvalue()


def archive() -> Archive:
    """The worker's archive of the four documents, made on first use."""
    global _archive
    if _archive is None:
        # removed as the worker ends; one a worker killed outright left, by a later worker (pdi._workdirs)
        work = WorkFolder("pdi-fuzz-annotation-")
        atexit.register(work.cleanup)
        folder = work.name
        opened = Archive.init(
            Path(folder) / "archive", clock=lambda: datetime.datetime(2026, 11, 23, 9, 0, tzinfo=datetime.UTC)
        )
        opened.add_series(SERIES)
        essay = (Path(REPO) / "tests" / "data" / "annotation" / "essay.html").read_bytes()
        made = [
            opened.add(SERIES, TEXT, format="text"),
            opened.add(SERIES, essay, format="html"),
            opened.add(SERIES, _picture(), format="png"),
            opened.add(SERIES, _sound(), format="wav"),
        ]
        assert [str(n) for n in made] == list(NAMES.values()), made
        _archive = opened
    return _archive


def run(data: bytes) -> None:
    opened = archive()
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError):
        return  # the command and the route answer a ParseError ("not JSON")
    try:
        results = import_annotations(opened, parsed)
    except UnsupportedError:
        results = import_annotations(opened, parsed, document=NAMES["html"])
    for result in results:
        assert result.status in ("found", "moved", "missing", "selected")
        if result.name is None:
            assert result.status == "missing"
            continue
        name = str(result.name)
        opened.get(name)  # the name resolves: it lies in its document
        try:
            exported = export_annotation(opened, name)
        except PDIError:
            continue
        (again,) = import_annotations(opened, exported)
        if str(again.name) != name:
            # a region reaching past the image imports as it was given, and exports clipped to the image
            # (found by this target): the two names differ but must select the same pixels
            assert result.name.fragment is not None and result.name.fragment.scheme == "rect", (name, again)
            assert again.name is not None and opened.get(str(again.name)).data == opened.get(name).data


TARGET = Target(
    "annotation",
    run,
    warmup=json.dumps({
        "type": "Annotation",
        "target": {"source": NAMES["text"], "selector": {"type": "TextQuoteSelector", "exact": "quick brown fox"}},
    }).encode(),
    tokens=(
        b'"type": ', b'"Annotation"', b'"target": ', b'"source": ', b'"selector": ', b'"TextQuoteSelector"',
        b'"TextPositionSelector"', b'"FragmentSelector"', b'"DataPositionSelector"', b'"exact": ', b'"prefix": ',
        b'"suffix": ', b'"start": ', b'"end": ', b'"value": ', b'"conformsTo": ', b'"http://tools.ietf.org/rfc/rfc5147"',
        b'"http://www.w3.org/TR/media-frags/"', b'"http://tools.ietf.org/rfc/rfc3236"', b'"xywh=percent:50,0,50,50"',
        b'"t=1,2"', b'"char=18,33"', b'"rows": ', b'"items": ', b'"first": ', b'"uri": ', b'"id": ',
        *(json.dumps(n).encode() for n in NAMES.values()), b"[", b"]", b"{", b"}", b",", b"null", b"true", b"-1",
        b"1e400", b"9999999999999999999", b'"\\u0000"', b'"\\ud800"',
    ),
    examples=0.5,
)
