"""A MIME header's parameters (``Content-Type: text/html; charset="utf-8"``), split where RFC 2045 splits them.

The email package's ``Message.get_params`` cuts a field at each ``;`` outside a quoted-string, but it decides
what is inside one by counting ``"`` and ``\\"``: a value ending in a quoted backslash, ``charset="\\\\"`` (RFC 822
§3.3's quoted-pair: one backslash, then the closing quote), reads as still open, so the ``;`` after it and the
next parameter become part of its value (``charset`` ``"; name="x.html``, and no ``name``). Here a quoted-string
is read as the grammar says (a backslash quotes the next character, whatever it is), and each piece then goes
through the email package's public functions as ``get_params`` sends it (``email.utils.decode_params`` for RFC
2231's continuations and charsets, ``email.utils.unquote``), so that every other reading stays the package's.
"""

from __future__ import annotations

#: What ``get_params`` gives for one parameter: its value, or RFC 2231's (charset, language, value).
ParamValue = str | tuple[str | None, str | None, str]


def split_parameters(field: str) -> list[str]:
    """``field`` cut at each ``;`` outside a quoted string, where a backslash quotes the character after it (RFC 2045
    §5.1 and RFC 822 §3.3; RFC 9110 §5.6.4, §5.6.6 for a media type): the media type, then each parameter."""
    if '"' not in field:
        return field.split(";")
    pieces: list[str] = []
    start = 0
    quoted = False
    i = 0
    n = len(field)
    while i < n:
        c = field[i]
        if quoted and c == "\\":
            i += 2  # a quoted-pair: the next character, whatever it is
            continue
        if c == '"':
            quoted = not quoted
        elif c == ";" and not quoted:
            pieces.append(field[start:i])
            start = i + 1
        i += 1
    pieces.append(field[start:])
    return pieces


def header_params(field: str) -> list[tuple[str, ParamValue]]:
    """``email.message.Message.get_params()`` of a field whose value is ``field``: the media type (value ``""``)
    first, then each parameter, its name lower-cased and its value unquoted; the field cut as RFC 2045 cuts it."""
    import email.utils  # (not at import: pdi.formats cuts media types with split_parameters at every command's start)

    params: list[tuple[str, str]] = []
    for piece in split_parameters(str(field)):
        piece = piece.strip()
        name, equals, value = piece.partition("=")
        if equals:
            params.append((name.strip().lower(), value.strip()))
        else:
            params.append((piece, ""))
    decoded = email.utils.decode_params(params)
    return [(name, (value[0], value[1], email.utils.unquote(value[2])) if isinstance(value, tuple)
             else email.utils.unquote(value)) for name, value in decoded]


def collapsed(value: ParamValue) -> str:
    """``email.utils.collapse_rfc2231_value(value)``, but a charset that is a Python codec and no charset (``idna``,
    ``undefined``, ``unicode-escape``: :func:`pdi.charsets.codec_for` refuses it) read as the email package reads a
    charset it does not know: the value as written, unquoted. Python decoded with it: ``idna`` and ``undefined``
    raised ``UnicodeError``, out of every reader of the field."""
    import email.utils

    if isinstance(value, tuple) and value[0] and not is_charset(value[0]):
        return email.utils.unquote(value[2])
    return email.utils.collapse_rfc2231_value(value)


def is_charset(label: str) -> bool:
    """Whether ``label`` names a charset pdi decodes (:func:`pdi.charsets.codec_for`)."""
    from pdi import charsets
    from pdi.errors import UnsupportedError

    try:
        charsets.codec_for(label)
    except UnsupportedError:
        return False
    return True
