"""A mirror answers an SGML document's #elt= passages at once, as its origin does, or not at all.

Two real resolvers on loopback (``pdi serve``): A, the origin, parsed the filing with its DTD (A's SGML folder
has it); B, a mirror, copies it with ``pdi mirror sync``. A's signed manifest gives the SHA-256 of the parse A
keeps; B keeps the parse it makes of the same octets only when it is that one, byte for byte. Without the DTD,
B's parse is another (element 3 is CITE, not PARA): B says so and refuses ``#elt=`` rather than answer otherwise
than A; once the DTD is added to B, the next sync keeps it, and both resolvers answer alike. The passages are
onsgmls's, run by hand (:mod:`support.sgml_filing`).
"""

from __future__ import annotations

from pathlib import Path

import httpx
from test_server_mirrors import mirror, pdi, serving

from pdi.archive import Archive, Content
from pdi.fragments.markup import sgml
from support.sgml_filing import FILING, FILING_DTD, PUBLIC, WITH_DTD, check_by_hand

assert sgml.onsgmls_path() is not None, "OpenSP's onsgmls is not installed: run scripts/bootstrap --dev"

S = "filings.example.us"


def _add_dtd(tmp_path: Path, location: Path) -> None:
    dtd = tmp_path / "filing.dtd"
    dtd.write_text(FILING_DTD, encoding="ascii")
    code, out = pdi("sgml", "add", str(dtd), "--public-id", PUBLIC, "--archive", str(location))
    assert code == 0, out


def _elt(base: str, name: str) -> httpx.Response:
    return httpx.get(f"{base}/uri-res/N2R?{name}%23elt=3,3", timeout=30)


def test_a_mirror_answers_the_origins_passages_of_sgml_or_refuses_them_never_others(tmp_path: Path) -> None:
    check_by_hand(tmp_path)
    a = tmp_path / "a"
    with Archive.init(a) as archive:
        archive.add_series(S)
    _add_dtd(tmp_path, a)
    with Archive.open(a) as archive:
        (name,) = archive.deposit(S, [Content(FILING.encode(), "sgml")])
    assert pdi("keys", "init", "--archive", str(a))[0] == 0
    b = mirror(tmp_path, "b")  # its SGML folder empty
    with serving(a) as a_url:
        assert _elt(a_url, str(name)).content == WITH_DTD
        code, out = pdi("mirror", "add", a_url, "--series", S, "--archive", str(b))
        assert code == 0, out
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0, out  # the name is kept; its passages are not answered otherwise than A answers them
        assert "1 new" in out and f"unparsed\t{name}\tkept, but its #elt= is refused here: its parse here is not" \
            " its origin's" in out, out
        with serving(b) as b_url:
            refused = _elt(b_url, str(name))
            assert refused.status_code != 200 and "no kept SGML parse" in refused.text, refused.text
            assert httpx.get(f"{b_url}/uri-res/N2R?{name}", timeout=30).content == FILING.encode()
        _add_dtd(tmp_path, b)  # the DTD A read: the next sync makes the same parse, and keeps it
        code, out = pdi("mirror", "sync", "--archive", str(b))
        assert code == 0 and "unparsed" not in out and "1 held already" in out, out
        with serving(b) as b_url:
            assert _elt(b_url, str(name)).content == WITH_DTD == _elt(a_url, str(name)).content
        code, out = pdi("mirror", "sync", "--archive", str(b))  # kept: nothing more to do
        assert code == 0 and "unparsed" not in out, out
