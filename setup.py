"""Build the optional compiled text counter; everything else is in pyproject.toml.

``pdi.fragments.text._count`` counts line endings and UTF-8 continuation
octets in one pass (cold text queries at memory speed). It is optional: where
no C compiler is found (or it fails, or Python's headers are missing) the
build goes on without it, says so in one warning, and
``pdi.fragments.text.counting`` counts with numpy instead (same counts,
slower). ``CC=false python -m build`` makes such a wheel on purpose.
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import BaseError, CCompilerError, CompileError, ExecError, PlatformError


class OptionalBuildExt(build_ext):
    """``build_ext`` that leaves an optional extension out, with a warning naming the fallback, when it fails."""

    def run(self) -> None:
        try:
            super().run()
        except PlatformError as exc:  # no compiler at all for this platform
            self._without(None, exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except (CCompilerError, CompileError, ExecError, BaseError) as exc:
            if not ext.optional:
                raise
            self._without(ext, exc)

    @staticmethod
    def _without(ext: Extension | None, exc: Exception) -> None:
        name = ext.name if ext is not None else "pdi.fragments.text._count"
        print(f"WARNING: pdi: the compiled text counter {name} was not built ({exc});"
              " pdi counts text with numpy instead (the same counts, slower)."
              " A C compiler (Debian: gcc, libc6-dev, python3-dev) builds it.", file=sys.stderr)


setup(
    cmdclass={"build_ext": OptionalBuildExt},
    ext_modules=[
        Extension(
            "pdi.fragments.text._count",
            sources=["src/pdi/fragments/text/_count.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ],
)
