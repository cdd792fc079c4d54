"""Charset names through the IANA registry (pdi.charsets), RFC 5147 §2.3 checks, and non-charset codecs.

The registry's names and aliases are read here from the shipped XML with a
plain regular expression, not with pdi's parser, so the tests stand on the
file itself.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi import charsets, formats
from pdi.cli import cli
from pdi.errors import IntegrityError, ParseError, UnsupportedError
from pdi.fragments.text import evaluate_rfc5147

XML = resources.files("pdi").joinpath("data/character-sets.xml").read_text(encoding="utf-8")
RECORDS = re.findall(r"<record[^>]*>(.*?)</record>", XML, re.S)
# RFC 2978 §2.3 mime-charset-chars: what RFC 5147 §3 lets a check's charset hold
MIME_CHARSET = re.compile(r"[A-Za-z0-9!#$%&'+\-^_`{}~]+")


def _labels(name: str) -> list[str]:
    """Every label of the registered charset named ``name`` (name, preferred MIME name, aliases)."""
    for record in RECORDS:
        if re.search(rf"<name>{re.escape(name)}</name>", record):
            return re.findall(r"<(?:name|preferred_alias|alias)>([^<]+)</", record)
    raise AssertionError(f"{name} is not in the shipped registry")


def _writable(labels: list[str]) -> list[str]:
    return [label for label in labels if MIME_CHARSET.fullmatch(label)]


# --------------------------------------------------------------------------- the shipped registry


def test_registry_is_the_shipped_iana_file() -> None:
    assert re.search(r"<registry xmlns=\"http://www.iana.org/assignments\" id=\"character-sets\">", XML)
    updated = re.search(r"<updated>([0-9-]+)</updated>", XML)
    assert updated is not None
    assert charsets.registry_updated() == updated.group(1) == "2022-07-14"
    assert len(charsets.registry()) == len(RECORDS) == 258


def test_every_label_of_every_record_names_its_charset() -> None:
    for record in RECORDS:
        name = re.search(r"<name>([^<]+)</name>", record)
        assert name is not None
        labels = re.findall(r"<(?:name|preferred_alias|alias)>([^<]+)</", record)
        for label in labels:
            for spelling in (label, label.upper(), label.lower(), f" {label} "):
                found = charsets.lookup(spelling)
                assert found is not None and found.name == name.group(1), (spelling, name.group(1))


@pytest.mark.parametrize(
    ("name", "codec"),
    [
        ("UTF-8", "utf-8"),
        ("US-ASCII", "ascii"),
        ("ISO_8859-1:1987", "iso8859-1"),
        ("Shift_JIS", "shift_jis"),  # and so MS_Kanji, whatever Python's own alias ms_kanji means
        ("Extended_UNIX_Code_Packed_Format_for_Japanese", "euc_jp"),
        ("Windows-31J", "cp932"),  # CODEC_TABLE
        ("windows-874", "cp874"),
        ("IBM00858", "cp858"),
        ("IBM01140", "cp1140"),
        ("ISO_8859-8-I", "iso8859-8"),
        ("GB2312", "gb2312"),
        ("KS_C_5601-1987", "euc_kr"),
        ("UTF-16", "utf-16"),
    ],
)
def test_each_registered_charset_has_its_codec(name: str, codec: str) -> None:
    for label in _labels(name):
        assert charsets.codec_for(label) == codec, label


def test_ms_kanji_decodes_as_shift_jis_not_cp932() -> None:
    # 0x8790 is "≒" in cp932 (an NEC row-13 character) and no character of Shift_JIS (JIS X 0208)
    assert b"\x87\x90".decode("cp932") == "≒"
    with pytest.raises(UnicodeDecodeError):
        b"\x87\x90".decode(charsets.codec_for("MS_Kanji"))
    assert b"\x93\xfa\x96\x7b".decode(charsets.codec_for("csShiftJIS")) == "日本"


def test_no_codec_name_is_a_label_of_another_charset() -> None:
    # pdi compares an entity's codec name with a check's label: the name must not mean another charset
    for cs in charsets.registry():
        if cs.codec is None:
            continue
        other = charsets.lookup(cs.codec)
        assert other is None or other.codec == cs.codec, (cs.name, cs.codec, other)


def test_charset_tokens_are_registered_names() -> None:
    names = {cs.mime_name.lower() for cs in charsets.registry()}
    assert set(formats.CHARSET_TOKENS) <= names


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("csUTF8", "utf-8", True),
        ("utf8", "UTF-8", True),  # Python's label, the same codec
        ("MS_Kanji", "Shift_JIS", True),
        ("MS_Kanji", "shift_jis", True),
        ("MS_Kanji", "Windows-31J", False),
        ("MS_Kanji", "cp932", False),
        ("Windows-31J", "cp932", True),
        ("Extended_UNIX_Code_Packed_Format_for_Japanese", "euc_jp", True),
        ("ISO_8859-1:1987", "csISOLatin1", True),
        ("IBM819", "iso8859-1", True),
        ("ISO-8859-1", "windows-1252", False),
        ("US-ASCII", "ascii", True),
        ("US-ASCII", "UTF-8", False),
        ("x-klingon", "X-KLINGON", True),
        ("x-klingon", "utf-8", False),
    ],
)
def test_same_charset(a: str, b: str, same: bool) -> None:
    assert charsets.same_charset(a, b) is same
    assert charsets.same_charset(b, a) is same


def test_iana_name() -> None:
    assert charsets.iana_name("csUTF8") == "UTF-8"
    assert charsets.iana_name("l1") == "ISO-8859-1"
    assert charsets.iana_name("latin-1") == "ISO-8859-1"
    assert charsets.iana_name("cp1252") == "windows-1252"
    assert charsets.iana_name("euc-cn") == "GB2312"  # not GB_2312-80, which no preferred name names
    assert charsets.iana_name("euc_kr") == "EUC-KR"  # not KS_C_5601-1987
    assert charsets.iana_name("mac-cyrillic") is None  # a text codec the registry lacks


@pytest.mark.parametrize(
    "label",
    ["zlib_codec", "punycode", "idna", "rot13", "base64", "hex", "unicode_escape", "raw_unicode_escape",
     "undefined", "charmap", "klingon", "", "  ", "utf-8\u00e9"],
)
def test_what_is_not_a_charset_is_unsupported(label: str) -> None:
    with pytest.raises(UnsupportedError) as info:
        charsets.codec_for(label)
    assert repr(label) in str(info.value)


def test_registered_without_a_decoder_is_unsupported_but_known() -> None:
    with pytest.raises(UnsupportedError, match="CESU-8"):
        charsets.codec_for("csCESU8")
    assert charsets.same_charset("csCESU8", "CESU-8")
    assert charsets.iana_name("csCESU8") == "CESU-8"


# --------------------------------------------------------------------------- RFC 5147 §2.3 checks

# (registered name, the entity's text, its length in RFC 5147 characters worked out by hand)
ENTITIES = [
    ("UTF-8", "Grüße, 世界\r\nzwei", 9 + 1 + 4),  # G r ü ß e , space 世 界; CRLF is one character
    ("Shift_JIS", "日本語\r\nテキスト", 3 + 1 + 4),
    ("Extended_UNIX_Code_Packed_Format_for_Japanese", "日本語\r\nテキスト", 3 + 1 + 4),
    ("ISO_8859-1:1987", "Ça été\r\nfin", 6 + 1 + 3),
]


@pytest.mark.parametrize(("name", "text", "length"), ENTITIES)
def test_rfc5147_2_3_every_registered_label_makes_a_check_apply(name: str, text: str, length: int) -> None:
    labels = _labels(name)
    entity = labels[0]  # the registered name; the entity may be declared by any label
    data = text.encode(codecs.lookup(charsets.codec_for(entity)).name)
    digest = hashlib.md5(data).hexdigest()
    written = _writable(labels)
    assert len(written) >= 2
    for declared in labels:
        for label in written:
            ok = evaluate_rfc5147(f"char=0,1;length={length},{label};md5={digest},{label}", data, charset=declared)
            assert ok.integrity == "ok", (declared, label)
            with pytest.raises(IntegrityError, match=re.escape(label)):
                evaluate_rfc5147(f"char=0,1;length={length + 1},{label}", data, charset=declared)


def test_rfc5147_2_3_utf8_aliases_from_the_registry() -> None:
    assert "csUTF8" in _labels("UTF-8")
    data = "Grüße\n".encode()
    with pytest.raises(IntegrityError):
        evaluate_rfc5147("char=0;length=5,csUTF8", data, charset="utf-8")
    assert evaluate_rfc5147("char=0;length=6,csutf8", data, charset="UTF-8").integrity == "ok"


def test_rfc5147_2_3_a_different_charset_is_not_checked() -> None:
    data = "日本".encode("shift_jis")
    # Windows-31J is another registration than Shift_JIS (a superset, but not the same charset)
    sel = evaluate_rfc5147("char=0,1;length=99,Windows-31J", data, charset="MS_Kanji")
    assert sel.integrity == "unchecked"
    assert "Windows-31J" in sel.checks[0].detail


def test_rfc5147_3_a_name_outside_mime_charset_chars_is_a_syntax_error() -> None:
    # ISO_8859-1:1987 is a registered name, but ':' is not an RFC 2978 mime-charset character
    assert "ISO_8859-1:1987" in _labels("ISO_8859-1:1987")
    with pytest.raises(ParseError) as info:
        evaluate_rfc5147("char=0;length=3,ISO_8859-1:1987", b"abc", charset="ISO-8859-1")
    assert info.value.offset == len("char=0;length=3,ISO_8859-1")


# --------------------------------------------------------------------------- the command line


def _file(tmp_path: Path, text: str, charset: str) -> str:
    path = tmp_path / "t.txt"
    path.write_bytes(text.encode(charset))
    return str(path)


@pytest.mark.parametrize(
    ("declared", "label", "encode_as", "text", "length"),
    [
        (None, "csUTF8", "utf-8", "Grüße, 世界\r\nzwei", 14),
        ("UTF-8", "csUTF8", "utf-8", "Grüße, 世界\r\nzwei", 14),
        ("Shift_JIS", "MS_Kanji", "shift_jis", "日本語\r\nテキスト", 8),
        ("Shift_JIS", "csShiftJIS", "shift_jis", "日本語\r\nテキスト", 8),
        ("EUC-JP", "Extended_UNIX_Code_Packed_Format_for_Japanese", "euc_jp", "日本語\r\nテキスト", 8),
        ("ISO_8859-1:1987", "l1", "latin-1", "Ça été\r\nfin", 10),
        ("ISO-8859-1", "IBM819", "latin-1", "Ça été\r\nfin", 10),
        ("latin1", "CP819", "latin-1", "Ça été\r\nfin", 10),
        ("l1", "csISOLatin1", "latin-1", "Ça été\r\nfin", 10),
    ],
)
def test_cli_a_wrong_length_under_an_alias_fails(
    tmp_path: Path, declared: str | None, label: str, encode_as: str, text: str, length: int
) -> None:
    path = _file(tmp_path, text, encode_as)
    charset = [] if declared is None else ["--charset", declared]
    good = CliRunner().invoke(cli, ["text", path, f"char=0,2;length={length},{label}", "--json", *charset])
    assert good.exit_code == 0, good.output
    assert json.loads(good.stdout)["integrity"] == "ok"
    bad = CliRunner().invoke(cli, ["text", path, f"char=0,2;length={length - 1},{label}", *charset])
    assert bad.exit_code == 3, bad.output
    assert f"length={length - 1},{label}" in bad.stderr


def test_cli_undeclared_ascii_file_takes_us_ascii_checks(tmp_path: Path) -> None:
    path = _file(tmp_path, "plain\r\ntext", "ascii")  # 5 + 1 + 4 = 10 characters
    labels = _writable(_labels("US-ASCII"))
    assert {"US-ASCII", "csASCII", "us", "iso-ir-6", "IBM367"} <= set(labels)
    for label in labels:
        ok = CliRunner().invoke(cli, ["text", path, f"char=0,5;length=10,{label}", "--json"])
        assert json.loads(ok.stdout)["integrity"] == "ok", label
        bad = CliRunner().invoke(cli, ["text", path, f"char=0,5;length=11,{label}"])
        assert bad.exit_code == 3, label
    # a UTF-8 check applies to the same file too: it is read as UTF-8
    assert CliRunner().invoke(cli, ["text", path, "char=0;length=11,UTF-8"]).exit_code == 3
    # a file declared UTF-8 is not US-ASCII: the check is not for its charset
    declared = CliRunner().invoke(cli, ["text", path, "char=0;length=11,US-ASCII", "--charset", "UTF-8", "--json"])
    assert json.loads(declared.stdout)["integrity"] == "unchecked"


def test_cli_undeclared_file_with_other_octets_is_not_us_ascii(tmp_path: Path) -> None:
    path = _file(tmp_path, "naïve", "utf-8")
    result = CliRunner().invoke(cli, ["text", path, "char=0;length=99,US-ASCII", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["integrity"] == "unchecked"
    assert CliRunner().invoke(cli, ["text", path, "char=0;length=99,UTF-8"]).exit_code == 3


@pytest.mark.parametrize("label", ["zlib_codec", "punycode", "idna", "rot13", "unicode_escape", "klingon"])
def test_cli_text_refuses_a_codec_that_is_not_a_charset(tmp_path: Path, label: str) -> None:
    path = _file(tmp_path, "abc\n", "ascii")
    result = CliRunner().invoke(cli, ["text", path, "char=0,2", "--charset", label])
    assert result.exit_code == 6, result.output
    assert label in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("label", ["zlib_codec", "punycode", "idna", "klingon"])
def test_cli_add_refuses_a_codec_that_is_not_a_charset(tmp_path: Path, label: str) -> None:
    archive = str(tmp_path / "arc")
    runner = CliRunner()
    assert runner.invoke(cli, ["init", archive]).exit_code == 0
    assert runner.invoke(cli, ["series", "add", "oma.eop.gov.us", "--archive", archive]).exit_code == 0
    path = _file(tmp_path, "abc\n", "ascii")
    result = runner.invoke(cli, ["add", path, "-s", "oma.eop.gov.us", "--charset", label, "--archive", archive])
    assert result.exit_code == 6, result.output
    assert label in result.stderr
    # a registered alias is a charset: stored under its preferred MIME name
    good = runner.invoke(cli, ["add", path, "-s", "oma.eop.gov.us", "--charset", "csISOLatin1", "--archive", archive])
    assert good.exit_code == 0, good.output
    info = runner.invoke(cli, ["get", good.stdout.strip(), "--info", "--archive", archive])
    assert "charset\tiso-8859-1" in info.stdout


# --------------------------------------------------------------------------- encoded words (RFC 2047)

CRASHERS = Path(__file__).resolve().parent / "data" / "crashers"


@pytest.mark.parametrize(("name", "label"), [("encoded_word_idna.mht", "idna"), ("encoded_word_zlib.mht", "zlib_codec")])
def test_an_encoded_word_in_a_codec_that_is_not_a_charset(name: str, label: str) -> None:
    from pdi.mhtml.headers import decode_words

    subject = f"=?{label}?q?abc?="
    assert subject.encode() in (CRASHERS / name).read_bytes()
    text, warnings = decode_words(subject)
    assert text == "abc"  # read as Latin-1, with a warning
    assert len(warnings) == 1 and label in warnings[0]
    result = CliRunner().invoke(cli, ["mhtml", "ls", str(CRASHERS / name)])
    assert result.exit_code == 0, result.output
    assert "title: abc" in result.stdout


@settings(max_examples=300, deadline=None)
@example(name="UTF-8", before="", after="\xa0")
@example(name="ISO_8859-1:1987", before="\x1c", after="")
@given(name=st.sampled_from(["UTF-8", "ISO_8859-1:1987", "Shift_JIS", "US-ASCII", "KOI8-R", "windows-1252"]),
       before=st.text(" \t\n\r\f\v\xa0\u3000\u2028\x1c\x1f\x85", max_size=2),
       after=st.text(" \t\n\r\f\v\xa0\u3000\u2028\x1c\x1f\x85", max_size=2))
def test_a_label_is_stripped_of_ascii_white_space_only(name: str, before: str, after: str) -> None:
    """Every label of the record (read from the XML) with white space around it: ASCII's is stripped, and any other
    (NO-BREAK SPACE, IDEOGRAPHIC SPACE, the controls 1C-1F that ``str.strip`` strips too) leaves no label of the
    registry. Found by a hunt: ``"utf-8\\xa0"`` was UTF-8 and the same charset as ``utf-8``."""
    ascii_only = all(c in " \t\n\r\f\v" for c in before + after)
    for label in _labels(name):
        found = charsets.lookup(before + label + after)
        if ascii_only:
            assert found is not None and found.name == name
        else:
            assert found is None
            assert not charsets.same_charset(before + label + after, label)
            with pytest.raises(UnsupportedError):
                charsets.codec_for(before + label + after)


@pytest.mark.parametrize("label", ["utf 8", "utf!!8", "utf-8,", "utf8;", "latin 1", "sjis\x1c", "(utf8)"])
def test_a_label_python_reads_only_as_noise_around_a_codec_name_is_no_charset(label: str) -> None:
    """Python's codec registry makes each run of characters its names never hold (``[a-z0-9._-]``, as
    ``encodings.aliases`` spells every one) one ``_``: ``codecs.lookup("utf!!8")`` is UTF-8. Found by a hunt: so was
    pdi's ``--charset 'utf 8'`` and a deposit's ``charset=utf-8,``; no registry names such a label."""
    import encodings.aliases

    assert all(re.fullmatch(r"[a-z0-9._-]+", name.lower()) for name in encodings.aliases.aliases)  # the alphabet
    assert charsets.lookup(label) is None
    with pytest.raises(UnsupportedError, match="unknown charset"):
        charsets.codec_for(label)
    assert not charsets.same_charset(label, "utf-8") and not charsets.same_charset(label, "latin-1")
    assert charsets.codec_for(re.sub(r"[^a-z0-9]+", "", label)) in ("utf-8", "iso8859-1", "shift_jis")


def test_a_label_holding_a_nul_is_no_charset() -> None:
    # codecs.lookup raises ValueError ("embedded null character") on one (tests/data/fuzz/formats/).
    assert charsets.lookup("utf\x008") is None
    assert not charsets.same_charset("utf-8\x00", "utf-8")
    with pytest.raises(UnsupportedError, match="not a charset name"):
        charsets.codec_for("utf-8\x00")
    with pytest.raises(UnsupportedError):
        formats.registered_charset("\x00audio+mpeg")


def test_the_common_labels_answered_without_the_registry_are_the_registrys() -> None:
    """``codec_for`` answers a few common labels from a table (the registry takes 100+ ms to read): each as the IANA file says."""
    from pdi.charsets import iana

    assert {"utf-8", "us-ascii", "iso-8859-1"} <= set(iana._COMMON)
    for label, codec in iana._COMMON.items():
        record = iana._registry().by_label[label]  # a registered label, as the IANA file spells it (any case)
        assert record.codec == codec, label
        assert codecs.lookup(codec).name == codec


def test_an_mhtml_subject_of_many_encoded_words_is_read_whole() -> None:
    # Python's decode_header takes time that grows with the square of a field's encoded words (60,000: 2.5 s),
    # which an MHTML file's Subject may hold as a mail's may; the MHTML reader reads them as the mail reader does
    # (pdi.charsets.rfc2047, compared with decode_header in tests/test_mail.py). RFC 2047 §6.2: the white space
    # between two encoded words is dropped, and kept between a word and plain text.
    # Past MAX_ENCODED_WORDS of them, the rest of the field is as written (tests/test_mail_hostile.py).
    from pdi.charsets.rfc2047 import MAX_ENCODED_WORDS
    from pdi.mhtml.headers import decode_words

    many = MAX_ENCODED_WORDS - 1
    text, warnings = decode_words("=?utf-8?q?caf=C3=A9?= " * many + "and =?iso-8859-1?q?=E9t=E9?=")
    assert text == "caf\u00e9" * many + " and \u00e9t\u00e9" and warnings == []
    text, warnings = decode_words("=?utf-8?q?caf=C3=A9?= " * (many + 3) + "and")
    assert text == "caf\u00e9" * (many + 1) + " =?utf-8?q?caf=C3=A9?=" * 2 + " and" and warnings == []


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["=?", "?=", "?", "=", "q", "B", "?q?", "?b?", "a", "\n", "\r", " ", "utf-8", "\u2028"]),
                max_size=30).map("".join))
def test_encoded_words_are_found_where_pythons_expression_finds_them(value: str) -> None:
    """The oracle is Python's own expression for an encoded word (``email.header.ecre``), which pdi finds without it."""
    import email.header

    from pdi.charsets.rfc2047 import _encoded_words

    found = [(m.start(), m.end(), m.group(1), m.group(2), m.group(3)) for m in email.header.ecre.finditer(value)]
    assert list(_encoded_words(value)) == found


def test_many_starts_of_encoded_words_that_never_end_are_read_in_linear_time() -> None:
    """Found by a hunt: the expression reads on from each ``=?a?q?`` to the end of the line when no ``?=`` follows,
    so a field of 20,000 of them (140 KB) took 44 s to show, in a message (``pdi get --info``, ``/view``) or an MHTML
    file; 200,000 (1.4 MB) would have taken more than an hour. The oracle: the answer Python's own gives, at last."""
    import time

    from pdi.charsets.rfc2047 import decode_header
    from pdi.mhtml.headers import decode_words

    value = "=?a?q?x" * 30_000  # 210 KB: some 100 s each before
    for read, answer in ((decode_header, [(value, None)]), (decode_words, (value, []))):
        began = time.monotonic()
        assert read(value) == answer  # no encoded word: the value as written
        assert time.monotonic() - began < 5


_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines cuts a line (and so decode_header)


@settings(max_examples=300, deadline=None)
@example(word="caf\u00e9", text="C:\\u0041\\x41")
@example(word="a", text="\\u0100 and \u0100")
@given(word=st.text(max_size=20), text=st.text(alphabet=st.characters(exclude_characters=_BREAKS), max_size=30)
       .filter(lambda t: "=?" not in t))
def test_the_text_after_an_encoded_word_is_shown_as_written(word: str, text: str) -> None:
    """RFC 2047 §6.2: text outside encoded words is shown as written, whatever it holds. Found by a hunt: the text
    went through Python's ``raw-unicode-escape`` bytes and back, so ``C:\\u0041`` written in an MHTML file's
    Subject was shown as ``C:A`` (and ``\\U0001f600`` as an emoji)."""
    from pdi.mhtml.headers import decode_words

    encoded = base64.b64encode(word.encode("utf-8")).decode("ascii")
    shown, warnings = decode_words(f"=?utf-8?b?{encoded}?= {text}")
    assert (shown, warnings) == (f"{word} {text}", [])


def test_an_unknown_long_label_is_named_cut_in_the_warning() -> None:
    """A declared label a stranger wrote (an MHTML part's ``charset=``) is named cut in its middle, never whole."""
    from pdi.charsets.sniff import sniff

    label = "x" * 70_000
    _, _, warning = sniff(b"plain text", declared=label, media_type="text/plain")
    assert warning is not None and warning.startswith("unknown charset label '" + "x" * 100 + "…[69,800 characters left"
                                                      " out]…"), warning[:300]
    assert len(warning) < 400


def test_an_unknown_long_charset_of_an_encoded_word_is_named_cut() -> None:
    from pdi.mhtml.headers import decode_words

    value, warnings = decode_words("=?" + "y" * 70_000 + "?q?a=E9?=")
    assert value == "aé"  # read as Latin-1 (RFC 2047 §6.2 leaves it to the reader; pdi's reading is Latin-1)
    assert warnings == ["unknown charset '" + "y" * 100 + "…[69,800 characters left out]…" + "y" * 100
                        + "' in an encoded word: read as Latin-1"]


# --------------------------------------------------------------------------- WHATWG labels (pdi.charsets.sniff)


def _webencodings_labels() -> list[str]:
    from webencodings.labels import LABELS as WEBENCODINGS

    from pdi.charsets.sniff import LABELS

    return sorted(set(WEBENCODINGS) & set(LABELS))  # webencodings' table is older: the labels both know


@settings(max_examples=300, deadline=None)
@example(label="\u212aoi8-r")  # U+212A KELVIN SIGN, which str.lower makes a "k"
@example(label="\u212aOI8-U")
@example(label="l\u0130n1")
@given(label=st.one_of(
    st.sampled_from(_webencodings_labels()).flatmap(lambda known: st.tuples(
        st.text(" \t\n\f\r\x0b\xa0", max_size=2), st.lists(st.booleans(), min_size=len(known), max_size=len(known)),
        st.text(" \t\n\f\r\x0b\xa0", max_size=2), st.sampled_from(["", "\u212a", "\u0131", "\u017f", "x"]),
    ).map(lambda t: t[0] + "".join(c.upper() if up else c for c, up in zip(known, t[1], strict=True)) + t[2] + t[3])),
    st.text(max_size=12),
))
def test_a_label_means_what_webencodings_says_it_means(label: str) -> None:
    """The oracle is ``webencodings`` (html5lib's: the WHATWG Encoding Standard's label table, §4.2): a label is
    matched with its ASCII white space stripped, in ASCII lower case; ``replacement`` is no encoding to decode
    with. Found by a hunt: ``\\u212aoi8-r`` (U+212A KELVIN SIGN) was read as KOI8-R, as ``str.lower`` makes it a
    ``k``; a browser knows no such label."""
    import webencodings

    from pdi.charsets.sniff import LABELS, lookup

    known = webencodings.lookup(label)
    if known is not None and label.strip(" \t\n\f\r").lower() not in LABELS:
        return  # a label of webencodings' older table that the standard has since dropped or moved
    expected = None if known is None or known.name == "replacement" else known.name
    assert (lookup(label) or "").lower() == (expected or "")
