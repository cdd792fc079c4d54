"""Blobs in an S3-compatible object store (AWS S3, OpenStack Swift's ``s3api``, MinIO, Ceph…).

Selected at ``pdi init LOCATION --blobs s3://bucket/prefix`` and recorded in
the catalog; the endpoint and the keys come from the environment only, read
by boto3 as for any AWS tool (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``/``AWS_DEFAULT_REGION``, or a
profile in ``~/.aws``): nothing secret is ever written to the catalog.

Keys are content addressed: the blob whose SHA-256 is ``h`` is the object
``prefix + h``. A blob is written in two steps, because its name is known
only once its last octet has been hashed:

1. its octets stream to a *staging* object ``prefix + "staging/" + id``
   (a multipart upload in parts of :data:`PART_SIZE`, each sent with its
   ``Content-MD5`` so the store refuses a part that arrived damaged), while
   :class:`~pdi.archive.blobs.Digests` computes the SHA-256 and the chunk
   digests;
2. only then is the staging object copied, on the server, to ``prefix + h``
   (unless an object of that size and this upload's ETag is there already:
   the same bytes stored before) and the staging object deleted.

So a content-addressed key never holds octets other than those its name
hashes: a failed or refused upload (a dropped connection, a bag whose bytes
do not match their manifest) touches only its own staging object, which is
aborted or deleted, and cannot damage a blob another name already holds.

:class:`S3Store` is the blob store (:class:`~pdi.archive.blobs.seam.BlobStore`)
over :class:`S3Blobs`, under any catalog, by the rules the catalog keeps for
every blob store (:class:`~pdi.archive.blobs.seam.BlobCatalog`):

*A failed deposit leaves the archive exactly as it was.* A failure before
the copy to the content-addressed key removes the staging object, and a
failure after it (a refused deposit) removes the key again if staging
created it and nothing else holds it.

*A committed name never lacks its bytes.* An object has no pin of its own,
so every staging is recorded in the catalog (a staging row: an id and, once
known, the SHA-256) before the first octet is sent, and dropped only after
the deposit's catalog transaction has ended. The remover deletes objects
only inside the catalog's removal lock, and spares every object a staging
row names; a deposit, inside its catalog transaction, holds the same lock
shared and checks that each of its blobs is at its key with its size.
Either the remover went first (the deposit then finds its blob gone and
fails cleanly, nothing committed) or the deposit did (the remover then sees
the name it committed). A staging row older than a day (and than the
remover's grace period) is taken for the leftover of a killed process.

Reads are ranged ``GET``\\ s (``Range: bytes=a-b``) of whole chunks, which
:class:`~pdi.archive.blobs.ChunkedReader` verifies against their digests.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pdi._extras import missing_extra

try:
    import boto3
    import botocore.exceptions
    from boto3.s3.transfer import TransferConfig
    from botocore.config import Config
except ImportError as exc:  # pdi installed without its s3 extra
    missing_extra("s3", exc)

from pdi.archive.blobs import (
    CHUNK_SIZE,
    SHA256_HEX,
    BlobInfo,
    ChunkedReader,
    Digests,
    Octets,
    pieces,
)
from pdi.archive.blobs.seam import (
    Attached,
    BlobObserver,
    BlobSource,
    StagedBlob,
    stage_each,
)
from pdi.errors import IntegrityError, NotFoundError, ParseError, StoreError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

#: Octets per part of a multipart upload (a whole number of chunks, above S3's 5 MiB minimum).
#: It doubles every 1000 parts, so a blob never needs more than S3's 10,000 parts.
PART_SIZE = 8 * CHUNK_SIZE

#: Largest object a single server-side ``CopyObject`` may copy (S3's limit); above it the copy is multipart.
COPY_LIMIT = 5 << 30

_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-_]{1,254}\Z", re.IGNORECASE)
_MD5 = re.compile(r'"?([0-9a-f]{32})(-\d+)?"?\Z')

STAGING = "staging/"

#: Seconds to open a connection to the store, and to wait for the next octet of an answer, before a request is
#: given up (botocore's own defaults, 60 s each, would keep a resolver's request waiting on a stalled store for
#: ten minutes); each request is tried :data:`ATTEMPTS` times in all (S3's standard retry mode), so a store that
#: does not answer at all fails an operation within about two minutes.
CONNECT_SECONDS = 5.0
READ_SECONDS = 20.0
ATTEMPTS = 5


@dataclass(frozen=True)
class S3Location:
    """A bucket and a key prefix (empty, or ending in ``/``), written ``s3://bucket/prefix``."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> S3Location:
        """Parse ``s3://bucket`` or ``s3://bucket/prefix`` (a :class:`ParseError` naming what is wrong)."""
        if not url.startswith("s3://"):
            raise ParseError(f"a blob store is named s3://bucket/prefix, not {url!r}")
        bucket, _, prefix = url[len("s3://"):].partition("/")
        if not _BUCKET.match(bucket):
            raise ParseError(f"{url!r}: {bucket!r} is not an S3 bucket name")
        if any(c in prefix for c in "?#\\") or "//" in prefix or prefix.startswith(STAGING):
            raise ParseError(f"{url!r}: the key prefix {prefix!r} is not usable")
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        return cls(bucket, prefix)

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


def _client() -> S3Client:
    """An S3 client configured from the environment.

    Path-style addressing where an endpoint is given (a store of our own
    seldom has a DNS name per bucket); checksums only where S3 requires them,
    as stores other than AWS reject the newer ``x-amz-checksum`` trailers
    (each part carries its ``Content-MD5`` instead).
    """
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    session = boto3.session.Session()
    config = Config(
        s3={"addressing_style": "path" if endpoint else "auto"},
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        retries={"mode": "standard", "max_attempts": ATTEMPTS},
        connect_timeout=CONNECT_SECONDS,
        read_timeout=READ_SECONDS,
    )
    return session.client("s3", region_name=session.region_name or "us-east-1", config=config)


#: What a store answers when it refuses the keys a request was signed with, or what they may do: ``403`` (S3's
#: ``AccessDenied``, ``SignatureDoesNotMatch``, ``InvalidAccessKeyId``; a ``HEAD``, which has no body, says only
#: ``403 Forbidden``).
_REFUSED_KEYS: Final = frozenset({"403", "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId"})


def _message(exc: Exception) -> str:
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        said = f"{error.get('Code', '?')}: {error.get('Message', '')}".strip()
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if status == 403 or _code(exc) in _REFUSED_KEYS:
            return (f"{said.removesuffix(':')} (the store refused the keys: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                    " are wrong, or not allowed this bucket and prefix; S3 also answers 403 for a missing object to"
                    " keys that may not list the bucket)")
        return said
    said = " ".join(str(exc).split())
    if isinstance(exc, botocore.exceptions.ConnectTimeoutError):
        return f"{said} (no connection within {CONNECT_SECONDS:g} s, tried {ATTEMPTS} times)"
    if isinstance(exc, botocore.exceptions.ReadTimeoutError):
        return f"{said} (no answer within {READ_SECONDS:g} s, tried {ATTEMPTS} times)"
    return said


def _code(exc: botocore.exceptions.ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


_S3Errors = (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError)


@dataclass(frozen=True)
class Listed:
    """An object (or unfinished multipart upload) found by a listing: its key, when it was last written, its upload id."""

    key: str
    modified: float
    upload_id: str | None = None


class S3Blobs:
    """The objects of one bucket and prefix: staging, placing, ranged reads, listings, deletions."""

    def __init__(self, location: S3Location, client: S3Client | None = None) -> None:
        self.where = location
        self.client: S3Client = client if client is not None else _client()

    @classmethod
    def open(cls, url: str) -> S3Blobs:
        return cls(S3Location.parse(url))

    def _fail(self, what: str, exc: Exception) -> StoreError:
        return StoreError(f"{self.where}: cannot {what}: {_message(exc)}")

    def key(self, sha256: str) -> str:
        return self.where.prefix + sha256

    def staging_key(self, ident: str) -> str:
        return self.where.prefix + STAGING + ident

    def check_bucket(self) -> None:
        """The bucket must exist and answer (a :class:`NotFoundError` when it does not exist)."""
        try:
            self.client.head_bucket(Bucket=self.where.bucket)
        except botocore.exceptions.ClientError as exc:
            if _code(exc) in ("404", "NoSuchBucket"):
                raise NotFoundError(
                    f"no bucket {self.where.bucket!r} at {self.client.meta.endpoint_url}; create it first"
                ) from exc
            raise self._fail("reach the bucket", exc) from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise self._fail("reach the bucket", exc) from exc

    def check_bucket_stands(self) -> None:
        """After an object was not found: a :class:`StoreError` if its bucket is gone too (deleted, or the endpoint
        is another store's), for then the blob is not missing, the store is (a ``HEAD`` of a key answers ``404``
        without saying which)."""
        try:
            self.check_bucket()
        except NotFoundError as exc:
            raise StoreError(
                f"{self.where}: the bucket {self.where.bucket!r} is gone from {self.client.meta.endpoint_url}"
                " (deleted, or not the store the archive was made with)"
            ) from exc

    # --- writing -------------------------------------------------------------------
    def upload(self, ident: str, source: Octets, observe: BlobObserver | None) -> BlobInfo:
        """Stream ``source`` to the staging object ``ident``, hashing it; its :class:`BlobInfo` (see :meth:`send`)."""
        return self.send(ident, source, observe)[0]

    def send(self, ident: str, source: Octets, observe: BlobObserver | None) -> tuple[BlobInfo, str]:
        """Stream ``source`` to the staging object ``ident``, hashing it; its :class:`BlobInfo` and the store's ETag.

        ``observe`` sees every piece and its ``finish`` runs before this returns;
        an exception anywhere aborts the upload and leaves no staging object.
        """
        key = self.staging_key(ident)
        digests = Digests()
        upload_id: str | None = None
        parts: list[CompletedPartTypeDef] = []
        md5s: list[bytes] = []
        pending = bytearray()

        def send(data: bytes) -> None:
            nonlocal upload_id
            if upload_id is None:
                upload_id = self.client.create_multipart_upload(Bucket=self.where.bucket, Key=key)["UploadId"]
            md5 = hashlib.md5(data).digest()
            number = len(parts) + 1
            answer = self.client.upload_part(
                Bucket=self.where.bucket, Key=key, UploadId=upload_id, PartNumber=number,
                Body=data, ContentMD5=base64.b64encode(md5).decode(),
            )
            parts.append({"ETag": answer["ETag"], "PartNumber": number})
            md5s.append(md5)

        try:
            try:
                for piece in pieces(source):
                    digests.update(piece)
                    if observe is not None:
                        observe.update(piece)
                    pending += piece
                    part = PART_SIZE << (len(parts) // 1000)
                    while len(pending) >= part:
                        send(bytes(pending[:part]))
                        del pending[:part]
                info = digests.finish()
                if observe is not None:
                    observe.finish(info)
                if upload_id is None:
                    md5 = hashlib.md5(pending).digest()
                    answer_etag = self.client.put_object(
                        Bucket=self.where.bucket, Key=key, Body=bytes(pending),
                        ContentMD5=base64.b64encode(md5).decode(),
                    )["ETag"]
                    expected = md5.hex()
                else:
                    if pending:
                        send(bytes(pending))
                    answer_etag = self.client.complete_multipart_upload(
                        Bucket=self.where.bucket, Key=key, UploadId=upload_id,
                        MultipartUpload={"Parts": parts},
                    )["ETag"]
                    upload_id = None
                    expected = f"{hashlib.md5(b''.join(md5s)).hexdigest()}-{len(parts)}"
            except _S3Errors as exc:
                raise self._fail(f"upload {key}", exc) from exc
            _check_etag(answer_etag, expected, f"{self.where}{STAGING}{ident}")
        except BaseException as failure:
            self._remove_staging(key, upload_id, failure)
            raise
        return info, answer_etag

    def _remove_staging(self, key: str, upload_id: str | None, failure: BaseException) -> None:
        try:
            if upload_id is not None:
                self.client.abort_multipart_upload(Bucket=self.where.bucket, Key=key, UploadId=upload_id)
            else:
                self.client.delete_object(Bucket=self.where.bucket, Key=key)
        except _S3Errors as exc:
            # the failure stands; what it left is for remove_unreferenced
            failure.add_note(f"and {key} could not be removed ({_message(exc)}): pdi verify --remove-unreferenced will")

    def place(self, ident: str, info: BlobInfo, *, replace: bool = False) -> bool:
        """Copy the staging object ``ident`` to the blob's key and delete it; whether the key is new.

        An object already at the key with the blob's size is the same bytes
        stored before (its name is their SHA-256): it is kept, not copied over,
        unless ``replace`` (a repair: the object there was found altered).
        """
        created = replace or self.size(info.sha256) != info.size
        if created:
            self.copy_in(ident, info)
        self.delete(self.staging_key(ident))
        return created

    def copy_in(self, ident: str, info: BlobInfo) -> None:
        """Copy the staging object ``ident``, on the server, to the blob's key (which must then have its size)."""
        try:
            self.client.copy(
                {"Bucket": self.where.bucket, "Key": self.staging_key(ident)},
                self.where.bucket,
                self.key(info.sha256),
                Config=TransferConfig(multipart_threshold=COPY_LIMIT, multipart_chunksize=1 << 30),
            )
        except _S3Errors as exc:
            raise self._fail(f"place blob {info.sha256}", exc) from exc
        if self.size(info.sha256) != info.size:
            raise StoreError(
                f"{self.where}{info.sha256}: the copy of a staged blob of {info.size} octets came out another size"
            )

    def delete(self, key: str) -> None:
        try:
            self.client.delete_object(Bucket=self.where.bucket, Key=key)
        except _S3Errors as exc:
            raise self._fail(f"delete {key}", exc) from exc

    def abort(self, key: str, upload_id: str) -> None:
        try:
            self.client.abort_multipart_upload(Bucket=self.where.bucket, Key=key, UploadId=upload_id)
        except botocore.exceptions.ClientError as exc:
            if _code(exc) != "NoSuchUpload":
                raise self._fail(f"abort the upload of {key}", exc) from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise self._fail(f"abort the upload of {key}", exc) from exc

    # --- reading -------------------------------------------------------------------
    def size(self, sha256: str) -> int | None:
        """The size of the blob's object, or ``None`` when there is none."""
        found = self.stat(sha256)
        return None if found is None else found[0]

    def stat(self, sha256: str) -> tuple[int, str] | None:
        """The size and the ETag of the blob's object, or ``None`` when there is none."""
        try:
            answer = self.client.head_object(Bucket=self.where.bucket, Key=self.key(sha256))
            return int(answer["ContentLength"]), str(answer.get("ETag", ""))
        except botocore.exceptions.ClientError as exc:
            if _code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise self._fail(f"look up blob {sha256}", exc) from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise self._fail(f"look up blob {sha256}", exc) from exc

    def range_reader(self, sha256: str) -> Callable[[int, int], bytes]:
        """A function reading octets ``[offset, offset + length)`` of the blob by one ranged ``GET``.

        Past the end (or with the object gone) it reads nothing, so a reader
        finds a blob cut short. Never more than ``length`` octets are read: a
        store (or a cache before it) may ignore ``Range`` and answer the whole
        object (RFC 9110 §14.2), which serves only a range from octet 0 (its
        first ``length`` octets are the range); any other range it answers
        with other octets than asked is a :class:`StoreError`.
        """
        key = self.key(sha256)

        def read_raw(offset: int, length: int) -> bytes:
            if length <= 0:
                return b""
            try:
                answer = self.client.get_object(
                    Bucket=self.where.bucket, Key=key, Range=f"bytes={offset}-{offset + length - 1}"
                )
                body = answer["Body"]
                try:
                    said = answer.get("ContentRange")
                    if not (offset == 0 if said is None else said.startswith(f"bytes {offset}-")):
                        raise StoreError(
                            f"{self.where}: cannot read {key}: asked for octets {offset} to {offset + length - 1},"
                            " the store answered "
                            + ("the whole object (200, no Content-Range)" if said is None else f"{said!r}")
                        )
                    return body.read(length)
                finally:
                    body.close()
            except botocore.exceptions.ClientError as exc:
                if _code(exc) in ("InvalidRange", "NoSuchKey", "404", "416"):
                    return b""
                raise self._fail(f"read {key}", exc) from exc
            except botocore.exceptions.BotoCoreError as exc:
                raise self._fail(f"read {key}", exc) from exc

        return read_raw

    # --- listing -------------------------------------------------------------------
    def _objects(self, prefix: str, delimiter: str | None) -> Iterator[Listed]:
        paginator = self.client.get_paginator("list_objects_v2")
        options: dict[str, Any] = {"Bucket": self.where.bucket, "Prefix": prefix}
        if delimiter:
            options["Delimiter"] = delimiter
        try:
            for page in paginator.paginate(**options):
                for item in page.get("Contents", []):
                    yield Listed(item["Key"], item["LastModified"].timestamp())
        except _S3Errors as exc:
            raise self._fail(f"list {prefix or 'the bucket'}", exc) from exc

    def blobs(self) -> Iterator[Listed]:
        """Every blob object under the prefix, in ascending order of name, a page at a time."""
        for item in self._objects(self.where.prefix, "/"):
            if SHA256_HEX.fullmatch(item.key[len(self.where.prefix):]):
                yield item

    def staging(self) -> Iterator[Listed]:
        """Every staging object, then every unfinished multipart upload to a staging key."""
        prefix = self.where.prefix + STAGING
        yield from self._objects(prefix, None)
        paginator = self.client.get_paginator("list_multipart_uploads")
        try:
            for page in paginator.paginate(Bucket=self.where.bucket, Prefix=prefix):
                for upload in page.get("Uploads", []):
                    yield Listed(upload["Key"], upload["Initiated"].timestamp(), upload["UploadId"])
        except _S3Errors as exc:
            raise self._fail(f"list the uploads under {prefix}", exc) from exc

    def ident_of(self, key: str) -> str:
        """The staging id of a staging key."""
        return key[len(self.where.prefix + STAGING):]


class S3Store(Attached):
    """The blob store of objects in an S3-compatible store, under any catalog (see the module docstring)."""

    def __init__(self, s3: S3Blobs) -> None:
        self.s3 = s3
        self.elsewhere: str | None = str(s3.where)

    @classmethod
    def at(cls, url: str) -> S3Store:
        """The store ``s3://bucket/prefix`` names (its endpoint and keys from the environment)."""
        return cls(S3Blobs.open(url))

    def close(self) -> None:
        """The client keeps no connection that needs closing."""

    # --- staging ---------------------------------------------------------------------
    def stage(self, source: Octets, observe: BlobObserver | None = None, *, replace: bool = False) -> StagedBlob:
        """Upload to a staging key, then copy to the blob's key (unless an object of its size is there, and not
        ``replace``: a repair copies over an object whose octets were altered in place)."""
        ident = self.catalog.open_staging()
        info: BlobInfo | None = None
        created = False
        try:
            info, etag = self.s3.send(ident, source, observe)  # on its failure, it removes its staging object itself
            self.catalog.name_staging(ident, info.sha256)
            # an object at the key is the same octets stored before if it has their size and the ETag of this
            # upload (the store's MD5 of them, which a server-side copy keeps on Swift): else it was altered behind
            # the archive's back, or the store does not say (an ETag that is no MD5, a copy given its own), and the
            # octets just hashed are copied over it
            created = replace or self.s3.stat(info.sha256) != (info.size, etag)
            if created:
                self.s3.copy_in(ident, info)
            self.s3.delete(self.s3.staging_key(ident))
        except BaseException as failure:
            self.catalog.close_staging(ident)
            if info is not None:  # the store failed after the upload: what it holds of this deposit goes again
                self._clean_up(ident, info.sha256 if created else None, failure)
            raise
        return _StagedObject(self, ident, info, created)

    def _clean_up(self, ident: str, placed: str | None, failure: BaseException) -> None:
        """After a deposit failed in the store: delete its staging object and the blob ``placed`` (if it was not
        there before it and nothing else holds it); what cannot be deleted is said in a note on ``failure``."""
        left = []
        try:
            self.s3.delete(self.s3.staging_key(ident))
        except StoreError:
            left.append(self.s3.staging_key(ident))
        if placed is not None:
            try:
                self._remove_if_free(placed)
            except StoreError:
                left.append(self.s3.key(placed))
        if left:
            failure.add_note(f"and {', '.join(left)} could not be removed from {self.s3.where.bucket}:"
                             " pdi verify --remove-unreferenced will")

    def stage_import(self, blobs: Iterable[tuple[str, BlobSource]]) -> list[StagedBlob]:
        return stage_each(self, blobs)

    def record(self, blobs: Sequence[StagedBlob]) -> None:
        """Inside the catalog transaction, under the removal lock: each object must be at its key with its size."""
        for blob in blobs:
            size = self.s3.size(blob.info.sha256)
            if size != blob.info.size:
                raise StoreError(
                    f"{self.s3.where}{blob.info.sha256}: the blob was removed before its deposit committed"
                    + ("" if size is None else f" (an object of {size} octets is there, not {blob.info.size})")
                )

    def _remove_if_free(self, sha256: str) -> None:
        """After a failed deposit: delete the blob's object if no name and no other deposit holds it."""
        with self.catalog.removing():
            if not self.catalog.held({sha256}):
                self.s3.delete(self.s3.key(sha256))

    # --- reading ---------------------------------------------------------------------
    def open(self, sha256: str, info: BlobInfo | None, *, name: str) -> ChunkedReader | None:
        size = self.s3.size(sha256)
        if size is None:
            self.s3.check_bucket_stands()
            return None
        return ChunkedReader(info or BlobInfo(sha256, size), self.s3.range_reader(sha256), name=name)

    def names(self) -> Iterator[str]:
        start = len(self.s3.where.prefix)
        for item in self.s3.blobs():
            yield item.key[start:]

    # --- removing --------------------------------------------------------------------
    def delete(self, sha256: str) -> bool:
        self.s3.delete(self.s3.key(sha256))
        return True

    def remove_unreferenced(self, older_than: float) -> list[str]:
        """Delete blob objects no name holds and staging left by killed deposits, older than ``older_than`` seconds.

        An object a deposit in progress is staging or about to name is kept
        whatever ``older_than`` is (see the module docstring). Returns the
        SHA-256 names and the ``staging/`` keys removed.
        """
        cutoff_epoch = time.time() - older_than
        start = len(self.s3.where.prefix)
        old = {item.key[start:] for item in self.s3.blobs() if item.modified < cutoff_epoch}
        staging = [item for item in self.s3.staging() if item.modified < cutoff_epoch]
        removed: list[str] = []
        with self.catalog.removing(older_than):
            for name in sorted(old - self.catalog.held(old)):
                self.s3.delete(self.s3.key(name))
                removed.append(name)
            live = self.catalog.live_stagings()
            for item in staging:
                if self.s3.ident_of(item.key) in live:
                    continue
                if item.upload_id is None:
                    self.s3.delete(item.key)
                else:
                    self.s3.abort(item.key, item.upload_id)
                removed.append(item.key[start:])
        return removed


class _StagedObject:
    """A blob at its key in the object store, held from the remover by its staging row until closed."""

    def __init__(self, store: S3Store, ident: str, info: BlobInfo, created: bool) -> None:
        self.store = store
        self.ident = ident
        self.info = info
        self.created = created
        self._done = False

    def secure(self) -> None:
        return None  # S3Store.record checks the object under the removal lock

    def close(self) -> None:
        if not self._done:
            self._done = True
            self.store.catalog.close_staging(self.ident)

    def discard(self) -> None:
        if self._done:
            return
        self.close()
        if self.created:
            self.store._remove_if_free(self.info.sha256)


def _check_etag(found: str, expected: str, where: str) -> None:
    """The store's ETag of an upload must be the MD5 we sent (where it is an MD5 at all)."""
    match = _MD5.match(found)
    if match is None:  # a store that answers with another kind of ETag: nothing to compare
        return
    if f"{match.group(1)}{match.group(2) or ''}" != expected:
        raise IntegrityError(f"{where}: the store holds other octets than were sent (ETag {found}, sent {expected})")
