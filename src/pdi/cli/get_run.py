"""`pdi get` itself, without click: what the command does once its arguments are read.

:mod:`pdi.cli.read_cmd` declares the command for click and calls
:func:`run_get`; :mod:`pdi.cli.fast_get` calls it straight from ``main``
for a plain command line (a name, ``--archive``, ``-o``, ``--latest``,
``--info``), so that reading one name does not import click.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pdi._wording import MESSAGE_MOST, NAME_MOST, clipped, plural
from pdi.archive import Generic, Resolved
from pdi.cli.archive_io import open_archive, unwritable, write_out
from pdi.cli.commands import EXIT_PAST_END, EXIT_USAGE, one_line
from pdi.errors import NotFoundError, ParseError

if TYPE_CHECKING:
    from pdi.archive.results import SgmlParse
    from pdi.fragments.image_size import ImageShown
    from pdi.fragments.pdf import TextLayer
    from pdi.fragments.video import VideoInfo


def say(line: str, *, err: bool = False) -> None:
    """Write ``line`` and a newline to standard output (``err``: standard error) and flush, as ``click.echo`` does.

    What ``pdi get`` prints of a stranger's text passes :func:`pdi.cli.commands.one_line` or is a parsed
    name first, so no control character reaches the terminal.
    """
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{line}\n")
    stream.flush()


def _print_generic(generic: Generic) -> None:
    """Every version of a generic PDI: a comment line each (number, deposit time), then its format names."""
    say(f"# {generic.pdi}")
    for version in generic.versions:
        say(f"# version {version.number}, deposited {version.created_at}")
        for name in version.formats:
            say(str(name))


def _sgml_parse_line(sgml: SgmlParse) -> str:
    """What ``pdi get --info``'s ``sgml-parse`` line says of an SGML document's parse at deposit: each part true
    then and later (the parse is kept; a DTD the archive keeps is never replaced)."""
    declared = one_line(sgml.declared) if sgml.declared else sgml.declared  # the document's own words
    if sgml.not_parsed is not None:
        named = f" ({declared})" if declared else ""
        return f"no parse{named}: {one_line(sgml.not_parsed)}"
    if sgml.dtd_found:
        kept = f"; the archive's SGML folder keeps it: {one_line(sgml.kept)}" if sgml.kept else ""
        how = f"DTD found ({declared}{kept})" if declared else "DTD found"
    else:
        how = ((f"no DTD found at deposit for {declared} (neither the archive's SGML folder nor this machine's SGML"
                " catalogs had it; pdi sgml add makes it found for documents deposited after)") if declared
               else "no DTD found (no document type declaration)")
        how += (": parsed without one, by SGML's rules for an undeclared element (every element undefined,"
                " content ANY, an end tag omitted only where an ancestor's end tag closes it)")
    return f"{how}; {plural(sgml.errors, 'parser error')} (OpenSP onsgmls)"


def _print_info(
    result: Resolved, *, pending: bool = False, layer: TextLayer | None = None,
    sgml: SgmlParse | None = None, video: VideoInfo | None = None,
    message: dict[str, Any] | None = None, capture: dict[str, Any] | None = None, image: ImageShown | None = None,
) -> None:
    """``pdi get --info``: one ``key<TAB>value`` line per fact of :func:`pdi.archive.describe.describe`.

    ``pending``: the stored text waits in the indexer's queue (a ``search-index<TAB>pending`` line);
    ``layer``: a PDF's text layer (a ``text-layer`` line); ``sgml``: an SGML document's parse at deposit
    (an ``sgml-parse`` line: DTD found or not, which its declaration names, and onsgmls's error count; or why it
    has none: refused at deposit, or not parsed then); ``video``: what
    ffprobe read of a video at deposit (a ``video`` line); ``message``: an e-mail's facts (``from``, ``to``,
    ``date``, ``subject``, ``message-id``, ``in-reply-to``, ``references``, ``body`` and a ``part`` line a part);
    ``capture``: a capture's parts (:meth:`pdi.archive.Archive.capture_of`: a ``root`` line and a ``part`` line a
    part, as an e-mail's); ``image``: an image's size, frames and EXIF orientation, and its size as a browser shows
    it (an ``image`` line).
    """
    from pdi.archive.describe import describe

    about = describe(result, text_layer=layer, video=video, message=message, image=image)
    stored = about["stored"]
    say(f"pdi\t{about['pdi']}")
    say(f"media-type\t{about['media_type']}")
    if about["charset"]:
        say(f"charset\t{about['charset']}")
    say(f"bytes\t{about['bytes']}")
    selection = about.get("fragment")
    if selection is None:
        say(f"sha256\t{stored['sha256']}")
    else:  # the fragment's bytes are cut (or made) from these stored ones
        say(f"stored-bytes\t{stored['bytes']}")
        say(f"stored-sha256\t{stored['sha256']}")
    say(f"kept\t{stored['kept']}")
    if stored["line_ending"]:  # a text kept CRLF-canonical only (deposited before schema 4)
        say(f"original-line-endings\t{stored['line_ending']}")
    if (t := about.get("text_layer")) is not None:
        if t["empty"]:
            say(f"text-layer\tnone on its {plural(t['pages'], 'page')}: no text layer: cite by page and region")
        else:
            say(f"text-layer\t{plural(t['characters'], 'character')} on {plural(t['pages'], 'page')},"
                       f" {t['bytes']} octets in UTF-8, sha256 {t['sha256']}")
        if t.get("page_tree"):
            from pdi.fragments.pdf_positions import page_tree_said

            say(f"page-tree\t{page_tree_said(t['page_tree'])}: no page or region of it is cited")
    elif about["stored"]["media_type"] == "application/pdf":
        from pdi.archive.readable import PDF_LAYER_UP_TO

        say("text-layer\tnone made at deposit (PDFium could not read it: damaged, needing a password, or past"
            f" pdi's limits; or it was over {PDF_LAYER_UP_TO >> 20} MiB): cite by page and region")
    if sgml is not None:
        say(f"sgml-parse\t{_sgml_parse_line(sgml)}")
    if (v := about.get("video")) is not None:
        picture = f"{v['width']}x{v['height']} {v['video_codec']}" if v["video_codec"] else "no picture"
        sound = ", ".join(v["audio_codecs"]) or "no sound"
        cut = v.get("cut_short_at_ms")
        damage = "" if cut is None else f"; cut short: its packets end at {cut / 1000:.3f} s"
        say(f"video\t{v['duration_ms'] / 1000:.3f} s, {picture}, {sound} ({v['container']}{damage})")
    elif about["stored"]["media_type"].startswith("video/"):
        say("video\tffprobe cannot read it (not WebM, MP4 or Ogg, or not what it says): no time fragments")
    if (i := about.get("image")) is not None:
        turned = f", shown turned {i['shown']['width']}x{i['shown']['height']}" if i["orientation"] != 1 else ""
        say(f"image	{i['width']}x{i['height']} pixels, {plural(i['frames'], 'frame')}, EXIF orientation"
            f" {i['orientation']}{turned}")
    if (m := about.get("message")) is not None:
        _print_message(m)
    elif about["stored"]["media_type"] == "message/rfc822":
        say("message\tPython's email cannot read it within pdi's limits (deposited with --force): no body text")
    if capture is not None:
        _print_capture(capture)
    if pending:  # resolvable now; `pdi search` finds its text once `pdi index` (or serve's indexer) has read it
        say("search-index\tpending")
    if selection is None:
        return
    for span in selection["ranges"] if selection["scheme"] != "part" else ():
        none = ", none: an empty range" if span["start"] == span["end"] else ""
        say(f"range\tchar={span['start']},{span['end']} (octets {span['byte_start']} to {span['byte_end']}{none})")
    if (r := selection["region"]) is not None and about["stored"]["media_type"].startswith("video/"):
        say(f"region\t({r['x1']},{r['y1']}),({r['x2']},{r['y2']}) of the first frame at or after"
                   f" {r['frame'] / 1000:.3f} s ({r['width']}x{r['height']} pixels), cut out as PNG")
    elif (r := selection["region"]) is not None and about["stored"]["media_type"] == "application/pdf":
        say(f"region\t({r['x1']},{r['y1']}),({r['x2']},{r['y2']}) in points, on page {r['frame'] + 1} of"
            f" {r['frames']} (rect= counts pages from 0; the page line says its size)")
    elif (r := selection["region"]) is not None:
        say(f"region\t({r['x1']},{r['y1']}),({r['x2']},{r['y2']}) of frame {r['frame']}"
                   f" ({plural(r['frames'], 'frame')} of {r['width']}x{r['height']} pixels)")
    if (i := selection["interval"]) is not None and about["stored"]["media_type"].startswith("video/"):
        say(f"interval\t{i['start'] / 1000:.3f} s to {i['end'] / 1000:.3f} s of {i['length'] / 1000:.3f} s"
                   f" (milliseconds {i['start']} to {i['end']}; the answer is the whole video)")
    elif (i := selection["interval"]) is not None:
        say(f"interval\tsample frames {i['start']} to {i['end']} of {i['length']}"
                   f" ({i['start'] / i['rate']:.3f} s to {i['end'] / i['rate']:.3f} s at {i['rate']} Hz,"
                   f" {plural(i['channels'], 'channel')})")
    if selection["scheme"] == "part":
        span = selection["ranges"][0]
        say(f"part\t{span['start']} of the message: {span['byte_end']} octets, transfer encoding removed")
    if (p := selection.get("page")) is not None and not selection["past_end"]:
        say(f"page\t{p['number']} of {p['pages']} ({p['width']:g} x {p['height']:g} points)")
    if selection["clamped"]:
        say("clamped\ttrue")
    if selection["past_end"]:
        say("past-end\ttrue")


def _print_message(m: dict[str, Any]) -> None:
    """The lines of an e-mail's facts (docs/email.md)."""
    for key in ("from", "to", "cc", "date", "subject"):
        if m[key] is not None:
            say(f"{key}\t{one_line(m[key])}")
    if m["message_id"]:
        say(f"message-id\t{one_line(m['message_id'])}")
    if m["in_reply_to"]:
        say(f"in-reply-to\t{one_line(' '.join(m['in_reply_to']))}")
    if m["references"]:
        say(f"references\t{one_line(' '.join(m['references']))}")
    body = m["body"]
    if body is None:
        say("body\tnone: no text/plain or text/html part that is not an attachment (char= selects nothing)")
    else:
        charset = f"; charset={body['charset']}" if body["charset"] else ""
        length = (f"{plural(body['characters'], 'character')} of body text (char= and line= count on it)"
                  if body["characters"] is not None else "its text is past pdi's limit (char= and line= refused)")
        say(f"body\tpart {body['part']} ({one_line(body['media_type'] + charset)}): {length}")
    from pdi.mhtml.locations import comparable

    locations = {comparable(part["location"]) for part in m["parts"] if part["location"]}
    for part in m["parts"]:  # every word of it the message's own: printed as one line
        names = [f"filename {part['filename']!r}" if part["filename"] else "",
                 f"cid:{part['content_id']}" if part["content_id"] else "",
                 f"location {part['location']}" if part["location"] else "",
                 part["disposition"] or ""]
        named = ", ".join(n for n in names if n)
        say("part\t" + one_line(f"{part['part']}: {part['media_type']}" + (f" ({named})" if named else "")
                                 + _by_file_name(part["filename"], locations)))
    for defect in m["defects"]:
        say(f"defect\t{one_line(defect)}")


def _by_file_name(filename: str | None, locations: set[str]) -> str:
    """The fragment that names a part by its file name, ready to write after the name (``: #part=schedule%2Etxt``:
    its reserved characters %-escaped, PDI-GRAMMAR.md §1), or nothing: for a part without one, and for a file name
    that ``part=`` reads first as a ``cid:`` or another part's Content-Location (PDI-GRAMMAR.md §3, e-mail), where
    the part's number is the name to write."""
    from pdi.identifier import Fragment
    from pdi.mhtml.locations import comparable

    if not filename or filename.startswith("cid:") or comparable(filename) in locations:
        return ""
    try:
        return f": #{Fragment('part', (filename,))}"
    except ParseError:  # no UTF-8 for it (a lone surrogate): no name to offer
        return ""


def _print_capture(c: dict[str, Any]) -> None:
    """The lines of a capture's parts, in the form of an e-mail's (:func:`_print_message`): the root, the page
    its passages are counted in, then a ``part`` line a part (every label the file's own: printed as one line)."""
    if not c["readable"]:
        say(f"parts\tnot listed: {c['why']}")
        return
    root = c["parts"][[p["part"] for p in c["parts"]].index(c["root"])]
    charset = f"; charset={root['charset']}" if root["charset"] else ""
    say("root\t" + one_line(f"part {root['part']} ({root['media_type']}{charset})")
        + ": the page replay shows (char=, line=, elt= and name= select in it)")
    for part in c["parts"]:
        names = [f"location {part['location']}" if part["location"] else "",
                 f"cid:{part['content_id']}" if part["content_id"] else ""]
        named = ", ".join(n for n in names if n)
        say("part\t" + one_line(f"{part['part']}: {part['media_type']}" + (f" ({named})" if named else "")))


def _is_text_media(media_type: str) -> bool:
    """Whether content of ``media_type`` is text/*, which may be written to a terminal."""
    return media_type.split(";", 1)[0].strip().lower().startswith("text/")


def _binary_on_terminal(result: Resolved, output: str | None) -> bool:
    """Whether content that is not text/* would go to a terminal without ``-o``: if so, say so (the caller exits 2)."""
    if output is None and not _is_text_media(result.media_type) and sys.stdout.isatty():
        say(
            f"pdi: {result.pdi} is {result.media_type}, binary output that can mess up a terminal:"
            " not written; give -o FILE, or -o - to write it to the terminal anyway",
            err=True,
        )
        return True
    return False


def say_lenient(name: str) -> None:
    """Say on stderr each lenient reading of ``name`` (PDI-GRAMMAR.md: a missing version read as 1, a one-digit
    month or day padded, a version's leading zeros: "the lenient parser supplies … and says so"), as ``pdi parse``
    says them; a name that does not parse says nothing here (the command's own refusal names what is wrong)."""
    from pdi.errors import PDIError
    from pdi.identifier import PDI

    try:
        readings = PDI.parse(name).warnings
    except PDIError:
        return
    for reading in readings:
        say(f"warning: {clipped(reading, MESSAGE_MOST)}", err=True)


def run_get(pdi: str, *, output: str | None, latest: bool, info: bool, archive: str) -> int:
    """Do what ``pdi get`` does with these arguments (read by click or by :mod:`pdi.cli.fast_get`); the exit status.

    Errors of the :mod:`pdi.errors` family are raised, for the caller to print as one line. An ``-o`` that cannot be
    written is a usage mistake (exit 2), said before the archive is opened.
    """
    if not info and (why := unwritable(output)) is not None:
        say(f"pdi: {why}", err=True)
        return EXIT_USAGE
    with open_archive(archive) as opened:
        if "#" in pdi:  # perhaps a browser fragment (no fragment, no alias: its module stays unloaded)
            from pdi.interop.aliases import alias_fragment, native_names

            if alias_fragment(pdi) is not None:  # a browser fragment: the native name it equals
                native = str(native_names(opened, pdi).native)
                say(f"note: {clipped(pdi, NAME_MOST)} is {clipped(native, NAME_MOST)}", err=True)
                pdi = native
        try:
            located = opened.locate(pdi, latest=latest)
        except NotFoundError as exc:  # only this path reads more: what the archive holds near the name
            raise opened.not_found(exc, pdi) from None
        say_lenient(pdi)
        if isinstance(located, Generic):
            _print_generic(located)
            return 0
        if located.pdi.fragment is None:  # the whole representation: streamed, never held
            if info:
                _print_info(located, pending=opened.index_pending_of(located.record),
                            layer=opened.text_layer_of(located.record), sgml=opened.sgml_parse_of(located.record),
                            video=opened.video_of(located.record), message=opened.message_of(located.record),
                            capture=opened.capture_of(located.record), image=opened.image_of(located.record))
            else:
                if _binary_on_terminal(located, output):
                    return EXIT_USAGE
                with opened.open_located(located) as whole:
                    write_out(whole.reader.chunks(), output)
            return 0
        clip = opened.locate_clip(located)  # a video's time fragment: the whole video, streamed, never held
        # a part of a large message: decoded from its verified chunks as it is written, never held
        part = opened.locate_message_part(located) if clip is None else None
        result = clip if clip is not None else part.resolved if part is not None else opened.resolve(pdi, latest=latest)
        assert not isinstance(result, Generic)
        facts: dict[str, Any] = {
            "pending": info and opened.index_pending_of(result.record),  # read while the archive is open
            "layer": opened.text_layer_of(result.record) if info else None,
            "sgml": opened.sgml_parse_of(result.record) if info else None,
            "video": opened.video_of(result.record) if info else None,
            "message": opened.message_of(result.record) if info else None,
            "capture": opened.capture_of(result.record) if info else None,
            "image": opened.image_of(result.record) if info else None,
        }
        no_text = not info and _scan_text(opened, result)
        if clip is not None:
            with opened.open_located(located) as whole:
                return _answer(clip, facts, info=info, output=output,
                               write=lambda: write_out(whole.reader.chunks(), output))
        if part is not None:
            streamed = part
            return _answer(streamed.resolved, facts, info=info, output=output,
                           write=lambda: write_out(streamed.pieces(), output))
    if no_text and result.fragment is not None:
        say(f"note: {clipped(str(result.pdi.without_fragment()), NAME_MOST)} has no text (its text layer is empty:"
            f" a scan without OCR, or pages of images only), so #{result.fragment.scheme}= selects no characters;"
            " cite the scan by #page= and #rect=, whose region the resolver renders as PNG (Accept: image/png)",
            err=True)
    return _answer(result, facts, info=info, output=output, write=lambda: write_out(result.data, output))


#: The fragments of a PDF that select characters of its text layer.
_TEXT_SCHEMES = frozenset({"char", "line", "rect", "viewrect"})


def _scan_text(opened: Any, result: Resolved) -> bool:
    """Whether ``result`` is characters selected from a PDF whose text layer is empty (a scan without OCR): then
    nothing it selects is text, which ``pdi get`` says besides printing nothing."""
    selection = result.fragment
    if result.record.media_type != "application/pdf" or selection is None or selection.data:
        return False
    if selection.scheme not in _TEXT_SCHEMES:
        return False
    layer = opened.text_layer_of(result.record)
    return layer is not None and not layer.text


def _answer(result: Resolved, facts: dict[str, Any], *, info: bool, output: str | None,
            write: Callable[[], None]) -> int:
    """Print ``--info`` (``facts``: what :func:`_print_info` takes besides ``result``) or ``write`` the answer,
    and warn of a fragment clamped or past the end; the exit status."""
    selection = result.fragment
    if info:
        _print_info(result, **facts)
    elif _binary_on_terminal(result, output):
        return EXIT_USAGE
    if selection is not None and selection.past_end:
        from pdi.fragments import past_end_message

        say(f"warning: {clipped(past_end_message(result.pdi, selection), MESSAGE_MOST)}", err=True)
    elif selection is not None and selection.clamped and not info:
        say(f"warning: {clipped(str(result.pdi), NAME_MOST)} reaches past the end: clamped to it", err=True)
    elif selection is not None and not info and result.pdi.fragment is not None:
        from pdi.fragments import position_note

        if (note := position_note(result.pdi.fragment.positions, selection)) is not None:
            say(f"note: {note}", err=True)
    if not info:
        write()
    return EXIT_PAST_END if selection is not None and selection.past_end else 0
