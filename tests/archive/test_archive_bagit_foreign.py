"""Bags other tools made (BagIt, RFC 8493): bagit-python's bags import as new documents; pdi's exports satisfy its validator.

The bags are made here by bagit-python (``bagit.make_bag``), the Library of
Congress's reference implementation, and pdi's exports are checked by its
validator (``bagit.Bag(...).validate()``): the oracle is the other tool,
never pdi's own reading of a bag.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import bagit
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi.archive import Archive
from pdi.archive.bagit import MAX_TAG_LINE_BYTES
from pdi.archive.bagit.manifests import MAX_BLANK_TAG_LINES, _tag_lines, validate_bag
from pdi.errors import (
    ImmutabilityError,
    IntegrityError,
    LimitError,
    NotFoundError,
    ParseError,
    UnsupportedError,
)
from pdi.identifier import PDI
from peak_memory import run_with_peak

S = "library.example.us"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(40))
FILES = {
    "readme.txt": b"hello, bag\n",
    "images/pic.png": PNG,
    "notes/caf\u00e9 menu.txt": "caf\u00e9 au lait\n".encode(),
    "report.pdf": b"not a PDF at all\n",  # its name says PDF, its bytes do not: kept as octets
    "2024": b"a file whose name is all digits\n",
}
INFO = {"Source-Organization": "Example Library", "Contact-Name": ["A. Person", "B. Person"],
        "External-Description": "a test bag"}


def _bag(folder: Path, checksums: list[str] | None = None, files: dict[str, bytes] | None = None) -> Path:
    folder.mkdir()
    for name, data in (files or FILES).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    bagit.make_bag(str(folder), dict(INFO), checksums=checksums or ["sha256", "sha512"])
    bagit.Bag(str(folder)).validate()  # bagit-python's own verdict: a valid bag
    return folder


def _snapshot(archive: Archive) -> object:
    store = archive.store
    return list(store.iter_representations()), store.assertions(), sorted(store.blob_names())


def _refused_alike(archive: Archive, bag: Path, theirs: type[Exception] | tuple[type[Exception], ...],
                   ours: type[Exception], match: str) -> None:
    """bagit-python refuses ``bag`` (``theirs``), and so does pdi's import (``ours``, ``match``), depositing nothing."""
    with pytest.raises(theirs):
        bagit.Bag(str(bag)).validate()
    before = _snapshot(archive)
    with pytest.raises(ours, match=match):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    opened = Archive.init(tmp_path / "archive")
    opened.add_series(S)
    return opened


@pytest.mark.parametrize("checksums", [["md5"], ["sha1"], ["sha256"], ["sha512"], ["md5", "sha1", "sha256", "sha512"]])
def test_a_bag_bagit_python_made_imports_its_payload_as_documents(archive: Archive, tmp_path: Path, checksums: list[str]) -> None:
    bag = _bag(tmp_path / "bag", checksums)
    told: list[tuple[PDI, str]] = []
    assert archive.import_bag(bag, series=S, deposited=lambda name, path: told.append((name, path))) == len(FILES)
    assert sorted(path for _, path in told) == sorted(f"data/{name}" for name in FILES)
    for name, path in told:
        data = FILES[path.removeprefix("data/")]
        assert archive.get(name).data == data
        meta = archive.meta(name)
        assert meta["bagit:path"] == path
        assert meta["bag-info:Source-Organization"] == "Example Library"
        assert meta["bag-info:Contact-Name"] == "A. Person\nB. Person"
        assert meta["bag-info:Payload-Oxum"] == f"{sum(map(len, FILES.values()))}.{len(FILES)}"
        assert meta["bag-info:Bag-Software-Agent"].startswith("bagit.py")
    by_path = {path: name for name, path in told}
    day = archive.now().date()
    assert by_path["data/readme.txt"] == PDI.build(series=S, date=day, foreign_id="readme.txt", format="text", version=1)
    assert by_path["data/images/pic.png"] == PDI.build(series=S, date=day, foreign_id="images/pic.png", format="png", version=1)
    assert by_path["data/report.pdf"].format == "octet-stream"  # its bytes contradict its name
    assert by_path["data/2024"].unique_id == "1"  # all digits cannot be a foreign id: a daily serial
    # a name is minted once: the same bag again the same day is refused, naming the file, and changes nothing
    before = _snapshot(archive)
    with pytest.raises(ImmutabilityError, match=r"data/\S+ in .*bag: .*already minted"):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before


def test_a_name_with_a_line_feed_is_unescaped(archive: Archive, tmp_path: Path) -> None:
    # RFC 8493 §2.1.3: a LF in a path is written %0A in a manifest (bagit-python does so in every version).
    bag = _bag(tmp_path / "bag", ["sha256"], {"two\nlines.txt": b"two\nlines\n"})
    assert "data/two%0Alines.txt" in (bag / "manifest-sha256.txt").read_text()
    (name,) = _names(archive, bag)
    assert archive.get(name).data == b"two\nlines\n" and archive.meta(name)["bagit:path"] == "data/two\nlines.txt"


def test_a_bagit_1_0_manifest_escapes_percent(archive: Archive, tmp_path: Path) -> None:
    # RFC 8493 §2.1.3: in a 1.0 bag a % in a path is written %25. bagit-python does not write or read that
    # escape, so this bag, made by it, is changed by hand to what the RFC asks (and checked by the RFC alone).
    bag = _bag(tmp_path / "bag", ["sha256"], {"100% pure.txt": b"pure\n"})
    (bag / "bagit.txt").write_text("BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
    manifest = (bag / "manifest-sha256.txt").read_text()
    (bag / "manifest-sha256.txt").write_text(manifest.replace("100% pure", "100%25 pure"))
    for tag in bag.glob("tagmanifest-*.txt"):
        tag.unlink()
    (name,) = _names(archive, bag)
    assert archive.get(name).data == b"pure\n" and archive.meta(name)["bagit:path"] == "data/100% pure.txt"


def _names(archive: Archive, bag: Path) -> list[PDI]:
    told: list[PDI] = []
    archive.import_bag(bag, series=S, deposited=lambda name, _: told.append(name))
    return told


def test_a_payload_file_that_does_not_match_its_manifest_is_named_and_nothing_is_deposited(archive: Archive, tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["md5", "sha512"])
    (bag / "data" / "readme.txt").write_bytes(b"hello, altered\n")
    _refused_alike(archive, bag, bagit.BagValidationError, IntegrityError,
                   r"data/readme\.txt in .* does not match its (MD5|SHA-512) in the manifest")


@pytest.mark.parametrize("damage", ["missing", "stray", "tag", "oxum"])
def test_other_damage_is_refused_and_deposits_nothing(archive: Archive, tmp_path: Path, damage: str) -> None:
    bag = _bag(tmp_path / "bag")
    if damage == "missing":
        (bag / "data" / "readme.txt").unlink()
        expected = "data/readme.txt is missing"
    elif damage == "stray":
        (bag / "data" / "stray.txt").write_bytes(b"not in the manifests")
        expected = "payload files not in manifest-sha256.txt: data/stray.txt"
    elif damage == "tag":
        with (bag / "bag-info.txt").open("a") as info:
            info.write("Added-Later: yes\n")
        expected = "tag file bag-info.txt in .* does not match its SHA-"
    else:
        text = (bag / "bag-info.txt").read_text().replace("Payload-Oxum: ", "Payload-Oxum: 1")
        (bag / "bag-info.txt").write_text(text)
        for tag in bag.glob("tagmanifest-*.txt"):
            tag.unlink()
        expected = "Payload-Oxum says 1"
    _refused_alike(archive, bag, bagit.BagError, IntegrityError, expected)


def test_fetch_txt_is_refused_unless_empty(archive: Archive, tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"])
    (bag / "fetch.txt").write_text("")
    assert archive.import_bag(bag, series=S) == len(FILES)
    other = _bag(tmp_path / "other", ["sha256"], {"a.txt": b"a\n"})
    (other / "fetch.txt").write_text("https://example.org/b.txt 2 data/b.txt\n")
    before = _snapshot(archive)
    with pytest.raises(UnsupportedError, match=r"fetch\.txt line 1 lists a file to fetch .*only complete bags"):
        archive.import_bag(other, series=S)
    assert _snapshot(archive) == before


def test_a_payload_symlink_is_refused(archive: Archive, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"not in the bag\n")
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n"})
    os.symlink(outside, bag / "data" / "link.txt")
    line = f"{hashlib.sha256(outside.read_bytes()).hexdigest()}  data/link.txt\n"
    with (bag / "manifest-sha256.txt").open("a") as manifest:
        manifest.write(line)
    for tag in bag.glob("tagmanifest-*.txt"):
        tag.unlink()
    with pytest.raises(IntegrityError, match=r"data/link\.txt in .* is a symbolic link"):
        archive.import_bag(bag, series=S)


def test_a_manifest_path_outside_the_bag_is_refused(archive: Archive, tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n"})
    with (bag / "manifest-sha256.txt").open("a") as manifest:
        manifest.write(f"{'0' * 64}  data/../../etc/passwd\n")
    with pytest.raises(ParseError, match="names a path outside the bag"):
        archive.import_bag(bag, series=S)


def _edited_manifest(bag: Path, edit: Callable[[list[str]], list[str]]) -> None:
    """manifest-sha256.txt's lines changed by ``edit``, the tag manifests (which hold its checksum) dropped."""
    manifest = bag / "manifest-sha256.txt"
    manifest.write_text("".join(line + "\n" for line in edit(manifest.read_text("utf-8").splitlines())), "utf-8")
    for tag in bag.glob("tagmanifest-*.txt"):
        tag.unlink()


def test_a_manifest_path_spelled_with_dot_segments_is_read_as_bagit_python_reads_it(
    archive: Archive, tmp_path: Path,
) -> None:
    # "./data/a.txt" (as `find . -type f | xargs sha256sum` writes it) is a path relative to the bag's base directory:
    # RFC 8493 §2.1.3 says no more of how it is spelled, and bagit-python reads it as data/a.txt
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n", "b/c.txt": b"c\n"})
    _edited_manifest(bag, lambda lines: [line.replace("  data/", "  ./data/").replace("data/b/", "data/./b/")
                                         for line in lines])
    assert "./data/a.txt" in (bag / "manifest-sha256.txt").read_text("utf-8")
    bagit.Bag(str(bag)).validate()
    assert sorted(validate_bag(bag).payload) == ["data/a.txt", "data/b/c.txt"]
    # listed twice under two spellings is listed twice
    _edited_manifest(bag, lambda lines: [*lines, lines[0].replace("./data/", "data/")])
    with pytest.raises(ParseError, match=r"manifest-sha256\.txt line 3 lists data/\S+ a second time"):
        validate_bag(bag)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        # RFC 8493 has no comment lines; bagit-python skips them
        (lambda lines: ["# made by hand", *lines], r"manifest-sha256\.txt line 1 begins with '#': RFC 8493 §2\.1\.3"
                                                   r" has no comment lines"),
        (lambda lines: [*lines, "  # a note"], r"manifest-sha256\.txt line 2 begins with '#'"),
        # md5sum's binary-mode "*": bagit-python strips it; the RFC's path is what follows the white space
        (lambda lines: [line.replace("  data/", " *data/") for line in lines],
         r"manifest-sha256\.txt line 1 names \*data/a\.txt: a '\*' before the path is md5sum's binary-mode mark"),
    ],
)
def test_what_rfc_8493_has_no_room_for_in_a_manifest_is_refused_naming_the_manifest_and_line(
    archive: Archive, tmp_path: Path, edit: Callable[[list[str]], list[str]], said: str,
) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n"})
    _edited_manifest(bag, edit)
    bagit.Bag(str(bag)).validate()  # bagit-python takes it: it is liberal where the RFC is not silent
    before = _snapshot(archive)
    with pytest.raises(ParseError, match=said):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before


def test_a_tag_manifest_path_with_md5sums_star_is_refused_naming_it(archive: Archive, tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n"})
    tags = bag / "tagmanifest-sha256.txt"
    tags.write_text(tags.read_text("utf-8").replace(" bagit.txt", " *bagit.txt"), "utf-8")
    bagit.Bag(str(bag)).validate()
    with pytest.raises(ParseError, match=r"tagmanifest-sha256\.txt line \d+ names \*bagit\.txt: a '\*'"):
        validate_bag(bag)


def test_a_manifest_path_with_an_empty_segment_is_refused_naming_the_line(archive: Archive, tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n"})
    _edited_manifest(bag, lambda lines: [line.replace("data/", "data//") for line in lines])
    with pytest.raises(ParseError, match=r"manifest-sha256\.txt line 1 names no file"):
        validate_bag(bag)


def test_a_pdi_export_validates_with_bagit_python(archive: Archive, tmp_path: Path) -> None:
    archive.add(S, b"some text\n", format="text")
    archive.add(S, PNG, format="png", foreign_id="pic")
    archive.export_bag(tmp_path / "export")
    bag = bagit.Bag(str(tmp_path / "export"))
    bag.validate()  # raises BagValidationError on any fault
    assert bag.is_valid() and sorted(bag.algorithms) == ["sha256"]
    # and a pdi export given a series is refused: it carries its own
    with pytest.raises(UnsupportedError, match="carries its own series"):
        archive.import_bag(tmp_path / "export", series=S)


def test_not_a_bag_is_not_found(archive: Archive, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"no bagit\.txt"):
        archive.import_bag(tmp_path, series=S)


# --- the command, and a bag that would exhaust a careless reader ---------------------------


def _pdi(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pdi", *argv], capture_output=True, text=True, timeout=300, check=False)


def test_the_command_imports_a_foreign_bag_with_a_series_only(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    Archive.init(location).add_series(S)
    bag = _bag(tmp_path / "bag", ["sha512"])
    refused = _pdi("import", str(bag), "--archive", str(location))
    assert refused.returncode == 2 and "needs --series S" in refused.stderr
    done = _pdi("import", str(bag), "--series", S, "--archive", str(location))
    assert done.returncode == 0, done.stderr
    names = [PDI.parse(line) for line in done.stdout.split()]
    assert len(names) == len(FILES) and all(n.series_name == S for n in names)
    assert f"imported {len(FILES)} new documents" in done.stderr


def test_a_manifest_line_of_100_mb_is_refused_fast_in_little_memory(tmp_path: Path) -> None:
    location = tmp_path / "archive"
    Archive.init(location).add_series(S)
    bag = _bag(tmp_path / "bag", ["sha256"], {"a.txt": b"a\n"})
    with (bag / "manifest-sha256.txt").open("r+b") as manifest:
        manifest.seek(0, os.SEEK_END)
        manifest.truncate(manifest.tell() + 100_000_000)  # 100 MB of zeros, sparse: a few KB on disk
    with tempfile.TemporaryFile() as err:
        began = time.monotonic()
        code, peak_kib, _ = run_with_peak([sys.executable, "-m", "pdi", "import", str(bag), "--series", S,
                                           "--archive", str(location)], stdout=subprocess.DEVNULL, stderr=err)
        spent = time.monotonic() - began
        err.seek(0)
        message = err.read().decode()
    assert code == LimitError.exit_code, message
    size = len(hashlib.sha256(b"a\n").hexdigest() + "  data/a.txt\n")  # the one real line before the zeros
    assert f"manifest-sha256.txt: line 2 (at byte {size}) is longer than {MAX_TAG_LINE_BYTES} bytes" in message
    assert spent < 30 and peak_kib / 1024 < 128, (spent, peak_kib)  # before: 254 MiB, reading the line whole


# --- the tag-file line reader: RFC 8493 §2, lines ended by LF, CR or CRLF ----------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=20), max_size=12),
       st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=12, max_size=12), st.booleans())
def test_tag_lines_split_as_universal_newlines(lines: list[str], ends: list[str], last_ended: bool) -> None:
    text = "".join(line + end for line, end in zip(lines, ends, strict=False))
    if lines and not last_ended:
        text = text[: -len(ends[len(lines) - 1])]
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "t.txt").write_bytes(text.encode())
        got = [line for _, line in _tag_lines(Path(folder), "t.txt")]
    assert got == [line.decode() for line in text.encode().splitlines()]  # bytes split at LF, CR, CRLF only


def test_a_crlf_across_the_read_boundary_is_one_line_end(tmp_path: Path) -> None:
    first = "x" * ((1 << 16) - 1)  # its CR is the last byte of the first read, its LF the first of the next
    (tmp_path / "t.txt").write_bytes(f"{first}\r\nsecond\r\n".encode())
    assert [line for _, line in _tag_lines(tmp_path, "t.txt")] == [first, "second"]


_NAME = st.text(st.characters(blacklist_characters="/\x00%", blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    # bagit-python strips the lines it reads and splits them where str.splitlines does (at \x0b, \x85 …, not
    # only where RFC 8493 §2 ends lines): names it cannot read back are left out (LF: test_a_name_with_a_line_feed…)
    lambda n: n not in (".", "..") and n == n.strip() and len(f"x{n}x".splitlines()) == 1 and len(n.encode()) < 200)


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.lists(_NAME, min_size=1, max_size=3).map("/".join), st.binary(max_size=64), min_size=1, max_size=4))
def test_any_names_bagit_python_writes_come_back_as_written(files: dict[str, bytes]) -> None:
    # bagit-python writes the manifests (escaping CR and LF); pdi reads them back to the same paths and bytes.
    paths = set(files)
    if any(other.startswith(path + "/") for path in paths for other in paths):
        return  # a name cannot be a file and a folder at once
    with tempfile.TemporaryDirectory() as folder:
        bag = _bag(Path(folder) / "bag", ["sha256"], files)
        with Archive.init(Path(folder) / "archive") as opened:
            opened.add_series(S)
            told: list[tuple[PDI, str]] = []
            opened.import_bag(bag, series=S, deposited=lambda name, path: told.append((name, path)))
            assert sorted(path for _, path in told) == sorted(f"data/{name}" for name in files)
            for name, path in told:
                assert opened.get(name).data == files[path.removeprefix("data/")]
                assert opened.meta(name)["bagit:path"] == path


@pytest.mark.parametrize("tag", ["bag-info.txt", "bagit.txt", "manifest-sha256.txt"])
def test_a_tag_file_linked_out_of_the_bag_is_refused(archive: Archive, tmp_path: Path, tag: str) -> None:
    """Found by an attack (2026-11-27): a bag-info.txt linked to /etc/passwd imported, each of its lines a
    statement kept for good. A tag file is a file of the bag, as a payload file is."""
    bag = _bag(tmp_path / "bag")
    for tag_manifest in bag.glob("tagmanifest-*.txt"):  # optional (RFC 8493 §2.2.1); with one, the link fails it
        tag_manifest.unlink()
    outside = tmp_path / "outside.txt"
    outside.write_bytes((bag / tag).read_bytes())  # the same lines: only the link is wrong
    (bag / tag).unlink()
    (bag / tag).symlink_to(outside)
    before = _snapshot(archive)
    with pytest.raises(IntegrityError, match=f"{tag} is not a file of the bag"):
        archive.import_bag(bag, series=S)
    assert _snapshot(archive) == before


def test_a_manifest_listing_more_files_than_the_bag_holds_is_refused_as_it_is_read(tmp_path: Path) -> None:
    """Found by an attack (2026-11-27): 4 million lines of a bag without payload took 1 GB and 19 s before the
    first missing file was said. A payload manifest lists the files under data/, and one more is already wrong."""
    bag = _bag(tmp_path / "bag", checksums=["sha256"])
    listed = (bag / "manifest-sha256.txt").read_bytes()
    extra = b"".join(b"%s  data/absent-%d\n" % (b"0" * 64, n) for n in range(2_000_000))
    (bag / "manifest-sha256.txt").write_bytes(listed + extra)
    code = ("import sys\nfrom pathlib import Path\nfrom pdi.archive.bagit.manifests import validate_bag\n"
            "from pdi.errors import IntegrityError\n"
            "try:\n    validate_bag(Path(sys.argv[1]))\nexcept IntegrityError as exc:\n    print(exc)\n")
    status, peak, out = run_with_peak([sys.executable, "-c", code, str(bag)], stdout=subprocess.PIPE)
    assert status == 0
    assert f"lists more than {len(FILES) + 1} files (line {len(FILES) + 2})" in out.decode(), out
    assert peak < 100 * 1024, f"peak {peak // 1024} MiB"


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.lists(_NAME, min_size=1, max_size=2).map("/".join), st.binary(max_size=16), min_size=1, max_size=3),
       st.lists(st.text(" \t", min_size=1, max_size=3), min_size=3, max_size=3))
def test_a_manifest_line_separated_by_any_spaces_and_tabs_reads_as_bagit_python_reads_it(
        files: dict[str, bytes], separators: list[str]) -> None:
    """RFC 8493 §2.1.3: ``checksum 1*WSP filepath``, WSP a space or a tab. A tab after the checksum and a space in
    the path had the line split at the path's space and refused, where bagit-python validates the bag."""
    paths = set(files)
    if any(other.startswith(path + "/") for path in paths for other in paths):
        return  # a name cannot be a file and a folder at once
    with tempfile.TemporaryDirectory() as folder:
        bag = _bag(Path(folder) / "bag", ["sha256"], files)
        for tag_manifest in bag.glob("tagmanifest-*.txt"):  # it names the manifest rewritten below
            tag_manifest.unlink()
        manifest = bag / "manifest-sha256.txt"
        lines = manifest.read_text(encoding="utf-8").splitlines()
        manifest.write_text("".join(f"{line.split('  ', 1)[0]}{separators[n]}{line.split('  ', 1)[1]}\n"
                                    for n, line in enumerate(lines)), encoding="utf-8")
        bagit.Bag(str(bag)).validate()  # the oracle: still a valid bag
        assert validate_bag(bag).payload == {f"data/{name}": hashlib.sha256(data).hexdigest()
                                             for name, data in files.items()}


def test_a_tab_then_a_path_with_a_space_is_one_manifest_entry(tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"], {"a b.txt": b"hi\n"})
    for tag_manifest in bag.glob("tagmanifest-*.txt"):
        tag_manifest.unlink()
    checksum = hashlib.sha256(b"hi\n").hexdigest()
    (bag / "manifest-sha256.txt").write_text(f"{checksum}\tdata/a b.txt\n")
    bagit.Bag(str(bag)).validate()
    assert validate_bag(bag).payload == {"data/a b.txt": checksum}


@pytest.mark.parametrize("blank", [b"\n", b" \r\n", b"\t\r"])
def test_a_manifest_padded_with_blank_lines_is_refused_fast(archive: Archive, tmp_path: Path, blank: bytes) -> None:
    """Blank lines are no entries, so the bound on a manifest's entries never stopped them: 64 MiB of line ends
    (no file is listed twice, none missing) were read a line at a time for two minutes. Past MAX_BLANK_TAG_LINES
    of them the manifest is refused, naming the line, and nothing is deposited."""
    bag = _bag(tmp_path / "bag", ["sha256"])
    for tag_manifest in bag.glob("tagmanifest-*.txt"):
        tag_manifest.unlink()
    with (bag / "manifest-sha256.txt").open("ab") as manifest:
        for _ in range(64):
            manifest.write(blank * ((1 << 20) // len(blank)))
    before = _snapshot(archive)
    started = time.monotonic()
    with pytest.raises(LimitError, match=rf"manifest-sha256.txt: line {len(FILES) + MAX_BLANK_TAG_LINES + 1} "):
        archive.import_bag(bag, series=S)
    assert time.monotonic() - started < 20
    assert _snapshot(archive) == before


def test_a_few_blank_lines_in_a_manifest_are_read_past(tmp_path: Path) -> None:
    bag = _bag(tmp_path / "bag", ["sha256"])
    for tag_manifest in bag.glob("tagmanifest-*.txt"):
        tag_manifest.unlink()
    manifest = bag / "manifest-sha256.txt"
    manifest.write_bytes(b"\n \n" + manifest.read_bytes().replace(b"\n", b"\n\r\n") + b"\t\n")
    bagit.Bag(str(bag)).validate()
    assert len(validate_bag(bag).payload) == len(FILES)


def _respelled(bag: Path, old: str, new: str) -> None:
    """The payload file ``old`` renamed ``new`` on the disk, the manifests unchanged (a copy to another file system)."""
    (bag / "data" / old).rename(bag / "data" / new)


@pytest.mark.parametrize("manifest_form, disk_form", [("NFC", "NFD"), ("NFD", "NFC")])
def test_a_name_the_disk_spells_in_another_unicode_form_is_the_manifests_file(
        archive: Archive, tmp_path: Path, manifest_form: str, disk_form: str) -> None:
    """A bag made where names are composed (NFC) and copied to macOS's HFS+ (which decomposes them, NFD), or the
    other way: bagit-python compares the manifest's names and the disk's in NFC, so the bag is valid; pdi imports
    it, each file under the name its manifest gives it, so that where the bag was copied changes no name. A
    manifest written NFD beside names the disk spells NFC is the same bag by that rule."""
    name = unicodedata.normalize(manifest_form, "caf\u00e9-r\u00e9sum\u00e9.txt")
    bag = _bag(tmp_path / "bag", ["sha256", "md5"], {name: b"au lait\n", "plain.txt": b"plain\n"})
    _respelled(bag, name, unicodedata.normalize(disk_form, name))
    assert not (bag / "data" / name).exists() or unicodedata.normalize(disk_form, name) == name
    if manifest_form == "NFC":  # the independent verdict: valid (bagit-python looks a manifest's name up among
        bagit.Bag(str(bag)).validate()  # the disk's by its NFC as written, so one written NFD it does not find)
    told: list[tuple[PDI, str]] = []
    assert archive.import_bag(bag, series=S, deposited=lambda pdi, path: told.append((pdi, path))) == 2
    assert sorted(path for _, path in told) == sorted([f"data/{name}", "data/plain.txt"])
    by_path = {path: pdi for pdi, path in told}
    assert archive.get(by_path[f"data/{name}"]).data == b"au lait\n"
    assert archive.meta(by_path[f"data/{name}"])["bagit:path"] == f"data/{name}"


def test_two_files_of_one_name_in_nfc_are_refused_naming_both(archive: Archive, tmp_path: Path) -> None:
    """Two payload files whose names differ only in their Unicode form are one name to a bag's tools: bagit-python
    refuses such a bag; so does pdi, naming both, and deposits nothing."""
    composed, decomposed = "\u00e9.txt", "e\u0301.txt"
    bag = _bag(tmp_path / "bag", ["sha256"], {composed: b"one\n"})
    (bag / "data" / decomposed).write_bytes(b"two\n")
    with (bag / "manifest-sha256.txt").open("a", encoding="utf-8") as manifest:
        manifest.write(f"{hashlib.sha256(b'two' + bytes([10])).hexdigest()}  data/{decomposed}\n")
    for tag in bag.glob("tagmanifest-*.txt"):
        tag.unlink()
    _refused_alike(archive, bag, bagit.BagError, IntegrityError,
                   r"holds both 'data/e\\u0301\.txt' and 'data/\\xe9\.txt', one name")


def _oxum_said(bag: Path, value: str) -> None:
    text = (bag / "bag-info.txt").read_text(encoding="utf-8")
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith("Payload-Oxum:")]
    (bag / "bag-info.txt").write_text("".join(kept) + f"Payload-Oxum: {value}\n", encoding="utf-8")
    for tag in bag.glob("tagmanifest-*.txt"):
        tag.unlink()


def test_a_payload_oxum_is_two_numbers_compared_as_numbers(archive: Archive, tmp_path: Path) -> None:
    """RFC 8493 §2.2.2: the Payload-Oxum is the payload's octet count, a period and its file count: numbers, so
    ``0012.02`` is 12 octets in 2 files (bagit-python reads it so); one that is not two numbers is refused."""
    files = {"a.txt": b"abcde\n", "b.txt": b"fghijk"}  # 12 octets, 2 files
    bag = _bag(tmp_path / "bag", ["sha256"], files)
    _oxum_said(bag, "0012.02")
    bagit.Bag(str(bag)).validate()
    assert archive.import_bag(bag, series=S) == 2
    for said in ("12.2.0", "twelve.2", "12"):
        other = _bag(tmp_path / f"bag-{len(said)}-{said[0]}", ["sha256"], files)
        _oxum_said(other, said)
        _refused_alike(archive, other, (bagit.BagError, ValueError), IntegrityError,
                       f"Payload-Oxum says {said}, the payload is 12.2")
