"""JSON that others wrote is read or refused with a ParseError, never an interpreter error (``pdi.untrusted_json``).

What a stranger may send (found by a tester: a batch's manifest nested 100,000 deep was a ``500`` with a
``RecursionError``): each place that reads another's JSON — a JWS header and payload, a JWK set, a registry —
refuses it naming what was read. The values are worked out by the JSON grammar (RFC 8259): ``[`` opens an array
that ``]`` closes, so ``[[…]]`` is JSON at any depth, which Python's reader stops at; ``{]`` is not JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi import untrusted_json
from pdi.errors import LimitError, ParseError
from pdi.federation.registry import Registry
from pdi.signing import (
    SigningKey,
    b64url,
    jwk_set_text,
    parse_jwks,
    sign_manifest,
    verify_compact,
    verify_manifest,
)
from peak_memory import run_with_peak

DEEP = "[" * 100_000 + "]" * 100_000


@given(st.recursive(st.none() | st.booleans() | st.integers(-(10**300), 10**300) | st.text() | st.floats(allow_nan=False, allow_infinity=False),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20))
def test_json_within_depth_is_read_as_json_reads_it(value: object) -> None:
    assert untrusted_json.loads(json.dumps(value), "it", rule="r") == value


@pytest.mark.parametrize(("text", "said"), [
    (DEEP, "it is not JSON pdi reads: it is nested more than 100 levels deep"),
    ("{]", "it is not JSON: "),
    (b"\xff[]", "it is not JSON: "),
])
def test_what_is_not_json_pdi_reads_is_a_parse_error_naming_it(text: str | bytes, said: str) -> None:
    with pytest.raises(ParseError, match="^" + said) as caught:
        untrusted_json.loads(text, "it", rule="r")
    assert caught.value.rule == "r"


def test_depth_is_read_to_a_hundred_levels() -> None:
    assert untrusted_json.loads("[" * 100 + "]" * 100, "it", rule="r") is not None
    assert untrusted_json.loads('{"a":' * 100 + "1" + "}" * 100, "it", rule="r") is not None
    for deeper in ("[" * 101 + "]" * 101, '{"a":' * 100 + "[]" + "}" * 100):
        with pytest.raises(ParseError, match="nested more than 100 levels deep"):
            untrusted_json.loads(deeper, "it", rule="r")


@pytest.mark.parametrize("text", ["[NaN]", '{"a": Infinity}', "[-Infinity]", "[1e400]", "[-1e999]"])
def test_what_python_reads_but_json_has_not_is_refused(text: str) -> None:
    """RFC 8259 §6: no NaN or Infinity; a number past a double's range is what no reader can take back."""
    json.loads(text)  # Python reads each
    with pytest.raises(ParseError, match=r"NaN, Infinity or a number past a double's range"):
        untrusted_json.loads(text, "it", rule="r")
    with pytest.raises(ParseError, match=r"NaN, Infinity or a number past a double's range"):
        untrusted_json.loads(f"[{text}, " + "[]," * 200 + "[]]", "it", rule="r")  # read by the streaming pass first
    assert untrusted_json.loads("[1e308, -1.5e-300, 1.5e30]", "it", rule="r")[0] == 1e308


@pytest.mark.parametrize("brackets", [0, 200])
def test_an_integer_is_read_alike_whichever_way_it_is_read(brackets: int) -> None:
    """The same value, read by Python's reader alone or by the streaming pass first (a text with many brackets,
    here in a string; yajl reads integers as 64 bits), is read alike: any integer JSON writes (RFC 8259 §6), up
    to the 4,300 digits Python converts."""
    padding = '"' + "[" * brackets + '"'
    big = [2**63 - 1, 2**63, -(2**63), 10**400, -(10**4000)]
    assert untrusted_json.loads(f"[{padding}, {', '.join(map(str, big))}, 1.5e300]", "it", rule="r")[1:] == [
        *big, 1.5e300]
    with pytest.raises(ParseError, match=r"^it is not JSON pdi reads: it holds an integer of 5,000 digits, more than"
                                         r" the 4,300 pdi reads \(RFC 8259 §6"):
        untrusted_json.loads(f"[{padding}, {'1' * 5000}]", "it", rule="r")
    with pytest.raises(ParseError, match="NaN, Infinity or a number past"):
        untrusted_json.loads(f"[{padding}, 1e400]", "it", rule="r")


@settings(max_examples=200)
@given(st.integers(1, 9), st.integers(0, 10**9), st.integers(4_290, 4_310), st.booleans(), st.sampled_from(["", "x" * 200]))
def test_an_integer_longer_than_python_converts_is_refused_in_pdi_s_words(
        first: int, rest: int, digits: int, negative: bool, padding: str) -> None:
    """RFC 8259 §6 lets a reader limit the numbers it takes; Python converts an integer of at most
    ``sys.get_int_max_str_digits()`` digits (4,300), and refused a longer one in the interpreter's words ("Exceeds
    the limit (4300 digits) for integer string conversion …; use sys.set_int_max_str_digits()"), which a user of
    ``pdi import`` can do nothing with. One within it is read as ``int`` reads its digits (a string of as many
    digits, or a longer one, is no number and is read as it is)."""
    assert sys.get_int_max_str_digits() == 4_300
    text = ("-" if negative else "") + (str(first) + str(rest) * digits)[:digits]
    document = json.dumps({"bytes": "9" * 5_000, "pad": padding})[:-1] + f', "n": {text}}}'
    if digits <= 4_300:
        assert untrusted_json.loads(document, "it", rule="r")["n"] == int(text)
        return
    with pytest.raises(ParseError) as caught:
        untrusted_json.loads(document, "it", rule="r")
    assert str(caught.value) == (f"it is not JSON pdi reads: it holds an integer of {digits:,} digits, more than the"
                                 " 4,300 pdi reads (RFC 8259 §6 lets a reader limit the numbers it takes) (rule r)")


@pytest.mark.parametrize("octets", [b'["\xed\xa0\x80"]', "[1]".encode("utf-16"), "[1]".encode("utf-32"), b"[\"\xff\"]"])
def test_octets_that_are_not_utf8_are_not_json(octets: bytes) -> None:
    """RFC 8259 §8.1: JSON exchanged is UTF-8. Python reads UTF-16 and UTF-32, and a surrogate's three octets."""
    with pytest.raises(ParseError, match=r"not UTF-8 \(RFC 8259 §8\.1\)"):
        untrusted_json.loads(octets, "it", rule="r")
    assert untrusted_json.loads(b"\xef\xbb\xbf[1]", "it", rule="r") == [1]  # a byte order mark is let be


@pytest.mark.parametrize("text", [r'["\ud800"]', r'{"\udfff": 1}', r'["a\ude00b"]', r'["\ude00\ud83d"]'])
def test_a_lone_surrogate_is_refused_and_a_pair_is_its_character(text: str) -> None:
    """RFC 8259 §8.2: a lone surrogate escape is no character (Python reads it, and fails writing it as UTF-8)."""
    read = json.loads(text)  # Python reads it
    with pytest.raises(UnicodeEncodeError):
        json.dumps(read, ensure_ascii=False).encode("utf-8")
    with pytest.raises(ParseError, match="lone surrogate"):
        untrusted_json.loads(text, "it", rule="r")
    with pytest.raises(ParseError, match="lone surrogate"):  # the text as Python holds it, the surrogate unescaped
        untrusted_json.loads(json.dumps(read, ensure_ascii=False), "it", rule="r")
    assert untrusted_json.loads(r'["\ud83d\ude00"]', "it", rule="r") == ["\U0001f600"]  # §7: a pair is one


def test_values_past_the_bound_are_refused_before_they_are_made() -> None:
    nine = "[" + ",".join("1" * 9) + "]"  # the array and nine numbers: ten values
    assert untrusted_json.loads(nine, "it", rule="r", most=10) == [1] * 9
    with pytest.raises(LimitError, match="more than 9 JSON values"):
        untrusted_json.loads(nine, "it", rule="r", most=9)
    with pytest.raises(LimitError):
        untrusted_json.loads('{"a": 1, "b": 2}', "it", rule="r", most=4)  # the object, two keys, two numbers


def test_eight_megabytes_of_empty_arrays_are_refused_in_bounded_memory(tmp_path: Path) -> None:
    """2.8 million ``[]``: Python's reader builds each (about 60 octets apiece, 170 MB); this refuses them unmade."""
    body = tmp_path / "arrays.json"
    count = (8 << 20) // 3
    body.write_bytes(b"[" + b"[]," * (count - 1) + b"[]]")
    script = ("import sys; from pdi import untrusted_json; from pdi.errors import LimitError\n"
              "try:\n    untrusted_json.loads(open(sys.argv[1], 'rb').read(), 'it', rule='r')\n"
              "except LimitError:\n    sys.exit(7)\n")
    status, peak, _ = run_with_peak([sys.executable, "-c", script, str(body)])
    assert status == 7
    assert peak < 90 * 1024, f"{peak} KiB"


def test_a_jws_a_jwk_set_and_a_manifest_nested_too_deep_are_refused_in_words() -> None:
    key = SigningKey.generate()
    with pytest.raises(ParseError, match="the JWS header is not JSON pdi reads"):
        verify_compact(b64url(("[" * 3000 + "]" * 3000).encode()) + "." + b64url(b"{}") + ".", [key.public])
    with pytest.raises(ParseError, match=r"keys\.json is not JSON pdi reads"):
        parse_jwks(DEEP, "keys.json")
    with pytest.raises(ParseError, match="the manifest's payload is not JSON pdi reads"):
        verify_manifest(sign_manifest(key, DEEP.encode()), [key.public])


def test_a_registry_nested_too_deep_is_refused_naming_it() -> None:
    with pytest.raises(ParseError, match=r"registry\.json is not JSON pdi reads"):
        Registry.from_json(DEEP.encode(), "registry.json")


def test_a_resolvers_pages_are_followed_only_while_their_signatures_hold(tmp_path: Path) -> None:
    """``pdi verify --signatures URL`` follows each page's ``next``. Found by an attack (2026-11-27): it read
    ``next`` before the signature was checked, so a stranger's forged pages, each naming another, were fetched
    without end (616 in 30 s, bounded only by 100,000 pages of 120 s). A page that does not verify ends the walk:
    nothing it says is read, not even where it says to go."""
    import http.server
    import urllib.parse

    from click.testing import CliRunner

    from pdi.archive import Archive
    from pdi.cli import cli
    from pdi.signing import canonical_json
    from support.handler_server import handler_server

    ours, stranger = SigningKey.generate(), SigningKey.generate()
    asked: list[str | None] = []

    def page(after: str | None, key: SigningKey) -> bytes:
        value = {"type": "pdi-manifest+jws", "series": "a.example.us", "day": None, "after": after,
                 "next": f"{int(after or 0) + 1:06d}", "names": [], "access": "public"}
        return sign_manifest(key, canonical_json(value)).encode()

    class Pages(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            target = urllib.parse.urlsplit(self.path)
            if target.path != "/api/manifest":  # the page's timestamp (/api/manifest.tsr): this one keeps none
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            after = dict(urllib.parse.parse_qsl(target.query)).get("after")
            asked.append(after)
            body = page(after, ours if after is None else stranger)  # the second page is forged
            self.send_response(200)
            self.send_header("Content-Type", "application/jose")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    Archive.init(tmp_path / "archive").close()
    keys = tmp_path / "keys.json"
    keys.write_text(jwk_set_text([ours.public]))
    with handler_server(Pages) as base:
        url = f"{base}api/manifest?series=a.example.us"
        done = CliRunner().invoke(cli, ["verify", "--signatures", url, "--key", str(keys),
                                        "--archive", str(tmp_path / "archive")])
    assert asked == [None, "000001"]  # the first page (signed) and the one it names; the forged one's next: never
    assert done.exit_code == 3, done.output
    assert "checked 2 manifests" in done.output and "does not verify" in done.output


def test_a_jws_header_and_a_key_set_are_bounded_before_they_are_read() -> None:
    """Found by an attack (2026-11-27): a 64 MiB header of empty objects, read before the signature is checked,
    took 1.5 GB as Python's values, and a 64 MiB key set 1.7 GB."""
    from pdi.signing import MAX_JWKS, MAX_JWS_HEADER

    key = SigningKey.generate()
    made = sign_manifest(key, b'{"names": []}')
    assert verify_compact(made, [key.public]).payload == b'{"names": []}'
    header = b64url(b'{"alg":"EdDSA","x":[' + b"{}," * 3000 + b'{}]}')
    assert len(header) > MAX_JWS_HEADER
    with pytest.raises(ParseError, match=f"the JWS header is {len(header)} characters, more than the {MAX_JWS_HEADER}"):
        verify_compact(header + "." + made.split(".", 1)[1], [key.public])
    many = jwk_set_text([key.public] * (MAX_JWKS // 100))
    assert len(many) > MAX_JWKS
    with pytest.raises(ParseError, match="is larger than a JWK set may be"):
        parse_jwks(many, "the key set")
    assert parse_jwks(jwk_set_text([key.public] * 1000), "the key set")[0] == key.public


# --- a member named twice (RFC 8259 §4): refused where asked, naming where -------------------------------------

_names = st.sampled_from(["a", "b", "a/b", "~", "é", ""])
_pair_trees = st.recursive(
    st.integers(-5, 5) | st.text(max_size=3) | st.none(),
    lambda inner: st.lists(inner, max_size=4).map(lambda items: ("array", items))
    | st.lists(st.tuples(_names, inner), max_size=4).map(lambda pairs: ("object", pairs)),
    max_leaves=15,
)


def _written(tree: object) -> str:
    """The JSON text of a tree whose objects are lists of (name, value) pairs, a name perhaps twice."""
    if isinstance(tree, tuple) and tree[0] == "array":
        return "[" + ",".join(_written(item) for item in tree[1]) + "]"
    if isinstance(tree, tuple):
        return "{" + ",".join(json.dumps(name) + ":" + _written(value) for name, value in tree[1]) + "}"
    return json.dumps(tree)


def _first_repeated(tree: object, path: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The path (RFC 6901 reference tokens, unescaped) of the first name an object repeats, in the text's order."""
    if isinstance(tree, tuple) and tree[0] == "array":
        for k, item in enumerate(tree[1]):
            found = _first_repeated(item, (*path, str(k)))
            if found is not None:
                return found
        return None
    if isinstance(tree, tuple):
        seen: set[str] = set()
        for name, value in tree[1]:
            if name in seen:
                return (*path, name)
            seen.add(name)
            found = _first_repeated(value, (*path, name))
            if found is not None:
                return found
    return None


@given(_pair_trees)
def test_a_member_named_twice_is_refused_at_its_json_pointer(tree: object) -> None:
    text = _written(tree)
    expected = _first_repeated(tree)
    assert untrusted_json.loads(text, "it", rule="r") == json.loads(text)  # not asked: read as Python reads it
    if expected is None:
        assert untrusted_json.loads(text, "it", rule="r", unique_keys=True) == json.loads(text)
        return
    with pytest.raises(ParseError) as refused:
        untrusted_json.loads(text.encode(), "it", rule="r", unique_keys=True)
    pointer = "".join("/" + token.replace("~", "~0").replace("/", "~1") for token in expected)  # RFC 6901 §3
    assert refused.value.details == {"pointer": pointer}
    assert "twice" in str(refused.value)


def test_a_member_named_twice_by_an_escape_is_named_twice() -> None:
    with pytest.raises(ParseError) as refused:
        untrusted_json.loads(b'{"x": [0, {"target": 1, "t\\u0061rget": 2}]}', "it", rule="r", unique_keys=True)
    assert refused.value.details == {"pointer": "/x/1/target"}


def _depth(value: object) -> int:
    """Levels of arrays and objects ``value`` nests (RFC 8259 §4, §5: each opens one), walked by hand."""
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


#: Strings of brackets, quotes and backslashes: written escaped (\" and \\), so a reader that took them for
#: structure would count the depth wrong.
_TRICKY = st.text(alphabet='[]{}"\\ a', max_size=8)


@given(st.recursive(_TRICKY | st.integers(), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(_TRICKY, inner, max_size=3), max_leaves=12),
       st.integers(0, 120), st.sampled_from(["[", '{"[":']))
def test_depth_is_counted_outside_strings_alone(value: object, wrapped: int, opener: str) -> None:
    """A value inside ``wrapped`` more levels (arrays, or objects named ``[``) is read when it nests 100 levels at
    most, and refused as too deep past them, however many brackets its strings hold."""
    closer = "]" if opener == "[" else "}"
    text = opener * wrapped + json.dumps(value) + closer * wrapped
    if _depth(value) + wrapped <= 100:
        assert untrusted_json.loads(text, "it", rule="r") == json.loads(text)
    else:
        with pytest.raises(ParseError, match="nested more than 100 levels deep"):
            untrusted_json.loads(text, "it", rule="r")


def test_strings_of_closing_brackets_hide_no_depth() -> None:
    """151 levels, each array's first item a string of one ``]``: no level closed by it."""
    text = '["]",' * 151 + "1" + "]" * 151
    assert _depth(json.loads(text)) == 151
    with pytest.raises(ParseError, match="nested more than 100 levels deep"):
        untrusted_json.loads(text, "it", rule="r")
    with pytest.raises(ParseError, match="not JSON"):  # a million quotes no string closes: refused, read once
        untrusted_json.loads(b'["' + b'\\"' * 1_000_000 + b"[" * 200, "it", rule="r")


def test_a_page_of_a_thousand_shallow_objects_is_read_without_the_streaming_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest page's thousand entries nest three levels: sure within the bound without counting each event
    (the streaming pass took 10 to 50 ms a page of a mirror's sync)."""
    page = {"entries": [{"name": f"urn:pdi://mirror.example.us/2026/11/28/{i}.octet-stream.1", "size": i,
                         "tags": ["[", "{"]} for i in range(1000)], "next": None}

    def counted(*_: object) -> None:
        raise AssertionError("the streaming pass ran")

    monkeypatch.setattr(untrusted_json, "_bounded", counted)
    assert untrusted_json.loads(json.dumps(page), "it", rule="r", unique_keys=True) == page
    with pytest.raises(AssertionError, match="the streaming pass ran"):  # nine levels: counted, as before
        untrusted_json.loads("[" * 9 + "]" * 9 + " " + "[]" * 100, "it", rule="r")
