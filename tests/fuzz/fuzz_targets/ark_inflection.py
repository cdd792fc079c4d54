"""N2R's query (RFC 2169) and the ARK inflection after a name: :func:`pdi.server.protocol.rfc2169.urn_from_query`, ``split_inflection``.

The input is the query string as UTF-8 text (other bytes as lone
surrogates), as the resolver reads it from ``/uri-res/N2R?…``. What must
hold: the name read from the query, written as a query again
(:func:`~pdi.server.protocol.rfc2169.rfc2169_query`), reads back as itself; its
inflection (``?``, ``??``, ``?info``) is split off at the first ``?``, so
that the name and the inflection make up the whole again and the name holds
no ``?``, unless that ``?`` stands in a browser's fragment directive (after
``#`` and ``:~:``), whose text it is: then the name is the whole; the name
then parses as a PDI or is a :class:`pdi.errors.PDIError`.
"""

from __future__ import annotations

from fuzz_harness import Target

from fuzz_targets._common import text_of
from pdi.identifier import PDI
from pdi.server.protocol.resolver import INFLECTIONS, split_inflection
from pdi.server.protocol.rfc2169 import rfc2169_query, urn_from_query


def run(data: bytes) -> None:
    query = text_of(data)
    urn = urn_from_query(query)
    assert urn_from_query(rfc2169_query(urn)) == urn
    name, inflection = split_inflection(urn)
    hash_at = urn.find("#")
    directive = urn.find(":~:", hash_at) if hash_at >= 0 else -1
    if 0 <= directive < urn.find("?"):  # the '?' of a text directive (#:~:text=Why?) is its text
        assert (name, inflection) == (urn, None)
        return
    assert "?" not in name
    if inflection is None:
        assert name == urn
    else:
        assert inflection in INFLECTIONS and f"{name}?{inflection}" == urn
    PDI.parse(name)


TARGET = Target(
    "ark_inflection",
    run,
    warmup=b"urn:pdi://library.example.us/2026/11/23/a.text.1?info",
    tokens=(
        b"urn:pdi://", b"library.example.us/", b"2026/11/23/", b".text.1", b".related.1", b"?", b"??", b"?info",
        b"?x", b"%23", b"%25", b"%2523", b"%", b"#", b"#char=1,2", b"http:%2F%2Fexample%2Eorg%2F", b"%3F", b"%23:~:text=",
    ),
)
