"""Reading and validating a bag, whichever tool made it (RFC 8493 §2, §3).

Its tag files are read a line at a time within bounds (a stranger's bag may
be hostile); every payload and tag manifest of any algorithm RFC 8493 allows
is checked against the files, and the Payload-Oxum against the payload.
:func:`validate_bag` answers with each payload file's SHA-256 and the labels
of bag-info.txt.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pdi._wording import plural
from pdi.errors import IntegrityError, LimitError, NotFoundError, ParseError, UnsupportedError

#: RFC 8493 §2.4: the checksum algorithms a manifest may name (``manifest-<algorithm>.txt``), as hashlib spells them
ALGORITHMS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")
#: bounds on the tag files of a stranger's bag: a manifest or fetch.txt line (a path is at most a few KiB;
#: a 100 MB line of zeros is not a bag), and the whole of bagit.txt and bag-info.txt (a few hundred bytes
#: in real bags; bag-info.txt becomes statements, each at most 64 KiB)
MAX_TAG_LINE_BYTES = 64 * 1024
MAX_BAG_INFO_BYTES = 1 << 20
#: the most blank (or white) lines a tag file may hold: every reader skips them, and a manifest of blank lines,
#: which no bound on its entries stops, took 20 s a 10 MB (bagit-python reads any number)
MAX_BLANK_TAG_LINES = 1 << 16
_LINE_END = re.compile(rb"\r\n|\r|\n")
_MANIFEST = re.compile(r"(tag)?manifest-([a-z0-9]+)\.txt")
#: A manifest line (RFC 8493 §2.1.3): ``checksum 1*WSP filepath``, WSP a space or a tab.
_ENTRY = re.compile(r"([0-9A-Fa-f]+)[ \t]+([^ \t].*)", re.DOTALL)
#: What a tag file's encoding must decode as ASCII does: its labels, line ends, checksums and escapes.
_ASCII_SAMPLE = b"BagIt-Version: 1.0\r\n\tdata/%0D%0A%25 0123456789abcdefABCDEF-_.*#~"


def _tag_lines(bag: Path, name: str, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """The lines of the tag file ``name`` (RFC 8493 §2: ended by LF, CR or CRLF), numbered from 1, decoded.

    A line longer than :data:`MAX_TAG_LINE_BYTES` is a :class:`LimitError`
    naming the file, the line and its byte offset, found once that many bytes
    are read: a stranger's tag file is never held whole. So is a blank (or
    white) line past :data:`MAX_BLANK_TAG_LINES` of them.
    """
    number, offset, buffer, blank = 0, 0, b"", 0
    if (bag / name).is_symlink() or ((bag / name).exists() and not (bag / name).is_file()):
        # found by an attack (2026-11-27): a bag-info.txt linked to /etc/passwd became statements for good
        raise IntegrityError(f"{bag / name} is not a file of the bag (a link, a pipe or a folder): a tag file is in"
                             " the bag")
    try:
        with (bag / name).open("rb") as handle:
            while True:
                chunk = handle.read(1 << 16)
                buffer += chunk
                if number == 0 and offset == 0 and buffer.startswith(codecs.BOM_UTF8) and _is_utf8(encoding):
                    if name == "bagit.txt":
                        raise ParseError(f"{bag / name} begins with a byte-order mark, which RFC 8493 §2.1.1 forbids"
                                         " there", rule=name)
                    # written by Notepad or PowerShell's Out-File: read past, as bagit-python does
                    buffer, offset = buffer[len(codecs.BOM_UTF8):], len(codecs.BOM_UTF8)
                # the lines of the buffer found from where the last one ended, the buffer cut once a read: cut at
                # each line, 64 KiB of line ends were copied a line at a time (a MiB of blank lines took 2 s)
                start = 0
                while (end := _LINE_END.search(buffer, start)) is not None:
                    if end.group() == b"\r" and end.end() == len(buffer) and chunk:
                        break  # a CR the next chunk may follow with its LF
                    number += 1
                    line = _decode(buffer[start : end.start()], bag, name, number, encoding)
                    if not line.strip():
                        blank += 1
                        if blank > MAX_BLANK_TAG_LINES:
                            raise LimitError(f"{bag / name}: line {number} (at byte {offset}) is one blank line"
                                             f" more than the {MAX_BLANK_TAG_LINES:,} read in a tag file")
                    yield number, line
                    offset += end.end() - start
                    start = end.end()
                buffer = buffer[start:]
                if len(buffer) > MAX_TAG_LINE_BYTES:
                    raise LimitError(
                        f"{bag / name}: line {number + 1} (at byte {offset}) is longer than"
                        f" {plural(MAX_TAG_LINE_BYTES, 'byte')}"
                    )
                if not chunk:
                    if buffer:
                        yield number + 1, _decode(buffer, bag, name, number + 1, encoding)
                    return
    except FileNotFoundError as exc:
        raise IntegrityError(f"{bag} is not a complete bag: {name} is missing") from exc
    except OSError as exc:
        raise IntegrityError(f"cannot read {bag / name}: {exc}") from exc


def _is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def _decode(line: bytes, bag: Path, name: str, number: int, encoding: str) -> str:
    try:
        return line.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(f"{bag / name} line {number} is not {encoding}: {exc.reason}", rule=name) from None


def _small_tag_file(bag: Path, name: str) -> None:
    """bagit.txt and bag-info.txt are read whole (their lines are labels): refuse one past :data:`MAX_BAG_INFO_BYTES`."""
    size = (bag / name).stat().st_size
    if size > MAX_BAG_INFO_BYTES:
        raise LimitError(f"{bag / name} is {plural(size, 'byte')}, more than {plural(MAX_BAG_INFO_BYTES, 'byte')}")


def _labels(bag: Path, name: str, encoding: str) -> list[tuple[str, str]]:
    """The ``Label: value`` lines of a tag file (RFC 8493 §2.1.1, §2.2.2), continuation lines joined."""
    _small_tag_file(bag, name)
    found: list[tuple[str, str]] = []
    for number, line in _tag_lines(bag, name, encoding):
        if line[:1] in (" ", "\t") and found:  # a continuation of the value above (§2.2.2)
            label, value = found[-1]
            found[-1] = (label, f"{value} {line.strip()}")
            continue
        if not line.strip():
            continue
        label, sep, value = line.partition(":")
        if not sep or not label.strip():
            raise ParseError(f"{bag / name} line {number} is not 'Label: value'", text=line, rule=name)
        found.append((label.strip(), value.strip()))
    return found


def _manifest_path(raw: str, bag: Path, name: str, number: int, *, percent: bool) -> str:
    """A manifest's file path, checked to stay in the bag; CR and LF un-escaped, and % with ``percent`` (RFC 8493
    §2.1.3). A ``.`` segment is dropped (``./data/a.txt`` is ``data/a.txt``, as a manifest made with ``find . |
    xargs sha256sum`` writes it): the RFC asks a path relative to the bag, and says nothing of how it is spelled.
    A ``..`` segment, an absolute path and an empty segment are refused, naming the manifest and the line."""
    # CR and LF are escaped by every version bagit-python writes (0.97 too), % only since 1.0
    path = re.sub(r"%(0[dDaA]|25)" if percent else r"%(0[dDaA])", lambda m: chr(int(m.group(1), 16)), raw)
    parts = [part for part in path.split("/") if part != "."]
    if not path or path.startswith("/") or ".." in parts:
        raise ParseError(f"{bag / name} line {number} names a path outside the bag", text=raw, rule="manifest")
    if "" in parts or not parts:
        raise ParseError(f"{bag / name} line {number} names no file (an empty segment, '//', or only '.')", text=raw,
                         rule="manifest")
    return "/".join(parts)


def _read_manifest(bag: Path, name: str, algorithm: str, *, percent: bool, encoding: str, most: int,
                   ) -> dict[str, str]:
    """``path -> checksum`` of one manifest (RFC 8493 §2.1.3: ``checksum 1*WSP filepath``), of at most ``most``
    entries (a payload manifest lists each file under ``data/``, no more: found by an attack, 2026-11-27, 4 million
    lines of a bag without payload took 1 GB before the first missing file was said).

    RFC 8493 has no comment lines: a line that begins with ``#`` is refused (bagit-python skips it), and so is
    md5sum's ``*`` (its binary mode) before a path: the path is what follows the white space (``*data/a.txt`` is
    under no ``data/``); each refusal names the manifest and the line, and says why."""
    width = hashlib.new(algorithm).digest_size * 2
    payload = name.startswith("manifest-")
    entries: dict[str, str] = {}
    for number, line in _tag_lines(bag, name, encoding):
        if not line.strip():
            continue
        if len(entries) >= most:
            raise IntegrityError(f"{bag / name} lists more than {plural(most, 'file')} (line {number}), more than the"
                                 " bag holds there")
        if line.lstrip(" \t").startswith("#"):
            raise ParseError(f"{name} line {number} begins with '#': RFC 8493 §2.1.3 has no comment lines, each is"
                             f" '<{algorithm}> <path>'", text=line, rule="manifest")
        # the checksum ends at the first space or tab, whichever comes first: a tab between it and a path with
        # a space in it was refused (the path was split at its space)
        entry = _ENTRY.fullmatch(line)
        if entry is None or len(entry.group(1)) != width:
            raise ParseError(f"{name} line {number} is not '<{algorithm}> <path>'", text=line, rule="manifest")
        checksum = entry.group(1)
        path = _manifest_path(entry.group(2), bag, name, number, percent=percent)
        if path.startswith("*") and (payload or not (bag / path).exists()):
            raise ParseError(f"{name} line {number} names {path}: a '*' before the path is md5sum's binary-mode mark,"
                             " no part of an RFC 8493 manifest line (§2.1.3: the checksum, white space, the path)",
                             text=line, rule="manifest")
        if payload and not path.startswith("data/"):
            raise ParseError(f"{name} line {number} lists {path}, which is not under data/ (RFC 8493 §2.1.3: the"
                             " payload manifest MUST NOT reference files outside the payload directory)", text=line,
                             rule="manifest")
        if path in entries:
            raise ParseError(f"{name} line {number} lists {path} a second time", text=line, rule="manifest")
        entries[path] = checksum.lower()
    return entries


def _payload_files(bag: Path) -> set[str]:
    """Every file under ``data/``, as a manifest names it; a symbolic link or anything but a file is refused."""
    found: set[str] = set()
    data = bag / "data"
    if data.is_symlink():
        raise IntegrityError(f"{bag}: data is a symbolic link; a bag's payload is in the bag")
    if not data.is_dir():
        return found
    for folder, dirs, files in _walk(data):
        for entry in [*dirs, *files]:
            path = Path(folder) / entry
            if path.is_symlink():
                raise IntegrityError(f"{path.relative_to(bag).as_posix()} in {bag} is a symbolic link;"
                                     " a bag's payload is in the bag")
        for entry in files:
            path = Path(folder) / entry
            if not path.is_file():
                raise IntegrityError(f"{path.relative_to(bag).as_posix()} in {bag} is not a regular file")
            found.add(path.relative_to(bag).as_posix())
    return found


def _by_normal_form(paths: Iterable[str], where: str) -> dict[str, str]:
    """Each of ``paths`` by its NFC form (Unicode's composed form), as bagit-python compares a manifest's names
    with the disk's: a bag made where names are composed (NFC) and copied to a file system that decomposes them
    (macOS's HFS+, NFD) lists names its disk spells otherwise. Two paths of one form are refused, naming both
    (``where``: the manifest or folder that holds them), as bagit-python refuses them."""
    found: dict[str, str] = {}
    for path in paths:
        key = unicodedata.normalize("NFC", path)
        other = found.setdefault(key, path)
        if other != path:
            first, second = sorted((other, path))
            raise IntegrityError(f"{where} holds both {first!a} and {second!a}, one name in Unicode's NFC"
                                 " (a bag's files are told apart by their names' normal form, as bagit-python"
                                 " tells them apart)")
    return found


#: Payload-Oxum's value (RFC 8493 §2.2.2): the payload's octets, a period, its number of files.
_OXUM: Final = re.compile(r"([0-9]+)\.([0-9]+)")


def _oxum(value: str) -> tuple[int, int] | None:
    """Payload-Oxum's two numbers, compared as numbers (``0100.02`` is 100 octets in 2 files, as bagit-python
    reads it); None if it is not two numbers and a period (no payload's Oxum)."""
    found = _OXUM.fullmatch(value.strip())
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def _spelled(algorithm: str) -> str:
    """An algorithm as its standard spells it: ``MD5``, ``SHA-1``, ``SHA-256``."""
    return "MD5" if algorithm == "md5" else algorithm.upper().replace("SHA", "SHA-")


def _hash_all(path: Path, algorithms: set[str]) -> dict[str, str]:
    """Each of ``algorithms``' checksum of the file at ``path`` (and its SHA-256), in one read."""
    digests = {algorithm: hashlib.new(algorithm) for algorithm in algorithms | {"sha256"}}
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            for digest in digests.values():
                digest.update(chunk)
    return {algorithm: digest.hexdigest() for algorithm, digest in digests.items()}


@dataclass(frozen=True)
class BagInfo:
    """What :func:`validate_bag` found: each payload file's SHA-256 (computed) by the name its manifests give it,
    and bag-info.txt's labels in order."""

    payload: dict[str, str]
    labels: list[tuple[str, str]]
    version: str
    #: A payload file's name on the disk, by its name in the manifests, where the two differ in their Unicode form
    #: alone (a bag copied to a file system that decomposes names): ``payload``'s names are the manifests'.
    files: dict[str, str] = field(default_factory=dict)

    def file(self, bag: Path, path: str) -> Path:
        """The file of the payload's ``path`` (a name the manifests list) in ``bag``."""
        return bag / self.files.get(path, path)


def _declaration(bag: Path) -> tuple[str, str]:
    """bagit.txt (RFC 8493 §2.1.1): the BagIt version and the tag files' character encoding."""
    if not (bag / "bagit.txt").is_file():
        raise NotFoundError(f"{bag} is not a bag (no bagit.txt)")
    found = dict(_labels(bag, "bagit.txt", "utf-8"))
    version = found.get("BagIt-Version")
    if version is None:
        raise IntegrityError(f"{bag / 'bagit.txt'} does not declare a BagIt-Version")
    if not re.fullmatch(r"\d+\.\d+", version):
        raise ParseError(f"{bag / 'bagit.txt'}: BagIt-Version {version!r} is not M.N", rule="bagit.txt")
    if not (0, 93) <= tuple(int(n) for n in version.split(".")) < (2, 0):
        # the drafts (0.93 to 0.97) and RFC 8493 (1.0) say what a bag is; a later major version may change it
        raise UnsupportedError(f"{bag / 'bagit.txt'}: BagIt-Version {version} is not one this pdi reads (0.93 to"
                               " 1.x: the drafts and RFC 8493), as bagit-python reads none either")
    encoding = found.get("Tag-File-Character-Encoding", "UTF-8")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UnsupportedError(f"{bag / 'bagit.txt'}: Tag-File-Character-Encoding {encoding!r} is not known") from None
    try:  # a tag file is read a line at a time, its ends found as octets: its encoding must spell ASCII as ASCII
        ascii_kept = _ASCII_SAMPLE.decode(encoding) == _ASCII_SAMPLE.decode("ascii")
    except (LookupError, ValueError):  # a codec of bytes to bytes (zlib, base64, hex) or of text to text (rot13)
        ascii_kept = False
    if not ascii_kept:
        raise UnsupportedError(f"{bag / 'bagit.txt'}: Tag-File-Character-Encoding {encoding!r} is not one that"
                               " writes ASCII as ASCII (as UTF-8 and ISO-8859-1 do): its lines cannot be read")
    return version, encoding


def _tag_files(bag: Path) -> int:
    """How many files the bag holds outside ``data/`` (its tag files, in folders too): what a tag manifest may
    list."""
    count = 0
    for folder, subfolders, files in _walk(bag):
        if Path(folder) == bag:
            subfolders[:] = [d for d in subfolders if d != "data"]
        count += len(files)
    return count


def _walk(top: Path) -> Iterator[tuple[str, list[str], list[str]]]:
    """:func:`os.walk` of ``top``, top down, links never followed (a link to a folder is among the files), a folder
    at a time from a list, not a call a level: Python 3.11's recursed, and a stranger's bag of 1,200 folders one in
    another was a RecursionError (found by an attack, 2026-11-27). ``subfolders`` may be pruned as os.walk's."""
    pending = [str(top)]
    while pending:
        folder = pending.pop()
        subfolders: list[str] = []
        files: list[str] = []
        with os.scandir(folder) as entries:
            for entry in entries:
                (subfolders if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
        yield folder, subfolders, files
        pending.extend(os.path.join(folder, name) for name in reversed(subfolders))


def validate_bag(bag: Path) -> BagInfo:
    """Check a bag is complete and valid (RFC 8493 §3), whichever tool made it.

    bagit.txt declares the version and the tag files' encoding (§2.1.1);
    every payload manifest (``manifest-<algorithm>.txt``, any algorithm of
    :data:`ALGORITHMS`, §2.1.3) lists every file under ``data/`` and nothing
    else, each with its checksum; every tag manifest's files (§2.2.1) match
    theirs; a ``fetch.txt`` (§2.2.3) that lists a file is refused (pdi
    imports complete bags only); the Payload-Oxum of bag-info.txt (§2.2.2),
    when given, is the payload's. Each file is read once, hashed with every
    algorithm its manifests name and with SHA-256. Tag files are read within
    :data:`MAX_TAG_LINE_BYTES` a line; a payload file that is a symbolic
    link is refused (a bag's payload is in the bag).
    """
    version, encoding = _declaration(bag)
    percent = tuple(int(n) for n in version.split(".")) >= (1, 0)
    names = sorted(p.name for p in bag.iterdir() if _MANIFEST.fullmatch(p.name))
    on_disk = _payload_files(bag)
    tags = _tag_files(bag)
    payload_manifests: dict[str, dict[str, str]] = {}
    tag_manifests: dict[str, dict[str, str]] = {}
    for name in names:
        match = _MANIFEST.fullmatch(name)
        assert match is not None
        algorithm = match.group(2)
        if algorithm not in ALGORITHMS:
            raise UnsupportedError(f"{bag / name}: checksum algorithm {algorithm} is not one of {', '.join(ALGORITHMS)}")
        # a manifest lists files that are there; one more is said missing below, so no more than one is read
        most = (tags if match.group(1) else len(on_disk)) + 1
        entries = _read_manifest(bag, name, algorithm, percent=percent, encoding=encoding, most=most)
        (tag_manifests if match.group(1) else payload_manifests)[algorithm] = entries
    if not payload_manifests:
        raise IntegrityError(f"{bag} is not a complete bag: it has no payload manifest (manifest-<algorithm>.txt)")
    if (bag / "fetch.txt").is_file():
        for number, line in _tag_lines(bag, "fetch.txt", encoding):
            if line.strip():
                raise UnsupportedError(
                    f"{bag / 'fetch.txt'} line {number} lists a file to fetch ({line.strip()[:200]}): pdi imports"
                    " only complete bags (RFC 8493 §2.2.3); fetch its files and remove fetch.txt"
                )
    disk = _by_normal_form(on_disk, f"{bag}'s payload folder")  # each file's name in NFC → its name on the disk
    named: dict[str, dict[str, str]] = {}  # each manifest's checksums by the NFC of the names it lists
    listed: dict[str, str] = {}  # every name the manifests list, by its NFC, as the first one spells it
    for algorithm, entries in payload_manifests.items():
        spelled = _by_normal_form(entries, f"manifest-{algorithm}.txt")
        named[algorithm] = {key: entries[path] for key, path in spelled.items()}
        unlisted = set(disk) - set(spelled)
        if unlisted:
            raise IntegrityError(
                f"payload files not in manifest-{algorithm}.txt: {', '.join(sorted(disk[k] for k in unlisted)[:20])}"
            )
        for key, path in spelled.items():
            listed.setdefault(key, path)
    for key, path in sorted(listed.items(), key=lambda item: item[1]):
        if key not in disk:
            raise IntegrityError(f"{bag} is incomplete: {path} is missing")
    payload: dict[str, str] = {}
    octets = 0
    files: dict[str, str] = {}
    for key in sorted(listed, key=lambda k: listed[k]):
        path = listed[key]  # as the manifest spells it: the name the bag gives it, wherever it was copied
        file = bag / disk[key]
        if disk[key] != path:
            files[path] = disk[key]
        wanted = {algorithm for algorithm, checksums in named.items() if key in checksums}
        if len(wanted) != len(payload_manifests):
            missing = sorted(set(payload_manifests) - wanted)
            raise IntegrityError(f"{path} in {bag} is not in manifest-{missing[0]}.txt")
        found = _hash_all(file, wanted)
        for algorithm in sorted(wanted):
            if found[algorithm] != named[algorithm][key]:
                raise IntegrityError(f"{path} in {bag} does not match its {_spelled(algorithm)} in the manifest")
        payload[path] = found["sha256"]
        octets += file.stat().st_size
    for algorithm, entries in tag_manifests.items():
        for path, checksum in entries.items():
            if path.startswith("data/"):
                raise ParseError(f"tagmanifest-{algorithm}.txt lists the payload file {path}", rule="manifest")
            file = bag / path
            # in the bag, its folders too: a link to a folder out of it had a stranger's guess there read and hashed
            if file.is_symlink() or not file.is_file() or bag.resolve() not in file.resolve().parents:
                raise IntegrityError(f"tag file {path} in {bag} is not a file of the bag (a link, a pipe or a folder,"
                                     " or in a linked folder): a tag manifest lists the bag's own tag files")
            if _hash_all(file, {algorithm})[algorithm] != checksum:
                raise IntegrityError(f"tag file {path} in {bag} does not match its {_spelled(algorithm)}")
    labels: list[tuple[str, str]] = []
    if (bag / "bag-info.txt").is_file():
        labels = _labels(bag, "bag-info.txt", encoding)
        for label, value in labels:
            if label == "Payload-Oxum" and _oxum(value) != (octets, len(payload)):
                raise IntegrityError(f"Payload-Oxum says {value}, the payload is {octets}.{len(payload)}")
    return BagInfo(payload, labels, version, files)
