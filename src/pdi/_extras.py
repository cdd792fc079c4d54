"""The server libraries pdi installs only on request (pyproject.toml's extras), and the error naming the one missing.

``pipx install pdi`` gives the embedded archive (a SQLite catalog, its blobs in
files) and nothing it does not use; a PostgreSQL catalog needs the
``postgres`` extra (psycopg and its pool), blobs in an S3-compatible store the
``s3`` extra (boto3). The modules that use them import them at their top and
turn an :class:`ImportError` of one of those libraries into
:func:`missing_extra`'s :class:`~pdi.errors.UnsupportedError` (exit status 6),
which says what needed it and how to install it; an import error of anything
else is a bug and goes on as it is.
"""

from __future__ import annotations

from typing import Final, NoReturn

from pdi.errors import UnsupportedError

#: Each extra: what needs it, and the top-level modules it brings.
EXTRAS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "postgres": ("a PostgreSQL catalog (postgresql://…)", ("psycopg", "psycopg_pool", "psycopg_binary")),
    "s3": ("blobs in an S3-compatible store (s3://…)", ("boto3", "botocore", "s3transfer")),
}


def missing_extra(extra: str, exc: ImportError) -> NoReturn:
    """Raise the error naming ``extra`` when ``exc`` is the import of one of its libraries failing, else ``exc``."""
    what, modules = EXTRAS[extra]
    missing = (exc.name or "").partition(".")[0]
    if missing not in modules:
        raise exc
    raise UnsupportedError(
        f"pdi's {extra} extra is not installed ({missing} is missing), and {what} needs it:"
        f" install pdi with it, pipx install --force 'pdi[{extra}]' (or pip install 'pdi[{extra}]')",
        details={"extra": extra, "missing": missing},
    ) from exc
