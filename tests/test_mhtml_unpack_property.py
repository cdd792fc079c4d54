"""Property tests: random aggregates unpack inside the folder, and no input raises anything but pdi errors."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.capture import unpack_to
from pdi.errors import PDIError
from pdi.mhtml import parse
from pdi.mhtml.unpack import plan
from pdi.mhtml.write import needed_references

_label = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=40)
_media = st.sampled_from(["text/html", "text/css", "image/png", "application/octet-stream", "text/plain", "x/y"])
_body = st.one_of(
    st.binary(max_size=200),
    st.lists(
        st.sampled_from(['<img src="', '">', "<base href=", "url(", ")", "@import '", "cid:", "../", "a.png", "#x", "<iframe src=", " ", "&amp;", "\u00e9"]),
        max_size=30,
    ).map(lambda xs: "".join(xs).encode("utf-8")),
)


def _mhtml(parts: list[tuple[str, str, bytes]]) -> bytes:
    out = [b'MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary="=_b"\r\n\r\n']
    for label, media, body in parts:
        out.append(b"--=_b\r\nContent-Type: " + media.encode() + b"\r\nContent-Transfer-Encoding: binary\r\n")
        out.append(b"Content-Location: " + label.encode("utf-8") + b"\r\n\r\n" + body.replace(b"--=_b", b"") + b"\r\n")
    out.append(b"--=_b--\r\n")
    return b"".join(out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_label, _media, _body), min_size=1, max_size=6))
def test_property_random_aggregates_unpack_inside_the_folder(parts: list[tuple[str, str, bytes]]) -> None:
    try:
        agg = parse(_mhtml(parts))
        result = plan(agg)
    except PDIError:
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        written = unpack_to(result, out)
        assert sorted(os.listdir(out)) == sorted(p.name for p in written)
        assert len(written) == len(agg.parts)
        assert all(p.parent == out and p.is_file() and not p.is_symlink() for p in written)
        assert os.listdir(tmp) == ["out"]
        # Parts that are neither HTML nor CSS come out byte for byte.
        by_name = {f.name: f for f in result.files}
        for part in agg.parts:
            planned = next(f for f in by_name.values() if f.part == part.index)
            if not (part.is_html or part.is_css):
                assert (out / planned.name).read_bytes() == part.data


@settings(max_examples=150, deadline=None)
@given(_label, _media, _body, st.one_of(st.none(), st.text(max_size=12)))
def test_property_needed_references_raises_only_pdi_errors(url: str, media: str, body: bytes, charset: str | None) -> None:
    try:
        needs = needed_references(url or "thismessage:/", media, body, charset)
    except PDIError:
        return
    for need in needs:
        assert "#" not in need.url
        assert need.as_document in (None, "html", "css")
