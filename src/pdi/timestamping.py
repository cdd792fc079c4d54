"""Trusted timestamps (RFC 3161): asked of a time-stamping authority over HTTP (§3.4), and its signature checked
with Debian's ``openssl ts -verify``. Used by ``pdi manifest --tsa``, the resolver's ``/api/manifest.tsr``
(``pdi serve --tsa``) and the domain form of a signed WACZ; no click here.

What ``pdi manifest --tsa`` stamps is the SHA-256 of the manifest file as
written (every JWS line of it); the TSA's response (DER ``TimeStampResp``)
is kept beside it as ``FILE.tsr``, the name ``openssl ts`` gives it. The
request and response themselves are :mod:`pdi.rfc3161`'s.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import subprocess
import time
from pathlib import Path

from pdi._refusals import IDENTITY, coded, unreached
from pdi.errors import IntegrityError, LimitError, ParseError, RemoteError, UnsupportedError
from pdi.rfc3161 import MAX_RESPONSE, TimeStamp, epoch_of, read_response, timestamp_request

__all__ = ["TSR_SUFFIX", "epoch_of", "request_timestamp", "verify_with_ca"]

#: What a manifest file's timestamp is called beside it.
TSR_SUFFIX = ".tsr"
#: Seconds the TSA may take to connect and for each read, and in all; ``openssl ts -verify`` at most.
TSA_TIMEOUT = 30.0
TSA_DEADLINE = 60.0
OPENSSL_SECONDS = 30.0


def request_timestamp(url: str, data: bytes) -> tuple[bytes, TimeStamp]:
    """Ask the TSA at ``url`` to stamp the SHA-256 of ``data``: its DER response, and what it says (checked to
    be of the SHA-256 of ``data``, as asked, with the request's nonce)."""
    from pdi import _answer_head as answer_head  # here: httpx is slow to import

    nonce = secrets.randbits(63)
    query = timestamp_request(hashlib.sha256(data).digest(), nonce)
    started = time.monotonic()
    body = bytearray()
    try:
        # the answer's head within TSA_TIMEOUT too: httpx bounds each read of it, not the whole (pdi._answer_head)
        with answer_head.client(TSA_TIMEOUT, by=started + TSA_DEADLINE, timeout=TSA_TIMEOUT) as client, \
                client.stream("POST", url, content=query,
                              headers={"Content-Type": "application/timestamp-query", **IDENTITY}) as answer:
            if answer.status_code != 200:
                raise RemoteError(f"the time-stamping authority {url} answered HTTP {answer.status_code}")
            refused = coded(answer.headers.get("content-encoding"), f"the time-stamping authority {url}'s answer")
            if refused is not None:
                raise refused
            for piece in answer.iter_raw():
                body += piece
                if len(body) > MAX_RESPONSE:
                    raise RemoteError(f"the time-stamping authority {url} answered more than {MAX_RESPONSE} octets")
                if time.monotonic() - started > TSA_DEADLINE:
                    raise RemoteError(f"the time-stamping authority {url} took more than {TSA_DEADLINE:.0f} s")
    except unreached() as exc:
        raise RemoteError(f"cannot reach the time-stamping authority {url}: {exc}") from exc
    try:
        stamp = read_response(bytes(body))
    except ParseError as exc:  # the authority's answer, not what was asked of it, is at fault
        raise RemoteError(f"the time-stamping authority {url} answered no timestamp response: {exc}") from exc
    if stamp.algorithm != "sha256":  # RFC 3161 §2.4.2: the response's imprint "MUST have the same value" as asked
        named = stamp.algorithm.upper().replace("SHA", "SHA-")
        raise RemoteError(f"the time-stamping authority {url} stamped the {named} of what it was asked to stamp, not"
                          " its SHA-256 as asked (RFC 3161 §2.4.2)")
    stamp.check(data, nonce)
    return bytes(body), stamp


def verify_with_ca(response: Path, data: Path, ca: Path, *, partial: bool = False, at: str | None = None) -> None:
    """:class:`IntegrityError` unless ``openssl ts -verify`` finds the TSA's signature on ``response`` good, its
    certificate chained to ``ca``, and the stamp of ``data``. ``partial``: any certificate of ``ca`` may end the
    chain (``-partial_chain``), so that what is proved is the signature of a certificate the file holds, not its
    trust. ``at``: the certificates are checked as of that ``GeneralizedTime`` (the stamp's own ``genTime``), not
    now: a timestamp is to outlive its authority's certificate."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise UnsupportedError("checking a timestamp's signature needs openssl (Debian's openssl package)")
    try:
        done = subprocess.run(
            [openssl, "ts", "-verify", "-in", str(response), "-data", str(data), "-CAfile", str(ca),
             *(["-partial_chain"] if partial else []), *(["-attime", str(epoch_of(at))] if at is not None else [])],
            capture_output=True, text=True, timeout=OPENSSL_SECONDS, check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LimitError(f"openssl ts -verify took more than {OPENSSL_SECONDS:.0f} s") from exc
    if done.returncode != 0 or "Verification: OK" not in done.stdout:
        why = next((line for line in done.stderr.splitlines() if "error" in line.lower()), done.stderr.strip())
        raise IntegrityError(f"the timestamp's signature does not verify with {ca}: {why[-300:]}")
