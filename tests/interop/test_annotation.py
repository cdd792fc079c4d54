"""W3C Web Annotations of names (pdi.interop.annotation): export, expanded by a JSON-LD processor; import, Hypothesis too.

The exported annotation is expanded by ``pyld`` against the official context
(``tests/data/annotation/anno.jsonld``, read through a local document
loader: no network), and the expanded IRIs are checked against the Web
Annotation vocabulary. Quotes, positions and RFC 5147 positions expected
here are counted by hand from the texts the tests deposit.
"""

from __future__ import annotations

import io
import json
import wave
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from pyld import jsonld  # type: ignore[import-untyped]
from starlette.testclient import TestClient

from pdi.archive import Archive
from pdi.cli import cli
from pdi.errors import NotFoundError, ParseError, PDIError, UnsupportedError
from pdi.interop.annotation import (
    CONTEXT,
    export_annotation,
    find_quote,
    import_annotations,
    text_quote,
)
from pdi.server import create_app

DATA = Path(__file__).parent.parent / "data" / "annotation"
S = "library.example.us"
OA = "http://www.w3.org/ns/oa#"
TEXT = "Hello, world.\nThe quick brown fox\njumps over the lazy dog.\n"
# CRLF-canonical: "Hello, world.\r\n" 0-15, "The quick brown fox\r\n" 15-36, "jumps …" from 36


def local_loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    if url.rstrip("/") != CONTEXT:
        raise AssertionError(f"the test reads no context but the Web Annotation one, not {url}")
    return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": url,
            "document": json.loads((DATA / "anno.jsonld").read_text(encoding="utf-8"))}


def expand(annotation: dict[str, Any]) -> dict[str, Any]:
    expanded = jsonld.expand(annotation, {"documentLoader": local_loader})
    assert len(expanded) == 1
    return expanded[0]  # type: ignore[no-any-return]


def one(node: dict[str, Any], key: str) -> Any:
    values = node[key]
    assert len(values) == 1, values
    return values[0]


def test_a_text_fragment_exports_as_an_annotation_the_vocabulary_reads(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    fragment = f"{name}#char=19,34"  # "quick brown fox"
    annotation = export_annotation(archive, fragment)
    node = expand(annotation)
    assert node["@type"] == [OA + "Annotation"]
    assert one(node, OA + "motivatedBy") == {"@id": OA + "identifying"}
    assert one(node, OA + "hasBody") == {"@id": fragment}
    target = one(node, OA + "hasTarget")
    assert target["@type"] == [OA + "SpecificResource"]
    assert one(target, OA + "hasSource") == {"@id": str(name)}
    selectors = {s["@type"][0]: s for s in target[OA + "hasSelector"]}
    quote = selectors[OA + "TextQuoteSelector"]
    assert one(quote, OA + "exact") == {"@value": "quick brown fox"}
    assert one(quote, OA + "prefix") == {"@value": "Hello, world.\r\nThe "}
    assert one(quote, OA + "suffix") == {"@value": "\r\njumps over the lazy dog.\r\n"}
    position = selectors[OA + "TextPositionSelector"]
    assert (one(position, OA + "start"), one(position, OA + "end")) == ({"@value": 19}, {"@value": 34})
    fragment_selector = selectors[OA + "FragmentSelector"]
    assert one(fragment_selector, "http://purl.org/dc/terms/conformsTo") == {"@id": "http://tools.ietf.org/rfc/rfc5147"}
    # RFC 5147 counts the CRLF before "The" as one character: 19 - 1 and 34 - 1
    assert one(fragment_selector, "http://www.w3.org/1999/02/22-rdf-syntax-ns#value") == {"@value": "char=18,33"}


def test_an_html_fragment_quotes_the_page_text(archive: Archive) -> None:
    page = b"<html><head><title>Title</title></head><body><p>The <b>quick</b> brown fox &amp; dog</p></body></html>"
    name = archive.add(S, page, format="html")
    start = page.index(b"quick")
    end = page.index(b" dog") + 4
    annotation = export_annotation(archive, f"{name}#char={start},{end}")
    selectors = {s["type"]: s for s in annotation["target"]["selector"]}
    assert selectors["TextQuoteSelector"] == {"type": "TextQuoteSelector", "exact": "quick brown fox & dog",
                                              "prefix": "The ", "suffix": ""}
    assert selectors["TextPositionSelector"] == {"type": "TextPositionSelector", "start": 4, "end": 25}
    assert "FragmentSelector" not in selectors  # RFC 5147 is for text/plain
    node = expand(annotation)
    assert one(one(node, OA + "hasTarget"), OA + "hasSource") == {"@id": str(name)}


def test_a_browser_fragment_exports_as_the_native_name(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    annotation = export_annotation(archive, f"{name}#:~:text=quick,fox")
    assert annotation["body"] == f"{name}#char=19,34"


def picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 20), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


def sound(frames: int = 8000, rate: int = 8000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(2 * frames))
    return out.getvalue()


def test_image_audio_and_octets_use_media_fragments_and_data_positions(archive: Archive) -> None:
    image = archive.add(S, picture(), format="png")
    selector = export_annotation(archive, f"{image}#rect=(5,2),(25,12)")["target"]["selector"]
    assert selector == {"type": "FragmentSelector", "conformsTo": "http://www.w3.org/TR/media-frags/",
                        "value": "xywh=pixel:5,2,20,10"}
    audio = archive.add(S, sound(), format="wav")
    selector = export_annotation(archive, f"{audio}#msec=250,750")["target"]["selector"]
    assert selector["value"] == "t=npt:0.25,0.75"
    text = archive.add(S, TEXT.encode(), format="text")
    selector = export_annotation(archive, f"{text}#byte=2,5")["target"]["selector"]
    assert selector == {"type": "DataPositionSelector", "start": 2, "end": 5}
    for annotation in (export_annotation(archive, f"{image}#rect=(5,2),(25,12)"),
                       export_annotation(archive, f"{audio}#msec=250,750")):
        expand(annotation)  # valid JSON-LD under the official context


def test_an_empty_interval_has_no_media_fragment_to_annotate_it_by(archive: Archive) -> None:
    """``t=a,b`` needs ``a`` before ``b`` (Media Fragments URI 1.0 §4.2.1; W3C test case TC0002, ``t=3,3``, is
    invalid): a moment of a sound is refused with the reason, not exported as a selector no reader accepts."""
    audio = archive.add(S, sound(16000), format="wav")
    for fragment in ("#sec=1,1", "#msec=500,500"):
        with pytest.raises(UnsupportedError, match="empty interval"):
            export_annotation(archive, f"{audio}{fragment}")
    assert export_annotation(archive, f"{audio}#msec=500,501")["target"]["selector"]["value"] == "t=npt:0.5,0.501"


def test_a_citation_links_the_quoting_position_to_the_quoted_passage(archive: Archive) -> None:
    quoted = archive.add(S, TEXT.encode(), format="text")
    citing = archive.add(S, b"As the text says: quick brown fox.\n", format="text")
    annotation = export_annotation(archive, f"{citing}@18={quoted}#char=19,34")
    node = expand(annotation)
    assert one(node, OA + "motivatedBy") == {"@id": OA + "linking"}
    body = one(node, OA + "hasBody")
    assert one(body, OA + "hasSource") == {"@id": str(citing)}
    target = one(node, OA + "hasTarget")
    assert one(target, OA + "hasSource") == {"@id": str(quoted)}
    exact = next(s for s in target[OA + "hasSelector"] if s["@type"] == [OA + "TextQuoteSelector"])
    assert one(exact, OA + "exact") == {"@value": "quick brown fox"}


def test_a_citation_in_an_image_or_a_recording_or_of_a_whole_document(archive: Archive) -> None:
    quoted = archive.add(S, TEXT.encode(), format="text")
    image = archive.add(S, picture(), format="png")
    audio = archive.add(S, sound(), format="wav")
    # a coordinate names a pixel (draft lines 692-701): the body is that pixel, not the ParseError a rect of one
    # corner made
    body = export_annotation(archive, f"{image}@(5,2)={quoted}#char=19,34")["body"]
    assert body["source"] == str(image)
    assert body["selector"]["value"] == "xywh=pixel:5,2,1,1"
    expand(export_annotation(archive, f"{image}@(5,2)={quoted}#char=19,34"))
    with pytest.raises(UnsupportedError, match="instant"):  # no Media Fragment names an instant (t=a,b: a < b)
        export_annotation(archive, f"{audio}@1={quoted}#char=19,34")
    # the cited end a whole document, or a citation itself: said so, not an AssertionError (a 500 over HTTP)
    for cited, why in ((str(quoted), "whole document"), (f"{quoted}@1={quoted}#char=1,2", "citation itself")):
        with pytest.raises(UnsupportedError, match=why):
            export_annotation(archive, f"{quoted}@18={cited}")
    client = TestClient(create_app(str(archive.location), archive=archive))
    answer = client.get("/api/annotation", params={"pdi": f"{quoted}@18={quoted}"})
    assert answer.status_code == 400 and "whole document" in answer.json()["detail"]
    out = CliRunner().invoke(cli, ["annotate", "--export", f"{quoted}@18={quoted}",
                                   "--archive", str(archive.location)])
    assert out.exit_code == UnsupportedError.exit_code and "whole document" in out.stderr


def test_a_whole_document_is_not_an_annotation(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    with pytest.raises(UnsupportedError, match="whole document"):
        export_annotation(archive, str(name))


def test_an_exported_annotation_imports_back_to_its_name(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    page = archive.add(S, (DATA / "essay.html").read_bytes(), format="html")
    for fragment in (f"{name}#char=19,34", f"{name}#char=36,41"):
        [result] = import_annotations(archive, export_annotation(archive, fragment))
        assert (result.status, str(result.name)) == ("found", fragment)
    native = str(export_annotation(archive, f"{page}#:~:text=Name%20the%20version")["body"])
    [result] = import_annotations(archive, export_annotation(archive, native))
    assert str(result.name) == native


def essay(archive: Archive) -> tuple[str, str]:
    data = (DATA / "essay.html").read_bytes()
    return str(archive.add(S, data, format="html")), data.decode("utf-8").replace("\n", "\r\n")


def test_a_hypothesis_export_gives_names_and_says_which_quote_is_missing(archive: Archive) -> None:
    name, source = essay(archive)
    exported = json.loads((DATA / "hypothesis-search.json").read_text(encoding="utf-8"))
    results = import_annotations(archive, exported, document=name)
    assert [r.status for r in results] == ["moved", "moved", "missing"]
    assert [r.annotation for r in results] == ["x1hypo0001AAAA", "x1hypo0002BBBB", "x1hypo0003CCCC"]
    first, second, missing = results
    a, b = (int(v) for v in str(first.name).rsplit("=", 1)[1].split(","))
    assert source[a:b] == "A citation is a promise"
    a, b = (int(v) for v in str(second.name).rsplit("=", 1)[1].split(","))
    assert source[a:b] == "Name the version."
    assert missing.name is None and "museums keep objects behind glass" in missing.message


def test_a_hypothesis_target_that_is_not_a_pdi_needs_the_document(archive: Archive) -> None:
    essay(archive)
    exported = json.loads((DATA / "hypothesis-search.json").read_text(encoding="utf-8"))
    with pytest.raises(UnsupportedError, match="not a PDI"):
        import_annotations(archive, exported)


def test_an_import_that_takes_too_long_finding_its_targets_is_refused(
    archive: Archive, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reported: an anonymous import of a thousand quotes absent from a long text scanned all of it a thousand
    times (0.7 s each for 30 MB) on one of the worker's places. Past MAX_IMPORT_SECONDS (here lowered to 0.2 s;
    the quotes below take some 10 s in all), a LimitError saying how far it got; within it, each is missing."""
    import pdi.interop.annotation as module
    from pdi.errors import LimitError

    name = str(archive.add(S, ("a line of text of the document\n" * 100_000).encode(), format="text"))
    absent = [{"type": "Annotation", "target": {"source": name, "selector": {
        "type": "TextQuoteSelector", "exact": f"nowhere {k}"}}} for k in range(400)]
    monkeypatch.setattr(module, "MAX_IMPORT_SECONDS", 0.2)
    with pytest.raises(LimitError, match=r"took more than 0.2 s \(\d+ of 400 found\): send fewer at once"):
        import_annotations(archive, absent)
    monkeypatch.setattr(module, "MAX_IMPORT_SECONDS", 600)
    assert {r.status for r in import_annotations(archive, absent[:3])} == {"missing"}


def test_import_errors_name_what_is_wrong(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    target = {"source": str(name), "selector": {"type": "TextPositionSelector", "start": 9, "end": 3}}
    with pytest.raises(ParseError, match="ends"):
        import_annotations(archive, {"type": "Annotation", "target": target})
    with pytest.raises(ParseError, match="without a target"):
        import_annotations(archive, {"type": "Annotation"})
    with pytest.raises(ParseError, match="JSON object"):
        import_annotations(archive, 3)
    with pytest.raises(NotFoundError):
        import_annotations(archive, {"target": {"source": str(name).replace("/1.", "/99."), "selector": []}})
    # among several, the one that is wrong is named: which annotation (its id), which of its targets
    good = {"source": str(name), "selector": {"type": "TextPositionSelector", "start": 0, "end": 3}}
    page = {"type": "AnnotationPage", "items": [
        {"type": "Annotation", "id": "urn:uuid:a", "target": good},
        {"type": "Annotation", "id": "urn:uuid:b", "target": [good, target]},
    ]}
    with pytest.raises(ParseError, match=r"^annotation 2 \(urn:uuid:b\), target 2: a TextPositionSelector ends"):
        import_annotations(archive, page)
    with pytest.raises(ParseError, match=r"^annotation 2: an annotation without a target"):
        import_annotations(archive, [{"type": "Annotation", "target": good}, {"type": "Annotation"}])


def test_other_selectors_read_back(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    picture_name = archive.add(S, picture(), format="png")

    def imported(source: str, selector: dict[str, Any]) -> str:
        [result] = import_annotations(archive, {"target": {"source": source, "selector": selector}})
        return str(result.name)

    rfc5147 = {"type": "FragmentSelector", "conformsTo": "http://tools.ietf.org/rfc/rfc5147", "value": "char=18,33"}
    assert imported(str(name), rfc5147) == f"{name}#char=19,34"
    xywh = {"type": "FragmentSelector", "conformsTo": "http://www.w3.org/TR/media-frags/", "value": "xywh=percent:50,0,50,50"}
    assert imported(str(picture_name), xywh) == f"{picture_name}#rect=(20,0),(40,10)"
    assert imported(str(name), {"type": "DataPositionSelector", "start": 1, "end": 4}) == f"{name}#byte=1,4"


def test_quotes_pure() -> None:
    assert text_quote("abcdefgh", 3, 5, context=2) == text_quote("abcdefgh", 3, 5, context=2)
    quote = text_quote("abcdefgh", 3, 5, context=2)
    assert (quote.exact, quote.prefix, quote.suffix) == ("de", "bc", "fg")
    text = "one two one three one two"
    found = find_quote(text, "one", "three ", " two")
    assert found is not None and (found.start, found.context) == (18, "both")
    found = find_quote(text, "one", near=9)
    assert found is not None and found.start == 8
    found = find_quote("a  b\r\n c", "b c")  # a quote of rendered text: white space runs as one
    assert found is not None and (found.start, found.end, found.collapsed) == (3, 8, True)
    assert find_quote(text, "four") is None


# --- the command and the routes -----------------------------------------------------------------


def test_pdi_annotate(archive: Archive, tmp_path: Path) -> None:
    name = str(archive.add(S, TEXT.encode(), format="text"))
    page, _ = essay(archive)
    runner = CliRunner()
    where = ["--archive", str(archive.location)]
    out = runner.invoke(cli, ["annotate", "--export", f"{name}#char=19,34", *where])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["target"]["source"] == name
    out = runner.invoke(cli, ["annotate", "--native", f"{name}#:~:text=quick,fox&text=absent", *where])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0] == f"{name}#char=19,34"
    assert out.output.splitlines()[1] == f"missing: the text \"absent\" is not in {name}"
    out = runner.invoke(cli, ["get", f"{name}#:~:text=quick,fox", *where])
    assert (out.exit_code, out.stdout) == (0, "quick brown fox")
    assert f"note: {name}#:~:text=quick,fox is {name}#char=19,34" in out.stderr
    out = runner.invoke(cli, ["annotate", "--native", f"{name}#:~:text=absent", *where])
    assert out.exit_code == NotFoundError.exit_code
    out = runner.invoke(cli, ["annotate", "--import", str(DATA / "hypothesis-search.json"), "--pdi", page, *where])
    assert out.exit_code == NotFoundError.exit_code
    lines = out.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["moved", "moved", "missing"]
    assert "pdi: not found: 1 of 3 quotes is not in its document" in out.stderr
    out = runner.invoke(cli, ["annotate", "--export", name, "--native", name, *where])
    assert out.exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = runner.invoke(cli, ["annotate", "--import", str(bad), *where])
    assert out.exit_code == ParseError.exit_code and "not JSON" in out.stderr
    # an export of no annotation (a W3C list, a Hypothesis search of no rows): nothing printed, and said so
    for nothing in ("[]", '{"total": 0, "rows": []}'):
        empty = tmp_path / "empty.json"
        empty.write_text(nothing)
        out = runner.invoke(cli, ["annotate", "--import", str(empty), "--pdi", page, *where])
        assert (out.exit_code, out.stdout) == (0, ""), out.output
        assert out.stderr == f"note: {empty} holds no annotation: nothing was looked for\n"


def test_api_annotation_and_resolve_of_aliases(archive: Archive) -> None:
    name = str(archive.add(S, TEXT.encode(), format="text"))
    page, _ = essay(archive)
    client = TestClient(create_app(str(archive.location), archive=archive))
    got = client.get("/api/annotation", params={"pdi": f"{name}#char=19,34"})
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("application/ld+json")
    assert expand(got.json())["@type"] == [OA + "Annotation"]
    posted = client.post("/api/annotation", params={"pdi": page},
                         content=(DATA / "hypothesis-search.json").read_bytes())
    assert posted.status_code == 200
    assert [r["status"] for r in posted.json()["results"]] == ["moved", "moved", "missing"]
    assert posted.json()["missing"] == 1
    bad = client.post("/api/annotation", content=b"[1")
    assert bad.status_code == 400 and bad.headers["content-type"] == "application/problem+json"
    # the alias resolves to the bytes of the native name it reports
    alias = client.get("/api/resolve", params={"pdi": f"{name}#:~:text=brown-,fox"}).json()
    native = client.get("/api/resolve", params={"pdi": alias["equivalent"]}).json()
    assert alias["equivalent"] == f"{name}#char=31,34"
    assert alias["fragment"] == native["fragment"] and alias["bytes"] == native["bytes"] == 3
    moved = client.get(f"/uri-res/N2R?{name}%23:~:text=brown-,fox", follow_redirects=False)
    assert moved.status_code == 302 and moved.headers["location"] == f"/uri-res/N2R?{name}%23char=31,34"
    assert client.get(moved.headers["location"]).content == b"fox"
    audio = str(archive.add(S, sound(frames=16000, rate=8000), format="wav"))
    image = str(archive.add(S, picture(), format="png"))
    for alias_name, native_name in ((f"{audio}#t=0.25,1.5", f"{audio}#msec=250,1500"),
                                    (f"{image}#xywh=2,3,10,5", f"{image}#rect=(2,3),(12,8)")):
        described = client.get("/api/resolve", params={"pdi": alias_name}).json()
        assert described["equivalent"] == native_name
        assert described["fragment"] == client.get("/api/resolve", params={"pdi": native_name}).json()["fragment"]
        via_alias = client.get("/uri-res/N2R?" + alias_name.replace("#", "%23"))
        assert via_alias.content == client.get("/uri-res/N2R?" + native_name.replace("#", "%23")).content
    missing = client.get("/api/resolve", params={"pdi": f"{name}#:~:text=zebra"})
    assert missing.status_code == 404 and missing.json()["detail"] == f"the text \"zebra\" is not in {name}"


def test_a_fragment_past_the_end_is_nothing_to_annotate(archive: Archive) -> None:
    name = archive.add(S, TEXT.encode(), format="text")
    with pytest.raises(UnsupportedError, match="past the end"):
        export_annotation(archive, f"{name}#char=100,200")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 100) | st.text(max_size=12)
    | st.sampled_from(["TextQuoteSelector", "TextPositionSelector", "FragmentSelector", "DataPositionSelector",
                       "http://tools.ietf.org/rfc/rfc5147", "http://www.w3.org/TR/media-frags/", "char=1,3",
                       "xywh=1,1,2,2", "t=1", "quick"]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["type", "exact", "prefix", "suffix", "start", "end", "value", "conformsTo",
                                       "selector", "source", "target", "rows", "annotations", "items", "id"]),
                      children, max_size=5),
    max_leaves=20,
)


# Well-formed annotations of TEXT (Web Annotation Data Model §4.2.4, §4.2.5): a quote that stands in it,
# or a position range inside it (RFC 5147-style counts of its 56 characters), each with no source (the
# document named by the import) — every one must import, and to the passage it names
_QUOTES = st.sampled_from(["Hello", "world", "quick brown fox", "lazy dog", "jumps over"])
_WELL_FORMED = st.one_of(
    _QUOTES.map(lambda q: {"type": "Annotation", "target": {"selector": {"type": "TextQuoteSelector", "exact": q}}}),
    st.tuples(st.integers(0, len(TEXT)), st.integers(0, len(TEXT))).map(sorted).map(
        lambda r: {"type": "Annotation",
                   "target": {"selector": {"type": "TextPositionSelector", "start": r[0], "end": r[1]}}}),
)


@given(st.one_of(_JSON.map(lambda d: (d, False)), _WELL_FORMED.map(lambda d: (d, True))))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_any_json_imports_or_fails_with_a_pdi_error(archive: Archive, given_data: tuple[object, bool]) -> None:
    data, well_formed = given_data
    names = archive.ls(f"urn:pdi://{S}/*/*/*/*")
    name = str(names[0]) if names else str(archive.add(S, TEXT.encode(), format="text"))
    try:
        results = import_annotations(archive, data, document=name)
    except PDIError as refused:
        assert not well_formed, f"the well-formed annotation {data} was refused: {refused}"
        return
    for result in results:
        assert result.status in ("found", "moved", "missing", "selected")
    if well_formed:
        [result] = results
        assert result.status in ("found", "selected") and str(result.name).startswith(name + "#char=")
        a, b = (int(v) for v in str(result.name).rsplit("=", 1)[1].split(","))
        selector = data["target"]["selector"]  # type: ignore[index]
        if selector["type"] == "TextQuoteSelector":
            assert TEXT.replace("\n", "\r\n")[a:b] == selector["exact"]


def test_media_fragment_aliases_name_the_native_fragment(archive: Archive) -> None:
    from pdi.interop.aliases import native_names

    audio = archive.add(S, sound(frames=12345, rate=8000), format="wav")  # 1.543125 s
    image = archive.add(S, picture(), format="png")  # 40 × 20
    assert str(native_names(archive, f"{audio}#t=0.5,1").native) == f"{audio}#msec=500,1000"
    assert str(native_names(archive, f"{audio}#t=npt:1").native) == f"{audio}#msec=1000,1544"  # to the end, rounded up
    assert str(native_names(archive, f"{audio}#t=,1").native) == f"{audio}#sec=0,1"
    assert str(native_names(archive, f"{image}#xywh=pixel:1,2,3,4").native) == f"{image}#rect=(1,2),(4,6)"
    assert str(native_names(archive, f"{image}#xywh=percent:10,10,15,15").native) == f"{image}#rect=(4,2),(10,5)"
    alias = native_names(archive, f"{audio}#t=0.0005,1")
    assert str(alias.native) == f"{audio}#msec=1,1000" and "rounded" in alias.notes[0]
    with pytest.raises(UnsupportedError, match="image"):
        native_names(archive, f"{audio}#xywh=1,1,1,1")
    with pytest.raises(UnsupportedError, match="audio"):
        native_names(archive, f"{image}#t=1,2")
    # begun past the end (1.543125 s), well formed (Media Fragments TC0014): the empty range where it begins, which
    # lies past the end as t=2,3 does
    assert str(native_names(archive, f"{audio}#t=2").native) == f"{audio}#sec=2,2"
    assert str(native_names(archive, f"{audio}#t=2.5").native) == f"{audio}#msec=2500,2500"
    assert archive.resolve(f"{audio}#sec=2,2").fragment.past_end  # type: ignore[union-attr]
    assert archive.resolve(f"{audio}#sec=2,3").fragment.past_end  # type: ignore[union-attr]
    # begun within the recording's last millisecond (1.5435 s rounds to 1544, its length rounded up): the empty
    # range at the end, not a refusal as "shorter than a millisecond"
    assert str(native_names(archive, f"{audio}#t=1.5435").native) == f"{audio}#msec=1544,1544"


# Text directives (URL Fragment Text Directives §3.3.1 syntax) whose text stands in "<p>a b text ab</p>", as
# a browser shows it ("a b text ab"): each names a passage a browser finds, so each must resolve to one
_FOUND = st.sampled_from(["text=a", "text=text", "text=a%20b", "text=b,ab", "text=a-,b", "text=text,-ab", "text=A%20B",
                          "text=text%20ab"])


@given(st.one_of(st.text(alphabet=st.sampled_from(list("text=,-&%2A0:~ab")), max_size=30).map(lambda d: (d, False)),
                 _FOUND.map(lambda d: (d, True))))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_any_text_directive_resolves_or_fails_with_a_pdi_error(archive: Archive, given_directive: tuple[str, bool]) -> None:
    from pdi.interop.aliases import native_names

    directive, found = given_directive
    names = archive.ls(f"urn:pdi://{S}/*/*/*/*")
    name = str(names[0]) if names else str(archive.add(S, b"<p>a b text ab</p>", format="html"))
    try:
        alias = native_names(archive, f"{name}#:~:{directive}")
    except PDIError as refused:
        assert not found, f"#:~:{directive} names text the page shows, but was refused: {refused}"
        return
    if found:
        assert alias.natives and all(n is not None for n in alias.natives), directive
    for found in alias.natives:
        assert found is None or str(found).startswith(name + "#char=")


def test_an_import_reads_each_document_once_however_its_targets_are_ordered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a stranger's POST may hold a thousand targets on the largest page: each must not read it again
    import pdi.fragments.pagetext as pagetext

    made: list[str] = []
    real = pagetext.document_page_text

    def counted(data: bytes, media_type: str, charset: str | None) -> pagetext.PageText:
        made.append(media_type)  # counts the page texts made; the real one makes each
        return real(data, media_type, charset)

    monkeypatch.setattr(pagetext, "document_page_text", counted)
    with Archive.init(tmp_path / "archive") as archive:
        archive.add_series(S)
        first = str(archive.add(S, TEXT.encode(), format="text"))
        other_text = "Another letter.\nThe quick brown fox again.\n"
        second = str(archive.add(S, other_text.encode(), format="text"))
        quotes = [(first, "quick brown"), (second, "fox again"), (first, "lazy dog"), (second, "Another")] * 3
        annotations = [{"id": f"a{k}", "target": {"source": source,
                                                  "selector": {"type": "TextQuoteSelector", "exact": exact}}}
                       for k, (source, exact) in enumerate(quotes)]
        results = import_annotations(archive, annotations)
    assert len(made) == 2  # one page text a document
    # in the order given, each at the place its quote stands (CRLF-canonical: one more character a line before it)
    for k, ((source, exact), result) in enumerate(zip(quotes, results, strict=True)):
        text = TEXT if source == first else other_text
        at = text.index(exact) + text[: text.index(exact)].count("\n")
        assert (result.annotation, result.status, str(result.name)) == (
            f"a{k}", "found", f"{source}#char={at},{at + len(exact)}")


def test_n2ls_and_n2ns_of_a_browser_fragment_answer_for_the_native_name(archive: Archive) -> None:
    name = str(archive.add(S, TEXT.encode(), format="text"))
    client = TestClient(create_app(str(archive.location), archive=archive))
    # "fox" after "brown ": in the CRLF-canonical text one CR (the first line's) more than in TEXT
    at = TEXT.index("fox") + 1
    for service in ("N2Ls", "N2Ns"):
        moved = client.get(f"/uri-res/{service}?{name}%23:~:text=brown-,fox", follow_redirects=False)
        assert moved.status_code == 302, (service, moved.text)
        assert moved.headers["location"] == f"/uri-res/{service}?{name}%23char={at},{at + 3}"
        assert client.get(moved.headers["location"]).status_code == 200


@pytest.mark.parametrize("selector", [
    {"type": "DataPositionSelector", "start": 5, "end": 2},
    {"type": "FragmentSelector", "value": "char=5,2", "conformsTo": "http://tools.ietf.org/rfc/rfc5147"},
    {"type": "FragmentSelector", "value": "intro", "conformsTo": "http://tools.ietf.org/rfc/rfc3236"},
])
def test_a_selector_that_makes_no_pdi_is_refused_not_answered(archive: Archive, selector: dict[str, Any]) -> None:
    # byte=5,2 and char=5,2 end before they start, and a text has no name= scheme (PDI-GRAMMAR §3):
    # none of them is a name, so none may be answered as one
    name = str(archive.add(S, TEXT.encode(), format="text"))
    with pytest.raises(ParseError):
        import_annotations(archive, {"target": {"source": name, "selector": selector}})


def test_a_refined_selector_is_refused_not_answered_as_the_whole_it_refines(archive: Archive) -> None:
    # Web Annotation Data Model §4.2.9: refinedBy selects within what its selector selects. "char=14,33" (RFC 5147)
    # is the line "The quick brown fox"; refined by the quote "fox" it is that word, which pdi does not read: the
    # line's name (found by a stranger's client, 2026-11-27: answered "selected") is not the annotation's passage
    name = str(archive.add(S, TEXT.encode(), format="text"))
    for selector in (
        {"type": "FragmentSelector", "conformsTo": "http://tools.ietf.org/rfc/rfc5147", "value": "char=14,33",
         "refinedBy": {"type": "TextQuoteSelector", "exact": "fox"}},
        {"type": "TextPositionSelector", "start": 15, "end": 34, "refinedBy": {"type": "TextPositionSelector",
                                                                              "start": 16, "end": 19}},
    ):
        with pytest.raises(UnsupportedError, match="refinedBy"):
            import_annotations(archive, {"target": {"source": name, "selector": selector}})


#: A text deposited with CR LF line ends (a clef outside the BMP on its second line): its own characters are the
#: PDI's, so a W3C TextPositionSelector counts as the name does, and RFC 5147 counts each CR LF once.
CRLF_TEXT = "Hello, world.\r\nSecond \U0001d11e line.\r\n\r\nThe quick brown fox\r\njumps over the lazy dog.\r\n"


def _selected_by_each(archive: Archive, name: str, a: int, b: int) -> dict[str, str]:
    """What the name ``name#char=a,b`` and each selector of its exported annotation select, each read as its own
    spec reads it: the PDI through the archive, TextPositionSelector as code points of the deposited text,
    RFC 5147 with a line end one character, TextQuoteSelector by its exact text."""
    exported = export_annotation(archive, f"{name}#char={a},{b}")
    assert exported["body"] == f"{name}#char={a},{b}"  # the name the viewer offers, the annotation's body
    selectors = {s["type"]: s for s in exported["target"]["selector"]}
    position = selectors["TextPositionSelector"]
    got = {
        "pdi": archive.get(f"{name}#char={a},{b}").data.decode("utf-8"),
        "position": CRLF_TEXT[position["start"]:position["end"]],
        "quote": selectors["TextQuoteSelector"]["exact"] if "TextQuoteSelector" in selectors else "",
    }
    if "FragmentSelector" in selectors:
        value = selectors["FragmentSelector"]["value"].removeprefix("char=").split(",")
        lines = CRLF_TEXT.replace("\r\n", "\n")  # RFC 5147: each line end one character
        got["rfc5147"] = lines[int(value[0]):int(value[-1])].replace("\n", "\r\n")
    return got


def test_a_crlf_text_exports_selectors_that_select_what_its_name_does(archive: Archive, tmp_path: Path) -> None:
    name = str(archive.add(S, CRLF_TEXT.encode(), format="text"))
    wanted = "line.\r\n\r\nThe quick"  # across two line ends and an empty line
    a = CRLF_TEXT.index(wanted)  # code points of the deposited text, CR and LF one each: the PDI's count
    b = a + len(wanted)
    assert (a, b) == (24, 42)  # "Hello, world.\r\n" is 15, "Second " 7, the clef 1, a space 1
    rfc_a, rfc_b = a - CRLF_TEXT[:a].count("\r\n"), b - CRLF_TEXT[:b].count("\r\n")
    assert (rfc_a, rfc_b) == (23, 39)  # one line end before a, three before b
    exported = export_annotation(archive, f"{name}#char={a},{b}")
    selectors = {s["type"]: s for s in exported["target"]["selector"]}
    assert (selectors["TextPositionSelector"]["start"], selectors["TextPositionSelector"]["end"]) == (a, b)
    assert selectors["FragmentSelector"]["value"] == f"char={rfc_a},{rfc_b}"
    assert set(_selected_by_each(archive, name, a, b).values()) == {wanted}
    # the command and the API answer the same annotation, and the RFC 5147 selector, evaluated by the
    # resolver on the text's N2R entity, selects the same passage
    out = CliRunner().invoke(cli, ["annotate", "--export", f"{name}#char={a},{b}", "--archive", str(archive.location)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == exported
    with TestClient(create_app(str(archive.location), archive=archive)) as client:
        assert client.get("/api/annotation", params={"pdi": f"{name}#char={a},{b}"}).json() == exported
        rfc = client.get("/api/rfc5147", params={"pdi": name, "fragment": f"char={rfc_a},{rfc_b}"}).json()
        assert rfc["text"] == wanted
        back = client.post("/api/annotation", json=exported).json()["results"]
    assert [r["pdi"] for r in back] == [f"{name}#char={a},{b}"]


_DEPOSITED: dict[str, str] = {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ends=st.tuples(st.integers(0, len(CRLF_TEXT)), st.integers(0, len(CRLF_TEXT))))
def test_every_passage_of_a_crlf_text_exports_selectors_that_agree(archive: Archive, ends: tuple[int, int]) -> None:
    # any range, an end between a CR and its LF included: no RFC 5147 position falls there, so none is written
    name = _DEPOSITED.get(str(archive.location))
    if name is None:  # one deposit for every example (the fixture's archive is the test's, not an example's)
        name = _DEPOSITED[str(archive.location)] = str(archive.add(S, CRLF_TEXT.encode(), format="text"))
    a, b = sorted(ends)
    if a == b:
        return
    got = _selected_by_each(archive, name, a, b)
    assert set(got.values()) <= {CRLF_TEXT[a:b], ""} and got["pdi"] == got["position"] == CRLF_TEXT[a:b], got
    splits = any(0 < p < len(CRLF_TEXT) and CRLF_TEXT[p - 1:p + 1] == "\r\n" for p in (a, b))
    assert ("rfc5147" in got) is not splits


def test_a_target_that_is_a_pdi_of_a_passage_imports_to_that_passage(archive: Archive) -> None:
    # Web Annotation Data Model §3.2.1: a target may be the IRI of the resource itself; a PDI with a fragment is
    # a passage's own IRI, so the annotation's target is that passage of the document (a generic name's too)
    name = archive.add(S, TEXT.encode(), format="text")
    generic = str(name).rsplit(".", 1)[0]  # no version: the latest
    for target, expected in ((f"{name}#char=19,34", f"{name}#char=19,34"), (f"{generic}#char=2,5", f"{name}#char=2,5")):
        [result] = import_annotations(archive, {"type": "Annotation", "target": target})
        assert (result.status, str(result.name)) == ("selected", expected), result
        assert result.message == "named by its target"
    # another document's passage, given beside --pdi of this one: not read as a passage of this one
    other = archive.add(S, b"another text entirely\n", format="text")
    with pytest.raises(UnsupportedError, match="no selector pdi reads"):
        import_annotations(archive, {"type": "Annotation", "target": f"{other}#char=0,7"}, document=str(name))
