"""The registry document and NAPTR rules (pdi.federation): parsing, signatures, RFC 3402/3403/3404 rules, a real DNS."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jwcrypto.jws
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jwcrypto import jwk

from pdi.errors import IntegrityError, ParseError, PDIError, RemoteError, UnsupportedError
from pdi.federation.naptr import NaptrFinder, apply_regexp
from pdi.federation.registry import Registry, base_url, sign_registry, verify_registry
from pdi.signing import PublicKey, SigningKey, canonical_json, sign_compact
from support.dnsnode import dnsmasq

URN = "urn:pdi://a.example.us/2026/11/20/1.text.1"


# --- RFC 3402 §3.2 substitution expressions -------------------------------------------------
def test_rfc3404_5_1_cid_example() -> None:
    """RFC 3404 §5.1: the rule of cid.urn.arpa applied to urn:cid:199606121851.1@bar.example.com."""
    assert apply_regexp(r"!^urn:cid:.+@([^\.]+\.)(.*)$!\2!i", "urn:cid:199606121851.1@bar.example.com") == "example.com"


def test_rfc3402_3_2_case_flag_and_escaped_delimiter() -> None:
    assert apply_regexp("!^URN:PDI://([^/]+)/.*$!\\1!i", URN) == "a.example.us"
    assert apply_regexp("!^URN:PDI://([^/]+)/.*$!\\1!", URN) is None  # without i, case counts
    assert apply_regexp("/^urn:pdi:\\/\\/([^\\/]+)\\/.*$/http:\\/\\/\\1\\//", URN) == "http://a.example.us/"
    assert apply_regexp("!^.*$!http://127.0.0.1:8000/!", URN) == "http://127.0.0.1:8000/"


@pytest.mark.parametrize(("regexp", "subject", "output"), [
    ("!(a|ab)!\\1!", "ab", "ab"),
    ("!(oma|oma\\.eop)!\\1!", URN.replace("a.example.us", "oma.eop.gov.us"), "oma.eop"),
    ("!//(a|a\\.example)!\\1!", URN, "a.example"),
])
def test_rfc3402_3_2_the_ere_matches_as_posix_says_leftmost_longest(regexp: str, subject: str, output: str) -> None:
    """RFC 3402 §3.2: the ere is a POSIX Extended Regular Expression, whose match is the longest of those starting
    leftmost (POSIX.1-2017 XBD §9.1), so an alternation takes its longer branch where both match; a Perl-style
    engine takes the first. (GNU sed -E, a POSIX ERE engine, agrees: ``echo ab | sed -E 's/(a|ab)/[\\1]/'`` prints
    ``[ab]``.)"""
    assert apply_regexp(regexp, subject) == output


@pytest.mark.parametrize("bad", ["", "!a!", "!a!b!x", "1a1b1", "!(!x!", "!a!\\2!"])
def test_rfc3402_3_2_bad_expressions_say_so(bad: str) -> None:
    with pytest.raises(ParseError) as caught:
        apply_regexp(bad, URN)
    assert caught.value.rule == "naptr-regexp"


@given(st.text(max_size=60), st.text(max_size=60))
def test_any_expression_parses_or_is_a_parse_error(regexp: str, subject: str) -> None:
    try:
        out = apply_regexp(regexp, subject)
    except ParseError:
        return
    assert out is None or isinstance(out, str)


#: RFC 3402 §3.2's ``subst_expr = delim-char ere delim-char repl delim-char *flags`` for one delimiter ``{d}``, every
#: occurrence of it in ``ere`` and ``repl`` escaped ("there must be exactly three non-escaped occurrences"), a
#: backslash escaping the character after it, and ``*flags``, the one flag being ``i``.
_SUBST_EXPR = r"{d}(?:\\.|[^\\{d}])*{d}(?:\\.|[^\\{d}])*{d}i*"


@given(st.sampled_from("!/#|@%,;:~+=^ -_$"), st.text(st.sampled_from("ab!/\\i()1x.*"), max_size=20))
def test_rfc3402_3_2_an_expression_is_read_as_its_grammar_has_it(delim: str, rest: str) -> None:
    """Found by a property (2026-12-01): a backslash that ended the expression (``!a!b!\\``, ``!a!b!i\\``) was
    dropped and the rule read, though after the third delimiter only the flag ``i`` may come."""
    expression = delim + rest
    written = re.fullmatch(_SUBST_EXPR.format(d=re.escape(delim)), expression, re.DOTALL) is not None
    try:
        apply_regexp(expression, "xab")
    except ParseError as exc:
        assert ("delim ere delim repl delim" in str(exc)) != written, expression
    else:
        assert written, expression


@pytest.mark.parametrize("bad", ["!a!b!\\", "!a!b!i\\", "!^.*$!http://r.example/!\\"])
def test_rfc3402_3_2_a_backslash_at_the_end_escapes_nothing(bad: str) -> None:
    with pytest.raises(ParseError, match="delim ere delim repl delim"):
        apply_regexp(bad, URN)


def test_rfc3402_3_2_flags_are_any_number_of_i() -> None:
    """Found by a property (2026-12-01): ``subst_expr = … delim-char *flags``, ``flags = "i"``: ``ii`` is the flag
    twice (BIND's check of a zone, ``txt_valid_regex``, reads it so), not a malformed rule, which it was taken for."""
    assert apply_regexp("!^URN:PDI://([^/]+)/.*$!\\1!ii", URN) == "a.example.us"
    assert apply_regexp("!^URN:PDI://([^/]+)/.*$!\\1!", URN) is None
    with pytest.raises(ParseError, match="delim ere delim repl delim"):
        apply_regexp("!a!b!iI", URN)


#: The characters a POSIX ERE gives a meaning of its own (POSIX.1-2017 XBD §9.4.3): written as themselves, escaped.
_ERE_SPECIAL = ".[]()*+?{}|^$\\"
_LITERALS = "ab.|+*?()[]{}^$\\/!xdwbi -é"


@st.composite
def _rule(draw: st.DrawFn) -> tuple[str, str, str | None]:
    """A substitution expression written as RFC 3402 §3.2 has it, the subject it is applied to, and its output as
    the RFC says it: an ERE of literal characters (each escaped where it must be: the delimiter, a backslash, a
    character the ERE reads otherwise; others escaped or not, a backslash before a non-digit being that character),
    any-character dots and groups, anchored or not; a repl of literal characters (escaped or not) and backrefs
    ``\\1``-``\\9``, an escaped delimiter being the delimiter and ``\\\\`` a backslash. The oracle reads the same
    rule from its parts with Python's ``re`` (no alternation nor repetition: the leftmost match is the longest)."""
    delim = draw(st.sampled_from("!/|.+x#d*?"))
    flags = draw(st.sampled_from(["", "i"]))

    def literal(char: str, in_repl: bool) -> str:
        must = char in (delim, "\\") or (not in_repl and char in _ERE_SPECIAL)
        return "\\" + char if must or draw(st.booleans()) else char

    atoms = draw(st.lists(st.one_of(st.tuples(st.just("lit"), st.sampled_from(_LITERALS)),
                                    st.tuples(st.just("any"), st.just(".")),
                                    st.tuples(st.just("group"), st.text(st.sampled_from(_LITERALS), max_size=3))),
                          max_size=6))
    if delim == ".":
        atoms = [a for a in atoms if a[0] != "any"]
    groups = sum(1 for kind, _ in atoms if kind == "group")
    start, end = draw(st.booleans()), draw(st.booleans())
    ere = "^" if start else ""
    oracle = "^" if start else ""
    for kind, text in atoms:
        if kind == "lit":
            ere, oracle = ere + literal(text, False), oracle + re.escape(text)
        elif kind == "any":
            ere, oracle = ere + ".", oracle + "."
        else:
            ere += "(" + "".join(literal(c, False) for c in text) + ")"
            oracle += "(" + re.escape(text) + ")"
    ere, oracle = ere + ("$" if end else ""), oracle + ("$" if end else "")
    pieces = draw(st.lists(st.one_of(st.sampled_from(_LITERALS + "019"),
                                     *([st.integers(1, groups)] if groups else [])), max_size=6))
    repl = "".join(f"\\{p}" if isinstance(p, int) else (p if p.isdigit() else literal(p, True)) for p in pieces)
    matched = [text if kind != "any" else draw(st.sampled_from("ab.x")) for kind, text in atoms]
    subject = draw(st.text(st.sampled_from("ab.|x\\é"), max_size=3)) + "".join(matched) + draw(
        st.text(st.sampled_from("ab.|x\\é"), max_size=3))
    if flags and draw(st.booleans()):
        subject = subject.upper()
    found = re.search(oracle, subject, (re.IGNORECASE if flags else 0) | re.DOTALL)
    output = None if found is None else "".join(found.group(p) if isinstance(p, int) else p for p in pieces)
    return f"{delim}{ere}{delim}{repl}{delim}{flags}", subject, output


@given(_rule())
def test_rfc3402_3_2_escapes_are_the_characters_they_escape(rule: tuple[str, str, str | None]) -> None:
    """Found in review (2026-12-01): an escaped delimiter was unescaped before the ERE was compiled (``\\|`` with
    ``|`` as the delimiter an alternation, ``\\.`` with ``.`` any character), and a backslash before a letter was
    RE2's own class (``\\d`` a digit, not a ``d``) or no expression (``\\é``)."""
    expression, subject, output = rule
    assert apply_regexp(expression, subject) == output, (expression, subject)


@pytest.mark.parametrize("bad", ["!a\\0!x!", "!(a)\\1!x!", "!a\\9b!x!"])
def test_rfc3402_3_2_an_ere_has_no_backreference(bad: str) -> None:
    """``\\0`` in the ERE was read by RE2 as a NUL octet; ``\\1``-``\\9`` are no part of a POSIX ERE either."""
    with pytest.raises(ParseError, match="backreference"):
        apply_regexp(bad, "a")


def test_regexp_runs_in_linear_time_whoever_wrote_it() -> None:
    """A backtracking engine takes exponential time on (a+)+$ against a's and a b; RE2 does not backtrack."""
    assert apply_regexp("!^(a+)+$!x!", "a" * 5000 + "b") is None


# --- base URLs and the registry --------------------------------------------------------------
@pytest.mark.parametrize("bad", ["ftp://127.0.0.1/", "javascript:alert(1)//", "http://user@host/", "http:///x",
                                 "http://h/?q", "http://h/#f", "http://h/?", "http://h/#", "https://h:port/", "http://h/\r\nX: y", "//h/",
                                 # found by an attack (2026-11-27), from a NAPTR record: a 500 or a dropped
                                 # connection when put in a Location field
                                 "http://[::1/", "http://h/\u2603/", "http://h/\x00/", "http://h/\x1b[2J/",
                                 "http://h/\x7f/", "http://h\u00e9.example/"])
def test_base_url_is_http_or_https_only(bad: str) -> None:
    with pytest.raises(ParseError):
        base_url(bad)


@given(st.text(max_size=60))
def test_a_base_url_is_printable_ascii_or_a_parse_error(text: str) -> None:
    """What a Location field can carry as it is (RFC 9110 §5.5: field values are visible ASCII here)."""
    try:
        made = base_url("http://h.example/" + text)
    except ParseError:
        return
    assert made.isascii() and made.isprintable() and " " not in made


def test_base_url_ends_in_a_slash() -> None:
    assert base_url("https://r.example.org/pdi") == "https://r.example.org/pdi/"
    assert base_url("HTTP://R.example.org/") == "HTTP://R.example.org/"


def test_registry_keeps_the_authority_first() -> None:
    registry = (Registry({}).with_resolver("A.Example.US", "http://a/", mirror=False)
                .with_resolver("a.example.us", "http://b/", mirror=True)
                .with_resolver("a.example.us", "http://c/", mirror=False))
    assert registry.resolvers("a.example.us") == ("http://c/", "http://a/", "http://b/")
    assert registry.without("a.example.us", "http://a").resolvers("a.example.us") == ("http://c/", "http://b/")
    assert registry.without("a.example.us").series == {}
    with pytest.raises(PDIError):
        registry.without("b.example.us")


@pytest.mark.parametrize(("text", "says"), [
    ("[", "not JSON"), ("[]", "not a pdi registry"), ('{"type": "x"}', "not a pdi registry"),
    ('{"series": []}', "is not an object"), ('{"series": {"a.example.us": []}}', "not a list of 1 to"),
    ('{"series": {"a.example.us": ["ftp://x/"]}}', "http or https"),
    ('{"series": {"not a domain": ["http://x/"]}}', "a series is a domain name"),
])
def test_registry_document_errors_name_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ParseError) as caught:
        Registry.from_json(text, "reg.json")
    assert says in str(caught.value) or says in str(caught.value.rule)


@pytest.mark.parametrize(("text", "says"), [
    ('{"series": {"x.example.us": [1]}}', "reg.json: a resolver of x.example.us is 1, not a URL (text)"),
    ('{"series": {"x.example.us": ["x.example.org/"]}}',
     "reg.json: a resolver of x.example.us must be an http or https URL, beginning http:// or https:// (such as"
     " https://pdi.example.org/), not 'x.example.org/'"),
    # a host and port without a scheme splits as the "scheme" x.example.org: still named as having none
    ('{"series": {"x.example.us": ["x.example.org:8080/"]}}', "beginning http:// or https:// (such as"
     " https://pdi.example.org/), not 'x.example.org:8080/'"),
    ('{"series": {"BAD SERIES": ["http://x/"]}}', "reg.json: a series is a domain name (oma.eop.gov.us), not 'BAD SERIES'"),
    ('{"series": {}, "issued": "not a date"}', "reg.json: \"issued\" (when the registry was last edited) must be a UTC"
     " time YYYY-MM-DDTHH:MM:SSZ, not 'not a date'"),
    ('{"series": {}, "issued": "2026-11-25T99:00:00Z"}', "not '2026-11-25T99:00:00Z'"),
    ('{"series": {}, "issued": 1764064800}', "not 1764064800"),
    # one series (domain names compare without case, RFC 4343) listed twice: which list holds is no one's guess
    ('{"series": {"X.Example.US": ["http://a/"], "x.example.us": ["http://b/"]}}',
     "reg.json: the series x.example.us is listed twice (as 'x.example.us' too)"),
])
def test_registry_errors_name_the_file_and_the_value(text: str, says: str) -> None:
    with pytest.raises(ParseError) as caught:
        Registry.from_json(text, "reg.json")
    assert says in str(caught.value)


def test_a_registry_file_with_a_key_it_does_not_know_is_refused_not_rewritten_without_it(tmp_path: Path) -> None:
    """A hand-edited registry.json whose "Series" is misspelled would read as empty, and the next `pdi registry add`
    would write it again without what it listed: the key is refused, named, and the file left as it was."""
    archive, registry = tmp_path / "archive", tmp_path / "registry.json"
    edited = '{"Series": {"a.example.us": ["https://a.example/"]}}'
    registry.write_text(edited)

    def pdi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pdi", *args, "--registry-file", str(registry)],
                              capture_output=True, text=True, timeout=60, env={**os.environ, "PDI_ARCHIVE": str(archive)})

    for args in (("registry", "show"), ("registry", "add", "b.example.us", "https://b.example/")):
        refused = pdi(*args)
        assert refused.returncode == ParseError.exit_code, refused.stderr
        assert refused.stderr == (f"pdi: syntax error: {registry}: 'Series' is no key of a registry (it has series,"
                                  " issued and type) (rule registry)\n")
    assert registry.read_text() == edited


def test_a_signed_registry_says_when_it_was_issued() -> None:
    """docs/reference/federation.md: the payload is {"issued", "series", "type"}, "issued" when it was last edited; pdi signs
    none without it, and one signed without it (or with a time that is none) is refused, naming the registry."""
    key = SigningKey.generate()
    for payload, says in [({"series": {}, "type": "pdi-registry+jws"}, "not none"),
                          ({"series": {}, "issued": "not a date"}, "not 'not a date'")]:
        jws = sign_compact(key, canonical_json(payload), {"alg": "EdDSA", "kid": key.public.thumbprint,
                                                          "typ": "pdi-registry+jws"})
        with pytest.raises(ParseError) as caught:
            verify_registry(jws, [key.public], "https://r.example/.well-known/pdi-registry")
        assert 'https://r.example/.well-known/pdi-registry: "issued" (when the registry was last edited)' in str(
            caught.value) and says in str(caught.value)
    assert Registry.from_json('{"series": {}}', "registry.json").issued is None  # a file pdi writes again: may lack it
    jws = sign_registry(key, Registry({"a.example.us": ("http://a/",)}), "2026-11-25T10:00:00.5Z")
    assert verify_registry(jws, [key.public], "r").issued == "2026-11-25T10:00:00.5Z"


def test_registry_too_large_is_refused() -> None:
    with pytest.raises(UnsupportedError):
        Registry.from_json(b" " * (5 << 20), "big.json")


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4),
                    max_leaves=12))
def test_any_json_is_a_registry_or_a_pdi_error(value: object) -> None:
    try:
        Registry.from_json(json.dumps(value), "any.json")
    except PDIError:
        pass


#: A series as the registry names it: a domain name of LDH labels (RFC 1123 §2.1), two or more, in ASCII.
_LDH_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+")


@given(st.text(st.sampled_from("aKkZz09-.\u212a\u0130\u0131\u017f\uff21"), min_size=1, max_size=12))
def test_a_registry_names_a_series_in_ascii_and_reads_it_in_ascii_case(name: str) -> None:
    """Found by a property (2026-12-01): a series spelt with U+212A KELVIN SIGN (``\u212a.example.us``) was read as
    ``k.example.us``, as ``str.lower`` makes it a "k": no domain name has that character. Case is ASCII's (the
    oracle: :meth:`bytes.lower`, which knows A to Z only)."""
    text = json.dumps({"series": {name: ["https://r.example/"]}})
    if len(name) <= 253 and _LDH_DOMAIN.fullmatch(name):
        key = name.encode("ascii").lower().decode("ascii")
        registry = Registry.from_json(text, "registry.json")
        assert registry.series == {key: ("https://r.example/",)}
        assert registry.resolvers(name) == registry.resolvers(key) == ("https://r.example/",)
    else:
        with pytest.raises(ParseError, match="a series is a domain name"):
            Registry.from_json(text, "registry.json")
        assert Registry({"k.example.us": ("https://r.example/",)}).resolvers("\u212a.example.us") == ()


def test_signed_registry_verifies_with_its_key_only() -> None:
    key, other = SigningKey.generate(), SigningKey.generate()
    registry = Registry({"a.example.us": ("http://a/", "http://b/")})
    jws = sign_registry(key, registry, "2026-11-25T10:00:00Z")
    assert verify_registry(jws, [key.public], "r") == Registry(registry.series, "2026-11-25T10:00:00Z")
    with pytest.raises(IntegrityError):
        verify_registry(jws, [other.public], "r")
    header, payload, signature = jws.split(".")
    with pytest.raises(IntegrityError):
        verify_registry(f"{header}.{payload[:-2]}AA.{signature}", [key.public], "r")


def test_signed_registry_verifies_with_jwcrypto() -> None:
    """An independent JOSE implementation reads the same JWS (RFC 7515, EdDSA per RFC 8037)."""
    key = SigningKey.generate()
    jws = sign_registry(key, Registry({"a.example.us": ("http://a/",)}), "2026-11-25T10:00:00Z")
    token = jwcrypto.jws.JWS()
    token.deserialize(jws)
    token.verify(jwk.JWK(**key.public.jwk()))
    assert json.loads(token.payload)["series"] == {"a.example.us": ["http://a/"]}
    assert token.jose_header["typ"] == "pdi-registry+jws"


@pytest.mark.parametrize(("typ", "read"), [
    ("pdi-registry+jws", True), ("application/pdi-registry+jws", True), ("PDI-Registry+JWS", True),
    ("Application/PDI-REGISTRY+JWS", True), ("application/jwt", False), ("text/pdi-registry+jws", False),
    ("application/application/pdi-registry+jws", False), ("pdi-registry+jws/x", False), (5, False),
])
def test_rfc7515_4_1_9_a_registry_s_typ_is_its_media_type_in_any_spelling(typ: object, read: bool) -> None:
    """Found by a hunt (2026-12-01): a registry signed by another writer with ``typ``
    ``application/pdi-registry+jws`` (RFC 7515 §4.1.9: "application/" is understood where no "/" is written, so
    the same type) or in another case (RFC 6838 §4.2: a media type's names are case-insensitive) was refused as
    of another type. jwcrypto is that other writer here."""
    signer = jwk.JWK.generate(kty="OKP", crv="Ed25519")
    payload = canonical_json({"type": "pdi-registry+jws", "issued": "2026-11-25T10:00:00Z",
                              "series": {"a.example.us": ["http://a/"]}})
    token = jwcrypto.jws.JWS(payload)
    token.add_signature(signer, alg="EdDSA", protected=json.dumps({"alg": "EdDSA", "typ": typ}))
    public = PublicKey.from_jwk(json.loads(signer.export_public()))
    if read:
        assert verify_registry(token.serialize(compact=True), [public], "r").resolvers("a.example.us") == ("http://a/",)
    else:
        with pytest.raises(ParseError, match="is a JWS of type"):
            verify_registry(token.serialize(compact=True), [public], "r")


def test_registry_cli_add_show_remove(tmp_path: Path) -> None:
    archive = tmp_path / "archive"

    def pdi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pdi", *args, "--archive", str(archive)],
                              capture_output=True, text=True, timeout=60)

    assert pdi("init").returncode == 0
    assert pdi("registry", "add", "a.example.us", "http://a.example/").returncode == 0
    assert pdi("registry", "add", "a.example.us", "http://b.example", "--mirror").returncode == 0
    assert pdi("registry", "show").stdout == "a.example.us\thttp://a.example/\thttp://b.example/\n"
    refused = pdi("registry", "add", "a.example.us", "ftp://c.example/")
    assert refused.returncode == 1 and "http or https URL, not ftp: 'ftp://c.example/'" in refused.stderr
    refused = pdi("registry", "add", "BAD SERIES", "http://c.example/")
    assert refused.returncode == 1 and "a series is a domain name (oma.eop.gov.us), not 'BAD SERIES'" in refused.stderr
    removed = pdi("registry", "remove", "a.example.us", "http://a.example/")
    # says what the series' line is now, as add does (it said nothing)
    assert (removed.returncode, removed.stdout, removed.stderr) == (0, "a.example.us\thttp://b.example/\n", "")
    assert pdi("registry", "show").stdout == "a.example.us\thttp://b.example/\n"
    assert pdi("registry", "remove", "a.example.us", "http://a.example/").returncode == 4
    last = pdi("registry", "remove", "a.example.us")  # every resolver: the series is off the registry
    assert (last.returncode, last.stdout) == (0, "")
    assert last.stderr == "a.example.us is off the registry: it lists no resolver of it now\n"
    assert pdi("registry", "show").stdout == ""
    assert pdi("registry", "add", "a.example.us", "http://b.example").returncode == 0
    unsigned = pdi("registry", "show", "--jws")
    assert unsigned.returncode == 4 and "pdi keys init" in unsigned.stderr


@pytest.mark.parametrize("words", [("show",), ("show", "--jws"), ("add", "a.example.us", "https://a.example/"),
                                   ("remove", "a.example.us", "https://a.example/")])
def test_registry_cli_refuses_a_directory_that_is_no_archive(tmp_path: Path, words: tuple[str, ...]) -> None:
    """Found by a tester following docs/how-to/federation.md (2026-11-30): ``pdi registry show --archive DIR`` with
    DIR mistyped (no archive there) answered "the registry lists no series", exit 0, and ``add`` wrote a
    registry.json into a directory that holds no archive. Every other command refuses it (exit 4, naming it);
    so does registry, and writes nothing. With --registry-file the archive is not read (the test above)."""
    typo = tmp_path / "not-an-archive"
    typo.mkdir()
    refused = subprocess.run([sys.executable, "-m", "pdi", "registry", *words, "--archive", str(typo)],
                             capture_output=True, text=True, timeout=60,
                             env={k: v for k, v in os.environ.items() if k != "PDI_REGISTRY"})
    assert refused.returncode == 4, refused
    assert refused.stderr.startswith(f"pdi: not found: no archive at {typo} (no catalog.sqlite)"), refused.stderr
    assert "pdi init" in refused.stderr and refused.stdout == ""
    assert list(typo.iterdir()) == []


# --- NAPTR against a real DNS server ----------------------------------------------------------
def test_naptr_answers_are_kept_for_their_ttl() -> None:
    records = ["--naptr-record=a.example.us,100,10,U,THTTP+N2R+N2L,!^(.*)$!http://127.0.0.1:8000/uri-res/N2R?\\1!",
               "--naptr-record=a.example.us,100,5,U,E2U+sip,!^.*$!sip:info@a.example.us!"]
    with dnsmasq(records, ttl=300) as node:
        finder = NaptrFinder(node.server, private=True)  # a resolver at 127.0.0.1 asked too
        found = finder.services("a.example.us", URN)
        assert [(s.base, sorted(s.services)) for s in found] == [("http://127.0.0.1:8000/", ["n2l", "n2r"])]
        assert found[0].offers("N2L") and not found[0].offers("N2Ls")
    assert [s.base for s in finder.services("a.example.us", URN)] == ["http://127.0.0.1:8000/"]  # DNS gone: kept
    with dnsmasq(records, ttl=0) as node:
        uncached = NaptrFinder(node.server, private=True)
        assert len(uncached.services("a.example.us", URN)) == 1
    with pytest.raises(RemoteError, match="no answer"):  # TTL 0: asked again, and the server is gone: it says so
        uncached.services("a.example.us", URN)


def test_naptr_of_an_answer_of_more_records_than_are_read_are_the_best_ones() -> None:
    """Found by an attack (2026-11-27): of an answer of more than the 32 records read, the first 32 of dnspython's
    rrset were kept, then ranked; an rrset is a set, so which 32 was anyone's guess, and the authority (the lowest
    preference, RFC 3403 §4.1) was dropped as often as not. 40 records of one order: the 32 of lowest preference,
    in that order (an answer of 40 is too large for UDP's 512 octets: asked again over TCP, RFC 1035 §4.2.1)."""
    records = [f"--naptr-record=a.example.us,100,{k},U,THTTP+N2R,!^.*$!http://r{k}.example.org/!" for k in range(40)]
    with dnsmasq(records) as node:
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == [f"http://r{k}.example.org/" for k in range(32)]
    assert [s.preference for s in found] == list(range(32))


def test_naptr_leaves_out_a_resolver_at_an_address_that_is_not_public() -> None:
    """Found by an attack (2026-11-27): a stranger's zone names resolvers at this network's addresses (127.0.0.1,
    169.254.169.254, 10.0.0.5:6379), which the resolver probed with a TCP connection and sent readers to, saying
    by its answer which ports are open. By default such a resolver is left out (every spelling of an address a
    connection reads, and the names of this host); ``pdi serve --dns-private`` asks them (a private network's)."""
    hosts = ["127.0.0.1:8000", "169.254.169.254", "10.0.0.5:6379", "127.1", "2130706433", "[::1]:8080",
             "[::ffff:127.0.0.1]", "localhost:9", "a.localhost", "192.168.1.1", "93.184.215.14", "r.example.org"]
    records = [f"--naptr-record=a.example.us,100,{k},U,THTTP+N2R,!^.*$!http://{h}/!" for k, h in enumerate(hosts)]
    with dnsmasq(records) as node:
        public = [s.base for s in NaptrFinder(node.server).services("a.example.us", URN)]
        every = [s.base for s in NaptrFinder(node.server, private=True).services("a.example.us", URN)]
    assert public == ["http://93.184.215.14/", "http://r.example.org/"]
    assert len(every) == len(hosts)


def test_a_resolver_the_dns_names_at_an_address_that_is_not_public_is_left_out_and_said(
        caplog: pytest.LogCaptureFixture) -> None:
    """Found by a tester following docs/how-to/federation.md on one machine (2026-12-02): a record naming
    ``http://127.0.0.1:8310/`` without ``--dns-private`` left the resolver out silently (a 404 saying only that
    the series is not held here), where each record skipped for another reason is said in the log. Now it is
    said too, naming the resolver, the domain, why, and --dns-private; a public one is kept and not said."""
    import logging

    records = ["--naptr-record=a.example.us,100,10,U,THTTP+N2R,!^.*$!http://127.0.0.1:8310/!",
               "--naptr-record=a.example.us,100,20,U,THTTP+N2R,!^.*$!http://10.0.0.5:6379/!",
               "--naptr-record=a.example.us,100,30,U,THTTP+N2R,!^.*$!http://r.example.org/!"]
    with dnsmasq(records) as node, caplog.at_level(logging.INFO, logger="pdi.federation"):
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r.example.org/"]
    said = [record.getMessage() for record in caplog.records if record.name == "pdi.federation"]
    assert ("pdi: the DNS names http://127.0.0.1:8310/ for a.example.us, at an address that is not public (loopback):"
            " left out, as a stranger's zone may name this network (pdi serve --dns-private asks it)") in said, said
    assert any("http://10.0.0.5:6379/" in line and "(private (RFC 1918))" in line for line in said), said
    assert not any("r.example.org" in line for line in said), said


def test_naptr_of_an_unknown_domain_is_none() -> None:
    with dnsmasq([]) as node:
        assert NaptrFinder(node.server).services("nobody.example.us", URN) == []


@pytest.mark.parametrize("bad", ["localhost:53", "127.0.0.1:0", "127.0.0.1:x", "[::1", "", "127.0.0.1:²", "[::1]:١"])
def test_dns_server_is_an_address_and_port(bad: str) -> None:
    with pytest.raises(ParseError):
        NaptrFinder(bad)


def test_a_bad_expression_is_said_once_as_a_parse_error_and_never_written_to_standard_error() -> None:
    """Found by an attack (2026-11-27): RE2 logs each expression it cannot compile to the process's standard
    error itself (a stranger's escape sequences and fake log lines in ``pdi serve``'s log), besides raising."""
    code = ("from pdi.errors import ParseError\nfrom pdi.federation.naptr import apply_regexp\n"
            "try:\n    apply_regexp('!(a\\x1b[2J!x!', 'a')\nexcept ParseError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "does not compile" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("follow", [False, True])
def test_a_redirect_httpx_cannot_read_is_the_other_servers_failure(follow: bool) -> None:
    """Found by an attack (2026-11-27): httpx builds a redirect's next request even when it does not follow it, and
    raises ``InvalidURL`` (no ``HTTPError``) for a ``Location`` it cannot read: a traceback from ``pdi verify
    --signatures --key URL``, ``pdi mirror add`` and ``pdi serve --registry-key``, a 500 from the legacy rescue."""
    import http.server

    from pdi.errors import RemoteError
    from pdi.federation.authorities import fetch_bounded
    from support.handler_server import handler_server

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", "javascript:alert(1)")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Redirect) as base:
        url = f"{base}api/keys"
        with pytest.raises(RemoteError, match=f"cannot fetch the key set {url}"):
            fetch_bounded(url, 1000, "the key set", follow_redirects=follow)


def test_a_registry_whose_head_comes_an_octet_at_a_time_is_given_up_within_its_time() -> None:
    """Found by an attack (2026-11-27): httpx bounds each read of an answer, not its head: a server sending its
    header section one octet every half second (each read in time) held ``fetch_bounded`` (a registry, a key set,
    5 s in all) for as long as the head may grow (httpcore reads 100 KiB of it: some 14 hours at that pace)."""
    import socket
    import threading
    import time

    from pdi.errors import RemoteError
    from pdi.federation.authorities import fetch_bounded

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\n")
            try:
                while not stop.is_set():
                    for octet in b"X-Slow: a\r\n":
                        connection.sendall(bytes([octet]))
                        time.sleep(0.5)
            except OSError:
                return

    threading.Thread(target=drip, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/.well-known/pdi-registry"
    started = time.monotonic()
    try:
        with pytest.raises(RemoteError, match=f"cannot fetch the registry {url}: the head of the answer took more"
                                              " than 2 s"):
            fetch_bounded(url, 1000, "the registry", seconds=2.0)
    finally:
        stop.set()
        listener.close()
    assert time.monotonic() - started < 4


def test_a_registry_whose_body_comes_an_octet_just_inside_each_read_s_time_is_given_up_by_its_deadline() -> None:
    """``fetch_bounded`` checked its deadline only between the body's chunks, each read waiting its own timeout:
    a body sent one octet just inside each read's time ran past the deadline by up to a read's time (a registry:
    5 s in all, each read 5 s, some 10 s). Here each read may wait 4 s and the fetch 1 s in all; the server sends
    the head at once, then an octet every 3 s: the fetch is given up at its deadline, saying it, not at the first
    octet (3 s, which the bound below, twice the deadline, fails)."""
    import socket
    import threading
    import time

    from pdi.errors import LimitError
    from pdi.federation.authorities import fetch_bounded

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/jose\r\nContent-Length: 10\r\n\r\n")
            try:
                for octet in b"eyJhbGciOi":
                    if stop.wait(3.0):
                        return
                    connection.sendall(bytes([octet]))
            except OSError:
                return

    threading.Thread(target=trickle, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/.well-known/pdi-registry"
    started = time.monotonic()
    try:
        with pytest.raises(LimitError, match=f"the registry {url} took more than 1 s"):
            fetch_bounded(url, 1000, "the registry", seconds=1.0, timeout=4.0)
        took = time.monotonic() - started
    finally:
        stop.set()
        listener.close()
    assert took < 2.0


def test_a_key_set_redirected_on_and_on_is_given_up_within_its_time() -> None:
    """Found by an attack (2026-11-27): a key set (``--registry-key URL``, ``pdi verify --signatures --key URL``) is
    fetched following redirects, each a request of its own with its own timeouts: a server redirecting to itself,
    each hop a second late, held ``fetch_bounded`` (5 s in all) for 21 s, and each hop just inside 5 s, 100 s."""
    import http.server
    import re
    import time

    from pdi.errors import LimitError, RemoteError
    from pdi.federation.authorities import fetch_bounded
    from support.handler_server import handler_server

    class OnAndOn(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(0.5)
            self.send_response(302)
            self.send_header("Location", self.path + "x")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(OnAndOn) as base:
        url = f"{base}api/keys"
        started = time.monotonic()
        # the 2 s run out while a hop's head is awaited (RemoteError) or between two hops (LimitError, the fetch's
        # whole time): which one, the machine's load decides (a loaded CI run met the second)
        with pytest.raises((RemoteError, LimitError),
                           match=f"the key set {re.escape(url)}(: the head of the answer)? took more than 2 s"):
            fetch_bounded(url, 1000, "the key set", seconds=2.0, follow_redirects=True)
        assert time.monotonic() - started < 3.5


def test_a_registry_whose_max_age_is_no_number_is_loaded_and_fetched_again_at_the_default_time() -> None:
    """Found by an attack (2026-11-27): a registry URL's ``Cache-Control: max-age`` was taken for a number when
    Python's ``str.isdigit`` said so, which it says of ``²``, which ``float`` does not read: the registry's load
    (``pdi serve --registry URL`` at start, and each reload in a request) ended in a ``ValueError``. RFC 9111
    §1.2.2: delta-seconds is ``1*DIGIT``, the ASCII digits; one that is not is no max-age (RFC 9111 §4.2.1)."""
    import http.server
    import time

    from pdi.federation.authorities import DEFAULT_RELOAD, MIN_RELOAD, RegistrySource
    from support.handler_server import handler_server

    key = SigningKey.generate()
    jws = sign_registry(key, Registry({"a.example.us": ("https://a.example/",)}), "2026-11-27T00:00:00Z").encode()
    given: list[bytes] = []

    class Registered(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the answer written as octets (its max-age in UTF-8, as a stranger's may be)
            self.close_connection = True
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/jose\r\nCache-Control: max-age=%s\r\n"
                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (given[-1], len(jws), jws))

        def log_message(self, *args: object) -> None:
            pass

    with handler_server(Registered) as base:
        for max_age, reload in ((b"\xc2\xb2", DEFAULT_RELOAD), (b"\xb2", DEFAULT_RELOAD), (b"5", MIN_RELOAD),
                                (b"600", 600.0)):
            given.append(max_age)
            before = time.monotonic()
            source = RegistrySource(f"{base}.well-known/pdi-registry", [key.public])
            assert source.registry.resolvers("a.example.us") == ("https://a.example/",)
            assert before + reload <= source._next <= time.monotonic() + reload


@pytest.mark.parametrize("digit", ["²", "١", "𝟏", "①"])
def test_a_backref_is_an_ascii_digit_and_any_other_digit_no_group(digit: str) -> None:
    """Found by an attack (2026-11-27): RFC 3402 §3.2 ``backref = "\\" POS_DIGIT``, ``POS_DIGIT = %x31-39``; a repl's
    escape was taken for a group when ``str.isdigit`` said so, so ``\\١`` (ARABIC-INDIC DIGIT ONE) named group 1 and
    ``\\²`` ended in a ``ValueError`` (``int`` does not read it): a stranger's zone made the resolver answer 500."""
    out = apply_regexp(f"!^(urn):(.*)$!http://a.example/\\{digit}!", "urn:x")
    assert out is not None and out.startswith("http://a.example/") and out not in ("http://a.example/urn",
                                                                                  "http://a.example/x")
    assert apply_regexp("!^(urn):(.*)$!http://a.example/\\2!", "urn:x") == "http://a.example/x"


def test_a_stranger_s_rule_of_another_digit_is_no_rule_and_the_others_are_followed() -> None:
    """The same, from a real DNS server: the resolvers of the other records are found, and nothing raised."""
    records = ["--naptr-record=a.example.us,100,10,U,THTTP+N2R,!^(.*)$!http://r1.example.org/\\²!",
               "--naptr-record=a.example.us,100,20,U,THTTP+N2R,!^.*$!http://r2.example.org/!"]
    with dnsmasq(records) as node:
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r2.example.org/"]


@pytest.mark.parametrize("repl", ["http://r.example/\\0", "http://r\\046example.org/", "\\0"])
@pytest.mark.parametrize("subject", [URN, "no match"])
def test_rfc3402_3_2_backslash_0_is_no_backref_and_the_rule_is_malformed(repl: str, subject: str) -> None:
    """RFC 3402 §3.2: ``backref = "\\" POS-DIGIT``, ``POS-DIGIT = %x31-39 ; 0 is not an allowed backref``. ``\\0``
    was read as ``0``: ``!^.*$!http://r\\046example.org/!`` (a zone's ``\\046``, a ".", sent as written) gave the
    resolver ``http://r046example.org/``, a host no one named. A rule that holds it is malformed, matched or not."""
    with pytest.raises(ParseError, match="no backref") as caught:
        apply_regexp(f"!^(.*)$!{repl}!", subject)
    assert caught.value.rule == "naptr-regexp"


@pytest.mark.parametrize("regexp", ["!^urn\x00(.*)$!http://r.example/!", "!^.*$!http://r.example/\x00!",
                                    "\x00a\x00b\x00"])
def test_a_nul_octet_in_a_regexp_is_a_malformed_rule(regexp: str) -> None:
    # a zone's \000 (RFC 1035 §5.1) on the wire: BIND's check (txt_valid_regex) refuses the record
    with pytest.raises(ParseError, match="NUL") as caught:
        apply_regexp(regexp, URN)
    assert caught.value.rule == "naptr-regexp"


def test_a_zone_s_octet_escape_sent_as_written_names_no_other_host() -> None:
    """dnsmasq's ``--naptr-record`` puts its text on the wire as written, ``\\046`` four octets; a zone file's
    ``\\046`` (RFC 1035 §5.1: the octet 46, ".") is one octet once read (dnspython reads it so, an independent
    reader). The first is a malformed rule (skipped, the next record followed), the second the host it says."""
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype

    zone = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.NAPTR,
                               '100 10 "U" "THTTP+N2R" "!^.*$!http://r1\\046example.org/!" .')
    assert apply_regexp(zone.regexp.decode("ascii"), URN) == "http://r1.example.org/"  # type: ignore[attr-defined]
    records = ["--naptr-record=a.example.us,100,10,U,THTTP+N2R,!^.*$!http://r1\\046example.org/!",
               "--naptr-record=a.example.us,100,20,U,THTTP+N2R,!^.*$!http://r2.example.org/!"]
    with dnsmasq(records) as node:
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r2.example.org/"]


def test_an_srv_target_of_a_dot_is_no_service_and_the_other_targets_are_kept() -> None:
    """Found by an attack (2026-11-27): RFC 2782 says a target of ``.`` means "the service is decidedly not
    available at this domain", but it became a candidate resolver ``http://./`` (probed, and down). dnsmasq's
    ``--srv-host`` without a target answers exactly that record (dnsmasq(8)); beside it a real target."""
    records = ["--naptr-record=a.example.us,100,10,S,THTTP+N2R,,_http._tcp.a.example.us",
               "--srv-host=_http._tcp.a.example.us",
               "--naptr-record=b.example.us,100,10,S,THTTP+N2R,,_http._tcp.b.example.us",
               "--srv-host=_http._tcp.b.example.us,.,80,0,10",
               "--srv-host=_http._tcp.b.example.us,r.example.org,8080,1,10"]
    with dnsmasq(records) as node:
        finder = NaptrFinder(node.server)
        assert [s.base for s in finder.services("a.example.us", URN)] == []
        assert [s.base for s in finder.services("b.example.us", URN.replace("a.example", "b.example"))] == [
            "http://r.example.org:8080/"]


def test_an_srv_record_of_port_0_or_a_target_of_a_dot_is_skipped_and_said(caplog: pytest.LogCaptureFixture) -> None:
    """An SRV record of port 0 became ``http://r0.example.org/``: port 80, a service its zone never named. RFC 2782
    gives the field's range as 0-65535 and no meaning to 0; IANA reserves port 0 (RFC 6335 §6) and no TCP connection
    is made to it, so the record names no service that can be reached: skipped, as a target of ``.`` is ("decidedly
    not available", RFC 2782), and both are said in the log, naming the record, never left out silently."""
    import logging

    records = ["--naptr-record=a.example.us,100,10,S,THTTP+N2R,,_http._tcp.a.example.us",
               "--srv-host=_http._tcp.a.example.us,r0.example.org,0,0,10",
               "--srv-host=_http._tcp.a.example.us,.,80,1,10",
               "--srv-host=_http._tcp.a.example.us,r1.example.org,8080,2,10"]
    with dnsmasq(records) as node, caplog.at_level(logging.INFO, logger="pdi.federation"):
        found = NaptrFinder(node.server).services("a.example.us", URN)
    assert [s.base for s in found] == ["http://r1.example.org:8080/"]
    said = [record.getMessage() for record in caplog.records if record.name == "pdi.federation"]
    assert any("_http._tcp.a.example.us" in line and "r0.example.org" in line and "port 0" in line for line in said), said
    assert any("_http._tcp.a.example.us" in line and "target ." in line for line in said), said


def test_a_key_set_at_a_public_address_is_not_followed_to_a_private_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack (2026-11-27): a key set (``--key URL``, ``--registry-key URL``) and ``pdi verify
    --signatures URL`` followed redirects wherever they pointed: a public server could send the request to
    169.254.169.254 (a cloud's metadata service) or this network's hosts. A redirect from a public address goes to
    public addresses only now (as a stranger's names do, pdi._public_connect); an operator's own URL at a private
    address is still fetched, and followed.

    The test machine has no public address to serve from: 127.0.0.1 is taken for one here (what is public is
    pdi._addresses.not_public's to say), and 127.0.0.2, loopback as well, stays what it is."""
    import http.server
    import re
    import threading
    import urllib.parse

    from pdi import _addresses as addresses
    from pdi.cli import manifest_check
    from pdi.errors import RemoteError
    from pdi.federation.authorities import load_keys
    from support.handler_server import handler_server

    real = addresses.not_public
    monkeypatch.setattr(addresses, "not_public", lambda address: None if address == "127.0.0.1" else real(address))
    key = SigningKey.generate()
    jwks = json.dumps({"keys": [key.public.jwk()]}).encode()
    asked: list[str] = []

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(f"{self.server.server_address[0]}{self.path}")
            to = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("to")
            self.send_response(302 if to else 200)
            if to:
                self.send_header("Location", to[0])
            self.send_header("Content-Length", "0" if to else str(len(jwks)))
            self.end_headers()
            if not to:
                self.wfile.write(jwks)

        def log_message(self, *args: object) -> None:
            pass

    private = http.server.ThreadingHTTPServer(("127.0.0.2", 0), Answer)
    threading.Thread(target=private.serve_forever, daemon=True).start()
    inside = f"http://127.0.0.2:{private.server_address[1]}/keys"
    try:
        with handler_server(Answer) as public:
            port = int(public.rsplit(":", 1)[1].strip("/"))
            refused = {inside: "127.0.0.2 is not a public address (loopback)",
                       "http://169.254.169.254/latest/meta-data/": "169.254.169.254 is not a public address (link-local)",
                       f"http://localhost:{port}/keys": "localhost is not a public address (a name of this host itself)"}
            for to, why in refused.items():
                url = f"{public}keys?to={urllib.parse.quote(to, safe='')}"
                with pytest.raises(RemoteError, match=(
                        rf"^cannot fetch the key set {re.escape(url)}: it is redirected to {re.escape(to)}, and"
                        rf" {re.escape(why)}")) as refusal:
                    load_keys(url)
                assert refusal.value.args[0].endswith(
                    ": refused (a public address's redirect is followed to public addresses only)")
                with pytest.raises(RemoteError, match="a public address's redirect is followed to public addresses"):
                    manifest_check._fetch(url, "the manifest")
            assert not [a for a in asked if not a.startswith("127.0.0.1/keys?to=")]  # none of them was asked
            # followed from a public address to a public address; an operator's own private URL, as it is
            assert load_keys(f"{public}keys?to={urllib.parse.quote(public + 'keys', safe='')}") == [key.public]
            assert load_keys(inside) == [key.public]
            assert load_keys(f"{inside}?to={urllib.parse.quote(inside, safe='')}") == [key.public]
    finally:
        private.shutdown()
        private.server_close()


# --- RFC 2782: the order SRV targets are tried in -------------------------------------------
class _Srv:
    def __init__(self, name: str, priority: int, weight: int) -> None:
        self.name, self.priority, self.weight = name, priority, weight


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), max_size=8), st.randoms(use_true_random=False))
def test_rfc2782_srv_targets_are_each_tried_once_the_lowest_priority_first(
        fields: list[tuple[int, int]], rng: object) -> None:
    import random as random_module

    from pdi.federation.naptr import srv_order

    assert isinstance(rng, random_module.Random)
    records = [_Srv(f"t{i}", p, w) for i, (p, w) in enumerate(fields)]
    ordered = srv_order(records, lambda n: rng.randint(0, n))
    assert sorted(r.name for r in ordered) == sorted(r.name for r in records)
    assert [r.priority for r in ordered] == sorted(r.priority for r in records)


def test_rfc2782_targets_of_one_priority_share_the_load_by_weight() -> None:
    """RFC 2782's rule: weight-0 records first, then a number drawn uniformly from 0 to the sum of the weights
    (inclusive) picks the first record whose running sum reaches it. Weights 60, 30 and 10 in that order are
    first 61, 30 and 10 times in 101; weight 0 beside weight 10 is first once in 11. Before, the heaviest was
    always first, so every reader went to one target."""
    import random as random_module

    from pdi.federation.naptr import srv_order

    rng = random_module.Random(2782)
    records = [_Srv("a", 1, 60), _Srv("b", 1, 30), _Srv("c", 1, 10), _Srv("z", 9, 50)]
    draws = 20000
    first = {"a": 0, "b": 0, "c": 0}
    for _ in range(draws):
        ordered = srv_order(records, lambda n: rng.randint(0, n))
        first[ordered[0].name] += 1
        assert ordered[-1].name == "z"
    for name, share in (("a", 61 / 101), ("b", 30 / 101), ("c", 10 / 101)):
        assert abs(first[name] / draws - share) < 0.015, first
    zero = [_Srv("zero", 1, 0), _Srv("ten", 1, 10)]
    firsts = sum(srv_order(zero, lambda n: rng.randint(0, n))[0].name == "zero" for _ in range(draws))
    assert abs(firsts / draws - 1 / 11) < 0.01
