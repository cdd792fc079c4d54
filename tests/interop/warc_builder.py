"""Building WARC files for the tests with warcio (never by hand), and reading MHTML with the standard ``email`` package."""

from __future__ import annotations

import base64
import email
import email.policy
import hashlib
import io
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pdi.archive import Archive

DATA = Path(__file__).resolve().parents[1] / "data" / "warc"


def sha1_digest(payload: bytes) -> str:
    """A WARC payload digest as writers spell it: ``sha1:`` and the base32 SHA-1 (WARC 1.1 §5.9)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")


class WarcBuilder:
    """A WARC in memory; each method writes one record and answers its offset."""

    def __init__(self, *, gzip: bool = True) -> None:
        self.out = io.BytesIO()
        self.writer = WARCWriter(self.out, gzip=gzip, warc_version="WARC/1.1")
        self.writer.write_record(self.writer.create_warcinfo_record("test.warc", {"software": "tests"}))

    def response(
        self,
        url: str,
        body: bytes,
        content_type: str | None,
        date: str,
        *,
        status: str = "200 OK",
        headers: tuple[tuple[str, str], ...] = (),
        warc_headers: dict[str, str] | None = None,
    ) -> int:
        fields = [("Content-Type", content_type)] if content_type else []
        fields += [*headers, ("Content-Length", str(len(body)))]
        http = StatusAndHeaders(status, fields, protocol="HTTP/1.1")
        record = self.writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http,
            warc_headers_dict={"WARC-Date": date, **(warc_headers or {})},
        )
        offset = self.out.tell()
        self.writer.write_record(record)
        return offset

    def revisit(
        self, url: str, digest: str, refers_to_url: str, refers_to_date: str, date: str,
        *, status: str = "200 OK", content_type: str | None = None,
    ) -> int:
        fields = [("Content-Type", content_type)] if content_type else []
        http = StatusAndHeaders(status, fields, protocol="HTTP/1.1")
        record = self.writer.create_revisit_record(
            url, digest, refers_to_url, refers_to_date, http_headers=http, warc_headers_dict={"WARC-Date": date}
        )
        offset = self.out.tell()
        self.writer.write_record(record)
        return offset

    def save(self, path: Path) -> Path:
        path.write_bytes(self.out.getvalue())
        return path


def parts_of(mhtml: bytes) -> dict[str, tuple[str, bytes]]:
    """Each part of an MHTML file by its Content-Location: its type and its bytes (read by ``email``)."""
    message = email.message_from_bytes(mhtml, policy=email.policy.default)
    parts: dict[str, tuple[str, bytes]] = {}
    for part in message.walk():
        if part.is_multipart():
            continue
        location = part["Content-Location"]
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        parts[str(location)] = (part.get_content_type(), payload)
    return parts


def everything(archive: Archive) -> object:
    """What an archive holds, to compare before and after a refused import."""
    store = archive.store
    return (
        list(store.iter_representations()),
        store.assertions(),
        sorted(store.blob_names()),
    )
