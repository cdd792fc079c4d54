"""Content is checked, not trusted: format against file signature, charset against the bytes.

Every file here is a real one, made in the test by the library that writes
that format (Pillow, the standard ``wave``, ``gzip`` and ``zipfile`` modules,
soundfile): a PNG named ``.jpg`` is a PNG because Pillow wrote a PNG. The
expected media types are those the formats' specifications give, and the
refusals those the rule in :mod:`pdi.archive.content` says.
"""

from __future__ import annotations

import gzip
import io
import wave
import zipfile

import numpy as np
import pytest
import soundfile
from archive_helpers import snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from pdi.archive import Archive, Content
from pdi.archive.content import is_text_format, one_octet_per_character
from pdi.errors import ImmutabilityError, IntegrityError, ParseError, UnsupportedError

S = "oma.eop.gov.us"
DAY = "urn:pdi://oma.eop.gov.us/2026/11/22"


def image(kind: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 30, 10)).save(out, kind)
    return out.getvalue()


def wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x01\x00" * 800)
    return out.getvalue()


def sound(kind: str, subtype: str | None = None) -> bytes:
    out = io.BytesIO()
    soundfile.write(out, np.zeros(8000, dtype="float32"), 8000, format=kind, subtype=subtype)
    return out.getvalue()


def zipped(*entries: tuple[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, text in entries:
            # ODF and EPUB require their "mimetype" entry first and stored (not deflated)
            method = zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED
            z.writestr(name, text, compress_type=method)
    return out.getvalue()


DOCX = (
    ("[Content_Types].xml", '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    ("_rels/.rels", "<Relationships/>"),
    ("word/document.xml", "<w:document/>"),
)
EPUB = (("mimetype", "application/epub+zip"), ("META-INF/container.xml", "<container/>"))


# --- formats: contradictions refused, and deposited as declared with force --------------------


@pytest.mark.parametrize(
    ("data", "token", "found", "suggested"),
    [
        (image("PNG"), "image+jpeg", "image/png (PNG image data)", "png"),
        (image("JPEG"), "png", "image/jpeg (JPEG image data)", "image+jpeg"),
        (image("GIF"), "webp", "image/gif (GIF image data)", "gif"),
        (wav(), "flac", "audio/x-wav (RIFF (little-endian) data)", "wav"),
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n", "zip",
         "application/pdf (PDF document)", "pdf"),
        (zipped(("a.txt", "hello")), "pdf", "application/zip (Zip archive data)", "zip"),
        (b"Dear colleagues,\nthe report follows.\n", "pdf", "text/plain (ASCII text)", "text"),
        (gzip.compress(b"hello", mtime=0), "tiff", "application/gzip (gzip compressed data)", "gzip"),
    ],
)
def test_a_declared_signature_the_bytes_lack_is_refused(
    archive: Archive, data: bytes, token: str, found: str, suggested: str
) -> None:
    before = snapshot(archive)
    with pytest.raises(IntegrityError) as refused:
        archive.deposit(S, [Content(data, token, source="upload.bin")])
    message = str(refused.value)
    assert message.startswith(f"upload.bin: the content is {found}")
    # what each token stands for (docs/reference/identifiers.md: the minor type alone when it is unique, else type+minor)
    declared = {"image+jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "flac": "audio/flac",
                "zip": "application/zip", "pdf": "application/pdf", "tiff": "image/tiff"}[token]
    assert f"but it was declared {declared} (pdi's format token {token})" in message
    assert message.endswith(f"give --format {suggested}, or --force to deposit it as declared")
    assert snapshot(archive) == before
    forced = archive.add(S, data, format=token, force=True)
    got = archive.get(forced)
    assert got.data == data and got.record.format == token


def test_the_brief_example_a_png_named_jpeg(archive: Archive) -> None:
    with pytest.raises(IntegrityError, match=r"^report\.jpg: the content is image/png \(PNG image data\), but "
                       r"it was declared image/jpeg \(pdi's format token image\+jpeg\); give --format png, or --force"):
        archive.deposit(S, [Content(image("PNG"), "image+jpeg", source="report.jpg")])


def test_a_charset_given_to_a_format_not_text_is_refused_in_words_a_newcomer_reads(archive: Archive) -> None:
    # the media type first, the token (which docs/reference/identifiers.md explains) said to be pdi's own
    with pytest.raises(UnsupportedError, match=r"^image/png \(pdi's format token png\) is not text: it has no charset$"):
        archive.deposit(S, [Content(image("PNG"), "png", "utf-8")])


def test_an_empty_file_is_not_an_image(archive: Archive) -> None:
    with pytest.raises(IntegrityError, match=r"^the content is empty, but it was declared image/png \(pdi's format token png\)"):
        archive.add(S, b"", format="png")
    assert archive.get(archive.add(S, b"", format="text")).data == b""


@pytest.mark.parametrize(
    ("data", "token"),
    [
        (image("PNG"), "text"),
        (image("GIF"), "html"),
        (gzip.compress(b"<svg xmlns='http://www.w3.org/2000/svg'/>", mtime=0), "svg%2Bxml"),
        (sound("FLAC"), "json"),
    ],
)
def test_binary_bytes_declared_as_text_are_refused(archive: Archive, data: bytes, token: str) -> None:
    with pytest.raises(IntegrityError, match="the content is"):
        archive.add(S, data, format=token)
    charset = "latin-1" if is_text_format(token) else None  # text/* is stored in a charset
    forced = archive.get(archive.add(S, data, format=token, charset=charset, force=True))
    assert forced.record.format == token
    assert forced.charset == ("iso-8859-1" if charset else None)


def test_force_does_not_make_bytes_decode(archive: Archive) -> None:
    # Forced, a text format is still text: its bytes must decode in its charset.
    with pytest.raises(ParseError, match="not UTF-8"):
        archive.add(S, image("PNG"), format="text", force=True)


@pytest.mark.parametrize(
    ("data", "token"),
    [
        # one family, several names
        (zipped(*DOCX), "zip"),
        (zipped(("a.txt", "x")), "vnd%2Eopenxmlformats-officedocument%2Ewordprocessingml%2Edocument"),
        (zipped(*EPUB), "epub%2Bzip"),
        (zipped(*EPUB), "zip"),
        (zipped(("doc.kml", "<kml/>")), "vnd%2Egoogle-earth%2Ekmz"),  # a zip container libmagic calls a zip
        (zipped(("a.txt", "x")), "vnd%2Ems-excel"),  # an xlsx named .xls: still a zip container
        (sound("OGG", "VORBIS"), "audio+ogg"),
        (sound("OGG", "VORBIS"), "video+ogg"),
        (sound("OGG", "OPUS"), "opus"),  # an .opus file is Ogg (RFC 7845), which libmagic names
        (image("PNG"), "apng"),
        (image("TIFF"), "tiff"),
        (image("WEBP"), "webp"),
        (image("BMP"), "bmp"),
        (wav(), "wav"),
        (sound("FLAC"), "flac"),
        (sound("MP3"), "audio+mpeg"),
        (gzip.compress(b"notes", mtime=0), "gzip"),
        # bytes that claim nothing, or a type with no signature
        (image("PNG"), "octet-stream"),
        (b"\x00\x01\x02 opaque", "vnd%2Ems-excel"),
        # text and markup are told apart by no signature: never refused for it
        (b"<p>a fragment of HTML</p>", "text"),
        (b"plain words\n", "html"),
        (b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"/>', "atom%2Bxml"),
        (b'<?xml version="1.0"?><doc/>', "svg%2Bxml"),
        (b'{"a": [1, 2]}', "text"),
        # texts that begin like a GIF or a PDF (libmagic says so) hold no octet a binary file has
        (b"GIF89a was the last GIF version.\n", "text"),
        (b"%PDF-1.7 is ISO 32000-1.\n", "text"),
        ("Grüße aus Köln\n".encode("utf-16"), "text"),
    ],
)
def test_legitimate_files_are_not_refused(archive: Archive, data: bytes, token: str) -> None:
    pdi = archive.add(S, data, format=token)
    assert pdi.format == token


# --- charsets ------------------------------------------------------------------------------------


def test_utf8_declared_latin1_is_refused_and_forced_kept_as_declared(archive: Archive) -> None:
    data = "café\n".encode()  # é is C3 A9 in UTF-8, at byte 3
    before = snapshot(archive)
    with pytest.raises(IntegrityError) as refused:
        archive.deposit(S, [Content(data, "text", "latin-1", source="notes.txt")])
    assert str(refused.value) == (
        "notes.txt: the text is UTF-8 (its first multi-byte character, 'é' U+00E9, is the"
        " bytes C3 A9 at byte 3), but the charset iso-8859-1 was declared, in which those bytes"
        " read 'Ã©'; give --charset utf-8, or --force to deposit it as declared"
    )
    assert snapshot(archive) == before
    forced = archive.get(archive.add(S, data, format="text", charset="latin-1", force=True))
    assert forced.charset == "iso-8859-1"
    assert forced.data.decode("latin-1") == "cafÃ©\n"


def test_a_charset_format_token_is_checked_too(archive: Archive) -> None:
    with pytest.raises(IntegrityError, match=r"the format windows-1252 means the charset windows-1252.*"
                       r"give --format text \(UTF-8 is then detected\)"):
        archive.add(S, "Ärger\n".encode(), format="windows-1252")


@pytest.mark.parametrize(
    ("data", "charset"),
    [
        (b"plain ASCII\n", "latin-1"),  # ASCII is valid in both
        ("café\n".encode("latin-1"), "latin-1"),  # a real Latin-1 é (E9) is not UTF-8
        ("Привет\n".encode("koi8-r"), "koi8-r"),
        ("café\n".encode(), "utf-8"),
        # C3 A9 reads as two half-width katakana in Shift_JIS: a multi-byte charset is not
        # what this rule is about (the bytes decode in it, and that is all that is checked)
        ("café\n".encode(), "shift_jis"),
    ],
)
def test_plausible_charsets_are_accepted(archive: Archive, data: bytes, charset: str) -> None:
    got = archive.get(archive.add(S, data, format="text", charset=charset))
    assert got.data == data  # kept exactly


def test_utf8_declared_windows_1252_is_a_misdeclaration_not_a_syntax_error(archive: Archive) -> None:
    # Á is C3 81 in UTF-8, and 0x81 is undefined in windows-1252: refused as
    # UTF-8 declared wrongly (the likely mistake), not as bytes invalid in 1252.
    with pytest.raises(IntegrityError, match="'Á' U\\+00C1, is the bytes C3 81 at byte 0"):
        archive.add(S, "Álvaro\n".encode(), format="text", charset="windows-1252")


def test_bytes_that_do_not_decode_are_refused_even_with_force(archive: Archive) -> None:
    for force in (False, True):
        with pytest.raises(ParseError, match=r"notes\.txt: the bytes are not valid utf-8"):
            archive.deposit(S, [Content("café".encode("latin-1"), "text", "utf-8", "notes.txt")], force=force)


@pytest.mark.parametrize(
    ("charset", "single"),
    [
        ("latin-1", True), ("iso-8859-2", True), ("windows-1252", True), ("koi8-r", True),
        ("cp437", True), ("us-ascii", True), ("utf-8", False), ("utf-16", False),
        ("utf-16-le", False), ("utf-32", False), ("shift_jis", False), ("euc-jp", False),
        ("gb18030", False), ("big5", False), ("iso-2022-jp", False), ("utf-7", False),
    ],
)
def test_one_octet_per_character(charset: str, single: bool) -> None:
    assert one_octet_per_character(charset) is single


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40).filter(
        lambda t: not t.isascii()
    ),
    charset=st.sampled_from(["latin-1", "iso-8859-15", "windows-1252", "koi8-r", "us-ascii"]),
)
def test_any_non_ascii_utf8_declared_in_a_one_byte_charset_is_refused(
    archive: Archive, text: str, charset: str
) -> None:
    with pytest.raises(IntegrityError, match="the text is UTF-8"):
        archive.add(S, text.encode(), format="text", charset=charset)


# Octets a text holds: TAB, LF, CR and everything from the space up (Latin-1 decodes them all).
text_octets = st.lists(st.sampled_from([9, 10, 13, *range(0x20, 0x100)]), max_size=40).map(bytes)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=text_octets)
def test_latin1_is_refused_exactly_when_the_bytes_are_multibyte_utf8(archive: Archive, data: bytes) -> None:
    try:
        multibyte_utf8 = not data.isascii() and data.decode("utf-8") is not None
    except UnicodeDecodeError:
        multibyte_utf8 = False
    if multibyte_utf8:
        with pytest.raises(IntegrityError, match="the text is UTF-8"):
            archive.add(S, data, format="text", charset="latin-1")
    else:
        got = archive.get(archive.add(S, data, format="text", charset="latin-1"))
        assert got.charset == "iso-8859-1"


# --- identical deposits ----------------------------------------------------------------------------


def test_the_same_bytes_again_are_not_a_new_version(archive: Archive) -> None:
    first = archive.deposit(S, [Content(b"<p>a</p>", "html"), Content(b"a\n", "text")])
    assert not first.unchanged and first.version == 1
    before = snapshot(archive)
    # the same octets: the order the formats are given in does not matter
    again = archive.add_version(first[0], [Content(b"a\n", "text"), Content(b"<p>a</p>", "html")])
    assert again.unchanged and again.version == 1
    assert [str(p) for p in again] == [f"{DAY}/1.text.1", f"{DAY}/1.html.1"]
    assert snapshot(archive) == before
    forced = archive.add_version(first[0], [Content(b"<p>a</p>", "html"), Content(b"a\n", "text")], force=True)
    assert not forced.unchanged and [str(p) for p in forced] == [f"{DAY}/1.html.2", f"{DAY}/1.text.2"]
    assert archive.versions(first[0]) == [1, 2]
    # other line endings are other octets: a new version, kept as deposited
    crlf = archive.add_version(first[0], [Content(b"a\r\n", "text"), Content(b"<p>a</p>", "html")])
    assert not crlf.unchanged and crlf.version == 3
    assert archive.get(crlf[0]).data == b"a\r\n"


def test_a_version_differs_in_any_format_bytes_or_charset(archive: Archive) -> None:
    first = archive.deposit(S, [Content(b"<p>a</p>", "html"), Content(b"a\n", "text")])
    # fewer formats: a new version (a version has every format it is to have)
    assert archive.add_version(first[0], [Content(b"<p>a</p>", "html")]).version == 2
    # same bytes as version 1, but version 2 is the latest, and it differs
    assert archive.add_version(first[0], [Content(b"<p>a</p>", "html"), Content(b"a\n", "text")]).version == 3
    # the same ASCII bytes in another charset are another representation
    declared = archive.add_version(
        first[0], [Content(b"<p>a</p>", "html"), Content(b"a\n", "text", "us-ascii")]
    )
    assert not declared.unchanged and declared.version == 4
    assert archive.add_version(first[0], [Content(b"<p>a</p>", "html"), Content(b"a\n", "text", "us-ascii")]).unchanged


def test_a_foreign_id_minted_today_with_the_same_bytes_answers_with_its_name(archive: Archive) -> None:
    url = "http://example.org/report"
    first = archive.deposit(S, [Content(b"report\n", "text")], foreign_id=url)
    again = archive.deposit(S, [Content(b"report\n", "text")], foreign_id=url)
    assert again.unchanged and list(again) == list(first)
    assert archive.add(S, b"report\n", format="text", foreign_id=url) == first[0]
    with pytest.raises(ImmutabilityError, match="already minted"):
        archive.add(S, b"other\n", format="text", foreign_id=url)
    # A name is minted once: forcing cannot mint it again (add_version can deposit the bytes again).
    with pytest.raises(ImmutabilityError, match="already minted"):
        archive.add(S, b"report\n", format="text", foreign_id=url, force=True)
    assert archive.versions(first[0]) == [1]
