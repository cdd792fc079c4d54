"""The viewer's pages of images, sounds and videos: the medium shown, what a fragment names of it outlined, and a
Cite panel to name a region, a stretch or a clip (:func:`image_view`, :func:`sound_view`, :func:`video_view`, drawn by
:func:`pdi.server.pages.viewer.render_view`).
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING
from urllib.parse import quote

from pdi._wording import counted
from pdi.archive import Archive, Resolved
from pdi.errors import LimitError, UnsupportedError
from pdi.server.pages.cite import header_facts, image_facts, waveform
from pdi.server.pages.cite_panel import cite_panel, opened_name
from pdi.server.pages.layout import n2r_href, scripted_or

if TYPE_CHECKING:
    from pdi.fragments.results import Region

#: Images narrower than this (CSS pixels) are shown larger, by a whole factor, so a box can be dragged on them.
MIN_IMAGE_WIDTH = 480
#: The most frames an image's frame chooser lists one by one; more are chosen by number. Each listed frame is some
#: 150 octets of the page: a 2.3 MB GIF of 100,000 one-pixel frames made a page of 13 MB (found by an attack).
MAX_FRAME_OPTIONS = 500
#: The most pixels of an image the viewer has the reader's browser decode (some 400 MB in RGBA). A larger one of one
#: frame that libvips reads (a PNG, JPEG or TIFF map scan of 250 million pixels) is shown by the server's preview
#: (``/api/image/preview``: :func:`pdi.server.pages.cite.image_preview`), the region outlined on it; any other (a
#: file of a few dozen octets whose header claims 10^10, past :data:`~pdi.fragments.image_streamed.MAX_STREAMED_PIXELS`)
#: is drawn as a blank stand-in of its shape, the region outlined on it, and its octets linked. So is an image of
#: several frames each larger than a crop cuts (:data:`~pdi.fragments.image.MAX_CROP_PIXELS`), since each frame
#: is shown by its crop.
MAX_SHOWN_PIXELS = 100_000_000
#: The longer side, in CSS pixels, of the stand-in drawn in place of an image larger than :data:`MAX_SHOWN_PIXELS`.
STAND_IN_SIDE = 960


def _cited_box(region: Region | None, orientation: int = 1) -> str:
    """The box outlining a cited region over its image or frame, placed in percent of it (no script needed); over
    an image shown turned by its EXIF ``orientation``, where the region's stored pixels are seen
    (:func:`pdi.fragments.image.shown_box`)."""
    if region is None or not region.width or not region.height:
        return ""
    from pdi.fragments.image import shown_box

    x1, y1, x2, y2 = shown_box(orientation, (region.x1, region.y1, region.x2, region.y2), region.width, region.height)
    width, height = (region.height, region.width) if orientation >= 5 else (region.width, region.height)
    style = (
        f"left:{100 * x1 / width:.4f}%;top:{100 * y1 / height:.4f}%;"
        f"width:{100 * (x2 - x1) / width:.4f}%;"
        f"height:{100 * (y2 - y1) / height:.4f}%"
    )
    return f'<div class="box" id="cited" style="{style}" title="{html.escape(json.dumps(vars(region)))}"></div>'


def _corners(region: Region | None, width: int, height: int) -> str:
    """The boxes to type a region's corners in (pixels), holding the cited region's: two rows, the first corner's x1
    and y1 over the second's x2 and y2 (``span.corners``, a grid: never y2 on a line by itself on a phone)."""
    given = {"x1": region.x1, "y1": region.y1, "x2": region.x2, "y2": region.y2} if region is not None else {}
    return '<span class="corners">' + "".join(
        f'<label>{axis} <input type="number" id="{axis}" min="0" max="{limit}" step="1" inputmode="numeric"'
        + (f' value="{given[axis]}"' if axis in given else "")
        + "></label>"
        for axis, limit in (("x1", width), ("y1", height), ("x2", width), ("y2", height))
    ) + "</span>"


_WHY_REGION = (
    "<code>#rect=(x1,y1),(x2,y2)</code> is the PDI draft's region: two corners, the second excluded."
    " Media Fragments' <code>#xywh=x,y,w,h</code> (what browsers and W3C annotations write) gives the"
    " left, top, width and height of the same pixels. <code>#crop=</code> names the same pixels too, and"
    " resolves to them cut out as a PNG image."
)
_WHY_TIME = (
    "<code>#sec=</code> and <code>#msec=</code> are the PDI's, in whole seconds or milliseconds;"
    " Media Fragments' <code>#t=a,b</code> (what a browser's player and W3C annotations read) gives the same"
    " stretch in seconds."
)


def image_view(archive: Archive, whole: Resolved, selected: Resolved | None, opened_at: str) -> str:
    """The image (a chosen frame of a multi-frame one), the region a fragment names outlined, and a box to drag;
    ``opened_at``: the name the page was opened at, shown in the Cite panel when its region is outlined.

    ``whole`` read (its ``data``), or only located (an image larger than :data:`MAX_READ`): then its size and
    frames are read from its header by verified chunks (:func:`pdi.server.pages.cite.header_facts`)."""
    name = str(whole.pdi)
    region = selected.fragment.region if selected is not None and selected.fragment is not None else None
    try:
        if whole.data or not whole.record.size:
            facts, head = image_facts(whole.data, whole.media_type), bytes(whole.data[:16])
        else:
            from pdi.archive.blobs import VerifiedOctets

            with archive.open_located(whole) as opened:
                octets = VerifiedOctets(opened.reader)
                facts, head = header_facts(octets, whole.media_type), octets[:16]
    except UnsupportedError as exc:  # an image the browser may show but Pillow cannot read (SVG): no regions
        return (
            f'<p class="note">Regions of this image cannot be named here: {html.escape(str(exc))}.</p>'
            f'<p><img src="{html.escape(n2r_href(name))}" alt="{html.escape(name)}" style="max-width:100%"></p>'
        )
    from pdi.fragments.image import MAX_CROP_PIXELS
    from pdi.fragments.image_streamed import MAX_STREAMED_PIXELS, PREVIEW_SIDE, streamed_format

    frame = region.frame if region is not None else 0
    pixels = facts.width * facts.height
    too_large = pixels > MAX_SHOWN_PIXELS or (facts.frames > 1 and pixels > MAX_CROP_PIXELS)
    # one frame of a PNG, JPEG or TIFF libvips reads: the server's preview of it, shrunk as it is read
    previewed = (too_large and facts.frames == 1 and pixels <= MAX_STREAMED_PIXELS
                 and streamed_format(head) is not None)
    stand_in = too_large and not previewed

    def source(k: int) -> str:
        if previewed:
            return f"/api/image/preview?pdi={quote(name, safe='')}"
        if stand_in:
            return _stand_in(facts.width, facts.height)
        if facts.frames == 1:
            return n2r_href(name)
        # one frame, as a lossless PNG: the whole of frame k cut out
        return n2r_href(f"{name}#crop=(0,0),({facts.width},{facts.height}),{k}")

    # the stored pixels shown turned as a browser turns them (a JPEG's or PNG's EXIF orientation), and a preview of
    # them drawn so (pdi.fragments.image_child.turned); not a stand-in, drawn in the stored shape; a frame's crop
    # keeps the orientation (pdi.fragments.image._png)
    orientation = facts.orientation if previewed or not too_large else 1
    cited = _cited_box(region, orientation)
    shown_width = facts.height if orientation >= 5 else facts.width
    scale = max(1, MIN_IMAGE_WIDTH // shown_width) if shown_width and not too_large else 1
    size = f' style="width:{shown_width * scale}px" class="pixelated"' if scale > 1 else ""
    unshown = (
        f'<p class="note" id="not-drawn">This image is {facts.width:,}×{facts.height:,}, '
        f'{counted(pixels, "pixel")}{" a frame" if facts.frames > 1 else ""}: more than a browser is asked to decode'
        f" here ({MAX_SHOWN_PIXELS:,} pixels{f', or {MAX_CROP_PIXELS:,} a frame of several' if facts.frames > 1 else ''}),"
        f' so a blank stand-in of its shape is drawn, regions outlined on it. Its octets are <a href="'
        f'{html.escape(n2r_href(name))}">the bytes</a>.</p>'
    ) if stand_in else (
        f'<p class="note" id="not-drawn">This image is {facts.width:,}×{facts.height:,}, {counted(pixels, "pixel")}:'
        f" more than a browser is asked to decode here ({MAX_SHOWN_PIXELS:,} pixels), so the server's preview of it"
        f" is shown, {PREVIEW_SIDE:,} pixels on its longer side, regions outlined on it in the image's own pixels."
        f' Its octets are <a href="{html.escape(n2r_href(name))}">the bytes</a>; a region of them at full'
        " size is its <code>#crop=</code>.</p>"
    ) if previewed else ""
    chooser = ""
    if 1 < facts.frames <= MAX_FRAME_OPTIONS:
        options = "".join(
            f'<option value="{k}" data-src="{html.escape(source(k))}"{" selected" if k == frame else ""}>{k}</option>'
            for k in range(facts.frames)
        )
        chooser = f'<label>frame <select id="frame">{options}</select></label> of {facts.frames}'
    elif facts.frames > 1:  # by number: its source is the first frame's with the number in place of 0
        # (a stand-in's is the stand-in, the number after it a fragment of its address: the same blank image)
        first = source(0) + "#0" if stand_in else source(0)
        assert first.endswith("0")
        chooser = (f'<label>frame <input type="number" id="frame" min="0" max="{facts.frames - 1}" step="1"'
                   f' value="{frame}" data-src="{html.escape(first[:-1])}"></label> of {facts.frames}')
    corners = _corners(region, facts.width, facts.height)
    return (
        cite_panel(
            scripted_or("Drag a box on the image to name that region (or give its corners below)", "A region is named")
            + ": <code>#rect=(x1,y1),(x2,y2)</code>, in pixels of the image itself.",
            forms=("mediafrag", "annotation"), why=_WHY_REGION, written="<code>#rect=(x1,y1),(x2,y2)</code>",
            cited=opened_name(opened_at, selected, bool(cited)),
        )
        + unshown
        + f'<div class="figure" id="figure" data-pdi="{html.escape(name)}" data-width="{facts.width}"'
        f' data-height="{facts.height}" data-frames="{facts.frames}" data-orientation="{orientation}">'
        f'<img id="image" src="{html.escape(source(frame))}" alt="{html.escape(name)}" draggable="false"{size}>'
        f'{cited}<div class="box selection" id="selection" hidden></div></div>'
        # the corners and the frame chooser work by the script only: not drawn without one (needs-script)
        f'<fieldset class="coords needs-script"><legend>Region in pixels ({facts.width}×{facts.height}; x2, y2 excluded)</legend>'
        f"{corners}{chooser}</fieldset>" + _frames_without_script(name, facts.width, facts.height, frame, facts.frames)
    )


def _stand_in(width: int, height: int) -> str:
    """A ``data:`` address of a blank SVG of the shape of a ``width`` × ``height`` image, its longer side
    :data:`STAND_IN_SIDE` CSS pixels (at least one pixel each way): drawn at the size shown, whatever the image's."""
    ratio = STAND_IN_SIDE / max(width, height)
    shown_width, shown_height = max(1, round(width * ratio)), max(1, round(height * ratio))
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' width='{shown_width}'"
           f" height='{shown_height}' preserveAspectRatio='none'><rect width='100%' height='100%' fill='#d8dbe0'/></svg>")
    return "data:image/svg+xml," + quote(svg, safe="")


def _frames_without_script(name: str, width: int, height: int, frame: int, frames: int) -> str:
    """For a reader without scripts (whose frame chooser is not drawn): which frame is shown, how another is named
    (its whole: ``#rect=(0,0),(width,height),k``, PDI-GRAMMAR's region of frame ``k``), and links to the frames
    before and after it. Empty for an image of one frame."""
    if frames <= 1:
        return ""

    def link(k: int, label: str) -> str:
        whole = f"{name}#rect=(0,0),({width},{height}),{k}"
        return f'<a href="/view?pdi={html.escape(quote(whole, safe=""))}" rel="{label[:4]}">the {label} frame</a>'

    around = [link(frame - 1, "previous")] if frame > 0 else []
    around += [link(frame + 1, "next")] if frame + 1 < frames else []
    return (
        f'<noscript><p class="note" id="frames-without-script">Frame {frame} of {frames} (from 0) is shown. Choosing'
        f" another here needs JavaScript: without it, resolve the name of the whole frame <var>k</var>,"
        f" <code>#rect=(0,0),({width},{height}),<var>k</var></code>, or go to " + " or ".join(around) + ".</p></noscript>"
    )


#: Where the page says, as soon as the player finds it, that this browser cannot play the recording or the video
#: (a codec or a rate it lacks): filled by the page's script (the player's ``error``), hidden until then.
_PLAYER_NOTE = '<p class="note" id="player-note" role="status" hidden></p>'


def sound_view(archive: Archive, whole: Resolved, selected: Resolved | None, opened_at: str) -> str:
    """A player, the recording's waveform to select a stretch on (or start and end in seconds), the cited stretch
    marked (and ``opened_at``, the name the page was opened at, shown in the Cite panel).

    ``whole`` read (its ``data``), or only located (a recording larger than :data:`MAX_READ`): then its waveform
    reads its header and each column's samples by verified chunks, never the whole."""
    name = str(whole.pdi)
    player = f'<audio id="player" controls src="{html.escape(n2r_href(name))}"></audio>'
    try:
        if whole.data or not whole.record.size:
            wave = waveform(whole.data, whole.media_type)
        else:
            from pdi.archive.blobs import VerifiedOctets

            with archive.open_located(whole) as opened:
                wave = waveform(VerifiedOctets(opened.reader), whole.media_type)
    except (UnsupportedError, LimitError) as exc:  # a recording the browser may play but pdi does not read
        return f'<p class="note">Stretches of this recording cannot be named here: {html.escape(str(exc))}.</p>{player}'

    interval = selected.fragment.interval if selected is not None and selected.fragment is not None else None
    cited = band = ""
    start = end = ""
    if interval is not None and interval.rate:
        a, b = interval.seconds
        start, end = f' value="{a:.3f}"', f' value="{b:.3f}"'
        cited = f' data-start="{a}" data-end="{b}"'
        if wave.duration:
            band = (
                f'<div class="band cited" id="cited" style="left:{100 * a / wave.duration:.4f}%;'
                f'width:{100 * (b - a) / wave.duration:.4f}%"></div>'
            )
    peaks = json.dumps(wave.to_json()).replace("<", "\\u003c")
    step = f'min="0" max="{wave.duration:.3f}" step="0.001"'
    return (
        cite_panel(
            scripted_or("Drag on the waveform to name a stretch of the recording (or give its start and end in"
                        " seconds)", "A stretch of the recording is named")
            + ": <code>#sec=a,b</code>, or <code>#msec=a,b</code> where a second is too coarse.",
            forms=("mediafrag", "annotation"), why=_WHY_TIME, written="<code>#sec=a,b</code>, <code>#msec=a,b</code>",
            cited=opened_name(opened_at, selected, bool(band)),
        )
        + player
        + _PLAYER_NOTE
        + f'<div class="wave" id="wave" data-pdi="{html.escape(name)}"{cited}>'
        f'<canvas id="wave-canvas" aria-label="waveform of {wave.duration:.3f} seconds"></canvas>{band}'
        '<div class="band" id="wave-selection" hidden></div></div>'
        f'<script type="application/json" id="peaks">{peaks}</script>'
        # the start, the end and Play work by the script only: not drawn without one (needs-script); the player's are
        f'<fieldset class="coords needs-script"><legend>Stretch in seconds (of {wave.duration:.3f})</legend>'
        f'<label>start <input type="number" id="start" {step}{start}></label>'
        f'<label>end <input type="number" id="end" {step}{end}></label>'
        f'<button type="button" id="play"{"" if start else " disabled"}>Play the selection</button></fieldset>'
    )


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f} s"


def video_view(archive: Archive, whole: Resolved, selected: Resolved | None, opened_at: str) -> str:
    """A player (pdi's own N2R, seekable by ``Range``), a timeline to mark in and out on, and a box to drag on a frame.
    ``opened_at``: the name the page was opened at, shown in the Cite panel when its clip or region is marked.

    A cited clip (``sec``, ``msec``, or ``#t=`` translated) is said in words, marked on the timeline, and the
    player's source carries its Media Fragments ``#t=a,b``: the browser starts there and stops at its end even
    without scripts. A cited region shows the frame the name names (its whole frame, decoded by ffmpeg as N2R
    decodes it, as the player's poster) with the region outlined. The timeline, the marks, the time typed and
    the box reuse the sound's and the image's code (:mod:`pdi.server.pages.viewer_script`): one way to name.
    """
    name = str(whole.pdi)
    src = n2r_href(name)
    info = archive.video_of(whole.record)
    if info is None or not info.width:
        why = "ffprobe did not read it at deposit" if info is None else "it has no picture, only sound"
        return (f'<p class="note">Clips and regions of this video cannot be named here: {why}.</p>'
                f'<video id="player" controls preload="metadata" src="{html.escape(src)}"></video>')
    fragment = selected.fragment if selected is not None else None
    interval = fragment.interval if fragment is not None else None
    region = fragment.region if fragment is not None else None
    scale = max(1, MIN_IMAGE_WIDTH // info.width)
    width, height = info.width * scale, info.height * scale
    if width > 1000:  # the page's width: shown smaller, its aspect kept
        width, height = 1000, round(1000 * info.height / info.width)
    attributes = ""
    said = cited_band = cited_box = start = end = at = ""
    if interval is not None:
        a, b = interval.start, interval.end
        said = (f'<p class="clip" id="clip">The clip cited: from {_seconds(a)} up to {_seconds(b)}'
                f" ({_seconds(b - a)} of {_seconds(info.duration_ms)}).</p>")
        src += f"#t={a / 1000:.3f},{b / 1000:.3f}"
        start, end = f' value="{a / 1000:.3f}"', f' value="{b / 1000:.3f}"'
        attributes = f' data-start="{a / 1000}" data-end="{b / 1000}"'
        if info.duration_ms:
            cited_band = (f'<div class="band cited" id="cited-clip" style="left:{100 * a / info.duration_ms:.4f}%;'
                          f'width:{100 * (b - a) / info.duration_ms:.4f}%"></div>')
    poster = preload = data_at = ""
    if region is not None:
        data_at = f' data-at="{region.frame}"'
        said = (f'<p class="clip" id="clip">The region cited: pixels ({region.x1},{region.y1}) to'
                f" ({region.x2},{region.y2}) of the first frame at or after {_seconds(region.frame)}.</p>")
        src += f"#t={region.frame / 1000:.3f}"
        frame = f"{name}#rect=(0,0),({info.width},{info.height}),{region.frame}"
        poster, preload = f' poster="{html.escape(n2r_href(frame))}"', "none"
        at = f' value="{region.frame}"'
        cited_box = _cited_box(region)
    corners = _corners(region, info.width, info.height)
    peaks = json.dumps({"duration": info.duration, "peaks": []})
    step = f'min="0" max="{info.duration:.3f}" step="0.001"'
    return (
        said
        + cite_panel(
            scripted_or("Mark in and out on the timeline (the buttons, or the keys I and O, at the player's time;"
                        " or drag on the timeline) to name a clip", "A clip is named")
            + ": <code>#msec=a,b</code> (<code>#sec=a,b</code> in whole seconds). "
            + scripted_or("Pause on a frame and drag a box on it (after <em>Box on the frame</em>) to name a region",
                          "A region of a frame is named")
            + ": <code>#rect=(x1,y1),(x2,y2),t</code> in the video's own pixels, at <code>t</code> milliseconds.",
            forms=("mediafrag", "annotation"),
            why=_WHY_TIME + " A region of a frame has no Media Fragments form (<code>#xywh=</code> is an image's).",
            written="<code>#msec=a,b</code>, <code>#sec=a,b</code>, <code>#rect=(x1,y1),(x2,y2),t</code>",
            cited=opened_name(opened_at, selected, bool(cited_band or cited_box)),
        )
        + _PLAYER_NOTE  # above the player, which may fill the window
        + f'<div class="figure video" id="figure" data-pdi="{html.escape(name)}" data-width="{info.width}"'
        f' data-height="{info.height}" data-video="1"{data_at}>'
        f'<video id="player" controls preload="{preload or "metadata"}" src="{html.escape(src)}"{poster}'
        f' style="width:{width}px;aspect-ratio:{width}/{height}" aria-label="the video, {info.width}×{info.height},'
        f' {_seconds(info.duration_ms)}"></video>'
        f'{cited_box}<div class="box selection" id="selection" hidden></div></div>'
        + f'<div class="wave timeline" id="wave" data-pdi="{html.escape(name)}"{attributes}'
        f' data-hint="Mark in and out (I, O), or drag on the timeline, to name a clip.">'
        f'<canvas id="wave-canvas" aria-label="timeline of {info.duration:.3f} seconds"></canvas>{cited_band}'
        '<div class="band" id="wave-selection" hidden></div><div class="playhead" id="playhead"></div></div>'
        f'<script type="application/json" id="peaks">{peaks}</script>'
        # the marks, the times, Play, the box and its corners work by the script only: not drawn without one
        # (needs-script); the clip or the region cited is said in words above, the player's controls play it
        f'<fieldset class="coords needs-script"><legend>Clip in seconds (of {info.duration:.3f})</legend>'
        '<button type="button" id="mark-in" aria-keyshortcuts="I">Mark in (I)</button>'
        '<button type="button" id="mark-out" aria-keyshortcuts="O">Mark out (O)</button>'
        f'<label>start <input type="number" id="start" {step}{start}></label>'
        f'<label>end <input type="number" id="end" {step}{end}></label>'
        f'<button type="button" id="play"{"" if start else " disabled"}>Play the selection</button></fieldset>'
        f'<fieldset class="coords needs-script"><legend>Region of a frame in pixels ({info.width}×{info.height}; x2, y2 excluded)'
        '</legend><button type="button" id="video-box-mode" aria-pressed="false">Box on the frame</button>'
        f'{corners}<label>at ms <input type="number" id="frame" min="0" max="{info.duration_ms}" step="1"'
        f' inputmode="numeric"{at}></label></fieldset>'
    )
