"""PDI format tokens, media types, charsets and default fragment schemes.

draft-mallery-urn-pdi-00 §2.5 (lines 354-415), §3.3-3.4 (lines 533-749), read
as ``docs/specs/PDI-GRAMMAR.md`` §2.6 and §3 say:

- the special tokens ``text`` (text/plain), ``header`` (RFC 822 message headers,
  the draft's "message/header", which we name ``message/rfc822``), ``html``
  (text/html), ``xml`` (text/xml) and ``sgml`` (text/sgml);
- any other media type's token is its minor type where that minor type is
  unique among the registered media types, else ``major+minor``
  (``audio+mpeg``); reserved characters inside a minor type are %-escaped
  (``svg%2Bxml``, ``vnd%2Ems-excel``). The registry is the list shipped in
  ``pdi/data/media-types.txt`` (its header names its source), never what the
  local ``mimetypes`` module happens to know;
- for text/plain in a multi-byte charset the token is the IANA charset name
  (``utf-8``, ``shift_jis``; draft line 586), and such a token means text/plain
  in that charset;
- tokens are case-insensitive; :func:`canonical_token` gives the canonical
  spelling (lower case, upper-case hex in %-escapes);
- a token is written with the characters media-type names (RFC 6838 §4.2)
  and charset names (RFC 2978 §2.3) may hold, every one an RFC 2045 token
  character, less the grammar's reserved ones (line 217): alpha, digit,
  ``!$&'-^_`{}~`` (:data:`pdi._grammar.TOKEN_SAFE`); any other character as a
  %-escape; and one literal ``+`` between the major and the minor type
  (:func:`is_valid_token`). That is wider than the draft's ``alpha-hyphen``
  (line 160), as the tokens the draft itself asks for need it (``utf-8``,
  ``shift_jis``, ``audio+mpeg``); ``( ) : ;``, which no media-type or
  charset name holds (RFC 2045 tspecials), are not token characters. A
  well-formed token that the registry does not resolve is still a valid
  token; it just cannot be resolved.
- charset names are compared through the IANA Character Sets registry
  (:mod:`pdi.charsets`): any name or alias means the charset.

Pure: the only input is the package's own data file, read once.
"""

from __future__ import annotations

import functools
import re

from pdi import charsets
from pdi._grammar import TOKEN_PATTERN, TOKEN_SAFE, escape, upper_hex
from pdi._mime_params import split_parameters
from pdi.errors import ParseError, UnsupportedError

__all__ = [
    "CHARSET_TOKENS",
    "SPECIAL_TOKENS",
    "canonical_token",
    "charset_for",
    "check_token",
    "content_type_of",
    "default_fragment_scheme",
    "is_known_token",
    "is_media_type",
    "is_valid_token",
    "media_family",
    "media_type_for",
    "registered_media_types",
    "token_for",
]

#: The draft's tokens that are not built by the minor-type rule (lines 379-385,
#: 593, 668-671).
SPECIAL_TOKENS: dict[str, str] = {
    "text": "text/plain",
    "header": "message/rfc822",
    "html": "text/html",
    "xml": "text/xml",
    "sgml": "text/sgml",
}

# The media types the special tokens stand for, in the other direction. The
# minor-type rule would give text/html the token "html" too; for text/plain it
# would give "plain", which the draft replaces by "text".
_SPECIAL_BY_TYPE: dict[str, str] = {
    "text/plain": "text",
    "text/html": "html",
    "text/xml": "xml",
    "text/sgml": "sgml",
}

#: IANA Character Set Registry names (lower-cased preferred names) that are
#: accepted as text/plain format tokens, mapped to whether the charset is
#: multi-byte. Only multi-byte charsets are *produced* by :func:`token_for`
#: (draft line 586); the common 8-bit ones are accepted as tokens too, since a
#: publisher may name the charset explicitly.
CHARSET_TOKENS: dict[str, bool] = {
    # Unicode encoding forms
    "utf-8": True,
    "utf-16": True,
    "utf-16be": True,
    "utf-16le": True,
    "utf-32": True,
    "utf-32be": True,
    "utf-32le": True,
    "utf-7": True,
    "cesu-8": True,
    "scsu": True,
    "bocu-1": True,
    "iso-10646-ucs-2": True,
    "iso-10646-ucs-4": True,
    # East Asian multi-byte charsets
    "shift_jis": True,
    "windows-31j": True,
    "euc-jp": True,
    "iso-2022-jp": True,
    "iso-2022-jp-2": True,
    "euc-kr": True,
    "iso-2022-kr": True,
    "ks_c_5601-1987": True,
    "gb2312": True,
    "gbk": True,
    "gb18030": True,
    "hz-gb-2312": True,
    "iso-2022-cn": True,
    "iso-2022-cn-ext": True,
    "big5": True,
    "big5-hkscs": True,
    # 8-bit charsets
    "us-ascii": False,
    "iso-8859-1": False,
    "iso-8859-2": False,
    "iso-8859-3": False,
    "iso-8859-4": False,
    "iso-8859-5": False,
    "iso-8859-6": False,
    "iso-8859-7": False,
    "iso-8859-8": False,
    "iso-8859-9": False,
    "iso-8859-10": False,
    "iso-8859-13": False,
    "iso-8859-14": False,
    "iso-8859-15": False,
    "iso-8859-16": False,
    "windows-1250": False,
    "windows-1251": False,
    "windows-1252": False,
    "windows-1253": False,
    "windows-1254": False,
    "windows-1255": False,
    "windows-1256": False,
    "windows-1257": False,
    "windows-1258": False,
    "koi8-r": False,
    "koi8-u": False,
    "tis-620": False,
}

_TOKEN_RE = re.compile(TOKEN_PATTERN)
#: A media type as a ``Content-Type`` field writes one (RFC 9110 §8.3.1: type "/" subtype, each a token of §5.6.2's
#: tchar; RFC 2045 §5.1's tokens are the same but for ``{`` and ``}``, which HTTP's are not).
_MEDIA_TYPE_RE = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+/[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def is_media_type(text: str) -> bool:
    """Whether ``text`` is a media type, ``type/subtype`` without parameters, that a ``Content-Type`` field can
    carry: what a parser kept of a stranger's field (Python's ``email`` keeps any octets but a second ``/``) is
    checked with it before it is served or used as one."""
    return _MEDIA_TYPE_RE.fullmatch(text) is not None


def is_valid_token(token: str) -> bool:
    """Whether ``token`` is a syntactically valid format token (not the wildcard)."""
    return isinstance(token, str) and _TOKEN_RE.fullmatch(token) is not None


def canonical_token(token: str) -> str:
    """The canonical spelling of a format token: lower case, upper-case %-escape hex."""
    if not isinstance(token, str):
        raise ParseError(f"a format token is text, not {type(token).__name__}", rule="format")
    return upper_hex(token.lower())


def _escape_minor(minor: str) -> str:
    return escape(minor, TOKEN_SAFE)


def _decode(token: str) -> str:
    """%-decode a (syntactically valid) token; UTF-8."""
    if "%" not in token:
        return token
    data = bytearray()
    i = 0
    while i < len(token):
        ch = token[i]
        if ch == "%":
            data.append(int(token[i + 1 : i + 3], 16))
            i += 3
        else:
            data.extend(ch.encode("utf-8"))
            i += 1
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsupportedError(f"format token {token!r}: %-escapes are not UTF-8") from exc


class _Registry:
    """The shipped registry and the tables derived from it."""

    def __init__(self, types: tuple[str, ...]) -> None:
        self.types = types
        self.lower: frozenset[str] = frozenset(t.lower() for t in types)
        majors_by_minor: dict[str, set[str]] = {}
        for t in self.lower:
            major, _, minor = t.partition("/")
            majors_by_minor.setdefault(minor, set()).add(major)
        self.majors_by_minor = majors_by_minor

    def token_for(self, media_type: str) -> str:
        """The rule's token for a registered, lower-case ``major/minor``."""
        special = _SPECIAL_BY_TYPE.get(media_type)
        if special is not None:
            return special
        major, _, minor = media_type.partition("/")
        if len(self.majors_by_minor.get(minor, ())) == 1:
            return _escape_minor(minor)
        return major + "+" + _escape_minor(minor)


@functools.cache
def _registry() -> _Registry:
    from importlib import resources

    text = resources.files("pdi").joinpath("data/media-types.txt").read_text(encoding="utf-8")
    types = tuple(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )
    return _Registry(types)


def registered_media_types() -> tuple[str, ...]:
    """The shipped registry of media types (case as registered, file order)."""
    return _registry().types


def content_type_of(value: str | None) -> tuple[str | None, str | None]:
    """The media type (lower-cased) and ``charset`` of a ``Content-Type`` header value as a server sent it, leniently.

    For headers read off the network or a WARC (RFC 9110 §8.3): a missing or
    empty value or media type is ``None``, as is an empty charset; no error
    (:func:`split_media_type` is the strict reading).
    """
    if not value:
        return None, None
    pieces = [p.strip() for p in value.split(";")]
    media = pieces[0].lower() or None
    charset = None
    for piece in pieces[1:]:
        key, _, val = piece.partition("=")
        if key.strip().lower() == "charset":
            charset = val.strip().strip('"').strip() or None
    return media, charset


def split_media_type(media_type: str) -> tuple[str, str | None]:
    """``major/minor`` lower-cased, and the charset parameter if one is given."""
    if not isinstance(media_type, str):
        raise UnsupportedError(f"not a media type: {media_type!r}")
    head, *params = split_parameters(media_type)
    mt = head.strip().lower()
    major, slash, minor = mt.partition("/")
    if not slash or not major or not minor or any(c.isspace() for c in mt):
        raise UnsupportedError(f"not a media type: {media_type!r}")
    charset = None
    for param in params:
        name, eq, value = param.partition("=")
        if eq and name.strip().lower() == "charset":
            if charset is not None:  # which one would be meant? (RFC 6838 §4.3: an error)
                raise UnsupportedError(f"{media_type!r} gives its charset twice: a parameter is given once"
                                       " (RFC 6838 §4.3)")
            charset = _parameter_value(value.strip(), media_type)
    return mt, charset


def _parameter_value(value: str, media_type: str) -> str:
    """A parameter's value as RFC 9110 §5.6.6 writes it: a token, or a quoted string (§5.6.4: ``"…"``, a
    backslash quoting the character after it) read without its quotes; :class:`UnsupportedError` naming what is
    wrong otherwise (a quote not closed, text after the closing one, a quote or a space inside a token)."""
    if not value.startswith('"'):
        if not value or any(c in value for c in '"\\ \t'):
            raise UnsupportedError(f"{media_type!r}: a parameter's value is a token or a quoted string"
                                   f" (RFC 9110 §5.6.6), not {value!r}")
        return value
    read: list[str] = []
    at = 1
    while at < len(value):
        c = value[at]
        if c == "\\" and at + 1 < len(value):
            read.append(value[at + 1])
            at += 2
            continue
        if c == '"':
            if at != len(value) - 1:
                raise UnsupportedError(f"{media_type!r}: text after the quoted string {value[:at + 1]!r}"
                                       " (RFC 9110 §5.6.4)")
            return "".join(read)
        read.append(c)
        at += 1
    raise UnsupportedError(f"{media_type!r}: the quoted string {value!r} is not closed (RFC 9110 §5.6.4)")


def _charset_name(charset: str) -> str | None:
    """The lower-cased IANA name of the charset ``charset`` names, if it is a charset token."""
    name = charsets.iana_name(charset)
    if name is None or name.lower() not in CHARSET_TOKENS:
        return None
    return name.lower()


def registered_charset(charset: str) -> str:
    """The IANA name of ``charset`` as pdi stores and serves it (lower case).

    Any name or alias of the IANA Character Sets registry gives the charset's
    preferred MIME name (``latin1``, ``l1``, ``ISO_8859-1:1987`` →
    ``iso-8859-1``; ``csUTF8`` → ``utf-8``; ``MS_Kanji`` → ``shift_jis``), and
    so does a label Python knows for the same codec (``latin-1`` →
    ``iso-8859-1``, ``cp1252`` → ``windows-1252``, ``sjis`` → ``shift_jis``).
    A text codec the registry lacks keeps its label, lower-cased
    (``mac-cyrillic``). Anything else is not a charset: ``klingon``,
    ``zlib_codec`` and ``punycode`` raise :class:`UnsupportedError`.
    """
    name = charsets.iana_name(charset)
    if name is not None:
        return name.lower()
    charsets.codec_for(charset)
    return charset.strip().lower()


# Tokens already resolved (successes only), so parsing many PDIs stays cheap.
_MEDIA_TYPE_CACHE: dict[str, str] = {}
_CACHE_LIMIT = 4096


def media_type_for(token: str) -> str:
    """The media type (lower case ``major/minor``) a format token names.

    Raises :class:`UnsupportedError` for a token the registry does not resolve:
    unknown, not the rule's token (``plain`` is spelled ``text``, ``image+gif``
    is spelled ``gif``), or the wildcard.
    """
    if isinstance(token, str):
        hit = _MEDIA_TYPE_CACHE.get(token)
        if hit is not None:
            return hit
    result = _media_type_for(token)
    if len(_MEDIA_TYPE_CACHE) < _CACHE_LIMIT:
        _MEDIA_TYPE_CACHE[token] = result
    return result


def _media_type_for(token: str) -> str:
    if not isinstance(token, str) or not is_valid_token(token):
        raise UnsupportedError(_not_a_token(token))
    tok = canonical_token(token)
    special = SPECIAL_TOKENS.get(tok)
    if special is not None:
        return special
    if tok in CHARSET_TOKENS:
        return "text/plain"
    reg = _registry()
    if "+" in tok:
        major, _, minor_tok = tok.partition("+")
        minor = _decode(minor_tok).lower()
        media_type = f"{major}/{minor}"
    else:
        minor = _decode(tok).lower()
        majors = reg.majors_by_minor.get(minor)
        if not majors:
            raise _unknown(token)
        if len(majors) > 1:
            choices = ", ".join(sorted(f"{m}+{tok}" for m in majors))
            raise UnsupportedError(
                f"format token {token!r} is ambiguous: the minor type {minor!r} is registered "
                f"under several major types; use one of {choices}"
            )
        media_type = f"{next(iter(majors))}/{minor}"
    if media_type not in reg.lower:
        raise _unknown(token)
    right = reg.token_for(media_type)
    if right != tok:
        raise UnsupportedError(f"format token {token!r}: the token for {media_type} is {right!r}")
    return media_type


#: File-name suffixes given as a format, and the token of what a file so named holds (a refusal suggests it).
_SUFFIX_TOKENS: dict[str, str] = {
    "txt": "text", "htm": "html", "xhtml": "xhtml%2Bxml", "jpg": "image+jpeg", "jpeg": "image+jpeg",
    "mp3": "audio+mpeg", "md": "markdown", "eml": "rfc822", "mht": "related", "mhtml": "related",
    "tif": "tiff", "bin": "octet-stream", "mp4": "video+mp4", "svg": "svg%2Bxml",
}

#: How the refusal of an unknown token says which tokens there are (there are some 2,000).
TOKEN_RULE = (
    "tokens are the draft's text, html, xml, sgml and header; a registered media type's minor type"
    " (pdf, png, json) or, where that minor type is not unique, major+minor (audio+mpeg);"
    " a multi-byte charset's name for text in it (utf-8)"
)


@functools.cache
def known_tokens() -> tuple[str, ...]:
    """Every token :func:`media_type_for` resolves, canonical, sorted (the special, registry and charset ones)."""
    reg = _registry()
    return tuple(sorted({reg.token_for(t) for t in reg.lower} | set(SPECIAL_TOKENS) | set(CHARSET_TOKENS)))


def near_tokens(token: str) -> list[str]:
    """Known tokens ``token`` may have meant: what a file named ``*.token`` holds, then those a letter or two away."""
    import difflib

    word = token.lower()
    found = [_SUFFIX_TOKENS[word]] if word in _SUFFIX_TOKENS else []
    for near in difflib.get_close_matches(word, known_tokens(), n=3, cutoff=0.75):
        if near not in found:
            found.append(near)
    return found[:3]


def media_type_token(given: str) -> str | None:
    """The format token of ``given`` when it is a registered media type (``text/plain``, ``image/jpeg``, with its
    parameters: ``text/plain; charset=utf-16``), given where a token is asked for; else ``None``."""
    if "/" not in given:
        return None
    try:
        return token_for(given)
    except (UnsupportedError, ParseError, ValueError):
        return None


def _not_a_token(given: object) -> str:
    """The refusal of ``given`` as a format token; of a media type, saying its token (``text/plain`` is ``text``)."""
    token = media_type_token(given) if isinstance(given, str) else None
    if token is None:
        return f"not a format token: {given!r}"
    return f"{given!r} is a media type, not a format token: its format token is {token!r}"


def did_you_mean(near: list[str]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for the ``near`` values of a refusal, or nothing when there are none."""
    if not near:
        return ""
    return "; did you mean " + " or ".join(repr(n) for n in near) + "?"


def _unknown(token: str) -> UnsupportedError:
    """The refusal of a well-formed token that resolves to no media type, with the near ones and the rule."""
    return UnsupportedError(f"unknown format token {token!r}{did_you_mean(near_tokens(token))} ({TOKEN_RULE})")


def is_known_token(token: str) -> bool:
    """Whether :func:`media_type_for` resolves ``token``."""
    try:
        media_type_for(token)
    except UnsupportedError:
        return False
    return True


def token_for(media_type: str, *, charset: str | None = None) -> str:
    """The format token of a registered media type.

    For text/plain, a multi-byte ``charset`` (given here or as the media type's
    ``charset`` parameter) gives the IANA charset name as the token (draft line
    586); an 8-bit one gives ``text``. Raises :class:`UnsupportedError` for a
    media type that is not registered or a charset pdi does not know.
    """
    mt, param_charset = split_media_type(media_type)
    if charset is None:
        charset = param_charset
    reg = _registry()
    if mt not in reg.lower and mt not in _SPECIAL_BY_TYPE:
        raise UnsupportedError(f"media type {mt!r} is not in the registry")
    if mt == "text/plain" and charset is not None:
        name = _charset_name(charset)
        if name is None:
            raise UnsupportedError(f"charset {charset!r} is not a known IANA charset name")
        if CHARSET_TOKENS[name]:
            return name
    return reg.token_for(mt)


def charset_for(token: str) -> str | None:
    """The IANA charset (lower-case preferred name) a token implies, else ``None``.

    ``utf-8`` → ``"utf-8"``; ``text``, ``html`` and every non-charset token →
    ``None`` (the entity says its own charset). Unknown tokens raise
    :class:`UnsupportedError`, as in :func:`media_type_for`.
    """
    media_type_for(token)
    tok = canonical_token(token)
    return tok if tok in CHARSET_TOKENS else None


@functools.lru_cache(maxsize=256)  # a few media types, asked of several times a deposit and a read
def media_family(media_type: str) -> str:
    """The fragment family of a media type.

    ``"html"`` (text/html, application/xhtml+xml), ``"xml"`` (text/xml,
    text/sgml, application/xml, application/sgml, any ``+xml``), ``"text"``
    (other text/*, and message/rfc822 headers), ``"image"``, ``"timed"``
    (audio/*, video/*), or ``"other"``.
    """
    mt, _ = split_media_type(media_type)
    major, _, minor = mt.partition("/")
    if mt in ("text/html", "application/xhtml+xml"):
        return "html"
    if mt in ("text/xml", "text/sgml", "application/xml", "application/sgml") or minor.endswith(
        "+xml"
    ):
        return "xml"
    if major == "text" or mt == "message/rfc822":
        return "text"
    if major == "image":
        return "image"
    if major in ("audio", "video"):
        return "timed"
    return "other"


def default_fragment_scheme(token_or_media_type: str) -> str:
    """The fragment scheme a PDI of this format uses when none is written.

    PDI-GRAMMAR.md §3: text/* (with html, xml, sgml and charset tokens) →
    ``char``; image/* → ``rect``; audio/* and video/* → ``sec``. The ``header``
    token (RFC 822 headers, text) → ``char`` as well. Any other format has no
    default (the draft, lines 538-542: the scheme MUST then be written), and an
    unknown token cannot be resolved: both raise :class:`UnsupportedError`.
    """
    if not isinstance(token_or_media_type, str):
        raise UnsupportedError(f"not a format: {token_or_media_type!r}")
    return _default_fragment_scheme(token_or_media_type)


@functools.lru_cache(maxsize=1024)
def _default_fragment_scheme(token_or_media_type: str) -> str:
    if "/" in token_or_media_type:
        mt, _ = split_media_type(token_or_media_type)
    else:
        mt = media_type_for(token_or_media_type)
    major = mt.partition("/")[0]
    if major == "text" or mt == "message/rfc822":
        return "char"
    if major == "image":
        return "rect"
    if major in ("audio", "video"):
        return "sec"
    raise UnsupportedError(f"{token_or_media_type!r} has no default fragment scheme; name one")


def check_token(token: str, *, text: str | None = None, offset: int | None = None) -> str:
    """Raise :class:`ParseError` unless ``token`` is a format token; return it canonical."""
    if not is_valid_token(token):
        raise ParseError(f"invalid format token {token!r}", text=text, offset=offset, rule="format")
    return canonical_token(token)
