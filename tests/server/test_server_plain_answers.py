"""A serial name spelled canonically, answered from the catalog's row alone (:mod:`pdi.server.protocol.plain`).

Each answer :class:`~pdi.server.protocol.plain.PlainAnswers` makes is checked
against the one the resolver's general path makes for the same name
(:meth:`~pdi.server.protocol.resolver.Resolver.public_answer` with the plain
answers turned off: a parsed PDI, :func:`whole_entity`, the memento's
headers), for names of every shape the catalog holds, and for any spelling
hypothesis makes of them: the plain answer is either the general path's,
field for field, or none (and the general path answers). What is not the
plain case goes on to the general path: another spelling, a withdrawal, an
embargo in force, a private series, a mirrored series, a multipart file, a
damaged blob, a base URL that a ``Link`` quotes.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.archive import Archive
from pdi.archive.content import Content
from pdi.server import create_app
from pdi.server.process.cache import ResponseCache
from pdi.server.protocol.plain import NOT_PUBLIC
from pdi.server.protocol.resolver import Resolver
from support.stored_blobs import flip_octet

S = "plain.example.us"
CLOSED = "closed.example.us"
MIRRORED = "mirrored.example.us"
CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "mhtml"
SERVER = ("127.0.0.1", 8000)
#: The largest answer kept (``pdi serve --cache-mib``'s entries are at most 1 MiB; here the text of two chunks too).
MOST = 4 << 20


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 30, 40)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def archive_names(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    location = tmp_path_factory.mktemp("plain") / "archive"
    with Archive.init(location) as archive:
        for series in (S, CLOSED):
            archive.add_series(series)
        names = {
            "text": str(archive.add(S, b"Hello, world.\nSecond line.\n", format="text")),
            "utf8": str(archive.add(S, "Grüße, naïve café.\n".encode(), format="text", charset="utf-8")),
            "latin1": str(archive.add(S, "caf\xe9\n".encode("latin-1"), format="text", charset="iso-8859-1")),
            "html": str(archive.add(S, b"<!doctype html><title>t</title><p>Hi</p>\n", format="html")),
            "png": str(archive.add(S, _png(), format="png")),
            "jpeg token": str(archive.add(S, b"\xff\xd8\xff\xe0 not really a jpeg", format="image+jpeg")),
            # larger than a small blob (a catalog row): a blob file, read at once and checked by its chunks
            "file": str(archive.add(S, b"A line of a longer text.\n" * 4000, format="text")),
            "two chunks": str(archive.add(S, b"0123456789abcdef" * 90_000, format="text")),
            "mhtml": str(archive.add(S, (CORPUS / "fastmhtml_example.com.mhtml").read_bytes(), format="related")),
            "embargo over": str(archive.add(S, b"once embargoed\n", format="text", embargo_until="2001-01-01")),
            "embargoed": str(archive.add(S, b"not yet\n", format="text", embargo_until="2999-01-01")),
            "withdrawn": str(archive.add(S, b"to be withdrawn\n", format="text")),
            "private": str(archive.add(CLOSED, b"private words\n", format="text")),
            "digits id": str(archive.add(S, b"a foreign id of digits\n", format="text", foreign_id="012345")),
            "damaged": str(archive.add(S, b"these octets will be damaged\n", format="text")),
            "empty": str(archive.add(S, b"", format="octet-stream")),
        }
        two = archive.deposit(S, [Content(b"two formats\n", "text"), Content(b"<p>two formats</p>\n", "html")])
        names["first"], names["second"] = (str(n) for n in two.names)
        names["v2"] = str(archive.add_version(names["text"], [Content(b"Hello again.\n", "text")]).names[0])
        archive.set_series_access(CLOSED, "private")
        archive.withdraw(names["withdrawn"], "a test")
        damaged = archive.get(names["damaged"]).sha256
    flip_octet(location, damaged, 3)
    return str(location), names


#: The names whose every answer is made by the plain path.
PLAIN = ("text", "utf8", "latin1", "html", "png", "jpeg token", "file", "two chunks", "embargo over", "first",
         "second", "v2", "empty")
#: The names it leaves to the general path, whatever the service.
NOT_PLAIN = ("embargoed", "withdrawn", "private", "digits id")
#: Of those, the names spelled canonically that the catalog does not let anyone read now.
NOT_PUBLIC_NOW = ("embargoed", "withdrawn", "private")


class _Off:
    """Plain answers turned off: the general path answers every name."""

    @staticmethod
    def answer(*_: Any) -> None:
        return None


@pytest.fixture(scope="module")
def resolvers(archive_names: tuple[str, dict[str, str]]) -> tuple[Resolver, Resolver]:
    """Two resolvers of the archive, their answer caches empty: the plain answers on, and off."""
    location, _ = archive_names
    on, off = (create_app(location).state.public.__self__ for _ in range(2))
    off.plain = _Off()
    return on, off


def _answers(resolver: Resolver, query: bytes, host: bytes = b"127.0.0.1:8000") -> list[Any]:
    """N2R's whole answer, its validator and N2L's ``302`` of ``query``, each made anew (the caches emptied)."""
    found = []
    for path, revalidating in ((b"/uri-res/N2R", False), (b"/uri-res/N2R", True), (b"/uri-res/N2L", False)):
        # nothing known of the name (no fact answers for the catalog); answers of two 1 MiB chunks kept
        resolver.cache = ResponseCache(32 << 20, MOST)
        found.append(resolver.public_answer(path, "http", SERVER, host, query, revalidating))
    return found


def _plain(resolver: Resolver, query: bytes, base: str = "http://127.0.0.1:8000/") -> list[Any]:
    """What the plain path alone makes of ``query``: N2R's whole answer, its validator, N2L's ``302``."""
    return [resolver.plain.answer(query, False, False, MOST, base),
            resolver.plain.answer(query, False, True, MOST, None),
            resolver.plain.answer(query, True, False, MOST, None)]


@pytest.mark.parametrize("key", PLAIN)
def test_a_plain_name_is_answered_as_the_general_path_answers_it(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], key: str
) -> None:
    on, off = resolvers
    query = archive_names[1][key].encode()
    plain = _plain(on, query)
    assert all(answer is not None for answer in plain)  # made by the plain path …
    expected = _answers(off, query)
    assert all(answer is not None for answer in expected)
    assert plain == expected  # … field for field what the general path makes
    assert _answers(on, query) == expected


def test_the_general_answers_compared_are_the_resolvers_own(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]]
) -> None:
    # the values the comparison above rests on, from the name and the octets deposited, not from either path
    _, names = archive_names
    entity, validator, fixed = _answers(resolvers[1], names["utf8"].encode())
    assert entity.body == "Grüße, naïve café.\n".encode()
    assert entity.content_type == b"text/plain; charset=utf-8"
    fields = dict(entity.headers)
    document = names["utf8"].rsplit(".", 2)[0]
    assert fields[b"link"].decode().startswith(
        f'<{names["utf8"]}>; rel="canonical", <http://127.0.0.1:8000/uri-res/N2R?{document}>; rel="original"')
    assert fields[b"etag"] == validator.etag.encode() == fixed.etag.encode()
    assert (fixed.status, dict(fixed.headers)[b"location"]) == (302, f"/uri-res/N2R?{names['utf8']}".encode())
    png = _answers(resolvers[1], names["png"].encode())[0]
    assert (png.content_type, png.body[:8]) == (b"image/png", b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("key", [*NOT_PLAIN, "mhtml", "damaged"])
def test_what_is_not_the_plain_case_goes_to_the_general_path(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], key: str
) -> None:
    on, off = resolvers
    query = archive_names[1][key].encode()
    plain = _plain(on, query)
    if key in ("mhtml", "damaged"):  # its location and tag are plain; its octets are the general path's
        assert plain[0] is None and plain[1] is not None and plain[2] is not None
    elif key in NOT_PUBLIC_NOW:  # spelled canonically, and not there for anyone: the general path would find so too
        assert plain == [NOT_PUBLIC] * 3
        assert _answers(off, query) == [None] * 3
    else:
        assert plain == [None, None, None]
    assert _answers(on, query) == _answers(off, query)


def test_a_name_spelled_canonically_that_is_not_there_asks_the_catalog_once(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    on, off = resolvers
    text = archive_names[1]["text"]
    absent = [text.rsplit("/", 1)[0] + "/987654.text.1", text[:-1] + "7", text.replace(".text.", ".html.")]
    for name in absent:
        assert _answers(off, name.encode()) == [None] * 3  # the general path: not the plain case, for anyone
    asked: list[str] = []
    for method in ("locate_public", "read_public", "public_serial", "public_serial_named", "public_digest"):
        real = getattr(on.archive, method)
        monkeypatch.setattr(on.archive, method, lambda *a, _real=real, _name=method, **k: asked.append(_name) or _real(
            *a, **k))
    for name in absent:
        asked.clear()
        assert _answers(on, name.encode()) == [None] * 3
        # once a service (N2R, its validator, N2L; the last two need the digest alone): not again by the general path
        assert asked == ["public_serial_named", "public_digest", "public_digest"]


def test_a_mirrored_series_and_a_base_url_a_link_quotes_go_to_the_general_path(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    on, off = resolvers
    query = archive_names[1]["text"].encode()
    assert _plain(on, query, "http://h\u00e9te:8000/")[0] is None  # é: quoted in a Link
    assert _answers(on, query, "hôte:8000".encode("latin-1")) == _answers(off, query, "hôte:8000".encode("latin-1"))
    monkeypatch.setattr(on.plain, "_origin", lambda series: "http://origin.example.org/" if series == S else None)
    assert _plain(on, query) == [None, None, None]


def _spellings(names: dict[str, str]) -> st.SearchStrategy[str]:
    """A name of the archive, or one changed a little: another case, digits, format or version; cut; added to."""
    base = st.sampled_from(sorted(names[k] for k in (*PLAIN, *NOT_PLAIN, "mhtml")))

    def change(name: str, how: int, at: int, what: str) -> str:
        at %= len(name) + 1
        if how == 0:
            return name
        if how == 1:
            return name[:at] + what + name[at:]
        if how == 2:
            return name[:at] + name[at + 1:]
        if how == 3:
            return name.upper() if at % 2 else name[:at] + name[at:].upper()
        return name[:at] + what + name[at + len(what):]

    return st.builds(change, base, st.integers(0, 4), st.integers(0, 200),
                     st.text("0123456789.+/-:%#aZtx ", max_size=3))


@given(data=st.data())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_spelling_is_answered_by_the_plain_path_as_the_general_path_or_not_at_all(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], data: st.DataObject
) -> None:
    on, off = resolvers
    name = data.draw(_spellings(archive_names[1]))
    query = name.encode()
    expected = _answers(off, query)
    for made, general in zip(_plain(on, query), expected, strict=True):
        assert made is None or made == general or (made is NOT_PUBLIC and general is None)
    assert _answers(on, query) == expected


@pytest.mark.parametrize("policy", ["default-src 'none'", "", "sandbox; script-src 'self' %s %d %% \\ caf\xe9"])
def test_an_answers_lines_made_with_it_are_those_the_cache_would_make(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], policy: str
) -> None:
    """The plain answer's ``200`` header lines, made with it, are the octets :func:`wire` makes from its fields
    (``Entity.lines`` is left out of its comparison with the general path's)."""
    import dataclasses

    from pdi.server.process.cache import wire
    from pdi.server.protocol.plain import PlainAnswers

    plain = PlainAnswers(resolvers[0].plain.archive, policy, lambda series: None)
    for key in PLAIN:
        made = plain.answer(archive_names[1][key].encode(), False, False, MOST, "http://127.0.0.1:8000/")
        assert made is not None and not isinstance(made, type(NOT_PUBLIC)), key
        assert made.lines, key
        fresh = wire(dataclasses.replace(made, lines=[]), (None, None, None))
        assert fresh is not None and made.lines[0] == fresh[1], key


@pytest.mark.parametrize("policy", ["default-src 'none'", "", "sandbox; script-src 'self' caf\xe9"])
def test_an_answers_size_counted_with_it_is_the_size_of_its_fields(
    resolvers: tuple[Resolver, Resolver], archive_names: tuple[str, dict[str, str]], policy: str
) -> None:
    """The memory a plain answer is counted as in the cache (``Entity.held``, counted as it is made) is what
    ``Entity.size`` counts from its body, headers and names."""
    import dataclasses

    from pdi.server.protocol.plain import PlainAnswers

    plain = PlainAnswers(resolvers[0].plain.archive, policy, lambda series: None)
    for key in PLAIN:
        made = plain.answer(archive_names[1][key].encode(), False, False, MOST, "http://127.0.0.1:8000/")
        assert made is not None and not isinstance(made, type(NOT_PUBLIC)), key
        fields = sum(len(name) + len(value) for name, value in made.headers)
        counted = dataclasses.replace(made, held=0).size
        assert counted == (len(made.body) + len(made.content_type) + 2 * fields + 4 * len(made.headers) + 80
                           + sum(map(len, made.names)) + 400)
        assert made.held == counted, key


def test_a_small_blob_row_emptied_is_not_served_under_its_digest(tmp_path: Path) -> None:
    """A catalog whose small blob's row lost its octets and whose name's row says 0 octets: the octets are
    checked against the name's SHA-256 (that of no octets is not the one it holds), so the plain path leaves it
    to the general path, which says the stored octets are damaged, as before."""
    import hashlib
    import sqlite3

    location = tmp_path / "archive"
    with Archive.init(location) as archive:
        archive.add_series(S)
        name = str(archive.add(S, b"a name that will claim zero octets\n", format="text"))
        sha256 = archive.get(name).sha256
    assert sha256 != hashlib.sha256(b"").hexdigest()
    conn = sqlite3.connect(location / "catalog.sqlite", isolation_level=None)
    conn.execute("UPDATE blobs SET data = x'' WHERE sha256 = ?", (sha256,))
    conn.execute("UPDATE serial_names SET size = 0 WHERE sha256 = ?", (sha256,))
    conn.close()
    app = create_app(str(location))
    made = app.state.public.__self__.plain.answer(name.encode(), False, False, MOST, "http://127.0.0.1:8000/")
    assert made is None or made is NOT_PUBLIC  # either way the resolver's endpoint reads it and says what it is
    from starlette.testclient import TestClient

    with TestClient(app) as client:
        answer = client.get(f"/uri-res/N2R?{name}")
    assert answer.status_code == 500 and "damaged" in answer.text, answer.text
