"""The archive commands of ``pdi``, through click's runner and as the README's main job."""

from __future__ import annotations

import datetime
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import wave
from pathlib import Path

import click
import pytest
from archive_helpers import SRC
from click.testing import CliRunner, Result
from PIL import Image

from pdi.archive import Archive
from pdi.archive.store import SCHEMA_VERSION
from pdi.cli import cli
from support.pgcluster import TemporaryCluster
from support.stored_blobs import rewrite_every_blob

S = "archives.gov.us"
EXAMPLES = SRC.parent / "examples"


def run(location: str, *argv: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, [*argv, "--archive", location])
    assert result.exit_code == code, (argv, result.output, result.stderr, result.exception)
    return result


def test_archive_commands_end_to_end(location: str, tmp_path: Path) -> None:
    doc = tmp_path / "doc.txt"
    doc.write_bytes(b"first line\nsecond line\n")
    assert f"schema version {SCHEMA_VERSION}" in run(location, "init").stdout
    assert run(location, "series", "add", S).stdout == f"series {S}\n"
    assert run(location, "series", "add", "press.archives.gov.us").stdout == (
        "series press.archives.gov.us under archives.gov.us\n"
    )
    name = run(location, "add", str(doc), "--series", S).stdout.strip()
    assert name.startswith(f"urn:pdi://{S}/") and name.endswith("/1.text.1")
    assert run(location, "get", name).stdout_bytes == b"first line\nsecond line\n"  # as deposited
    assert run(location, "get", f"{name}#line=1,2").stdout_bytes == b"second line\r\n"
    out = tmp_path / "passage.txt"
    run(location, "get", f"{name}#char=0,5", "-o", str(out))
    assert out.read_bytes() == b"first"
    info = run(location, "get", name, "--info").stdout
    assert "media-type\ttext/plain\n" in info and "kept\texact\n" in info
    assert f"sha256\t{hashlib.sha256(doc.read_bytes()).hexdigest()}\n" in info

    html = tmp_path / "doc.html"
    html.write_bytes(b"<p>first line</p>")
    generic = name.rsplit(".", 2)[0]
    assert run(location, "version", name, str(html), "--add-format").stdout == (
        f"{generic}.html.1\n"
    )
    v2 = tmp_path / "v2.txt"
    v2.write_bytes(b"revised\n")
    assert run(location, "version", generic, str(v2)).stdout == f"{generic}.text.2\n"
    assert run(location, "get", f"{generic}.text", "--latest").stdout_bytes == b"revised\n"
    listing = run(location, "get", generic).stdout.splitlines()
    deposited = r"deposited \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"  # ISO 8601, UTC
    assert listing[0] == f"# {generic}" and len(listing) == 6
    assert re.fullmatch(f"# version 1, {deposited}", listing[1]) and re.fullmatch(f"# version 2, {deposited}", listing[4])
    assert [listing[2], listing[3], listing[5]] == [f"{generic}.html.1", f"{generic}.text.1", f"{generic}.text.2"]
    assert run(location, "get", generic, "--latest").stdout.splitlines()[1:] == [listing[4], listing[5]]
    assert run(location, "ls", S).stdout == (
        f"{generic}.html.1\n{generic}.text.1\n{generic}.text.2\n"
    )
    assert run(location, "ls", f"{generic}.text.*", "--limit", "1", "--offset", "1").stdout == (
        f"{generic}.text.2\n"
    )
    # a day's name cut short of its unique id: the pattern that lists the day is named, and it lists it
    day = generic.rsplit("/", 1)[0]
    said = run(location, "ls", day, code=1).stderr
    assert said.startswith(f"pdi: syntax error: {day} stops before the unique id") and f"pdi ls '{day}/*'" in said
    assert run(location, "ls", f"{day}/*").stdout == run(location, "ls", S).stdout

    run(location, "meta", name, "title=First", "creator=Me", "--who", "ann")
    stated = run(location, "meta", name, "title=Second", "--who", "bob")
    assert stated.stdout == "" and re.fullmatch(
        rf"stated title=Second about {re.escape(name)} \(by bob at \d{{4}}-\d\d-\d\dT[0-9:.]+Z\)\n", stated.stderr)
    assert run(location, "meta", name).stdout == "title\tSecond\ncreator\tMe\n"
    history = run(location, "meta", name, "--history").stdout.splitlines()
    assert [line.split("\t")[1:] for line in history] == [
        ["ann", "title", "First"], ["ann", "creator", "Me"], ["bob", "title", "Second"],
    ]
    assert "0 problems" in run(location, "verify").stdout
    cleaned = run(location, "verify", "--remove-unreferenced", "--older-than", "0").stdout
    assert "removed 0 unreferenced blobs and 0 temporary files\n" in cleaned and "0 problems" in cleaned

    bag = tmp_path / "bag"
    assert run(location, "export", str(bag)).stdout == f"exported 3 representations to {bag}\n"
    target = str(tmp_path / "target")
    run(target, "init")
    assert "imported 3 new representations" in run(target, "import", str(bag)).stdout
    assert run(target, "ls", S).stdout == run(location, "ls", S).stdout


def test_cite_prints_both_ends_and_fails_on_a_misplaced_quotation(location: str, tmp_path: Path) -> None:
    run(location, "init")
    run(location, "series", "add", S)
    source, page = tmp_path / "source.txt", tmp_path / "page.html"
    source.write_bytes(b"Hello, world.\n")
    page.write_bytes(b"<p>They said world.</p>")
    cited = run(location, "add", str(source), "--series", S).stdout.strip()
    citing = run(location, "add", str(page), "--series", S).stdout.strip()
    out = run(location, "cite", f"{citing}@13={cited}#char=7,13").stdout  # "<p>They said " is 13
    assert out == (
        f"citing\t{citing}\ncited\t{cited}#char=7,13\nposition\t13\n"
        'quote\t"world."\ncheck\tok: the quotation stands at char=13\n'
    )
    wrong = run(location, "cite", f"{citing}@3={cited}#char=7,13", "--json", code=3)
    assert '"check": "mismatch"' in wrong.stdout and '"found": "They s"' in wrong.stdout
    assert wrong.stderr.startswith("pdi: citation does not match: the quotation is not at 3 in ")
    assert wrong.stderr.count("\n") == 1
    # B not here: unchecked (exit 0) for a series this archive does not mint, not found (exit 4) for one it
    # mints, as pdi cite --help says (it said every B not in this archive was "unchecked")
    day = cited.split("/")[3:6]
    elsewhere = run(location, "cite", f"{citing}@13=urn:pdi://other.gov.fr/{'/'.join(day)}/1.text.1").stdout
    assert "check\tunchecked: the cited document is not here" in elsewhere
    run(location, "cite", f"{citing}@13={cited.replace('/1.text.1', '/99.text.1')}", code=4)
    said = " ".join(run(location, "cite", "--help").stdout.split())
    assert 'B of a series this archive does not mint: "unchecked"' in said
    assert "4 when A is not here" in said and "or B is of a series minted here but not here" in said


def test_get_info_says_which_region_or_samples_a_fragment_selects(location: str, tmp_path: Path) -> None:
    import io
    import wave

    from PIL import Image

    run(location, "init")
    run(location, "series", "add", S)

    picture, sound = tmp_path / "map.gif", tmp_path / "talk.wav"
    Image.new("P", (30, 20)).save(picture, format="GIF")
    with wave.open(str(sound), "wb") as w:
        w.setparams((2, 2, 1000, 0, "NONE", "not compressed"))
        w.writeframes(bytes(4 * 2500))
    gif = run(location, "add", str(picture), "--series", S).stdout.strip()
    assert gif.endswith(".gif.1")
    info = run(location, "get", f"{gif}#crop=(10,5),(40,15)", "--info").stdout
    assert "media-type\timage/png\n" in info and "clamped\ttrue\n" in info
    assert "region\t(10,5),(30,15) of frame 0 (1 frame of 30x20 pixels)\n" in info
    assert Image.open(io.BytesIO(run(location, "get", f"{gif}#crop=(10,5),(40,15)").stdout_bytes)).size == (20, 10)
    talk = run(location, "add", str(sound), "--series", S).stdout.strip()
    info = run(location, "get", f"{talk}#msec=500,1500", "--info").stdout
    assert "interval\tsample frames 500 to 1500 of 2500 (0.500 s to 1.500 s at 1000 Hz, 2 channels)\n" in info
    assert "bytes\t4044\n" in info  # a 44-octet WAV header and 1000 frames of 2 × 2 octets
    # the hash is of the stored recording, and says so
    assert "stored-bytes\t10044\n" in info and "\nstored-sha256\t" in info and "\nsha256\t" not in info
    page = tmp_path / "page.html"
    page.write_bytes(b"<p>one<p>two")
    html = run(location, "add", str(page), "--series", S).stdout.strip()
    info = run(location, "get", f"{html}#elt=1,1", "--info").stdout
    assert "range\tchar=6,12 (octets 6 to 12)\n" in info  # <html>, <head>, <body> are implied: <p> is 0


def test_verify_fails_with_exit_3_on_damage(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    doc = tmp_path / "x.png"
    doc.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    name = run(location, "add", str(doc), "--series", S).stdout.strip()
    assert rewrite_every_blob(tmp_path / "a", b"rot") == 1  # a small blob: its catalog row
    result = run(location, "verify", code=3)
    assert f"altered\t{name}\t" in result.stdout
    # one of each: every count agrees in number with its noun
    assert result.stdout.endswith("checked 1 representation in 1 blob: 1 problem\n")
    assert result.stderr == (
        "pdi: integrity check failed: verify found 1 problem (missing or altered blobs, or damage to the catalog)\n"
    )


def test_counts_agree_in_number(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    doc = tmp_path / "x.txt"
    doc.write_bytes(b"x")
    run(location, "add", str(doc), "--series", S)
    orphan = hashlib.sha256(b"left by a killed deposit").hexdigest()
    (tmp_path / "a" / "blobs" / orphan[:2]).mkdir(parents=True, exist_ok=True)
    (tmp_path / "a" / "blobs" / orphan[:2] / orphan).write_bytes(b"left by a killed deposit")
    assert run(location, "verify").stdout == (
        "note: 1 stored blob belongs to no name (left by interrupted deposits; harmless)\n"
        "checked 1 representation in 1 blob: 0 problems\n"
    )
    # touched just now: kept by --remove-unreferenced, and the note says why (a deposit may be under way)
    assert run(location, "verify", "--remove-unreferenced").stdout == (
        "removed 0 unreferenced blobs and 0 temporary files\n"
        "note: 1 stored blob belongs to no name (left by interrupted deposits; harmless); kept: touched within the"
        " last 3600 s (--older-than), perhaps a deposit under way\n"
        "checked 1 representation in 1 blob: 0 problems\n"
    )
    (tmp_path / "a" / "tmp" / "stale.1.2").write_bytes(b"half")
    assert run(location, "verify", "--remove-unreferenced", "--older-than", "0").stdout == (
        "removed 1 unreferenced blob and 1 temporary file\n"
        "checked 1 representation in 1 blob: 0 problems\n"
    )
    bag = tmp_path / "bag"
    assert run(location, "export", str(bag)).stdout == f"exported 1 representation to {bag}\n"
    target = str(tmp_path / "b")
    run(target, "init")
    assert run(target, "import", str(bag)).stdout.startswith("imported 1 new representation into ")


def test_get_says_when_a_fragment_was_clamped(tmp_path: Path) -> None:
    # PDI-GRAMMAR §3: a position past the end refers to the end, and the result
    # says it was clamped; the bytes alone cannot say so.
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    doc = tmp_path / "short.txt"
    doc.write_bytes(b"abc\n")
    name = run(location, "add", str(doc), "--series", S).stdout.strip()
    result = run(location, "get", f"{name}#char=2,99")
    assert result.stdout_bytes == b"c\r\n"
    assert result.stderr.count("\n") == 1 and "clamped" in result.stderr
    result = run(location, "get", f"{name}#char=0,2")
    assert (result.stdout_bytes, result.stderr) == (b"ab", "")


def test_errors_are_one_line_with_exit_codes(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    missing = run(location, "ls", code=4).stderr
    assert missing.startswith("pdi: not found: no archive at") and missing.count("\n") == 1
    assert "--archive, or PDI_ARCHIVE" in missing and "pdi init" in missing  # where to look, and how to make one
    run(location, "init")
    assert run(location, "series", "add", "nocountry", code=1).stderr.count("\n") == 1
    assert run(location, "get", "urn:pdi://a.us/2026/01/01/1.text.1", code=4).stderr.count(
        "\n"
    ) == 1
    assert run(location, "meta", "urn:pdi://a.us/2026/01/01/1.text.1", "novalue", code=1)
    doc = tmp_path / "noext"
    doc.write_bytes(b"x")
    assert "give --format" in run(location, "add", str(doc), "--series", S, code=2).stderr


def test_archive_location_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDI_ARCHIVE", str(tmp_path / "env-archive"))
    result = CliRunner().invoke(cli, ["init"])
    assert result.exit_code == 0
    assert (tmp_path / "env-archive" / "catalog.sqlite").exists()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PDI_ARCHIVE")
    assert CliRunner().invoke(cli, ["init"]).exit_code == 0
    assert (tmp_path / "pdi-archive" / "catalog.sqlite").exists()


def test_help_texts() -> None:
    for command in ("init", "series", "add", "version", "get", "ls", "meta", "verify",
                    "export", "import"):
        result = CliRunner().invoke(cli, [command, "--help"])
        assert result.exit_code == 0, command
        if command != "series":
            assert "--archive DIR|URL" in result.output, command


@pytest.mark.slow  # the whole demo as a user runs it: a minute; out of scripts/test --quick
def test_scripts_demo_runs_the_main_job(tmp_path: Path) -> None:
    # The README's first command, on the checkout under test (no set-up: the pdi on
    # PATH runs this tree's src), stopping before it serves.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pdi").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pdi "$@"\n')
    (bin_dir / "pdi").chmod(0o755)
    env = dict(
        os.environ, PYTHONPATH=str(SRC), PDI_SKIP_BOOTSTRAP="1",
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    )
    temporary = tmp_path / "tmp"  # where mktemp makes the demo's directory, kept with the archive in it
    temporary.mkdir()
    # A faked clock (libfaketime, Debian's faketime), so the names' date is known and no
    # midnight falls between two deposits: noon GMT on 22 November 2026, running on from there.
    faketime = shutil.which("faketime")
    assert faketime, "faketime is missing: scripts/bootstrap --dev installs Debian's faketime"
    result = subprocess.run(
        [faketime, "-f", "@2026-11-22 12:00:00", str(SRC.parent / "scripts" / "demo"), "--no-serve"],
        capture_output=True, text=True, env=dict(env, TZ="UTC", TMPDIR=str(temporary)), check=False, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    archive = Path(next(line for line in lines if line.startswith("archive: ")).split(None, 1)[1])
    assert archive.parent.parent == temporary and archive.name == "pdi-archive"
    names = dict(line.split(None, 1) for line in lines if line.startswith(("text ", "html ", "image ", "sound ", "capture ")))
    prefix = "urn:pdi://archives.gov.us/2026/11/22/"
    # The day's serials in deposit order, then the captured URL encapsulated (draft line 399).
    assert [names[k].strip() for k in ("text", "html", "image", "sound")] == [
        prefix + "1.text.1", prefix + "2.html.1", prefix + "3.png.1", prefix + "4.wav.1"
    ]
    assert re.fullmatch(re.escape(prefix) + r"http:%2F%2F127%2E0%2E0%2E1:\d+%2F\.related\.1", names["capture"].strip())
    # Line 5 (0-based) of examples/declaration.txt, and its first ten characters.
    assert "We hold these truths to be self-evident, that all men are created equal," in lines
    assert "In Congres" in lines
    assert '<blockquote id="quote">We hold these truths to be self-evident, that all men are created equal,' in lines
    # The image is cited as the viewer names a region (#rect=, the draft's scheme), its region printed;
    # the crop is the same 48x48 pixels of the seal's centre, cut out; the clip is the second half second.
    assert names["image"].strip() + "#rect=(24,24),(72,72)" in lines
    assert not any("#crop=" in line for line in lines if line.startswith("urn:pdi:"))
    fetched = Path(next(line for line in lines if line.startswith("fetched: ")).split(None, 1)[1])
    with Image.open(fetched / "crop.png") as crop:
        assert crop.size == (48, 48)
    with wave.open(str(fetched / "clip.wav")) as clip:  # 8000 Hz: [0.5 s, 1 s) is 4000 frames
        assert (clip.getframerate(), clip.getnframes()) == (8000, 4000)
    assert "check\tok" in result.stdout
    assert re.search(r"checked 5 representations in 5 blobs: 0 problems", result.stdout)
    # The archive it made is a real one: the text's bytes are there.
    with Archive.open(str(archive)) as opened:
        assert opened.get(prefix + "1.text.1#char=0,10").data == b"In Congres"


def test_unreachable_postgres_is_a_storage_error(pg_cluster: TemporaryCluster) -> None:
    url = pg_cluster.url("no_such_database")
    result = run(url, "init", code=8)
    assert result.stderr.startswith("pdi: storage error: cannot connect to postgresql://")
    assert result.stderr.count("\n") == 1
    assert run(url, "ls", code=8)


def test_a_database_that_does_not_exist_is_said_at_once_not_after_the_pools_wait(
    pg_cluster: TemporaryCluster,
) -> None:
    # The server answers, and says no: nothing to wait for. The pool alone would retry for its
    # whole wait (POOL_WAIT_SECONDS) before giving up; a person who mistyped a name should not wait.
    from pdi.archive.postgres import POOL_WAIT_SECONDS

    url = pg_cluster.url("no_such_database")
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["ls", "--archive", url])
    waited = time.monotonic() - started
    assert result.exit_code == 8
    assert 'database "no_such_database" does not exist' in result.output + result.stderr
    assert waited < POOL_WAIT_SECONDS / 3


def test_the_deposit_guides_commands_parse() -> None:
    # Every command line of the deposit reference's "Commands at a glance" names options its command has.
    guide = (SRC.parent / "docs" / "reference" / "deposit.md").read_text(encoding="utf-8")
    section = guide.split("## Commands at a glance", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    checked = 0
    for line in block.splitlines():
        # Drop the comment ("# …") and optional parts in brackets.
        words = shlex.split(re.sub(r"\[[^]]*\]", "", re.sub(r"\s+# .*", "", line)))
        assert words[0] == "pdi", line
        command: click.Command = cli
        args = words[1:]
        while isinstance(command, click.Group):
            sub = command.get_command(click.Context(command), args[0])
            assert sub is not None, line
            command, args = sub, args[1:]
        command.make_context(command.name, list(args), resilient_parsing=False)
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me:s3cret@127.0.0.1:1/pdi",
        "postgresql://me@127.0.0.1:1/pdi?password=s3cret",
        "postgres://me@127.0.0.1:1/pdi?sslmode=disable&password=s3cret&connect_timeout=1",
    ],
)
def test_a_password_in_the_url_is_never_printed(url: str) -> None:
    # The archive's location is shown without its password, wherever the URL
    # carries one (userinfo, or libpq's password= parameter).
    from pdi.archive.postgres import redact_url

    assert "s3cret" not in redact_url(url)
    assert redact_url(url).startswith(url.split(":", 1)[0] + "://me")
    result = CliRunner().invoke(cli, ["ls", "--archive", url])
    assert result.exit_code == 8
    assert "s3cret" not in result.output + result.stderr


def test_version_charset_applies_to_the_text_files(tmp_path: Path) -> None:
    # `--charset` is "the charset of the text files": an image beside them has none.
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    text, image = tmp_path / "notes.txt", tmp_path / "scan.gif"
    text.write_bytes(b"caf\xe9\n")
    image.write_bytes(b"GIF89a")
    name = run(location, "add", str(text), "-s", S, "--charset", "latin-1").stdout.strip()
    generic = name.rsplit(".", 2)[0]
    out = run(location, "version", name, str(text), str(image), "--charset", "latin-1").stdout
    assert out == f"{generic}.text.2\n{generic}.gif.2\n"
    assert run(location, "get", f"{generic}.text.2").stdout_bytes == b"caf\xe9\n"


def test_a_compressed_file_is_not_guessed_as_what_it_contains(tmp_path: Path) -> None:
    # notes.txt.gz holds gzip bytes, not text: its format is gzip (application/gzip),
    # and its bytes are deposited unchanged.
    import gzip

    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    packed = tmp_path / "notes.txt.gz"
    packed.write_bytes(gzip.compress(b"caf\xe9\n", mtime=0))
    name = run(location, "add", str(packed), "-s", S).stdout.strip()
    assert name.endswith("/1.gzip.1")
    assert run(location, "get", name).stdout_bytes == packed.read_bytes()
    odd = tmp_path / "notes.txt.Z"
    odd.write_bytes(b"\x1f\x9d")
    assert "give --format" in run(location, "add", str(odd), "-s", S, code=2).stderr


def test_a_saved_web_page_is_stored_as_the_aggregate_capture_stores(tmp_path: Path) -> None:
    # RFC 2557: an .mht/.mhtml file is a multipart/related aggregate, format token
    # "related" (the unique minor type), the same token `pdi capture` deposits with.
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    for name in ("page.mht", "Page.MHTML"):
        page = tmp_path / name
        page.write_bytes(b'Content-Type: multipart/related; boundary="b"\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n'
                         b"<p>hi</p>\r\n--b--\r\n")
        minted = run(location, "add", str(page), "-s", S).stdout.strip()
        assert minted.endswith(".related.1")
        assert run(location, "get", minted).stdout_bytes == page.read_bytes()


# --- content checked; identical deposits ------------------------------------------------------


def _png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (2, 2), (0, 128, 255)).save(out, "PNG")
    return out.getvalue()


def test_add_refuses_a_png_named_jpg_unless_forced(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    report = tmp_path / "report.jpg"  # .jpg is image/jpeg, whose token is image+jpeg
    report.write_bytes(_png())
    refused = run(location, "add", str(report), "-s", S, code=3)
    assert refused.stdout == ""
    assert refused.stderr == (
        f"pdi: format check failed: {report}: the content is image/png (PNG image data),"
        " but it was declared image/jpeg (pdi's format token image+jpeg); give --format png, or --force"
        " to deposit it as declared\n"
    )
    assert run(location, "ls", S).stdout == ""
    png = run(location, "add", str(report), "-s", S, "--format", "png").stdout.strip()
    assert png.endswith("/1.png.1")
    forced = run(location, "add", str(report), "-s", S, "--force").stdout.strip()
    assert forced.endswith("/2.image+jpeg.1")
    assert run(location, "get", forced).stdout_bytes == report.read_bytes()


def test_add_and_version_refuse_utf8_declared_latin1_unless_forced(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    notes = tmp_path / "notes.txt"
    notes.write_bytes("naïve\n".encode())  # ï is C3 AF, at byte 2
    refused = run(location, "add", str(notes), "-s", S, "--charset", "latin-1", code=3)
    assert refused.stderr.startswith(f"pdi: charset check failed: {notes}: the text is UTF-8 (its first multi-byte"
                                     " character, 'ï' U+00EF, is the bytes C3 AF at byte 2)")
    assert "give --charset utf-8, or --force" in refused.stderr
    name = run(location, "add", str(notes), "-s", S).stdout.strip()
    run(location, "version", name, str(notes), "--charset", "latin-1", code=3)
    forced = run(location, "version", name, str(notes), "--charset", "latin-1", "--force").stdout.strip()
    assert forced.endswith(".text.2")
    assert run(location, "get", forced).stdout_bytes.decode("latin-1") == "naÃ¯ve\n"
    # Standard input is named so in the message.
    stdin = CliRunner().invoke(cli, ["add", "-", "-s", S, "--format", "text", "--charset", "latin-1",
                                     "--archive", location], input="naïve\n".encode())
    assert stdin.exit_code == 3 and stdin.stderr.startswith("pdi: charset check failed: standard input: the text is UTF-8")


def test_version_with_the_same_bytes_answers_with_the_existing_names(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    text, html = tmp_path / "r.txt", tmp_path / "r.html"
    text.write_bytes(b"one\ntwo\n")
    html.write_bytes(b"<p>one two</p>")
    name = run(location, "add", str(text), "-s", S).stdout.strip()
    generic = name.rsplit(".", 2)[0]
    v2 = run(location, "version", name, str(text), str(html)).stdout
    assert v2 == f"{generic}.text.2\n{generic}.html.2\n"
    again = run(location, "version", name, str(text), str(html))
    assert again.stdout == v2
    assert again.stderr == (
        f"unchanged: version 2 of {generic} already holds these bytes; nothing was deposited"
        " (--force deposits them as a new version)\n"
    )
    forced = run(location, "version", name, str(text), str(html), "--force")
    assert forced.stdout == f"{generic}.text.3\n{generic}.html.3\n" and forced.stderr == ""
    assert run(location, "get", generic + ".text", "--latest").stdout_bytes == b"one\ntwo\n"
    # CRLF line endings are other octets: a new version, kept as deposited
    text.write_bytes(b"one\r\ntwo\r\n")
    crlf = run(location, "version", name, str(text), str(html)).stdout
    assert crlf == f"{generic}.text.4\n{generic}.html.4\n"
    assert run(location, "get", generic + ".text.4").stdout_bytes == b"one\r\ntwo\r\n"


def test_add_with_an_id_already_minted_today(tmp_path: Path, one_gmt_day: datetime.datetime) -> None:
    # "today" the same for each command (a deposit after midnight would mint a new name)
    location = str(tmp_path / "a")
    run(location, "init")
    run(location, "series", "add", S)
    doc = tmp_path / "doc.txt"
    doc.write_bytes(b"the decision\n")
    first = run(location, "add", str(doc), "-s", S, "--id", "decision-7")
    name = first.stdout.strip()
    assert name.endswith("/decision-7.text.1") and first.stderr == ""
    again = run(location, "add", str(doc), "-s", S, "--id", "decision-7")
    assert again.stdout == f"{name}\n"
    assert again.stderr.startswith(f"unchanged: version 1 of {name.rsplit('.', 2)[0]} already holds")
    assert "pdi version --force" in again.stderr
    # Other bytes under a name minted today: an immutability conflict, as before.
    doc.write_bytes(b"another decision\n")
    refused = run(location, "add", str(doc), "-s", S, "--id", "decision-7", code=5)
    generic = name.removesuffix(".text.1")  # the name as it is cited: urn:pdi://…/decision-7
    assert refused.stderr.startswith(f"pdi: immutability conflict: {generic} is already minted; deposit a new version"
                                     " of it instead ("), refused.stderr
    assert run(location, "ls", S).stdout == f"{name}\n"
    # the command it gives is one that works: it deposits the file as the name's next version
    advice = re.search(r"\((pdi version .*) deposits them as its next version\)$", refused.stderr.strip())
    assert advice is not None, refused.stderr
    argv = shlex.split(advice.group(1))
    assert argv == ["pdi", "version", generic, str(doc)]
    assert run(location, *argv[1:]).stdout == f"{generic}.text.2\n"
    assert run(location, "get", f"{generic}.text.2").stdout_bytes == b"another decision\n"


def test_add_warns_when_the_same_octets_already_have_a_name_of_the_day(
    location: str, tmp_path: Path, one_gmt_day: datetime.datetime
) -> None:
    # Running the tour twice mints a second permanent name for the same file: said on stderr, not refused.
    run(location, "init")
    run(location, "series", "add", S)
    run(location, "series", "add", "library.example.gb")
    text = tmp_path / "declaration.txt"
    text.write_bytes((EXAMPLES / "declaration.txt").read_bytes())
    first = run(location, "add", str(text), "-s", S)
    assert first.stderr == ""
    again = run(location, "add", str(text), "-s", S)  # exit 0: a deposit, as asked
    name1, name2 = first.stdout.strip(), again.stdout.strip()
    assert (name1.endswith("/1.text.1"), name2.endswith("/2.text.1")) == (True, True)
    assert again.stderr == (
        f"warning: {name1} already holds these octets (deposited today); {name2} is a second permanent name"
        " for them (every pdi add mints a name, never taken back; with --id ID, adding the same file again"
        " mints nothing new)\n"
    )
    assert run(location, "get", name2).stdout_bytes == text.read_bytes()
    # the same octets under another format name it too (the first name in listing order, without --id's advice)
    named = run(location, "add", str(text), "-s", S, "--format", "octet-stream", "--id", "copy")
    assert named.stderr == (
        f"warning: {name1} already holds these octets (deposited today); {named.stdout.strip()} is a second"
        " permanent name for them (every pdi add mints a name, never taken back)\n"
    )
    # other octets, or another series: nothing to say
    other = tmp_path / "other.txt"
    other.write_bytes(b"Other words.\n")
    assert run(location, "add", str(other), "-s", S).stderr == ""
    assert run(location, "add", str(text), "-s", "library.example.gb").stderr == ""


def test_pdi_init_where_a_file_stands_says_it_is_a_file(tmp_path: Path) -> None:
    """``pdi init`` where ``pdi-archive`` (or a folder above it) is a file said errno's words, ``[Errno 17] File
    exists``, as if the archive were there: it names the file, and that it is no folder; nothing is made, the file
    is left as it was."""
    for where, blocking in (("pdi-archive", "pdi-archive"), ("notes.txt/archive", "notes.txt")):
        (tmp_path / blocking).write_bytes(b"a note\n")
        location = str(tmp_path / where)
        refused = CliRunner().invoke(cli, ["init", location])
        assert refused.exit_code == 8, refused.output
        assert refused.stderr == (f"pdi: storage error: cannot create archive directory {location}:"
                                  f" {tmp_path / blocking} is a file, not a folder (give the archive another place:"
                                  " pdi init DIR)\n")
        assert (tmp_path / blocking).read_bytes() == b"a note\n"


def test_pdi_init_given_two_archives_makes_neither(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pdi init --archive x y`` made ``y`` and said nothing of ``x``, which a later ``pdi add --archive x`` then
    did not find: a usage error (exit 2) naming both, nothing made. The same one twice is one; ``$PDI_ARCHIVE``, a
    default, gives way to DIR as before."""
    x, y = tmp_path / "x", tmp_path / "y"
    refused = CliRunner().invoke(cli, ["init", "--archive", str(x), str(y)])
    assert refused.exit_code == 2, refused.output
    assert f"Error: two archives given, {y} and --archive {x}: give one of them" in refused.stderr
    assert not x.exists() and not y.exists()
    made = CliRunner().invoke(cli, ["init", str(x), "--archive", str(x)])
    assert (made.exit_code, made.stdout) == (0, f"archive at {x} (schema version {SCHEMA_VERSION})\n")
    monkeypatch.setenv("PDI_ARCHIVE", str(x))
    made = CliRunner().invoke(cli, ["init", str(y)])
    assert (made.exit_code, made.stdout) == (0, f"archive at {y} (schema version {SCHEMA_VERSION})\n")
    assert (y / "catalog.sqlite").is_file()


def test_pdi_init_says_whether_it_made_the_archive_or_found_it_there(tmp_path: Path) -> None:
    location = str(tmp_path / "a")
    made = run(location, "init")
    assert made.stdout == f"archive at {location} (schema version {SCHEMA_VERSION})\n" and made.stderr == ""
    catalog = Path(location) / "catalog.sqlite"
    octets = catalog.read_bytes()
    again = run(location, "init")
    assert again.stdout == made.stdout  # the line scripts read, as ever
    assert again.stderr == "note: the archive was there already: left as it was\n"
    assert catalog.read_bytes() == octets  # and it was
