"""`pdi verify --signatures`: signed manifests (files, standard input or resolver URLs) checked against a key and
the archive. No click here (the option is :mod:`pdi.cli.archive_cmd`'s ``verify``).

Each manifest's JWS is checked first (:func:`pdi.signing.verify_manifest`):
one that does not verify with the key is reported and nothing it lists is
trusted. Then each name it lists is checked against the catalog and the
stored octets (:meth:`pdi.archive.Archive.check_manifest`). A manifest
fetched from a URL is followed page by page (its ``next``).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pdi.archive import Archive
from pdi.archive.fixity import Problem
from pdi.errors import IntegrityError, LimitError, NotFoundError, PDIError, StoreError
from pdi.signing import MAX_JWS, Manifest, PublicKey, UnknownSigner, verify_manifest

__all__ = ["SignatureReport", "check_signatures", "public_keys"]

#: Seconds one HTTP request for a manifest page or a key set may wait (to connect, for each read), and take in all.
HTTP_TIMEOUT = 30.0
HTTP_DEADLINE = 120.0
#: Pages of one manifest URL followed at most.
MAX_PAGES = 100_000


@dataclass
class SignatureReport:
    """What :func:`check_signatures` found: manifests and names checked, and the problems (``signature`` first)."""

    manifests: int = 0
    names: int = 0
    problems: list[Problem] = field(default_factory=list)
    #: The manifest files with a good timestamp beside them: (file, when stamped: ISO 8601 in UTC, whether its TSA
    #: was checked).
    stamped: list[tuple[str, str, bool]] = field(default_factory=list)
    #: With a CA to check timestamps by: the manifests that had none, each with where its timestamp was looked for.
    unstamped: list[tuple[str, str]] = field(default_factory=list)


def _fetch(url: str, what: str) -> str:
    """The body of ``url`` as text, at most :data:`MAX_JWS` characters; a clear error when it cannot be had."""
    return _fetch_bytes(url, what).decode("utf-8", errors="replace")


def _fetch_bytes(url: str, what: str, most: int = MAX_JWS) -> bytes:
    """The body of ``url``, at most ``most`` octets (one more is read, then refused); a clear error when it cannot
    be had."""
    from pdi.federation.authorities import fetch_bounded

    body, _ = fetch_bounded(url, most, what, seconds=HTTP_DEADLINE, timeout=HTTP_TIMEOUT, follow_redirects=True)
    return body


def public_keys(key: str | None, archive: Archive, key_file: str | None) -> list[PublicKey]:
    """The keys ``--key`` names (a JWK or JWK set: JSON text, a file, or an http(s) URL), else the archive's own."""
    if key is None:
        from pdi.archive.signing_key import key_path, load_key

        path = key_path(archive.location, key_file)
        try:
            return [load_key(path).public]
        except NotFoundError as exc:  # whoever checks another archive's manifest needs that archive's key, not one here
            raise NotFoundError(
                f"no signing key at {path} to check with: give the key of the archive that signed the manifests"
                " (--key JWK|FILE|URL, such as its BASE_URL/api/keys), or make this archive's own with `pdi keys init`"
            ) from exc
    from pdi.federation.authorities import load_keys

    return load_keys(key, "--key", seconds=HTTP_DEADLINE, timeout=HTTP_TIMEOUT)


def _manifests(source: str, keys: list[PublicKey]) -> Iterator[tuple[str, str, Manifest | PDIError]]:
    """``(where, jws, the manifest verified with keys or why not)`` of each manifest ``source`` holds: one JWS a
    line of a file (``-``: standard input), or the pages of a resolver's ``/api/manifest`` URL, followed by the
    ``next`` of each page whose signature holds (a page that does not verify ends the walk: what it says is not
    read, nor where it says to go)."""
    if source.startswith(("http://", "https://")):
        import httpx

        url = httpx.URL(source)
        # the cursors gone on from, by their SHA-256 (as Peer.manifest keeps them): a stranger's pages may each
        # carry one of 60,000 characters, 100,000 pages of them
        seen: set[bytes] = set()
        for _ in range(MAX_PAGES):
            text = _fetch(str(url), "the manifest").strip()
            checked = _verified(text, keys)
            yield str(url), text, checked
            following = checked.next if isinstance(checked, Manifest) else None
            if following is None:
                return
            mark = hashlib.sha256(following.encode("utf-8", "surrogatepass")).digest()
            if mark in seen:
                shown = repr(following[:200]) + ("…" if len(following) > 200 else "")
                raise LimitError(f"{url}: its next page starts after {shown} again (a loop)")
            seen.add(mark)
            try:
                url = url.copy_set_param("after", following)
            except httpx.InvalidURL:  # httpx builds no URL past 65,536 characters
                raise IntegrityError(f"{url}: its next page starts after a cursor of {len(following):,} characters,"
                                     " more than a URL carries to ask for it") from None
        raise LimitError(f"{source}: more than {MAX_PAGES} pages")
    if source == "-":
        text = sys.stdin.read(MAX_JWS + 1)
    else:
        try:
            with Path(source).open(encoding="ascii", errors="replace") as f:
                text = f.read(MAX_JWS + 1)
        except FileNotFoundError as exc:
            raise NotFoundError(f"no manifest file {source}") from exc
        except OSError as exc:  # a directory, a file not to be read: said as the key files' are
            raise StoreError(f"cannot read the manifest file {source}: {exc.strerror}") from exc
    if len(text) > MAX_JWS:
        raise LimitError(f"{source} is larger than {MAX_JWS} characters")
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield f"{source}:{number}", line.strip(), _verified(line.strip(), keys)


def _verified(jws: str, keys: list[PublicKey]) -> Manifest | PDIError:
    """The manifest ``jws`` signed with one of ``keys``, or the error saying why it is not."""
    try:
        return verify_manifest(jws, keys)
    except PDIError as exc:
        return exc


def _check_timestamp(source: str, tsa_ca: str | None, report: SignatureReport) -> None:
    """The RFC 3161 timestamp beside a manifest file (``FILE.tsr``), if there is one: of this file's octets, and
    with ``tsa_ca`` signed by a TSA that CA certifies (``openssl ts -verify``)."""
    from pdi.rfc3161 import MAX_RESPONSE, read_response
    from pdi.timestamping import TSR_SUFFIX, verify_with_ca

    path = Path(source)
    response = path.with_name(path.name + TSR_SUFFIX)
    if source == "-" or source.startswith(("http://", "https://")):
        return
    if not response.is_file():
        if tsa_ca is not None:
            report.unstamped.append((source, f"{response}, made by pdi manifest --tsa"))
        return
    try:
        with response.open("rb") as f:
            stamp = read_response(f.read(MAX_RESPONSE + 1))
        stamp.check(path.read_bytes())
        if tsa_ca is not None:
            verify_with_ca(response, path, Path(tsa_ca))
    except PDIError as exc:
        report.problems.append(Problem("timestamp", "", (str(response),), str(exc)))
        return
    report.stamped.append((source, stamp.iso, tsa_ca is not None))


def _check_page_timestamp(url: str, jws: str, tsa_ca: str | None, report: SignatureReport) -> None:
    """The resolver's RFC 3161 timestamp of a manifest page it answered (``/api/manifest.tsr``, ``pdi serve
    --tsa``), if it keeps them (``404``: it does not): of this page's octets, and with ``tsa_ca`` signed by a TSA
    that CA certifies."""
    import tempfile

    import httpx

    from pdi.rfc3161 import MAX_RESPONSE, read_response
    from pdi.timestamping import verify_with_ca

    page = httpx.URL(url)
    where = str(page.copy_with(path=page.path + ".tsr"))
    try:  # no more of it read than a timestamp may be (not a manifest page's 64 MiB)
        response = _fetch_bytes(where, "the manifest's timestamp", MAX_RESPONSE)
    except NotFoundError:
        if tsa_ca is not None:
            report.unstamped.append((url, f"{where}: that resolver keeps none, pdi serve --tsa"))
        return
    except PDIError as exc:
        report.problems.append(Problem("timestamp", "", (where,), str(exc)))
        return
    try:
        stamp = read_response(response)
        # the page's octets as they were read (UTF-8): a JWS is ASCII, but a stranger's page need not be one
        octets = jws.encode("utf-8")
        stamp.check(octets)
        if tsa_ca is not None:
            with tempfile.TemporaryDirectory(prefix="pdi-tsr-") as work:
                (Path(work) / "page.tsr").write_bytes(response)
                (Path(work) / "page.jws").write_bytes(octets)
                verify_with_ca(Path(work) / "page.tsr", Path(work) / "page.jws", Path(tsa_ca))
    except PDIError as exc:
        report.problems.append(Problem("timestamp", "", (where,), str(exc)))
        return
    report.stamped.append((url, stamp.iso, tsa_ca is not None))


def _whose_key(archive: Archive, exc: UnknownSigner, own_key: bool) -> str:
    """Why a manifest signed by a key not given does not verify, and what to give: a key this archive pinned for
    another (``pdi mirror add``) is named with its archive, as is this archive's own when it was the one tried."""
    from pdi._wording import shown_url
    from pdi.network.peers import pinned_keys

    for record in archive.mirrors():
        try:
            pinned = pinned_keys(record)
        except PDIError:  # a key pinned by an earlier pdi that this one cannot read names no signer
            continue
        if any(exc.kid in (key.thumbprint, key.kid) for key in pinned):
            url = shown_url(record.base_url)
            tried = "this archive's own" if own_key else "the keys given"
            return (f"{exc} ({tried}): it is the key pinned here for {url}, the {record.role} of {record.series}"
                    f" (pdi mirror ls); check with that archive's key: --key {url}/api/keys")
    if own_key:
        return (f"{exc} (this archive's own): give the key of the archive that signed it (--key JWK|FILE|URL, such as"
                " its BASE_URL/api/keys)")
    return str(exc)


def check_signatures(archive: Archive, sources: tuple[str, ...], keys: list[PublicKey],
                     tsa_ca: str | None = None, *, own_key: bool = False) -> SignatureReport:
    """Check every manifest of ``sources`` with ``keys`` and against ``archive`` (and each file's timestamp, and
    each resolver page's); ``own_key``: ``keys`` are this archive's own (no ``--key``), which a refusal says."""
    report = SignatureReport()
    for source in sources:
        _check_timestamp(source, tsa_ca, report)
        found = report.manifests
        for where, jws, manifest in _manifests(source, keys):
            if source.startswith(("http://", "https://")):
                _check_page_timestamp(where, jws, tsa_ca, report)
            report.manifests += 1
            if isinstance(manifest, PDIError):
                said = _whose_key(archive, manifest, own_key) if isinstance(manifest, UnknownSigner) else str(manifest)
                report.problems.append(Problem("signature", "", (where,), said))
                continue
            checked, problems = archive.check_manifest(manifest.names)
            report.names += checked
            report.problems.extend(problems)
        if report.manifests == found:  # an empty file (a download cut short, the wrong file) proves nothing
            report.problems.append(Problem("signature", "", (source,), "holds no manifest (nothing but blank lines)"))
    return report


def refuse(report: SignatureReport) -> None:
    """:class:`IntegrityError` when the report holds any problem."""
    if report.problems:
        bad = sum(1 for p in report.problems if p.kind == "signature")
        raise IntegrityError(
            f"verify --signatures found {len(report.problems)} problem(s)"
            + (f", {bad} manifest(s) whose signature does not verify" if bad else "")
        )
