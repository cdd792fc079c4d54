"""Where an archive's signing keys are kept, made once and read: the Ed25519 key (``pdi keys``, the resolver's
manifests) and the ECDSA P-384 key that signs WACZ exports (``pdi keys init --wacz``; the WACZ signing
specification's signatures are ECDSA, not Ed25519).

The private key is an unencrypted PKCS#8 PEM file, mode 0600, never
printed nor served: ``signing-key.pem`` in the directory of a directory
archive, or the file ``$PDI_SIGNING_KEY`` (or ``--key-file``) names, which
a PostgreSQL archive needs, having no directory of its own (a secret
mounted as a file, as container platforms do). The WACZ key is kept the same
way: ``wacz-key.pem``, or the file ``$PDI_WACZ_KEY`` (or ``--key-file``) names.
The signatures themselves are :mod:`pdi.signing`'s and :mod:`pdi.wacz_signing`'s.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from pdi.errors import (
    ImmutabilityError,
    NotFoundError,
    PDIError,
    StoreError,
    UnreadableKeyError,
    UnsupportedError,
)
from pdi.signing import SigningKey
from pdi.wacz_signing import WaczKey

__all__ = ["KEY_ENV", "KEY_FILE", "WACZ_KEY_ENV", "WACZ_KEY_FILE", "create_key", "create_wacz_key", "key_path",
           "load_key", "load_wacz_key", "wacz_key_path"]

#: The environment variable naming the private key's file (for any archive; a PostgreSQL archive needs it).
KEY_ENV = "PDI_SIGNING_KEY"
#: The private key's file in a directory archive, when neither ``--key-file`` nor ``$PDI_SIGNING_KEY`` names one.
KEY_FILE = "signing-key.pem"
#: The environment variable naming the WACZ signing key's file.
WACZ_KEY_ENV = "PDI_WACZ_KEY"
#: The WACZ signing key's file in a directory archive.
WACZ_KEY_FILE = "wacz-key.pem"


def key_path(location: str, given: str | None = None, *, env: str = KEY_ENV, file: str = KEY_FILE) -> Path:
    """The private key's file of the archive at ``location``: ``given``, else ``$PDI_SIGNING_KEY``, else
    ``signing-key.pem`` in a directory archive; a PostgreSQL archive without either is refused."""
    named = given or os.environ.get(env)
    if named:
        return Path(named)
    if "://" in location:
        raise UnsupportedError(
            f"the archive at {location} has no directory to keep a signing key in: name its file with"
            f" --key-file or ${env} (it is made there, mode 0600)"
        )
    return Path(location) / file


def wacz_key_path(location: str, given: str | None = None) -> Path:
    """The WACZ key's file: ``given``, else ``$PDI_WACZ_KEY``, else ``wacz-key.pem`` in a directory archive."""
    return key_path(location, given, env=WACZ_KEY_ENV, file=WACZ_KEY_FILE)


def create_key(path: Path) -> SigningKey:
    """Make a new Ed25519 key and write it to ``path`` (mode 0600, created: never over an existing key)."""
    key = SigningKey.generate()
    _write_new(path, key.pem(), "manifests")
    return key


def create_wacz_key(path: Path) -> WaczKey:
    """Make a new ECDSA P-384 key for WACZ signatures and write it to ``path`` (as :func:`create_key`)."""
    key = WaczKey.generate()
    _write_new(path, key.pem(), "WACZ files")
    return key


def _write_new(path: Path, pem: bytes, signed: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise ImmutabilityError(
            f"{path} holds a signing key already: {signed} signed with it verify only with it; move it away"
            " first to make another"
        ) from exc
    except OSError as exc:
        raise StoreError(f"cannot create the signing key {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        with contextlib.suppress(OSError):
            path.unlink()
        raise StoreError(f"cannot write the signing key {path}: {exc.strerror}") from exc


#: The largest key file read (a PKCS#8 PEM of an Ed25519 key is 119 octets).
_MAX_KEY_FILE = 64 << 10


def load_key(path: Path) -> SigningKey:
    """The key in ``path``; :class:`NotFoundError` (saying how to make one) when there is none."""
    return SigningKey.from_pem(_read(path, "pdi keys init"), str(path))


def load_wacz_key(path: Path) -> WaczKey:
    """The WACZ key in ``path``; :class:`NotFoundError` (saying how to make one) when there is none."""
    return WaczKey.from_pem(_read(path, "pdi keys init --wacz"), str(path))


def _read(path: Path, makes: str) -> bytes:
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_KEY_FILE + 1)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no signing key at {path}: `{makes}` makes one") from exc
    except OSError as exc:
        raise StoreError(f"cannot read the signing key {path}: {exc.strerror}") from exc
    if len(data) > _MAX_KEY_FILE:
        raise UnsupportedError(f"{path} is larger than a signing key's PEM may be ({_MAX_KEY_FILE} octets)")
    return data


def no_key(location: str, read_only: bool, none_said: str) -> PDIError:
    """Why a resolver of the archive at ``location`` has no signing key to sign with: a :class:`NotFoundError`
    saying ``none_said`` when the archive has none; an :class:`UnreadableKeyError` when it has one that this user,
    who may only read the archive (``read_only``: a member of its group), may not read (the key is 0600, its
    owner's alone: :mod:`pdi.archive.modes`)."""
    if read_only:
        try:
            path: Path | None = key_path(location)
        except PDIError:
            path = None
        if path is not None and path.exists():
            return UnreadableKeyError(f"cannot read the signing key {path}: this user may read the archive at"
                                      f" {location}, not its key (its owner's alone)")
    return NotFoundError(none_said)
