"""Which PDFium build a child of pdi's would load now (:mod:`pypdfium2_raw`'s library, found without importing it:
the resolver's process never loads PDFium), so that what was read with one build is read again with another.
Moved out of :mod:`pdi.fragments.pdf`, which imports it as ``_pdfium_build``."""

from __future__ import annotations


def pdfium_build() -> tuple[str, int, int, int]:
    """The PDFium library a child would load now (pypdfium2_raw's, found without importing it: this process
    never loads PDFium): its path, size, change time and inode; ("", 0, 0, 0) when it is not found."""
    import os

    global _pdfium_library
    if _pdfium_library is None:
        import importlib.util

        spec = importlib.util.find_spec("pypdfium2_raw")
        places = list(spec.submodule_search_locations or []) if spec is not None else []
        libraries = [os.path.join(place, file) for place in places
                     for file in ("libpdfium.so", "libpdfium.dylib", "pdfium.dll")]
        _pdfium_library = next((path for path in libraries if os.path.exists(path)), "")
    try:
        found = os.stat(_pdfium_library)
    except OSError:
        return (_pdfium_library, 0, 0, 0)
    return (_pdfium_library, found.st_size, found.st_mtime_ns, found.st_ino)


_pdfium_library: str | None = None
