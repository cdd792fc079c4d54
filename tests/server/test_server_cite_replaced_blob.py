"""The RFC 5147 checks the viewer offers for a long text are of the octets deposited, read from the file checked.

A text shown as a window is only located, and :func:`pdi.server.pages.cite.rfc5147_facts` reads its octets for
``length=`` and ``md5=`` (RFC 5147 §3.1, of the whole entity N2R serves) from the blob's file, every chunk checked
first. It read them from the blob's path opened again after the check: a file renamed over that path meanwhile
(a repair's copy, or anyone's) was hashed unchecked, and its MD5 offered (and kept) as the deposit's. The map is
now of the reader's own descriptor, the file it checked. The MD5 expected is ``hashlib``'s of the octets given to
the deposit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pdi.archive import Archive
from pdi.archive.results import Opened
from pdi.server.pages.cite import rfc5147_facts
from support.stored_blobs import blob_file

S = "minutes.council.example.us"


def test_the_checks_of_a_located_text_whose_file_is_replaced_after_it_is_opened_are_of_the_deposit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # past the catalog's small rows (64 KiB): a blob file; ASCII, each LF one character (RFC 5147 §2.1)
    deposited = b"".join(b"item %05d of the council's minutes, replaced-blob test\n" % n for n in range(2000))
    copy = deposited.replace(b"item 01000", b"item 0100X")  # as long, one octet changed
    assert len(copy) == len(deposited) > 64 << 10 and copy != deposited
    location = tmp_path / "archive"
    with Archive.init(str(location)) as archive:
        archive.add_series(S)
        name = str(archive.add(S, deposited, format="text"))
    path = blob_file(location, hashlib.sha256(deposited).hexdigest())
    replacement = tmp_path / "copy.txt"
    replacement.write_bytes(copy)
    with Archive.open(str(location)) as archive:
        real = archive.open_octets
        renamed: list[Path] = []

        @contextlib.contextmanager
        def renamed_after_opening(pdi: Any, **kwargs: Any) -> Iterator[Opened]:
            with real(pdi, **kwargs) as opened:
                os.replace(replacement, path)  # after the reader opened the file, before it is checked and read
                renamed.append(path)
                yield opened

        monkeypatch.setattr(archive, "open_octets", renamed_after_opening)
        located = archive.locate(name)
        assert not located.data
        facts = rfc5147_facts(archive, located)
    assert renamed == [path] and path.read_bytes() == copy
    assert facts is not None
    assert facts.checks == f";length={len(deposited)},UTF-8;md5={hashlib.md5(deposited).hexdigest()},UTF-8"
