"""The brotlipy installed is 0.7.0 (``requirements/dev.lock`` pins it, hash and all; pywb brings it), whose cffi
module ``brotli._brotli`` (``lib``, ``ffi``) :mod:`pdi.interop.warc.coding` calls to undo ``br`` a bounded piece
at a time: brotlipy's own ``Decompressor`` gives all its output in one call.

What pdi relies on is libbrotli's public C API as that module declares it. The expected C types and values
below are libbrotli's own, from its header ``brotli/decode.h`` (and ``brotli/types.h`` for the two function
pointer types), release 1.0.9 as Debian 12 packages it (``libbrotli-dev``): ``BrotliDecoderCreateInstance(
brotli_alloc_func, brotli_free_func, void*)``, ``BrotliDecoderDecompressStream(BrotliDecoderState*, size_t*,
const uint8_t**, size_t*, uint8_t**, size_t*)`` and the ``BrotliDecoderResult`` values 0 to 3; cffi writes
them without ``const``. When these tests fail, re-check pdi.interop.warc.coding against the new brotlipy (or
move to a decoder whose public API bounds its output) and the lock with them.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from brotli import _brotli  # type: ignore[import-untyped,import-not-found,unused-ignore]

from pdi.interop.warc.coding import decodes

C_TYPES = {
    "BrotliDecoderCreateInstance": "BrotliDecoderState *(*)(void *(*)(void *, size_t), void(*)(void *, void *), void *)",
    "BrotliDecoderDestroyInstance": "void(*)(BrotliDecoderState *)",
    "BrotliDecoderDecompressStream": (
        "BrotliDecoderResult(*)(BrotliDecoderState *, size_t *, uint8_t * *, size_t *, uint8_t * *, size_t *)"),
    "BrotliDecoderGetErrorCode": "BrotliDecoderErrorCode(*)(BrotliDecoderState *)",
    "BrotliDecoderErrorString": "char *(*)(BrotliDecoderErrorCode)",
}
RESULTS = {"BROTLI_DECODER_RESULT_ERROR": 0, "BROTLI_DECODER_RESULT_SUCCESS": 1,
           "BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT": 2, "BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT": 3}


def test_the_pinned_release_is_installed() -> None:
    lock = (Path(__file__).resolve().parents[2] / "requirements" / "dev.lock").read_text()
    assert "brotlipy==0.7.0 " in lock
    assert importlib.metadata.version("brotlipy") == "0.7.0"


@pytest.mark.parametrize("name", sorted(C_TYPES))
def test_each_function_relied_on_has_libbrotlis_signature(name: str) -> None:
    assert str(_brotli.ffi.typeof(getattr(_brotli.lib, name))) == f"<ctype '{C_TYPES[name]}'>", name


def test_the_results_are_libbrotlis() -> None:
    assert {name: getattr(_brotli.lib, name) for name in RESULTS} == RESULTS
    assert decodes("br")  # and so br is undone, a bounded piece at a time
