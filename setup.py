"""Build the optional compiled text counter; everything else is in pyproject.toml.

``pdi.fragments.text._count`` counts line endings and UTF-8 continuation
octets in one pass (cold text queries at memory speed). It is optional: where
no C compiler is found the build goes on without it and
``pdi.fragments.text.counting`` counts with numpy instead (same counts,
slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pdi.fragments.text._count",
            sources=["src/pdi/fragments/text/_count.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
