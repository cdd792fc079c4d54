"""A ``Content-Type`` or ``Content-Disposition`` that ends with a parameter's ``*`` and nothing after it.

RFC 2231 marks a parameter whose value is in a charset with ``*`` before its ``=`` (``filename*=utf-8''a.txt``).
Python's parser of parameters (3.11) read past the field's end where a ``*`` ended it (``text/plain; a*``):
``IndexError: string index out of range``, from the parser and from every ``get_content_type`` or ``get_body``, so
that a stranger's message of two lines raised it wherever pdi read it. Python reads a parameter whose ``*`` is
followed by anything but ``=`` (``a* ``, ``a*;``) as an invalid one and leaves it out; pdi now reads this one so.
The independent reference is Python's reading of the same field without that parameter.
"""

from __future__ import annotations

import email
import email.policy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.fragments.email_text import body_text
from pdi.mail.large import read_large
from pdi.mail.message import read_message

_TYPES = st.sampled_from(["text/plain", "text/html", "application/pdf", "image/png", ";"])
_PARAMS = st.lists(st.sampled_from(['charset="iso-8859-1"', "charset=utf-8", 'name="a.pdf"', "filename*=utf-8''b.txt",
                                    "filename=c.txt", "format=flowed", "x"]), max_size=3)
_LAST = st.sampled_from(["a", "filename", "name", "charset", "a*0", "filename*1", "0"])


def _field(kind: str, params: list[str]) -> str:
    return "; ".join([kind, *params]) if kind != ";" else kind + "; ".join(params)


@settings(max_examples=300)
@given(st.sampled_from(["Content-Type", "Content-Disposition"]), _TYPES, _PARAMS, _LAST, st.booleans(),
       st.sampled_from(["", "\n "]))
@example("Content-Type", "text/plain", [], "a", False, "")
@example("Content-Disposition", "attachment", ["filename=c.txt"], "filename", True, "")
def test_a_field_ending_with_a_parameters_star_is_read_as_that_parameter_left_out(
        name: str, kind: str, params: list[str], last: str, nested: bool, fold: str) -> None:
    if name == "Content-Disposition" and kind != ";":
        kind = "attachment"
    written, reference = _field(kind, [*params, last + fold + "*"]), _field(kind, params)

    def message(value: str) -> bytes:
        field = f"{name}: {value}".encode("ascii")
        if nested:
            return (b'From: a@example.org\nContent-Type: multipart/mixed; boundary="b"\n\n--b\n' + field
                    + b"\n\nbody\n--b--\n")
        return b"From: a@example.org\n" + field + b"\n\nbody\n"

    python = email.message_from_bytes(message(reference), policy=email.policy.default)
    leaf: Any = python.get_payload()[0] if nested else python
    media_type = leaf.get_content_type()
    expected = (media_type, leaf.get_content_charset() if media_type.startswith("text/") else None,
                leaf.get_filename() or None, leaf.get_content_disposition())  # (pdi: no file name, not "")
    data = message(written)
    for mail in (read_message(data), read_large(data, window=5)):
        part = mail.parts[0]
        assert (part.media_type, part.charset, part.filename, part.disposition) == expected
        body_text(mail)
