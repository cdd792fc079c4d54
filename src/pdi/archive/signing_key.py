"""Where an archive's Ed25519 signing key is kept, made once and read (``pdi keys``, the resolver's manifests).

The private key is an unencrypted PKCS#8 PEM file, mode 0600, never
printed nor served: ``signing-key.pem`` in the directory of a directory
archive, or the file ``$PDI_SIGNING_KEY`` (or ``--key-file``) names, which
a PostgreSQL archive needs, having no directory of its own (a secret
mounted as a file, as container platforms do). The signatures themselves
are :mod:`pdi.signing`'s.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from pdi.errors import ImmutabilityError, NotFoundError, StoreError, UnsupportedError
from pdi.signing import SigningKey

__all__ = ["KEY_ENV", "KEY_FILE", "create_key", "key_path", "load_key"]

#: The environment variable naming the private key's file (for any archive; a PostgreSQL archive needs it).
KEY_ENV = "PDI_SIGNING_KEY"
#: The private key's file in a directory archive, when neither ``--key-file`` nor ``$PDI_SIGNING_KEY`` names one.
KEY_FILE = "signing-key.pem"


def key_path(location: str, given: str | None = None) -> Path:
    """The private key's file of the archive at ``location``: ``given``, else ``$PDI_SIGNING_KEY``, else
    ``signing-key.pem`` in a directory archive; a PostgreSQL archive without either is refused."""
    named = given or os.environ.get(KEY_ENV)
    if named:
        return Path(named)
    if "://" in location:
        raise UnsupportedError(
            f"the archive at {location} has no directory to keep a signing key in: name its file with"
            f" --key-file or ${KEY_ENV} (it is made there, mode 0600)"
        )
    return Path(location) / KEY_FILE


def create_key(path: Path) -> SigningKey:
    """Make a new Ed25519 key and write it to ``path`` (mode 0600, created: never over an existing key)."""
    key = SigningKey.generate()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise ImmutabilityError(
            f"{path} holds a signing key already: manifests signed with it verify only with it; move it away"
            " first to make another"
        ) from exc
    except OSError as exc:
        raise StoreError(f"cannot create the signing key {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(key.pem())
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        with contextlib.suppress(OSError):
            path.unlink()
        raise StoreError(f"cannot write the signing key {path}: {exc.strerror}") from exc
    return key


#: The largest key file read (a PKCS#8 PEM of an Ed25519 key is 119 octets).
_MAX_KEY_FILE = 64 << 10


def load_key(path: Path) -> SigningKey:
    """The key in ``path``; :class:`NotFoundError` (saying how to make one) when there is none."""
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_KEY_FILE + 1)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no signing key at {path}: `pdi keys init` makes one") from exc
    except OSError as exc:
        raise StoreError(f"cannot read the signing key {path}: {exc.strerror}") from exc
    if len(data) > _MAX_KEY_FILE:
        raise UnsupportedError(f"{path} is larger than a signing key's PEM may be ({_MAX_KEY_FILE} octets)")
    return SigningKey.from_pem(data, str(path))
