"""Packing local files (pdi.capture.pack_path, `pdi mhtml pack`), read back with pdi.mhtml.parse."""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.capture import pack_path
from pdi.cli import cli
from pdi.errors import NotFoundError, UnsupportedError
from pdi.mhtml import Aggregate, check, parse


def png(seed: int = 0) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = bytes((0, seed % 256, 0, 0))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def by_location(agg: Aggregate) -> dict[str, bytes]:
    return {p.location or "": p.data for p in agg.parts}


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    write(tmp_path, "img/a.png", png(1))
    write(tmp_path, "img/bg.png", png(2))
    write(tmp_path, "img/poster.png", png(3))
    write(tmp_path, "img/caf\u00e9 1.png", png(4))
    write(tmp_path, "img/icon.png", png(5))
    write(tmp_path, "img/in-frame.png", png(6))
    write(tmp_path, "img/imported.png", png(7))
    write(tmp_path, "img/obj.svg", '<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    write(tmp_path, "css/s.css", '@import "more.css";\nbody { background: url(../img/bg.png) }\n')
    write(tmp_path, "css/more.css", "p { background: url('../img/imported.png#frag') }\r\n")
    write(tmp_path, "fr/frame.html", '<p>frame <img src="../img/in-frame.png"></p>\n')
    write(
        tmp_path,
        "index.html",
        "<!doctype html>\n<html><head><meta charset=utf-8>\n"
        '<link rel="stylesheet" href="css/s.css"><link rel=icon href=img/icon.png>\n'
        "<style>h1 { background: url(img/bg.png) }</style></head>\n"
        "<body style=\"background: url('img/a.png')\"><h1>Caf\u00e9</h1>\n"
        '<img src="img/caf\u00e9 1.png" srcset="img/a.png 1x, img/bg.png 2x">\n'
        '<video poster="img/poster.png"></video><object data="img/obj.svg"></object>\n'
        '<iframe src="fr/frame.html"></iframe>\n'
        '<a href="other.html">a link is not packed</a>\n'
        "</body></html>\n",
    )
    return tmp_path


def test_pack_follows_every_kind_of_reference(site: Path) -> None:
    packed = pack_path(site / "index.html")
    agg = parse(packed.mhtml)
    got = by_location(agg)
    base = "thismessage:/"
    expected = {
        "index.html": (site / "index.html").read_bytes(),
        "css/s.css": (site / "css/s.css").read_bytes(),
        "css/more.css": (site / "css/more.css").read_bytes(),
        "img/a.png": png(1),
        "img/bg.png": png(2),
        "img/poster.png": png(3),
        # the URI the browser asks for (WHATWG URL: the path in UTF-8, percent-encoded)
        "img/caf%C3%A9%201.png": png(4),
        "img/icon.png": png(5),
        "img/in-frame.png": png(6),
        # labelled with the fragment it was named with: Chromium finds it only so
        "img/imported.png#frag": png(7),
        "img/obj.svg": (site / "img/obj.svg").read_bytes(),
        "fr/frame.html": (site / "fr/frame.html").read_bytes(),
    }
    assert got == {base + k: v for k, v in expected.items()}
    assert agg.root.location == base + "index.html"
    assert agg.root.content_type == "text/html"
    assert packed.failures == ()
    # Every reference the page needs is satisfied inside the aggregate; only the link is not.
    unsatisfied = [r.uri for r in agg.references if r.status == "unsatisfied"]
    assert unsatisfied == ["thismessage:/other.html"]
    satisfied = [r for r in agg.references if r.satisfied]
    assert len(satisfied) == 14
    assert all(r.rule == "content-location" for r in satisfied)


def test_pack_is_deterministic(site: Path) -> None:
    assert pack_path(site / "index.html").mhtml == pack_path(site / "index.html").mhtml


def test_pack_with_base_keeps_real_uris(site: Path) -> None:
    agg = parse(pack_path(site / "index.html", base="https://example.org/site/").mhtml)
    assert agg.root.location == "https://example.org/site/index.html"
    assert agg.root.content_location == "https://example.org/site/index.html"
    assert "https://example.org/site/css/more.css" in by_location(agg)
    assert [r.uri for r in agg.references if r.status == "unsatisfied"] == ["https://example.org/site/other.html"]


def test_pack_never_reads_outside_the_root(tmp_path: Path) -> None:
    secret = write(tmp_path, "secret.png", png(9))
    site = tmp_path / "site"
    write(site, "ok.png", png(1))
    os.symlink(secret, site / "link.png")
    os.symlink(tmp_path, site / "up")
    write(
        site,
        "index.html",
        '<img src="../secret.png"><img src="link.png"><img src="up/secret.png">'
        '<img src="/etc/passwd"><img src="ok.png"><img src="%2e%2e/secret.png"><img src="file:///etc/passwd">',
    )
    packed = pack_path(site / "index.html")
    agg = parse(packed.mhtml)
    assert sorted(by_location(agg)) == ["thismessage:/index.html", "thismessage:/ok.png"]
    assert png(9) not in packed.mhtml
    # ../secret.png climbs no higher than thismessage:/ (RFC 3986 §5.2.4), and no such file is there;
    # %2e%2e is not a dot segment for the URI but would be one for the file system: refused.
    assert sorted(f.url for f in packed.failures) == [
        "file:///etc/passwd",
        "thismessage:/%2e%2e/secret.png",
        "thismessage:/etc/passwd",
        "thismessage:/link.png",
        "thismessage:/secret.png",
        "thismessage:/up/secret.png",
    ]


def test_pack_missing_index_and_bad_base(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        pack_path(tmp_path / "nope.html")
    write(tmp_path, "i.html", "<p>")
    with pytest.raises(UnsupportedError):
        pack_path(tmp_path / "i.html", base="http://example.org/no-slash")


def test_pack_refuses_a_relative_base(tmp_path: Path) -> None:
    # RFC 2557 §5: a base URI is absolute; a relative one would resolve no reference at
    # all, and the page would be packed alone without a word.
    write(tmp_path, "i.html", '<img src="a.png">')
    write(tmp_path, "a.png", b"A")
    for base in ("relative/", "//host/dir/", "/dir/"):
        with pytest.raises(UnsupportedError, match="absolute"):
            pack_path(tmp_path / "i.html", base=base)


def test_cli_pack_never_writes_over_what_it_packs(tmp_path: Path) -> None:
    write(tmp_path, "index.html", '<img src="a.png">')
    write(tmp_path, "a.png", b"A")
    for target in ("index.html", "a.png"):
        result = CliRunner().invoke(cli, ["mhtml", "pack", str(tmp_path / "index.html"), "-o", str(tmp_path / target)])
        assert result.exit_code == 5, result.output
    assert (tmp_path / "index.html").read_bytes() == b'<img src="a.png">'
    assert (tmp_path / "a.png").read_bytes() == b"A"


def test_pack_lf_only_and_legacy_text_kept_byte_for_byte(tmp_path: Path) -> None:
    html = b"<html><head><meta charset=shift_jis></head>\n<body>\x93\xfa\x96\x7b\x8c\xea\r\nmixed\rends\n</body></html>"
    write(tmp_path, "index.html", html)
    agg = parse(pack_path(tmp_path / "index.html").mhtml)
    assert agg.root.data == html
    assert agg.root.text().splitlines()[1] == "<body>日本語"


def test_cli_pack(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.mht"
    result = CliRunner().invoke(cli, ["mhtml", "pack", str(site / "index.html"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "packed 12 parts" in result.output
    assert parse(out.read_bytes()).root.location == "thismessage:/index.html"
    missing = CliRunner().invoke(cli, ["mhtml", "pack", str(tmp_path / "none.html"), "-o", str(out)])
    assert missing.exit_code == 4


_segment = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x2FF, blacklist_characters="/\\\x7f"), min_size=1, max_size=12).filter(
    lambda s: s not in (".", "..") and s.strip() == s and "\x00" not in s
)
_tree = st.dictionaries(st.lists(_segment, min_size=1, max_size=3).map(tuple), st.binary(max_size=300), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_tree)
def test_property_random_trees_read_back_byte_for_byte(tree: dict[tuple[str, ...], bytes]) -> None:
    """Pack a random tree of files, all referenced from the page; every file comes back exact."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files: dict[str, bytes] = {}
        for parts, data in tree.items():
            path = root.joinpath("d", *parts)
            # A name that is both a file and a folder cannot exist: skip the later one.
            if any(p.is_file() for p in [path, *path.parents]) or path.is_dir():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            files["/".join(("d", *parts))] = data
        import html as _html
        import urllib.parse

        links = "".join(
            f'<img src="{_html.escape(urllib.parse.quote(rel), quote=True)}">\n' for rel in sorted(files)
        )
        (root / "index.html").write_text(f"<html><body>\n{links}</body></html>\n", encoding="utf-8")
        packed = pack_path(root / "index.html")
        agg = parse(packed.mhtml)
        got = by_location(agg)
        for rel, data in files.items():
            # Labelled with the reference as the page writes it, resolved (RFC 2557 §8.2).
            assert got["thismessage:/" + urllib.parse.quote(rel)] == data
        assert len(agg.parts) == len(files) + 1
        assert not [r for r in agg.references if r.status == "unsatisfied"]


def test_pack_follows_base_href(tmp_path: Path) -> None:
    write(tmp_path, "assets/a.png", png(1))
    write(tmp_path, "assets/css/s.css", "p { background: url(../a.png) }")
    write(tmp_path, "index.html", '<base href="assets/"><img src="a.png"><link rel=stylesheet href="css/s.css">')
    agg = parse(pack_path(tmp_path / "index.html").mhtml)
    # References resolve against the <base> (RFC 2557 §5 (a)); the parts are labelled so.
    assert sorted(by_location(agg)) == [
        "thismessage:/assets/a.png",
        "thismessage:/assets/css/s.css",
        "thismessage:/index.html",
    ]
    assert all(r.satisfied for r in agg.references if r.reference.kind != "base")


def test_pack_two_spellings_of_one_file_give_one_part(tmp_path: Path) -> None:
    # "sp ace.png" and "sp%20ace.png" are the same URI to a browser and to §8.2's comparison
    # (the reader %-encodes the space): one part, both references satisfied, no §7 error.
    write(tmp_path, "index.html", '<img src="sp ace.png"><img src="sp%20ace.png">')
    write(tmp_path, "sp ace.png", b"PNG")
    agg = parse(pack_path(tmp_path / "index.html").mhtml)
    assert [p.data for p in agg.parts] == [b'<img src="sp ace.png"><img src="sp%20ace.png">', b"PNG"]
    assert all(r.satisfied for r in agg.references)
    assert check(agg).errors == ()
