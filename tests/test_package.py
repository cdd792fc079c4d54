"""pdi as a package: ``python -m build`` makes its sdist and wheel, and ``pipx install`` runs the wheel.

Built from a copy of the checkout's build inputs (``pyproject.toml``,
``setup.py``, ``MANIFEST.in``, ``src/`` without compiled files) by the
``build`` front end with the dev environment's setuptools
(``--no-isolation``: nothing fetched). The wheel is made from the sdist, as
``python -m build`` does, and must equal the one made from the tree; it holds
every file of ``src/pdi`` (pdi reads its data with ``importlib.resources``:
the IANA registries, the vendored pdf.js) and the compiled text counter.
Built with ``CC=false`` (no C compiler), the build still succeeds, says why
the counter is missing, and the wheel counts text with numpy: the same counts
as the compiled counter and a plain count, on texts hypothesis makes.

The sdist holds the manual (``docs/``, ``mkdocs.yml``) and the wheel its text
(``pdi/data/docs/``: the pages, the deployment files, the specifications' texts),
the same octets as ``docs/``, which the installed ``pdi docs`` prints; every
page a ``--help`` text of the installed pdi names is there.

``pipx install`` (Debian's pipx, ``scripts/bootstrap --dev``) puts the wheel
in its own virtual environment with the dependencies from a wheelhouse of
``requirements/run.lock`` (``scripts/bootstrap --dev`` fills
``.venv/share/wheelhouse`` with ``pip wheel --require-hashes``; pip reads no
index here). The plain install has no PostgreSQL or S3 library, yet inits,
adds, gets and serves a SQLite archive, and names the extra to install when
asked for the others; ``pdi[postgres,s3]`` has them. ``pip install`` of the sdist and of the wheel into a new
virtual environment on a machine without a C compiler (``CC=false``) gives a ``pdi`` that inits, adds and gets.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings

import pdi
from pdi.fragments.text import counting
from pdi.fragments.text.charset import encoding_for
from pdi.fragments.text.counting import BlockCounter, count_blocks
from support.checkout import INSTALLED, ROOT
from test_cli_docs import DOCS, NAMED, PAGES
from test_text_counting import _cuts, blocked_texts, ref_counts

pytestmark = pytest.mark.slow

#: Wheels of every package requirements/run.lock pins (scripts/bootstrap --dev).
WHEELHOUSE = Path(os.environ.get("PDI_WHEELHOUSE") or Path(sys.prefix) / "share" / "wheelhouse")
#: What builds the sdist, besides src/.
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "CHANGELOG.md", "LICENSE", "mkdocs.yml")
#: The libraries of the extras: never in a plain install.
SERVER_LIBRARIES = ("psycopg", "psycopg_pool", "psycopg_binary", "boto3", "botocore", "s3transfer")
NO_COMPILER_WARNING = "WARNING: pdi: the compiled text counter pdi.fragments.text._count was not built"
NO_ENCODER_WARNING = "WARNING: pdi: the compiled MHTML encoder pdi.mhtml._encode was not built"
NO_FASTHEAD_WARNING = ("WARNING: pdi: the compiled request-head answerer pdi.server.process._fasthead was not"
                       " built")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would make a child use this checkout, this venv or pip's
    own configuration (the machine's indexes) instead of what it is given."""
    drop = ("PYTHON", "PIP_", "PIPX_", "PDI_", "VIRTUAL_ENV")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(drop)}, **extra}


def run(args: list[str | Path], *, env: dict[str, str] | None = None, check: bool = True,
        **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600,
                          env=env if env is not None else clean_env(), **kwargs)  # type: ignore[call-overload]
    if check:
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


def build(source: Path, out: Path, *what: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m build`` of ``source`` into ``out`` with this environment's build tools."""
    return run([sys.executable, "-m", "build", "--no-isolation", *what, "--outdir", out, source],
               env={**os.environ, **env})


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout's build inputs, without anything a build or an editable install left."""
    copy = tmp_path_factory.mktemp("tree")
    for name in BUILD_INPUTS:
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(ROOT / "src", copy / "src",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.py[cod]", "*.egg-info"))
    shutil.copytree(DOCS, copy / "docs", ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))
    return copy


@pytest.fixture(scope="module")
def dists(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sdist and the wheel made from it: ``python -m build`` with no option."""
    out = tmp_path_factory.mktemp("dist")
    build(tree, out)
    (sdist,) = out.glob("pdi-*.tar.gz")
    (wheel,) = out.glob("pdi-*.whl")
    return sdist, wheel


def members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_the_sdist_holds_what_builds_the_wheel_and_no_compiled_file(dists: tuple[Path, Path]) -> None:
    sdist, _ = dists
    with tarfile.open(sdist) as tf:
        names = {name.partition("/")[2] for name in tf.getnames()}
    shipped = {str(p.relative_to(ROOT)) for p in (ROOT / "src" / "pdi").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".so", ".pyc")}
    assert shipped <= names
    assert set(BUILD_INPUTS) <= names
    # the manual whole, its site's files too (mkdocs.yml builds it)
    manual = {str(p.relative_to(ROOT)) for p in DOCS.rglob("*")
              if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert {"docs/deploy/nginx.conf", "docs/how-to/operate.md", "docs/hooks.py"} <= manual <= names
    assert not [n for n in names if n.endswith((".so", ".pyc")) or n.startswith("tests/")]


def test_the_wheel_holds_every_file_of_src_pdi_and_the_compiled_counter(dists: tuple[Path, Path]) -> None:
    _, wheel = dists
    assert re.fullmatch(rf"pdi-{re.escape(pdi.__version__)}-cp3\d+-cp3\d+-linux_\w+\.whl", wheel.name)
    inside = members(wheel)
    for path in (ROOT / "src" / "pdi").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".so", ".pyc"):
            name = str(path.relative_to(ROOT / "src"))
            assert inside.get(name) == path.read_bytes(), f"{name} is not in the wheel as it is in src/"
    # the data pdi reads through importlib.resources, and the pdf.js files its manifest names
    pdfjs = json.loads(inside["pdi/data/pdfjs/MANIFEST.json"])
    for name, entry in pdfjs["files"].items():
        assert hashlib.sha256(inside[f"pdi/data/pdfjs/{name}"]).hexdigest() == entry["sha256"]
    assert [n for n in inside if re.fullmatch(r"pdi/fragments/text/_count\.cpython-3\d+-[\w-]+\.so", n)]
    assert [n for n in inside if re.fullmatch(r"pdi/mhtml/_encode\.cpython-3\d+-[\w-]+\.so", n)]
    assert [n for n in inside if re.fullmatch(r"pdi/server/process/_fasthead\.cpython-3\d+-[\w-]+\.so", n)]


def test_the_wheel_holds_the_manuals_text_as_docs_holds_it(dists: tuple[Path, Path]) -> None:
    """pdi docs reads the manual from the package: every page, deployment file and specification text of docs/,
    octet for octet."""
    _, wheel = dists
    inside = members(wheel)
    carried = sorted(n.removeprefix("pdi/data/docs/") for n in inside if n.startswith("pdi/data/docs/"))
    assert carried == PAGES
    for page in PAGES:
        assert inside[f"pdi/data/docs/{page}"] == (DOCS / page).read_bytes(), page


def test_the_wheel_names_the_server_libraries_as_extras_only(dists: tuple[Path, Path]) -> None:
    _, wheel = dists
    metadata = members(wheel)[f"pdi-{pdi.__version__}.dist-info/METADATA"].decode()
    requires = re.findall(r"^Requires-Dist: (.*)$", metadata, re.MULTILINE)
    for requirement in requires:
        name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("-", "_")
        if name in SERVER_LIBRARIES:
            assert re.search(r"extra == \"(postgres|s3|dev)\"", requirement), requirement
    assert {"postgres", "s3", "dev"} <= set(re.findall(r"^Provides-Extra: (.*)$", metadata, re.MULTILINE))
    assert 'psycopg[binary]>=3.1; extra == "postgres"' in requires
    assert 'boto3>=1.36; extra == "s3"' in requires


def test_the_wheel_carries_its_licence(dists: tuple[Path, Path]) -> None:
    """pyproject.toml declares the MIT licence (an SPDX expression, PEP 639); the text itself travels in the
    wheel (``.dist-info/licenses/``, named by ``License-File``) and the sdist, as PEP 639 asks."""
    sdist, wheel = dists
    inside = members(wheel)
    metadata = inside[f"pdi-{pdi.__version__}.dist-info/METADATA"].decode()
    assert re.search(r"^License-Expression: MIT$", metadata, re.MULTILINE), metadata[:800]
    assert re.search(r"^License-File: LICENSE$", metadata, re.MULTILINE), metadata[:800]
    text = inside[f"pdi-{pdi.__version__}.dist-info/licenses/LICENSE"].decode()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    with tarfile.open(sdist) as tf:
        assert f"pdi-{pdi.__version__}/LICENSE" in tf.getnames()


def test_the_sdist_builds_the_same_wheel_as_the_tree(dists: tuple[Path, Path], tree: Path,
                                                      tmp_path: Path) -> None:
    _, from_sdist = dists
    build(tree, tmp_path, "--wheel")
    (from_tree,) = tmp_path.glob("pdi-*.whl")
    assert from_tree.name == from_sdist.name
    a, b = members(from_sdist), members(from_tree)
    assert sorted(a) == sorted(b)
    # the compiled counter holds the path it was built in; its RECORD line says so
    differ = sorted(n for n in a if a[n] != b[n])
    assert all(n.endswith((".so", "/RECORD")) for n in differ), differ


# --- no C compiler -------------------------------------------------------------------------------------------


#: Runs in the wheel built without a compiler: counts each text it reads (one JSON line each) with pdi's own
#: choice of engine, and says which pdi it is.
COUNTER = """
import json, sys
import pdi
from pdi.fragments.text import counting
from pdi.fragments.text.charset import encoding_for
print(json.dumps([pdi.__file__, counting.COMPILED, counting.resolve_engine("auto")]), flush=True)
for line in sys.stdin:
    asked = json.loads(line)
    buf, cuts = bytes.fromhex(asked["octets"]), asked["cuts"]
    encoding = encoding_for(asked["charset"], b"")
    capacity = max([b - a for a, b in zip(cuts, cuts[1:])] + [1])
    got = counting.count_blocks([counting.BlockCounter(buf, encoding, capacity) for _ in range(2)], cuts)
    print(json.dumps(got), flush=True)
"""


@pytest.fixture(scope="module")
def no_compiler_wheel(dists: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel the sdist builds with ``CC=false``, and what the build said."""
    sdist, _ = dists
    out = tmp_path_factory.mktemp("no-cc")
    done = build(sdist, out, "--wheel", CC="false")
    (wheel,) = out.glob("pdi-*.whl")
    return wheel, done.stdout + done.stderr


@pytest.fixture(scope="module")
def numpy_counter(no_compiler_wheel: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[subprocess.Popen[str]]:
    """:data:`COUNTER` running in the no-compiler wheel, unpacked (its dependencies from this environment)."""
    wheel, _ = no_compiler_wheel
    unpacked = tmp_path_factory.mktemp("no-cc-site")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(unpacked)
    process = subprocess.Popen([sys.executable, "-c", COUNTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env={**clean_env(), "PYTHONPATH": str(unpacked)})
    assert process.stdout is not None and process.stdin is not None
    where, compiled, engine = json.loads(process.stdout.readline())
    assert Path(where).is_relative_to(unpacked) and not compiled and engine == "numpy"
    yield process
    process.stdin.close()
    assert process.wait(timeout=60) == 0
    process.stdout.close()


def test_without_a_compiler_the_wheel_is_built_without_the_counter_and_says_so(
        no_compiler_wheel: tuple[Path, str]) -> None:
    wheel, said = no_compiler_wheel
    assert NO_COMPILER_WARNING in said and "pdi counts text with numpy instead" in said
    assert NO_ENCODER_WARNING in said and "pdi writes MHTML's base64 and quoted-printable with binascii instead" in said
    assert NO_FASTHEAD_WARNING in said and "pdi serve parses every request with httptools instead" in said
    names = members(wheel)
    assert not [n for n in names if n.endswith(".so")]
    assert "pdi/data/pdfjs/MANIFEST.json" in names and "pdi/fragments/text/counting.py" in names


@settings(max_examples=150, deadline=None)
@given(blocked_texts())
def test_without_a_compiler_pdi_counts_as_the_compiled_counter_does(
        numpy_counter: subprocess.Popen[str], entity: tuple[str, list[str]]) -> None:
    assert counting.COMPILED  # this environment's pdi: the compiled counter, to compare with
    charset, blocks = entity
    body, cuts = _cuts(charset, blocks)
    assert numpy_counter.stdin is not None and numpy_counter.stdout is not None
    numpy_counter.stdin.write(json.dumps({"charset": charset, "octets": body.hex(), "cuts": cuts}) + "\n")
    numpy_counter.stdin.flush()
    got = [tuple(c) for c in json.loads(numpy_counter.stdout.readline())]
    encoding = encoding_for(charset, b"")
    capacity = max([b - a for a, b in pairwise(cuts)] + [1])
    compiled = count_blocks([BlockCounter(body, encoding, capacity, "compiled")], cuts)
    assert got == [tuple(c) for c in compiled] == [tuple(ref_counts(b)) for b in blocks]


#: Packs a page of images (octets of every value, lengths around whole base64 lines) and prints whether the
#: compiled encoder wrote it, the file's SHA-256 and which pdi it is.
PACKER = """
import hashlib, json
import pdi
from pdi.mhtml import write
images = [write.Resource(f"http://example.org/i{n}", "image/png", bytes(range(256)) * (n // 7) + bytes(n % 7))
          for n in range(0, 400, 19)]
page = write.build(write.Resource("http://example.org/", "text/html", b"<html>" + b"=\\t\\xe9 " * 40), images)
print(json.dumps([pdi.__file__, write.COMPILED, hashlib.sha256(page).hexdigest()]))
"""


def test_without_a_compiler_pdi_writes_the_mhtml_the_compiled_encoder_writes(
        no_compiler_wheel: tuple[Path, str], tmp_path: Path) -> None:
    wheel, _ = no_compiler_wheel
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    fallback, compiled = (
        json.loads(run([sys.executable, "-c", PACKER], env={**clean_env(), "PYTHONPATH": str(where)}).stdout)
        for where in (tmp_path, Path(pdi.__file__).parents[1]))
    assert Path(fallback[0]).is_relative_to(tmp_path) and not fallback[1]
    assert compiled[1] and fallback[2] == compiled[2]


def test_without_a_compiler_pdi_serve_reads_every_request_with_httptools(
        no_compiler_wheel: tuple[Path, str], tmp_path: Path) -> None:
    # the same answers (tests/server/test_server_fasthead.py compares two servers, with and without the module)
    wheel, _ = no_compiler_wheel
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
    probe = ("import json, pdi; from pdi.server.process import connection as c;"
             " print(json.dumps([pdi.__file__, c.FAST_ANSWER is None]))")
    fallback, compiled = (
        json.loads(run([sys.executable, "-c", probe], env={**clean_env(), "PYTHONPATH": str(where)}).stdout)
        for where in (tmp_path, Path(pdi.__file__).parents[1]))
    assert Path(fallback[0]).is_relative_to(tmp_path) and fallback[1]
    assert not compiled[1]


# --- pipx install ---------------------------------------------------------------------------------------------


def checked_wheelhouse() -> Path:
    """:data:`WHEELHOUSE`, made from today's ``requirements/run.lock`` (its ``.lock`` holds the lock's SHA-256, as
    ``scripts/bootstrap --dev`` writes it): one made before a dependency was added would fail an install with
    pip's "no matching distribution" for it, not say what to do."""
    assert any(WHEELHOUSE.glob("*.whl")), f"no wheelhouse at {WHEELHOUSE}: scripts/bootstrap --dev makes it"
    lock = hashlib.sha256((ROOT / "requirements" / "run.lock").read_bytes()).hexdigest()
    made = (WHEELHOUSE / ".lock").read_text().strip() if (WHEELHOUSE / ".lock").is_file() else "(none)"
    assert made == lock, (f"the wheelhouse at {WHEELHOUSE} was made from another requirements/run.lock ({made}, not"
                          f" {lock}): scripts/bootstrap --dev makes it again")
    return WHEELHOUSE


def pipx_env(home: Path) -> dict[str, str]:
    """pipx in ``home``, its pip reading only the wheelhouse (and no configuration file of this machine)."""
    checked_wheelhouse()
    return clean_env(PIPX_HOME=str(home / "pipx"), PIPX_BIN_DIR=str(home / "bin"), PIP_NO_INDEX="1",
                     PIP_FIND_LINKS=str(WHEELHOUSE), PIP_CONFIG_FILE=os.devnull)


def pipx_install(spec: str, home: Path) -> tuple[Path, Path]:
    """``pipx install SPEC`` into ``home``: the ``pdi`` it installs and the python of its environment."""
    pipx = shutil.which("pipx")
    assert pipx is not None, "pipx is not installed: scripts/bootstrap --dev installs Debian's pipx"
    run([pipx, "install", "--force", spec], env=pipx_env(home))
    return home / "bin" / "pdi", home / "pipx" / "venvs" / "pdi" / "bin" / "python"


def importable(python: Path, modules: tuple[str, ...]) -> set[str]:
    probe = "import importlib.util, sys; print(*[m for m in sys.argv[1:] if importlib.util.find_spec(m)])"
    return set(run([python, "-c", probe, *modules]).stdout.split())


#: Runs in an installed pdi: every page its commands' --help texts name (``pdi docs PAGE``), each with the SHA-256 of
#: the files pdi docs finds for it, and where its manual is read from.
HELP_PAGES = f"""
import click, hashlib, json, re
from importlib.resources import files
from pdi.cli import cli, load_all
from pdi.cli import docs_cmd
load_all()
pages, manual = {{}}, docs_cmd.manual()
def walk(command, ctx):
    for page in re.findall({NAMED.pattern!r}, " ".join(command.get_help(ctx).split())):
        pages[page] = [hashlib.sha256(manual[n].read_bytes()).hexdigest() for n in docs_cmd.find(manual, page)[1]]
    for name in command.list_commands(ctx) if isinstance(command, click.Group) else ():
        sub = command.get_command(ctx, name)
        walk(sub, click.Context(sub, info_name=name, parent=ctx, max_content_width=10_000, terminal_width=10_000))
walk(cli, click.Context(cli, info_name="pdi", max_content_width=10_000, terminal_width=10_000))
print(json.dumps({{"manual": str(files("pdi").joinpath(docs_cmd.PACKAGED)), "pages": pages}}))
"""


def test_pipx_installs_a_pdi_that_runs_a_sqlite_archive_without_server_libraries(
        dists: tuple[Path, Path], tmp_path: Path) -> None:
    _, wheel = dists
    pdi_bin, python = pipx_install(str(wheel), tmp_path)
    env = clean_env()
    assert run([pdi_bin, "--version"], env=env).stdout == f"pdi, version {pdi.__version__}\n"
    where = run([python, "-c", "import pdi; print(pdi.__file__)"], env=env).stdout.strip()
    assert Path(where).is_relative_to(tmp_path / "pipx" / "venvs" / "pdi")
    assert importable(python, SERVER_LIBRARIES) == set()
    compiled = ("pdi.fragments.text._count", "pdi.mhtml._encode", "pdi.server.process._fasthead", "numpy")
    assert importable(python, compiled) == set(compiled)

    # what its --help texts tell the operator to read, from the installed package (no checkout here)
    got = subprocess.run([pdi_bin, "docs", "deploy/nginx.conf"], capture_output=True, env=env, timeout=120)
    assert got.returncode == 0 and got.stdout == (DOCS / "deploy" / "nginx.conf").read_bytes()
    written = run([pdi_bin, "docs", "deploy", "--to", tmp_path / "deploy"], env=env).stdout.splitlines()
    assert [Path(w).name for w in written] == sorted(p.name for p in (DOCS / "deploy").iterdir())
    assert all((tmp_path / "deploy" / p.name).read_bytes() == p.read_bytes() for p in (DOCS / "deploy").iterdir())
    assert os.access(tmp_path / "deploy" / "pdi-admin", os.X_OK)
    named = json.loads(run([python, "-c", HELP_PAGES], env=env, cwd=tmp_path).stdout)
    assert Path(named["manual"]).is_relative_to(tmp_path / "pipx" / "venvs" / "pdi")
    assert {"deploy/nginx.conf", "how-to/operate", "how-to/backup"} <= set(named["pages"])
    for page, digests in named["pages"].items():
        files = sorted(p for p in (DOCS / page).iterdir()) if (DOCS / page).is_dir() else [
            DOCS / page if (DOCS / page).is_file() else DOCS / f"{page}.md"]
        assert digests == [hashlib.sha256(f.read_bytes()).hexdigest() for f in files], page

    archive = tmp_path / "archive"
    text = tmp_path / "a.txt"
    text.write_bytes(b"first line\r\nsecond line \xc3\xa9\r\nthird\r\n")
    run([pdi_bin, "init", archive], env=env)
    run([pdi_bin, "series", "add", "example.org.us", "--archive", archive], env=env)
    name = run([pdi_bin, "add", text, "--series", "example.org.us", "--archive", archive], env=env).stdout.strip()
    assert re.fullmatch(r"urn:pdi://example\.org\.us/\d{4}/\d\d/\d\d/1\.text\.1", name)
    got = subprocess.run([pdi_bin, "get", name, "--archive", archive], capture_output=True, env=env, timeout=120)
    assert got.returncode == 0 and got.stdout == text.read_bytes()
    line = subprocess.run([pdi_bin, "get", f"{name}#line=1,2", "--archive", archive], capture_output=True,
                          env=env, timeout=120)
    assert line.returncode == 0 and line.stdout == "second line é\r\n".encode()

    # the other stores name the extra they need, with the exit status of an UnsupportedError (6)
    for args, extra in (([pdi_bin, "init", "postgresql://127.0.0.1:1/none"], "postgres"),
                        ([pdi_bin, "init", tmp_path / "other", "--blobs", "s3://bucket/prefix"], "s3")):
        refused = run(args, env=env, check=False)
        assert refused.returncode == 6, refused.stderr
        # the extra's packages by name, as the wheel's metadata lists them; pdi itself never by name (no index has it)
        assert f"pipx inject pdi '{'psycopg[binary]>=3.1' if extra == 'postgres' else 'boto3>=1.36'}'" in refused.stderr
        assert f"'pdi[{extra}]'" not in refused.stderr
    assert not (tmp_path / "other").exists()  # refused before any archive was made

    # pdi serve answers from the installed package: the stored text and the vendored pdf.js
    process = subprocess.Popen([pdi_bin, "serve", "--port", "0", "--replay-port", "0", "--archive", archive],
                               stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        found = re.match(r"pdi: serving .*? at (http://127\.0\.0\.1:\d+/)", first)
        assert found is not None, first
        with httpx.Client(base_url=found[1], timeout=30) as client:
            deadline = time.monotonic() + 60
            while True:  # the workers listen a moment after the first line
                try:
                    assert client.get("/healthz").status_code == 200
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline and process.poll() is None, "pdi serve did not answer"
                    time.sleep(0.1)
            served = client.get(f"/uri-res/N2R?{name}")
            assert served.status_code == 200 and served.content == text.read_bytes()
            manifest = json.loads((ROOT / "src" / "pdi" / "data" / "pdfjs" / "MANIFEST.json").read_bytes())
            asset = client.get(f"/static/pdfjs/{manifest['version']}/pdf.min.mjs")
            assert asset.status_code == 200
            assert hashlib.sha256(asset.content).hexdigest() == manifest["files"]["pdf.min.mjs"]["sha256"]
    finally:
        process.terminate()
        process.wait(timeout=60)
        assert process.stderr is not None
        process.stderr.close()


def test_pipx_installs_the_server_extras_when_asked(dists: tuple[Path, Path], tmp_path: Path) -> None:
    _, wheel = dists
    _, python = pipx_install(f"{wheel}[postgres,s3]", tmp_path)
    assert importable(python, SERVER_LIBRARIES) == set(SERVER_LIBRARIES)
    run([python, "-c", "import pdi.archive.postgres, pdi.archive.blobs.s3"])


# --- which pdi the suite runs -------------------------------------------------------------------------------


def test_the_suite_imports_the_pdi_it_means() -> None:
    """scripts/test in CI (``PDI_TEST_INSTALLED=1``) runs the suite against the installed wheel, else the
    checkout's src/ (pytest's ``pythonpath``). The processes it starts run the same one
    (tests/test_cli_basics.py)."""
    where = Path(pdi.__file__).resolve().parent
    if INSTALLED:
        site = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
        assert where.parent in site, f"pdi imported from {where}, not from the installed wheel in {site}"
        assert not list((where.parent).glob("__editable__*pdi*"))
        assert counting.COMPILED
    else:
        assert where == (ROOT / "src" / "pdi").resolve()


# --- pip install, no compiler -----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["sdist", "wheel"])
def test_pip_installs_the_sdist_or_the_wheel_without_a_compiler_into_a_clean_venv(
        dists: tuple[Path, Path], tmp_path: Path, which: str) -> None:
    """What a new operator does on a machine with no C compiler (``CC=false``): ``pip install`` the sdist (built
    there, setuptools fetched from the wheelhouse into an isolated build) or the wheel into a new virtual
    environment; then ``pdi --help``, ``init``, ``add`` and ``get`` work, the text counted without the compiled
    counter (absent for the sdist)."""
    sdist, wheel = dists
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    env = clean_env(CC="false", PIP_NO_INDEX="1", PIP_FIND_LINKS=str(checked_wheelhouse()), PIP_CONFIG_FILE=os.devnull)
    run([venv / "bin" / "pip", "install", sdist if which == "sdist" else wheel], env=env)
    pdi_bin, env = venv / "bin" / "pdi", clean_env()
    assert "Usage: pdi [OPTIONS] COMMAND [ARGS]..." in run([pdi_bin, "--help"], env=env).stdout
    if which == "sdist":
        assert importable(venv / "bin" / "python", ("pdi.fragments.text._count", "pdi.mhtml._encode")) == set()
    archive, text = tmp_path / "archive", tmp_path / "a.txt"
    text.write_bytes("first line\nsecond line é\nthird\n".encode())
    run([pdi_bin, "init", archive], env=env)
    run([pdi_bin, "series", "add", "example.org.us", "--archive", archive], env=env)
    name = run([pdi_bin, "add", text, "--series", "example.org.us", "--archive", archive], env=env).stdout.strip()
    assert re.fullmatch(r"urn:pdi://example\.org\.us/\d{4}/\d\d/\d\d/1\.text\.1", name)
    got = subprocess.run([pdi_bin, "get", name, "--archive", archive], capture_output=True, env=env, timeout=120)
    assert got.returncode == 0 and got.stdout == text.read_bytes()
    line = subprocess.run([pdi_bin, "get", f"{name}#line=1,2", "--archive", archive], capture_output=True,
                          env=env, timeout=120)
    # a line of text is given in its canonical form, ending CR LF (RFC 2046 4.1.1), whatever the file's ending
    assert line.returncode == 0 and line.stdout == "second line é\r\n".encode()


# --- upgrading an installed pdi to a rebuilt wheel ------------------------------------------------------------

UPGRADE_PAGE = ROOT / "docs" / "how-to" / "upgrade.md"
#: What the rebuilt wheel holds that the first one does not (pdi reads its data files through importlib.resources).
REBUILT = "pdi/data/rebuilt-for-the-upgrade-test.txt"


@pytest.fixture(scope="module")
def rebuilt_wheel(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of a later build with the same version (a development build between releases, ``0.3.0.dev0``
    again, or a release built again): one data file more."""
    copy = tmp_path_factory.mktemp("rebuilt-tree") / "tree"
    shutil.copytree(tree, copy)
    (copy / "src" / REBUILT).write_text("the later build\n")
    out = tmp_path_factory.mktemp("rebuilt")
    build(copy, out, "--wheel")
    (wheel,) = out.glob("pdi-*.whl")
    return wheel


def upgrade_commands(way: str) -> list[list[str]]:
    """The commands docs/how-to/upgrade.md's table gives to upgrade a pdi installed ``way`` (its first column),
    each as its words."""
    text = UPGRADE_PAGE.read_text("utf-8")
    [row] = [line for line in text.splitlines() if line.startswith(f"| {way} |")]
    cell = row.split("|")[2]
    [line] = re.findall(r"`([^`]+)`", cell)[:1]
    return [shlex.split(part) for part in line.split("&&")]


def the_wheel(words: list[str], wheel: Path, **replace: str) -> list[str]:
    """The command's words with the page's wheel (``dist/pdi-0.3.0.dev0-….whl[extras]``) made ``wheel``."""
    return [re.sub(r"^dist/pdi-[^\[]*\.whl", str(wheel), replace.get(w, w)) for w in words]


def holds_the_later_build(python: Path) -> bool:
    probe = "import importlib.resources as r, sys; sys.stdout.write(str(r.files('pdi').joinpath(sys.argv[1]).is_file()))"
    return run([python, "-c", probe, REBUILT.removeprefix("pdi/")]).stdout == "True"


def test_the_upgrade_page_installs_a_rebuilt_wheel_of_the_same_version_with_pipx(
        dists: tuple[Path, Path], rebuilt_wheel: Path, tmp_path: Path) -> None:
    """pip keeps an installed pdi whose version is the wheel's ("already installed with the same version as the
    provided wheel", exit 0), and ``pipx install --force`` runs that pip in the existing environment: the page's
    commands must put the later build in place all the same."""
    _, wheel = dists
    pdi_bin, python = pipx_install(str(wheel), tmp_path)
    assert not holds_the_later_build(python)
    pipx = shutil.which("pipx")
    assert pipx is not None
    for words in upgrade_commands("`pipx` from a wheel"):
        assert words[0] == "pipx", words
        run([pipx, *the_wheel(words[1:], rebuilt_wheel)], env=pipx_env(tmp_path))
    assert holds_the_later_build(python)
    assert importable(python, ("psycopg", "psycopg_pool")) == {"psycopg", "psycopg_pool"}  # the extra asked for
    assert run([pdi_bin, "--version"], env=clean_env()).stdout == f"pdi, version {pdi.__version__}\n"


def test_the_upgrade_page_installs_a_rebuilt_wheel_of_the_same_version_with_pip(
        dists: tuple[Path, Path], rebuilt_wheel: Path, tmp_path: Path) -> None:
    _, wheel = dists
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    env = clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(checked_wheelhouse()), PIP_CONFIG_FILE=os.devnull)
    run([venv / "bin" / "pip", "install", wheel], env=env)
    python = venv / "bin" / "python"
    assert not holds_the_later_build(python)
    for words in upgrade_commands("`pip` in a virtual environment"):
        assert words[0] == "/opt/pdi/bin/pip", words
        run(the_wheel(words, rebuilt_wheel, **{"/opt/pdi/bin/pip": str(venv / "bin" / "pip")}), env=env)
    assert holds_the_later_build(python)
    assert importable(python, ("psycopg", "psycopg_pool")) == {"psycopg", "psycopg_pool"}
