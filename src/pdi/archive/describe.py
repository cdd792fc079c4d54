"""What a resolved name is, as JSON values: one description for every edge that shows it.

``pdi get --info`` prints it as lines, the resolver's ``N2C`` and
``/api/resolve`` answer it as JSON; both take it from :func:`describe`, so
they cannot drift apart.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from pdi.archive import Generic, Resolved

if TYPE_CHECKING:
    from pdi.fragments.image_size import ImageShown
    from pdi.fragments.pdf import TextLayer
    from pdi.fragments.video import VideoInfo


def describe(
    resolved: Resolved | Generic, *, text_layer: TextLayer | None = None, video: VideoInfo | None = None,
    message: dict[str, Any] | None = None, image: ImageShown | None = None,
) -> dict[str, Any]:
    """The name, media type, size and stored representation of a resolved name, and what its fragment selects.

    A generic name is described by its versions (number, deposit time, the
    names of its formats). For a name with a fragment, ``bytes`` is the size
    of what the fragment selects and ``stored`` the representation it is cut
    from; ``fragment`` holds the scheme, whether a position was clamped or
    the whole fragment lies past the end, and the character ranges, image
    region or audio samples selected (a PDF's ``page``: its number and
    size in points).

    ``text_layer``, a PDF's (:meth:`Archive.text_layer_of`), adds
    ``text_layer``: its characters, its size in UTF-8, its SHA-256, its pages,
    the PDFium that made it, and ``empty`` when no page has text (a scan:
    cite it by page and region). ``message``, an e-mail's
    (:meth:`Archive.message_of`), adds ``message``: its header fields, ids,
    body and parts (docs/email.md). ``image``, an image's (:meth:`Archive.image_of`), adds ``image``: its stored
    width, height and frames, its EXIF ``orientation`` (of a JPEG or PNG, 1 to 8; 1 where it says none) and its
    size ``shown`` by a browser, which turns a JPEG or PNG by it (docs/reference/resolver.md).
    """
    if isinstance(resolved, Generic):
        versions = [
            {"version": v.number, "created_at": v.created_at, "formats": [str(n) for n in v.formats]}
            for v in resolved.versions
        ]
        return {"pdi": str(resolved.pdi), "versions": versions}
    record = resolved.record
    out: dict[str, Any] = {
        "pdi": str(resolved.pdi),
        "media_type": resolved.media_type,
        "charset": resolved.charset,
        # a whole representation may be only located (its octets not read): its size is the record's; so is a
        # video's time fragment's, whose answer is the whole video (Archive.locate_clip: located only)
        "bytes": record.size if resolved.fragment is None or _whole_video(resolved) else len(resolved.data),
        "stored": {
            "media_type": record.media_type,
            "bytes": record.size,
            "sha256": record.sha256,
            "created_at": record.created_at,
            "line_ending": record.line_ending,
            "kept": record.stored,
        },
    }
    if text_layer is not None:
        utf8 = text_layer.utf8
        out["text_layer"] = {
            "characters": len(text_layer.text),
            "bytes": len(utf8),
            "sha256": hashlib.sha256(utf8).hexdigest(),
            "pages": text_layer.pages,
            "pdfium": text_layer.pdfium,
            "empty": text_layer.empty,
            # what makes its page tree one PDFium and pdf.js may read differently: no page of it is cited
            "page_tree": text_layer.page_tree or None,
        }
    if video is not None:
        out["video"] = video.to_json()
    if message is not None:
        out["message"] = message
    if image is not None:
        out["image"] = image.to_json()
    fragment = resolved.fragment
    if fragment is not None:
        out["fragment"] = {
            "scheme": fragment.scheme,
            "clamped": fragment.clamped,
            "past_end": fragment.past_end,
            "ranges": [
                {"start": r.start, "end": r.end, "byte_start": r.byte_start, "byte_end": r.byte_end}
                for r in fragment.ranges
            ],
            "region": None if fragment.region is None else vars(fragment.region).copy(),
            "interval": None if fragment.interval is None else vars(fragment.interval).copy(),
            "page": None if fragment.page is None else vars(fragment.page).copy(),
        }
    return out


def _whole_video(resolved: Resolved) -> bool:
    """Whether ``resolved`` is a video's time fragment, answered by the whole video (:mod:`pdi.fragments.video`)."""
    return (resolved.fragment is not None and resolved.fragment.interval is not None
            and resolved.record.media_type.startswith("video/"))
