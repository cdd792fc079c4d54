"""Which recorded peers announced themselves with a token (``Archive.announced_peers``), on either catalog: a peer
the audit log says a ``token:`` recorded, unless the operator recorded the same base URL for any series."""

from __future__ import annotations

import json

from pdi.archive import Archive
from pdi.archive.tokens import Writer
from pdi.signing import SigningKey


def _jwk() -> str:
    return json.dumps({"keys": [SigningKey.generate().public.jwk()]})


def test_a_peer_a_token_announced_is_a_strangers_until_the_operator_records_it(archive: Archive) -> None:
    archive.add_series("a.example.us")
    archive.add_series("b.example.us")
    record, _ = archive.add_token("mirror-x", role="mirror", series=["a.example.us"])
    writer = Writer(record, "192.0.2.7")
    stranger, own = "https://x.example.org", "https://y.example.org"
    archive.add_mirror("a.example.us", stranger, "peer", _jwk(), writer=writer)
    archive.add_mirror("a.example.us", own, "peer", _jwk())
    assert archive.announced_peers() == [stranger]
    archive.add_mirror("b.example.us", stranger, "peer", _jwk())  # the operator vouches for it, in another series
    assert archive.announced_peers() == []
    archive.remove_mirror("b.example.us", stranger)
    assert archive.announced_peers() == [stranger]
    archive.remove_mirror("a.example.us", stranger, writer=writer)
    assert archive.announced_peers() == []
