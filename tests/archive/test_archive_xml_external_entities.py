"""An XML document's external entities (XXE) are never read: not when it is deposited and its passages indexed,
not when a passage is cited with ``elt``. Whatever a file or URL an entity names holds stays out of the archive;
the reference stays as the document wrote it (XML 1.0 §4.4.3: a non-validating processor need not include it)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from pdi.archive import Archive
from pdi.fragments.markup import evaluate_markup

SERIES = "xxe.example.us"


def test_an_external_entity_is_neither_read_nor_fetched(archive: Archive, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("wombatsecret\n")
    asked: list[bytes] = []
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(5)

        def listen() -> None:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                asked.append(connection.recv(4096))

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        port = server.getsockname()[1]
        document = (f'<?xml version="1.0"?>\n<!DOCTYPE doc [\n<!ENTITY file SYSTEM "file://{secret}">\n'
                    f'<!ENTITY web SYSTEM "http://127.0.0.1:{port}/dtd">\n<!ENTITY % remote SYSTEM'
                    f' "http://127.0.0.1:{port}/p">\n%remote;\n]>\n<doc><p>quokka &file;</p><p>&web;</p></doc>\n'
                    ).encode()
        archive.add_series(SERIES)
        name = archive.add(SERIES, document, format="xml")
        archive.index_queued()
        hits = archive.search("quokka").hits
        assert [str(h.record.unique_id) for h in hits] == [str(name.unique_id)]
        assert not archive.search("wombatsecret").hits
        cited = evaluate_markup("elt", [1, 1], document, "text/xml", "utf-8")
        assert bytes(cited.data) == b"<p>quokka &file;</p>"
        # whatever was fetched was fetched by now (the deposit, the index and the citation are done): wake the
        # listener from its accept at once, not at its timeout (5 s of the test's 5.5)
        server.shutdown(socket.SHUT_RDWR)
        listener.join(10)
    assert asked == []
