"""A capture's HTTP exchanges as WARC 1.1 (ISO 28500:2017 §6.3 response, §6.4 request, §6.2 warcinfo), written by warcio."""

from __future__ import annotations

import datetime
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

if TYPE_CHECKING:  # the type only: writing a WARC needs no HTTP client (httpx) imported
    from pdi.capture.fetch import Exchange

__all__ = ["warc_date", "write_exchanges"]


_REQUEST_VERSION = "HTTP/1.1"  # what pdi.capture.fetch's client sends (h11; RFC 9112 §2.3)

# --- writing -------------------------------------------------------------------------------


def warc_date(when: datetime.datetime) -> str:
    """A WARC-Date (§5.4): UTC, to the microsecond when there is one (WARC 1.1); the year in four digits, as W3C-ISO8601
    writes it (``strftime("%Y")`` writes the year 1 as ``1`` on glibc: a WACZ of an import's year-0001 capture was
    refused by the import of it, found by a probe, 2026-11-30)."""
    plain = when.astimezone(datetime.UTC).replace(tzinfo=None)
    return plain.isoformat(timespec="microseconds" if plain.microsecond else "seconds") + "Z"


def write_exchanges(out: BinaryIO, exchanges: Sequence[Exchange], *, software: str = "pdi") -> None:
    """Write ``exchanges`` as a gzip-per-record WARC 1.1: a ``warcinfo``, then ``response`` and ``request`` pairs.

    Each response carries its body exactly as the server sent it (content
    codings kept, as WARC §6.3 asks), with ``WARC-Payload-Digest`` and
    ``WARC-Block-Digest`` (warcio's).
    """
    writer = WARCWriter(out, gzip=True, warc_version="WARC/1.1")
    info = writer.create_warcinfo_record("", {"software": software, "format": "WARC File Format 1.1"})
    writer.write_record(info)
    for exchange in exchanges:
        date = warc_date(exchange.date)
        response_headers = StatusAndHeaders(
            f"{exchange.status} {exchange.reason}".strip(),
            [(k, v) for k, v in exchange.response_headers],
            protocol=exchange.http_version,
        )
        warc_headers = {"WARC-Date": date}
        if exchange.address:
            warc_headers["WARC-IP-Address"] = exchange.address
        response = writer.create_warc_record(
            exchange.url,
            "response",
            payload=io.BytesIO(exchange.body),
            length=len(exchange.body),
            http_headers=response_headers,
            warc_headers_dict=warc_headers,
        )
        request_headers = _request_head(exchange)
        request = writer.create_warc_record(
            exchange.url,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            http_headers=request_headers,
            warc_headers_dict={
                "WARC-Date": date,
                "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
            },
        )
        writer.write_record(response)
        writer.write_record(request)


def _request_head(exchange: Exchange) -> StatusAndHeaders:
    """A request record's HTTP head (WARC 1.1 §6.4: the block is the full HTTP request).

    RFC 9112 §3: request-line = method SP request-target SP HTTP-version,
    then the header fields, which include Host (§3.2; httpx sends it).
    The version is the one the request went with: the capture's client
    (httpx with ``http2=False``, so h11) always sends HTTP/1.1, whatever
    version the server answers with (``exchange.http_version`` is the
    response's, HTTP/1.0 from some servers).
    warcio's ``is_http_request`` splits the line at its first space into
    method and "target version", and writes it back joined.
    """
    headers = [(k, v) for k, v in exchange.request_headers]
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", _authority(exchange.url)))
    line = f"{exchange.method} {_request_target(exchange.url)} {_REQUEST_VERSION}"
    return StatusAndHeaders(line, headers, is_http_request=True)


def _authority(url: str) -> str:
    """The Host field value of ``url`` (RFC 9110 §7.2): its authority without userinfo."""
    authority = url.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    return authority.rsplit("@", 1)[-1]


def _request_target(url: str) -> str:
    """The request-target of an origin-form request line (RFC 9112 §3.2.1): path and query."""
    rest = url.split("://", 1)[-1]
    slash = rest.find("/")
    target = rest[slash:] if slash >= 0 else "/"
    return target.split("#", 1)[0] or "/"
