"""Property tests: any input gives a value or a pdi error; generated files read back exactly."""

from __future__ import annotations

import base64
import binascii
import email
import html
import io
from email.policy import compat32

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pdi.charsets.sniff import LABELS, decode, lookup, sniff
from pdi.errors import PDIError
from pdi.mhtml import Limits, check, css_references, html_base, html_references, parse

VALID = (
    b'Content-Type: multipart/related; boundary="b"; type="text/html"; start="<r@x>"\r\n\r\n'
    b'--b\r\nContent-Type: text/html\r\nContent-ID: <r@x>\r\nContent-Location: http://a/\r\n\r\n'
    b'<img src="i.png"><link rel=stylesheet href="cid:c@x"><base href="sub/">\r\n'
    b"--b\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
    b"Content-Location: http://a/sub/i.png\r\n\r\niVBORw0KGgo=\r\n"
    b"--b\r\nContent-Type: text/css\r\nContent-Location: cid:c@x\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
    b"b{background:url(=\r\nx.png)}\r\n--b--\r\n"
)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _everything(data: bytes, chunk: int = 16) -> None:
    for source in (data, io.BytesIO(data)):
        try:
            agg = parse(source, limits=Limits(chunk_size=chunk, max_depth=8))
        except PDIError:
            continue
        for p in agg.parts:
            p.text()
            assert isinstance(p.base, str)
        check(agg)


@SETTINGS
@given(st.binary(max_size=600))
def test_random_bytes_give_a_value_or_a_pdi_error(data: bytes) -> None:
    _everything(data)


@SETTINGS
@given(st.data())
def test_mutated_files_give_a_value_or_a_pdi_error(data: st.DataObject) -> None:
    buf = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        pos = data.draw(st.integers(0, len(buf)))
        if op == "insert":
            buf[pos:pos] = data.draw(
                st.sampled_from([b"\r\n", b"\n", b"--b", b"--b--", b":", b"=", b"\r", b"<", b'"', b"=?", b"\x00\xff"])
            )
        elif op == "delete":
            del buf[pos : pos + data.draw(st.integers(1, 20))]
        else:
            buf[pos : pos + 1] = data.draw(st.binary(min_size=1, max_size=3))
    _everything(bytes(buf), chunk=data.draw(st.integers(1, 64)))


bodies = st.binary(max_size=300)


@st.composite
def messages(draw: st.DrawFn) -> tuple[bytes, list[bytes], str]:
    nl = draw(st.sampled_from(["\r\n", "\n"]))
    boundary = draw(st.sampled_from(["b", "----MultipartBoundary--x1----", "a=b", "_=_part 1"]))
    parts: list[bytes] = []
    out = [f'Content-Type: multipart/related; boundary="{boundary}"', ""]
    raw = b""
    for _ in range(draw(st.integers(1, 5))):
        body = draw(bodies)
        cte = draw(st.sampled_from(["base64", "quoted-printable", "binary", "8bit"]))
        if cte in ("binary", "8bit"):
            # an identity body must not hold a delimiter line, nor (in an LF-only file)
            # end in a CR that would read as part of the line break
            body = body.replace(b"-", b"_")
            if nl == "\n":
                body = body.rstrip(b"\r")
            enc = body
        elif cte == "base64":
            enc = base64.encodebytes(body).replace(b"\n", nl.encode()).rstrip(b"\r\n")
        else:
            enc = binascii.b2a_qp(body, istext=False).replace(b"\n", nl.encode())
        parts.append(body)
        head = nl.join(["--" + boundary, "Content-Type: application/octet-stream", f"Content-Transfer-Encoding: {cte}", "", ""])
        raw += head.encode() + enc + nl.encode()
    text = nl.join(out) + nl
    return text.encode() + raw + f"--{boundary}--{nl}".encode(), parts, nl


@SETTINGS
@given(messages(), st.integers(1, 200))
def test_generated_files_read_back_byte_for_byte(msg: tuple[bytes, list[bytes], str], chunk: int) -> None:
    data, parts, _ = msg
    agg = parse(data)
    assert [p.data for p in agg.parts] == parts
    assert agg.warnings == ()
    streamed = parse(io.BytesIO(data), limits=Limits(chunk_size=chunk))
    assert [p.data for p in streamed.parts] == parts


@SETTINGS
@given(messages())
def test_generated_files_agree_with_the_email_package(msg: tuple[bytes, list[bytes], str]) -> None:
    # the slow, obviously-correct reference: email's whole-file parser with compat32
    data, _, _ = msg
    leaves = [m for m in email.message_from_bytes(data, policy=compat32).walk() if not m.is_multipart()]
    assert [p.data for p in parse(data).parts] == [m.get_payload(decode=True) for m in leaves]


url_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40
).filter(lambda s: s.strip() == s and s != "")


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["img src", "a href", "iframe src", "script src", "link href"]), url_text), max_size=6), st.text(alphabet="é \r\n<>x", max_size=20))
def test_html_reference_offsets_point_at_the_raw_text(items: list[tuple[str, str]], filler: str) -> None:
    chunks = [html.escape(filler, quote=True)]
    for tag_attr, url in items:
        tag, attr = tag_attr.split()
        close = f"</{tag}>" if tag in ("script", "iframe") else ""  # script content is raw text
        chunks.append(f'<{tag} class="c" {attr}="{html.escape(url, quote=True)}">{close}{html.escape(filler)}')
    text = "".join(chunks)
    refs = html_references(text)
    assert [r.url for r in refs] == [u for _, u in items]
    for r in refs:
        assert html.unescape(text[r.start : r.end]) == r.url


css_url = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\\\"'()"), min_size=1, max_size=30).filter(
    lambda s: s.strip() == s
)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["url", "quoted", "import"]), css_url), max_size=6))
def test_css_reference_offsets_point_at_the_raw_text(items: list[tuple[str, str]]) -> None:
    rules = []
    for form, u in items:
        if form == "url":
            escaped = u.replace(" ", "\\ ")
            rules.append(f"a {{ background: url({escaped}) }}")
        elif form == "quoted":
            rules.append(f'a {{ background: url("{u}") }}')
        else:
            rules.append(f"@import '{u}';")
    css = "\n/* c */ ".join(rules)
    refs = css_references(css)
    assert [r.url for r in refs] == [u for _, u in items]


@SETTINGS
@given(st.text(max_size=300))
def test_reference_extraction_never_raises(text: str) -> None:
    for r in html_references(text):
        assert 0 <= r.start <= r.end <= len(text)
    html_base(text)
    for r in css_references(text):
        assert 0 <= r.start <= r.end <= len(text)


@SETTINGS
@given(st.text(max_size=30), st.binary(max_size=200), st.sampled_from(sorted(set(LABELS.values()))))
def test_charset_functions_never_raise(label: str, data: bytes, name: str) -> None:
    assert lookup(label) in (None, *LABELS.values())
    assert isinstance(decode(data, name), str)
    enc, _, _ = sniff(data, declared=label or None, media_type="text/html")
    assert isinstance(decode(data, enc), str)


segment = st.text(alphabet="abcxyz019-_.", min_size=1, max_size=5).filter(lambda s: s not in (".", ".."))
paths = st.lists(st.lists(segment, min_size=1, max_size=4).map("/".join), min_size=1, max_size=8, unique=True)


@SETTINGS
@given(paths, st.lists(segment, max_size=3).map("/".join), st.booleans())
def test_relative_references_reach_every_part_of_a_tree(files: list[str], page_dir: str, lf: bool) -> None:
    # Oracle: posixpath.relpath writes each reference; every one must resolve back to
    # the part labelled with the file's absolute URI, and nothing else is reported.
    import posixpath

    root = "/" + page_dir if page_dir else "/"
    page_uri = "http://h.example" + posixpath.join(root, "index.html")
    # a file tree: no name is both a file and a directory
    dirs = {posixpath.dirname(p) for p in [*files, root.strip("/") + "/index.html"]}
    dirs = {"/".join(d.split("/")[:i]) for d in dirs for i in range(1, d.count("/") + 2)}
    assume(not dirs & set(files))
    targets = [f for f in files if posixpath.join("/", f) != posixpath.join(root, "index.html")]
    imgs = "".join(f'<img src="{posixpath.relpath("/" + f, root)}">' for f in targets)
    chunks = [
        'Content-Type: multipart/related; boundary="b"; type="text/html"',
        "",
        "--b",
        "Content-Type: text/html",
        f"Content-Location: {page_uri}",
        "",
        f"<html>{imgs}</html>",
    ]
    for f in targets:
        chunks += ["--b", "Content-Type: image/png", f"Content-Location: http://h.example/{f}", "", "P"]
    chunks.append("--b--")
    nl = "\n" if lf else "\r\n"
    agg = parse((nl.join(chunks) + nl).encode())
    refs = agg.references
    assert [r.target.location if r.target else None for r in refs] == [f"http://h.example/{f}" for f in targets]
    assert all(r.rule == "content-location" for r in refs)
    assert check(agg).findings == ()


@SETTINGS
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs")), min_size=1, max_size=20).filter(lambda s: "<" not in s and ">" not in s and s.strip() == s))
def test_cid_references_are_percent_decoded(cid: str) -> None:
    import urllib.parse

    ref = "cid:" + urllib.parse.quote(cid, safe="@")
    data = (
        'Content-Type: multipart/related; boundary="b"\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n'
        f'<img src="{html.escape(ref)}">\r\n--b\r\nContent-ID: <{cid}>\r\n\r\nX\r\n--b--\r\n'
    ).encode()
    agg = parse(data)
    (r,) = agg.references
    assert (r.status, r.rule, r.target) == ("satisfied", "content-id", agg.parts[1])


@SETTINGS
@given(st.text(max_size=40), st.text(max_size=20))
def test_lookups_and_decoders_raise_only_pdi_errors(uri: str, name: str) -> None:
    agg = parse(VALID)
    agg.by_location(uri)
    agg.by_content_id(uri)
    agg.root.header(uri, decode=True)
    try:
        decode(b"abc", name)
    except PDIError:
        pass


def test_input_of_the_wrong_type_is_a_parse_error() -> None:
    for bad in (None, 42, "text", [b"x"]):
        try:
            parse(bad)  # type: ignore[arg-type]
        except PDIError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
