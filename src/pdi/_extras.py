"""The server libraries pdi installs only on request (pyproject.toml's extras), and the error naming the one missing.

Installing pdi's wheel gives the embedded archive (a SQLite catalog, its blobs in
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
    "s3": ("an S3-compatible blob store (s3://…)", ("boto3", "botocore", "s3transfer")),
}


def missing_extra(extra: str, exc: ImportError) -> NoReturn:
    """Raise the error naming ``extra`` when ``exc`` is the import of one of its libraries failing, else ``exc``."""
    what, modules = EXTRAS[extra]
    missing = (exc.name or "").partition(".")[0]
    if missing not in modules:
        raise exc
    wanted = " ".join(f"'{r}'" for r in extra_requirements(extra)) or " ".join(modules)
    raise UnsupportedError(
        f"pdi's {extra} extra is not installed ({missing} is missing), and {what} needs it:"
        f" add its packages to pdi's environment, pipx inject pdi {wanted} (or, in the virtual environment pdi is"
        f" installed in, pip install {wanted}), or install pdi's wheel again as 'WHEEL[{extra}]'",
        details={"extra": extra, "missing": missing},
    ) from exc


def extra_requirements(extra: str) -> list[str]:
    """The requirements of pdi's ``extra`` as its installed metadata lists them (``psycopg[binary]>=3.1``), in
    order: what to install by name. Never ``pdi[extra]`` by name: pdi is installed from its wheel, and a package
    of that name on an index could be anyone's."""
    import re
    from importlib.metadata import PackageNotFoundError, requires

    try:
        listed = requires("pdi") or []
    except PackageNotFoundError:
        return []
    # each line as the wheel's metadata writes it (PEP 508): 'psycopg[binary]>=3.1; extra == "postgres"'
    marked = (re.fullmatch(r"(.+?)\s*;\s*extra\s*==\s*[\"']([^\"']+)[\"']\s*", line) for line in listed)
    return [m[1] for m in marked if m is not None and m[2] == extra]
