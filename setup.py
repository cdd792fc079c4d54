"""Build the optional compiled accelerators; everything else is in pyproject.toml.

``pdi.fragments.text._count`` counts line endings and UTF-8 continuation
octets in one pass (cold text queries at memory speed). It is optional: where
no C compiler is found (or it fails, or Python's headers are missing) the
build goes on without it, says so in one warning, and
``pdi.fragments.text.counting`` counts with numpy instead (same counts,
slower). ``pdi.mhtml._encode`` writes an MHTML part's base64 in lines, and a
text part's quoted-printable, in one pass; without it ``pdi.mhtml.write`` does
them with ``binascii`` (the same octets, slower). ``pdi.server.process._fasthead``
answers N2L's ``302`` and a ``304`` from a worker's facts straight from one
read of a request head; without it ``pdi serve`` parses every request with
``httptools`` (the same answers, slower). ``CC=false python -m build`` makes
a wheel without any of them on purpose.

The wheel also carries the manual's text, ``pdi docs`` prints it: ``build_py``
copies the files of ``docs/`` that ``src/pdi/_manual.py`` selects into the
package as ``pdi/data/docs/`` (the one source stays ``docs/``, which the sdist
holds whole; a build without it fails, naming it).
"""

import importlib.util
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import BaseError, CCompilerError, CompileError, ExecError, PlatformError

#: Each optional extension: what it is, and what pdi does without it (the build's warning says both).
WITHOUT = {
    "pdi.fragments.text._count": ("the compiled text counter", "pdi counts text with numpy instead (the same counts,"
                                  " slower)"),
    "pdi.mhtml._encode": ("the compiled MHTML encoder", "pdi writes MHTML's base64 and quoted-printable with binascii"
                          " instead (the same octets, slower)"),
    "pdi.server.process._fasthead": ("the compiled request-head answerer", "pdi serve parses every request with"
                                     " httptools instead (the same answers, slower)"),
}


class OptionalBuildExt(build_ext):
    """``build_ext`` that leaves an optional extension out, with a warning naming the fallback, when it fails."""

    def run(self) -> None:
        try:
            super().run()
        except PlatformError as exc:  # no compiler at all for this platform
            for name in WITHOUT:
                self._without(name, exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except (CCompilerError, CompileError, ExecError, BaseError) as exc:
            if not ext.optional:
                raise
            self._without(ext.name, exc)

    @staticmethod
    def _without(name: str, exc: Exception) -> None:
        what, instead = WITHOUT[name]
        print(f"WARNING: pdi: {what} {name} was not built ({exc}); {instead}."
              " A C compiler (Debian: gcc, libc6-dev, python3-dev) builds it.", file=sys.stderr)


def _manual() -> Any:
    """pdi's list of the manual's files (src/pdi/_manual.py, standard library only), loaded by its path: the
    package itself is not importable while it is built."""
    spec = importlib.util.spec_from_file_location("pdi_manual", Path("src", "pdi", "_manual.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def manual_files(docs: Path) -> list[Path]:
    """The files of ``docs`` that pdi's :data:`MANUAL_FILES` selects, sorted."""
    selected = _manual().selected
    return sorted(p for p in docs.rglob("*") if p.is_file() and selected(p.relative_to(docs).as_posix()))


class BuildPyWithManual(build_py):
    """``build_py`` that also puts the manual's text (docs/) into the package as pdi/data/docs/."""

    def run(self) -> None:
        super().run()
        docs = Path("docs")
        if not (docs / "index.md").is_file():
            raise BaseError("docs/ (the manual, which the wheel carries for pdi docs) is missing from the source"
                            " tree: build from a checkout or from pdi's sdist, which holds it")
        for source in manual_files(docs):
            target = Path(self.build_lib, "pdi", "data", "docs", source.relative_to(docs))
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))


setup(
    cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithManual},
    ext_modules=[
        Extension(
            "pdi.fragments.text._count",
            sources=["src/pdi/fragments/text/_count.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(
            "pdi.mhtml._encode",
            sources=["src/pdi/mhtml/_encode.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
        Extension(
            "pdi.server.process._fasthead",
            sources=["src/pdi/server/process/_fasthead.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ],
)
