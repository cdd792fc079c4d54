"""Property tests: no input makes the archive raise anything but a pdi error; deposits round-trip."""

from __future__ import annotations

import codecs
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from archive_helpers import PNG, Clock, reseal, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.errors import PDIError

S = "oma.eop.gov.us"
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

pdi_like = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda tail: "urn:pdi://oma.eop.gov.us/" + tail,
        st.text(alphabet="0123456789/.*#=,()@%abcxyz-", max_size=40),
    ),
)


@SETTINGS
@given(text=pdi_like, latest=st.booleans())
def test_any_name_gives_a_result_or_a_pdi_error(archive: Archive, text: str, latest: bool) -> None:
    for call in (
        lambda: archive.resolve(text, latest=latest),
        lambda: archive.ls(text, limit=5),
        lambda: archive.versions(text),
        lambda: archive.annotate(text, "title", "x"),
        lambda: archive.history(text),
        lambda: archive.add_series(text),
        lambda: archive.add(S, b"x", format=text),
        lambda: archive.add(S, PNG, format="png", foreign_id=text),
        lambda: archive.ls(series=text),
    ):
        try:
            call()
        except PDIError:
            pass


CHARSETS = [None, "utf-8", "latin-1", "utf-16", "shift_jis", "ascii", "no-such-charset"]
FORMATS = ["text", "html", "utf-8", "png", "xml", "bogus"]


def _slow_crlf(text: str) -> str:
    # Obviously correct: walk the characters; CR LF, CR NEL, CR, LF and NEL each end a line.
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\r":
            out.append("\r\n")
            i += 2 if i + 1 < len(text) and text[i + 1] in "\n\x85" else 1
        elif ch in "\n\x85":
            out.append("\r\n")
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@SETTINGS
@given(
    text=st.text(alphabet=st.sampled_from("ab é\r\n\x85ü語"), max_size=30),
    charset=st.sampled_from(CHARSETS),
    token=st.sampled_from(FORMATS),
    raw=st.binary(max_size=20),
    use_raw=st.booleans(),
)
def test_deposit_round_trips_or_refuses(
    archive: Archive, text: str, charset: str | None, token: str, raw: bytes, use_raw: bool
) -> None:
    encode_as = charset if charset not in (None, "no-such-charset") else "utf-8"
    try:
        data = raw if use_raw else text.encode(encode_as)
        encoded = not use_raw
    except UnicodeEncodeError:
        data, encoded = raw, False
    # text/plain in the charset it was encoded with, or UTF-8 with none named, is a deposit to keep
    # (PDI-GRAMMAR.md §2.6: the token "text" is text/plain in any charset)
    wanted = encoded and token == "text" and charset != "no-such-charset"
    try:
        pdi = archive.add(S, data, format=token, charset=charset)
    except PDIError as refused:
        assert not wanted, f"{data!r} in {charset} as {token} was refused: {refused}"
        return
    got = archive.get(pdi)
    if got.charset is None:
        assert got.data == data
        return
    codec = got.charset
    if codecs.lookup(codec).name in ("utf-16", "utf-32"):
        codec = "utf-16-be" if not data.startswith(codecs.BOM_UTF16_LE) else "utf-16-le"
    original = data.decode(codec)
    assert got.data == data  # kept exactly
    # a char fragment of it all is its CRLF-canonical form, whatever the line endings were
    whole = archive.get(f"{pdi}#char=0,{4 * len(data) + 8}")
    assert whole.data.decode(codec).lstrip("\ufeff") == _slow_crlf(original).lstrip("\ufeff")


@SETTINGS
@given(
    lines=st.lists(st.text(alphabet="abcé ", max_size=8), max_size=6),
    start=st.integers(0, 60),
    length=st.integers(0, 60),
)
def test_char_fragment_is_a_slice_of_the_canonical_text(
    archive: Archive, lines: list[str], start: int, length: int
) -> None:
    source = "\n".join(lines)
    pdi = archive.add(S, source.encode(), format="text")
    canonical = source.replace("\n", "\r\n")
    got = archive.get(f"{pdi}#char={start},{start + length}")
    assert got.data == canonical[start : start + length].encode()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def _mutate(tree: Any, path: list[int], value: Any) -> Any:
    if not path or not isinstance(tree, dict | list) or not tree:
        return value
    keys = list(tree) if isinstance(tree, dict) else list(range(len(tree)))
    key = keys[path[0] % len(keys)]
    tree[key] = _mutate(tree[key], path[1:], value)
    return tree


@SETTINGS
@given(path=st.lists(st.integers(0, 20), max_size=4), value=json_values)
def test_any_catalog_in_a_bag_imports_or_gives_a_pdi_error(
    tmp_path_factory: pytest.TempPathFactory, path: list[int], value: Any
) -> None:
    root = tmp_path_factory.mktemp("bag")
    clock = Clock(datetime.datetime(2026, 11, 22, 12, tzinfo=datetime.UTC))
    with Archive.init(root / "source", clock=clock) as source:
        source.add_series(S)
        first = source.add(S, b"one\n", format="text")
        source.add(S, b"GIF89a", format="gif", foreign_id="doi:10.1/x")
        source.annotate(first, "title", "One")
        source.export_bag(root / "bag")
    catalog = json.loads((root / "bag" / "data" / "catalog.json").read_text())
    (root / "bag" / "data" / "catalog.json").write_text(json.dumps(_mutate(catalog, path, value)))
    reseal(root / "bag")
    with Archive.init(root / "target", clock=clock) as target:
        before = snapshot(target)
        try:
            target.import_bag(root / "bag")
        except PDIError:
            assert snapshot(target) == before  # all or nothing
            return
        assert target.verify().ok
        for name in target.ls(series=S):
            target.get(name)


@settings(max_examples=200, deadline=None)
@given(
    records=st.lists(
        st.tuples(
            st.sampled_from(["oma.eop.gov.us", "press.oma.eop.gov.us", "a.fr"]),
            st.dates(datetime.date(1990, 1, 1), datetime.date(2100, 12, 31)),
            st.integers(1, 10**6),
            st.integers(1, 50),
            st.sampled_from(["text", "html", "gif", "utf-8", "audio+mpeg"]),
        ),
        max_size=12,
    )
)
def test_listing_names_are_the_names_built_one_by_one(
    records: list[tuple[str, datetime.date, int, int, str]],
) -> None:
    # The listing's shortcut (one template per series, day and format) gives the
    # names PDI.build gives for each record.
    from pdi.archive.naming import Namer as _Namer
    from pdi.archive.naming import record_name as _name
    from pdi.archive.store import RepresentationRecord

    namer = _Namer()
    for series, day, serial, version, token in records:
        record = RepresentationRecord(
            series, day, str(serial), serial, version, token, "x/y", None, None, "0" * 64, 0, ""
        )
        assert namer(record) == _name(record)


def test_an_assertion_moves_with_the_document_its_subject_names(tmp_path: Path) -> None:
    # A statement is about the name in its subject; a bag whose entry files it
    # under another document is refused, not imported under the wrong one.
    clock = Clock(datetime.datetime(2026, 11, 22, 12, tzinfo=datetime.UTC))
    with Archive.init(tmp_path / "source", clock=clock) as source:
        source.add_series(S)
        first = source.add(S, b"one\n", format="text")
        source.add(S, b"two\n", format="text")
        source.annotate(first, "title", "One")
        source.export_bag(tmp_path / "bag")
    catalog_path = tmp_path / "bag" / "data" / "catalog.json"
    catalog = json.loads(catalog_path.read_text())
    assert catalog["assertions"][0]["unique_id"] == "1"
    catalog["assertions"][0]["unique_id"] = "2"
    catalog_path.write_text(json.dumps(catalog))
    reseal(tmp_path / "bag")
    with Archive.init(tmp_path / "target", clock=clock) as target:
        before = snapshot(target)
        with pytest.raises(PDIError):
            target.import_bag(tmp_path / "bag")
        assert snapshot(target) == before
