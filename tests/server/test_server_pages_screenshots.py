"""Every page of the resolver as a reader sees it: opened in Chromium, checked, and saved as a screenshot.

The screenshots go to ``tests/artifacts/screenshots/`` (ignored by git; or
``$PDI_SCREENSHOTS``) for a person to look at after a run. Each page is also
checked for what must be on it, so a blank or broken page fails. Each is saved
twice: as it is drawn by default (``NAME.png``) and for a reader whose system
prefers a dark colour scheme (``NAME-dark.png``), whose background must be dark
and its text legible on it.
"""

from __future__ import annotations

import base64
import os
import time
import urllib.parse
from pathlib import Path

import pytest
from server_helpers import TEXT, Served

from chromium_helpers import open_page
from pdi.capture.browser import Pipe, devtools

SHOTS = Path(os.environ.get("PDI_SCREENSHOTS") or Path(__file__).resolve().parents[1] / "artifacts" / "screenshots")

#: page name -> (what to open, a JavaScript expression that must be true on it)
#: Where "world" begins and "line" ends in the served text as stored (CRLF-canonical, counted in code points).
_CANONICAL = TEXT.decode("utf-8").replace("\n", "\r\n")
_WORDS = (_CANONICAL.find("world"), _CANONICAL.find("line") + len("line"))

PAGES = {
    "home": ("/", "document.querySelector('input, form') !== null && document.body.innerText.includes('library.example.us')"),
    # a short text: the passage marked and in view, the names' places (PDI, RFC 5147) ready before any selection, the
    # PDI's holding the name the page was opened at, its Copy button ready
    "text": ("/view?pdi={text}%23char=7,12", "document.querySelector('mark') && document.querySelector('mark').textContent === 'world'"
             " && document.querySelector('mark').getBoundingClientRect().bottom <= innerHeight"
             " && document.getElementById('name').value.endsWith('.text.1#char=7,12') && document.getElementById('rfc5147')"
             " && !document.getElementById('copy-name').disabled"),
    # a 40×30 image shown 12 times larger, (10,5),(30,25) outlined (a quarter of the width from the left) and in view
    # one name per selection: the other forms folded under "Other forms", with why their numbers differ (issue 26)
    "text-forms": ("/view?pdi={text}%23char=7,12", "!document.getElementById('other-forms').open"
                   " && document.getElementById('why').textContent.includes('RFC 5147 counts a line end as one character')"
                   " && document.getElementById('textfrag') !== null && document.getElementById('annotation') !== null"
                   " && document.getElementById('text').tabIndex === 0 && document.getElementById('cite-selection') !== null"),
    "image": ("/view?pdi={picture}%23(10,5),(30,25)", "document.querySelector('img') && document.querySelector('img').naturalWidth === 40"
              " && Math.abs(document.getElementById('cited').getBoundingClientRect().left - document.getElementById('image')"
              ".getBoundingClientRect().left - 10 * 12) < 1 && document.getElementById('x1') !== null"
              " && document.getElementById('cited').getBoundingClientRect().top >= 0"
              " && document.getElementById('cited').getBoundingClientRect().bottom <= innerHeight"),
    # 250 frames at 100 Hz: a waveform of 250 columns, in view, 1 s to 2 s marked (from 40% to 80% of its width)
    "sound": ("/view?pdi={sound}%23sec=1,2", "document.querySelector('audio') !== null"
              " && JSON.parse(document.getElementById('peaks').textContent).peaks.length === 250"
              " && Math.abs(document.getElementById('cited').getBoundingClientRect().width"
              " - 0.4 * document.getElementById('wave').getBoundingClientRect().width) < 1"
              " && document.getElementById('wave').getBoundingClientRect().top >= 0"
              " && document.getElementById('wave').getBoundingClientRect().bottom <= innerHeight"),
    # the source of a page the resolver replays: the page itself one click away
    "html-source": ("/view?pdi={page}%23elt=1,1&view=source", "document.querySelector('mark') !== null"
                    " && [...document.querySelectorAll('main a')].some((a) => a.textContent === 'the page'"
                    " && a.getAttribute('href') === '/view?pdi=' + encodeURIComponent("
                    "new URLSearchParams(location.search).get('pdi')))"),
    # archived pages, replayed in a frame from the replay origin under a banner
    # its banner headed by the URL and the date captured, the name (which encapsulates the URL) in a details, closed
    "replay-capture": ("/view?pdi={capture}", "document.querySelector('iframe.replay').src.startsWith('{replay}/replay/')"
                       " && document.querySelector('.replay-banner a[href^=\"/captures?url=\"]') !== null"
                       " && document.querySelector('.replay-banner h1 .url').textContent === 'http://www.example.com/news/today.html'"
                       " && document.querySelector('.replay-banner h1').innerText.includes('captured 20')"
                       " && !document.querySelector('.replay-banner details.pdi-name').open"
                       " && document.querySelector('.replay-banner details.pdi-name code').textContent === new URLSearchParams(location.search).get('pdi')"),
    # the legacy rescue of a 1990s capture name (pdi.server.protocol.elsewhere): the capture shown, with a note at
    # the top that it is a later capture of the URL than the version the old name named, which was never kept
    "later-capture": ("/view?pdi={capture}&later=urn%3Apdi%3A%2F%2Foma.eop.gov.us%2F1994%2F10%2F20%2F"
                      "http%253a%252f%252fwww%252eexample%252ecom%252fnews%252ftoday%252ehtml.html.1",
                      "document.getElementById('later-capture').innerText.startsWith('This is a later capture (20')"
                      " && document.getElementById('later-capture').innerText.includes('(1994-10-20) was never kept')"
                      " && document.getElementById('later-capture').getBoundingClientRect().bottom < innerHeight"
                      " && document.querySelector('iframe.replay') !== null"),
    # its source, the viewer headed the same way
    "capture-source": ("/view?pdi={capture}&view=source", "document.querySelector('main h1 .url').textContent"
                       " === 'http://www.example.com/news/today.html'"
                       " && document.querySelector('main details.pdi-name code').textContent === new URLSearchParams(location.search).get('pdi')"),
    # a deposited HTML file (no URL): its banner says deposited, not captured (issue 26)
    "replay-html-elt": ("/view?pdi={page}%23elt=1,1", "document.querySelector('iframe.replay').src.endsWith('#pdi-passage')"
                        " && document.querySelector('.replay-banner').innerText.includes('deposited')"
                        " && !document.querySelector('.replay-banner').innerText.includes('captured')"
                        # the document's page one click away, as from every other viewer
                        " && document.querySelector('.replay-banner a[href=\"/view?pdi=' + encodeURIComponent("
                        "new URLSearchParams(location.search).get('pdi').split('#')[0].split('.').slice(0, -2).join('.')"
                        ") + '\"]').textContent === 'the document'"),
    "replay-select": ("/view?pdi={capture}&select=1", "document.querySelector('iframe.replay').getAttribute('sandbox') === 'allow-scripts'"
                      " && document.getElementById('char-name') !== null"),
    # a text over 1 MiB: a window around the passage, scrolled into view, selections named from the whole
    "long-text": ("/view?pdi={long}%23line=100000,100001", "document.getElementById('passage').textContent === '0100000 line of a long text\\n'"
                  " && window.scrollY > 1000 && Number(document.getElementById('text').dataset.offset) > 0"),
    # its head: over 1 MiB, its text waits for the indexer (pdi index) and the facts say so
    "long-text-head": ("/view?pdi={long}", "document.querySelector('dd.pending [role=status]').innerText.startsWith('index pending')"
                       " && document.querySelector('dd.pending').getBoundingClientRect().bottom <= innerHeight"),
    "generic": ("/view?pdi={versioned}", "document.querySelectorAll('#versions tbody tr').length === 2"),
    # the annotation server's operations, scrolled to: the role it needs and its answers
    "api-annotations": ("/api#post_api_annotations", "document.getElementById('post_api_annotations')"
                        ".getBoundingClientRect().top < innerHeight && document.getElementById('put_api_annotations_slug')"
                        " !== null && document.getElementById('post_api_annotations').innerText.includes('Slug')"),
    "api-docs": ("/api", "document.querySelectorAll('section h2 code').length >= 10"
                 " && document.body.innerText.includes('POST /api/deposit')"
                 " && document.getElementById('post_api_annotations').innerText.includes('curate')"
                 " && document.getElementById('problem-passage-orphaned') !== null"
                 " && document.getElementById('problem-passage-ambiguous') !== null"
                 " && document.body.innerText.includes('GET /api/annotation')"
                 " && document.body.innerText.includes('POST /api/annotation')"),
    # the problem types of /api/anchor, where a problem's type (/api#problem-…) leads: scrolled into view
    "api-problems": ("/api#problem-passage-orphaned",
                     "document.getElementById('problem-passage-orphaned').getBoundingClientRect().top >= -1"
                     " && document.getElementById('problem-passage-ambiguous').getBoundingClientRect().bottom <= innerHeight"
                     " && document.body.innerText.includes('exit status 13')"),
    # the type of a Memento 410 whose every memento was withdrawn, where its type leads: in view, with its member
    "api-problem-mementos": ("/api#problem-mementos-withdrawn",
                             "document.getElementById('problem-mementos-withdrawn').getBoundingClientRect().top >= -1"
                             " && document.getElementById('problem-mementos-withdrawn').getBoundingClientRect().bottom"
                             " <= innerHeight && document.getElementById('problem-mementos-withdrawn').innerText"
                             ".includes('Extension member: withdrawn')"),
    # the custom formats /openapi.json names (x-pdi-formats), where its description sends a reader: in view
    # (its top may be a fraction of a pixel above the window: the browser scrolls by whole pixels)
    "api-formats": ("/api#formats", "document.getElementById('formats').getBoundingClientRect().top > -1"
                    " && document.getElementById('formats').getBoundingClientRect().top < innerHeight"
                    " && document.querySelectorAll('#formats dt').length >= 15"
                    " && document.body.innerText.includes('pdi-passage')"),
    # full-text search: the hit in the text links to its passage, the word marked in the snippet
    "search": ("/search?q=world", "document.querySelector('ol.hits mark').textContent === 'world'"
               " && document.querySelector('ol.hits a').getAttribute('href').includes('%23char=7,12')"
               " && document.querySelector('label[for=search-q]') !== null"
               # the text over 1 MiB waits for the indexer (pdi index): the page says so
               " && document.querySelector('p.pending[role=status]').innerText.startsWith('Index pending')"),
    # two words: the hit is named by the shortest stretch holding both (pdi.passages.hits.smallest_window),
    # counted in the text as it is stored (CRLF-canonical, code points: PDI-GRAMMAR.md), both words marked
    "search-words": ("/search?q=world+line", "document.querySelectorAll('ol.hits mark').length === 2"
                     f" && document.querySelector('ol.hits a').getAttribute('href').includes('%23char={_WORDS[0]},{_WORDS[1]}')"),
    # a query past the words the index reads (each Chinese character one): refused on the search page, saying why
    "search-too-long": ("/search?q=" + urllib.parse.quote("北京" * 65),
                        "document.querySelector('p.error[role=alert]').innerText.includes('128 words as the index"
                        " reads them') && document.getElementById('search-q').value.length === 130"),
    # a Chinese word inside a sentence written without spaces: found where it stands, marked, its name the passage
    "search-cjk": ("/search?q=%E5%8C%97%E4%BA%AC", "document.querySelector('ol.hits mark').textContent === '北京'"
                   " && document.querySelector('ol.hits a').getAttribute('href').includes('%23char=2,4')"
                   " && document.getElementById('search-q').value === '北京'"),
    # a search nothing holds: said so, the words kept in the box to change, and where else to look
    "search-nothing": ("/search?q=zzzzqqq", "document.querySelector('ol.hits') === null"
                       " && document.querySelector('main').innerText.includes('No passage searched so far holds all these words')"
                       " && document.getElementById('search-q').value === 'zzzzqqq'"
                       " && document.querySelector('main a[href=\"/series\"]') !== null"),
    # the error pages (pdi.server.pages.problem_pages), each in the app's layout with its status' heading:
    # a name of no series the archive has: no name to suggest, the name kept in the box to correct it
    "error": ("/view?pdi=urn:pdi://nowhere.example.us/2026/11/22/1.text.1",
              "document.querySelector('.problem h1').textContent === 'Not in this archive'"
              " && document.getElementById('site-pdi').value === 'urn:pdi://nowhere.example.us/2026/11/22/1.text.1'"
              " && document.querySelector('ul.nearest') === null && document.querySelector('footer a[href=\"/api\"]') !== null"),
    # a version that is not there: the document's versions and formats suggested, each a link
    "not-found-nearest": ("/view?pdi={versioned}.html.9", "document.querySelector('.problem h1').textContent === 'Not in this archive'"
                          " && document.querySelectorAll('ul.nearest a[href^=\"/view?pdi=\"]').length === 3"),
    # a citation's N2R address followed in a browser, of a name not held: the app's page (one h1, the way home, the
    # names of that day suggested), not problem JSON; the address stays the one followed
    "n2r-not-found": ("/uri-res/N2R?urn:pdi://library.example.us/2026/11/22/999.text.1",
                      "document.querySelectorAll('h1').length === 1"
                      " && document.querySelector('.problem h1').textContent === 'Not in this archive'"
                      " && document.querySelector('main a[href=\"/\"]') !== null"
                      " && document.querySelectorAll('ul.nearest a[href^=\"/view?pdi=\"]').length > 0"
                      " && location.pathname === '/uri-res/N2R'"),
    # a path the app has not: a page for a browser (its Accept names text/html), not problem JSON
    "unknown-path": ("/no/such/page", "document.querySelector('.problem h1').textContent === 'No such page'"
                     " && document.body.innerText.includes('/no/such/page')"),
    # a withdrawn name: its tombstone, what was here (format, size, SHA-256), when and why, how to cite it
    "tombstone": ("/view?pdi={withdrawn}", "document.querySelector('.problem h1').textContent === 'This name was withdrawn'"
                  " && document.querySelector('dl.tombstone').innerText.includes('deposited by mistake: a draft, not the minutes')"
                  " && document.querySelector('#withdrawn tbody tr td.number').textContent === '30'"
                  " && document.querySelector('#withdrawn code.sha').textContent.length === 64"
                  " && document.querySelector('blockquote.citation').innerText.includes('Withdrawn')"),
    # a private series' name: how to sign in, the sign-in link coming back to the name typed
    "forbidden": ("/view?pdi={private}", "document.querySelector('.problem h1').textContent === 'A token is needed to read this'"
                  " && decodeURIComponent(new URL(document.querySelector('.problem a[href^=\"/signin\"]').href).searchParams"
                  ".get('next')).includes('closed.example.us')"),
    # an image whose header claims more pixels than a browser is asked to decode (a pixel bomb, 100,000 × 100,000):
    # a blank stand-in of its shape (an SVG of its own), the size said in pdi's words, its octets linked
    "image-limit": ("/view?pdi={bomb}", "document.getElementById('image').getAttribute('src').startsWith('data:image/svg+xml')"
                    " && document.getElementById('not-drawn').innerText.includes('This image is 100,000×100,000,"
                    " 10,000,000,000 pixels')"
                    " && !document.body.innerText.includes('DOS attack')"),
    # a map scan of 12,000 × 9,000 pixels (more than a browser is asked to decode): the server's preview of it, 4,096
    # pixels wide and loaded, the region (a quarter from the left, half from the top) outlined on it, the size said
    "image-preview": ("/view?pdi={map}%23rect=(3000,4500),(9000,9000)",
                      "document.getElementById('image').getAttribute('src').startsWith('/api/image/preview?pdi=')"
                      " && document.getElementById('image').complete && document.getElementById('image').naturalWidth === 4096"
                      " && Math.abs(document.getElementById('cited').getBoundingClientRect().left - document.getElementById('image')"
                      ".getBoundingClientRect().left - document.getElementById('image').getBoundingClientRect().width / 4) < 1"
                      " && document.getElementById('not-drawn').innerText.includes('This image is 12,000×9,000, 108,000,000 pixels')"
                      " && document.getElementById('not-drawn').innerText.includes('preview')"),
    # a file larger than the viewer reads, of no kind it shows: its facts, and a note with links to its octets
    "not-read": ("/view?pdi={big_file}%23byte=0,100", "document.getElementById('not-read').innerText.includes('only its"
                 " facts are shown') && document.querySelectorAll('#not-read a[href^=\"/uri-res/N2R?\"]').length === 2"),
    # an e-mail of 34 MB, read by its structure: its header fields, its parts with their sizes (the one named marked),
    # its body's text, no not-read note
    "email-large": ("/view?pdi={big_email}%23part=1", "document.querySelectorAll('ul.parts li').length === 2"
                    " && document.querySelector('ul.parts li.chosen').innerText.includes('survey.tif')"
                    " && document.querySelector('ul.parts li.chosen').innerText.includes('MiB) as written')"
                    " && document.getElementById('text').innerText.includes('scanned and attached: café')"
                    " && document.getElementById('not-read') === null"),
    # a TIFF of more pages than the viewer counts: the limit said in pdi's words, its octets offered whole
    "tiff-limit": ("/view?pdi={pages}", "document.querySelector('.problem h1').textContent === 'Cannot show this: too large to show here'"
                   " && document.querySelector('.problem').innerText.includes('a TIFF of 5,001 pages or more')"),
    # a citation's name (A@position=B#fragment): the citing text, with what it cites and that the quotation stands
    "citation": ("/view?pdi={text}%400%3D{text}%23char%3D0%2C5", "document.getElementById('citation').innerText"
                 ".includes('The quotation stands there: \u201cHello\u201d')"
                 " && document.querySelector('#citation a[href$=\"%23char%3D0%2C5\"]') !== null"),
    # a version not the latest: the banner, the latest linked, the document's title
    "old-version": ("/view?pdi={versioned}.text.1", "document.querySelector('p.version-banner').innerText.includes('version 1 of 2')"
                    " && document.querySelector('p.version-banner a').getAttribute('href').endsWith('.text.2')"
                    " && document.querySelector('p.doc-title cite').textContent === 'Two versions, retitled'"),
    # the catalogue (pdi.server.pages.browse): series, a series by year and month, a year, a month, a day, captures
    "series-list": ("/series", "document.querySelectorAll('#series tbody tr').length === 2"),  # S and ELSEWHERE
    "series": ("/series/library.example.us", "document.querySelector('#years a[href=\"/series/library.example.us/2026/11\"]') !== null"),
    "series-year": ("/series/library.example.us/2026", "document.querySelectorAll('table.month').length >= 1"
                    " && document.querySelector('a[href=\"/series/library.example.us/2026/11/21\"]') !== null"),
    "series-month": ("/series/library.example.us/2026/11", "document.querySelector('#days a[href=\"/series/library.example.us/2026/11/22\"]') !== null"),
    # a day of the series on which nothing was minted: said so, no empty table, the month and the series linked
    "series-empty-day": ("/series/library.example.us/2026/11/01", "document.querySelector('table') === null"
                         " && document.querySelector('main').innerText.includes('0 documents minted on this day (GMT).')"
                         " && document.querySelector('main a[href=\"/series/library.example.us/2026/11\"]') !== null"),
    "series-day": ("/series/library.example.us/2026/11/22", "[...document.querySelectorAll('#documents tbody tr')].some(r => r.textContent.includes('Two versions, retitled'))"),
    "document": ("/view?pdi={versioned}", "document.querySelectorAll('#formats tbody tr').length === 3"
                 " && document.querySelectorAll('#statements tr.superseded').length === 1 && document.querySelector('#formats .ok') !== null"),
    "captures": ("/captures?url={captured}", "document.querySelectorAll('ol.timeline li').length === 4"),
    # signing in (pdi.server.pages.signin): a labelled field for the token, going on to the page the reader came from
    "signin-form": ("/signin?next=/series", "document.querySelector('label[for=token]').textContent === 'Token'"
                    " && document.querySelector('form.signin input[name=next]').value === '/series'"
                    " && document.querySelector('header a[href^=\"/signin\"]') !== null"),
    # the media issue 25 added: a PDF's facts with its text layer, an SGML element marked, a video's facts
    "pdf": ("/view?pdi={pdf}%23char=0,10", "document.body.innerText.includes('application/pdf')"),
    "sgml-elt": ("/view?pdi={sgml}%23elt=3,3", "document.querySelector('mark') !== null"
                 " && document.body.innerText.includes('text/sgml')"),
    # a video (64×48, 3 s) played from N2R: a clip cited (1 s to 2 s) said in words, in view with the player and the
    # timeline, marked a third of its width; a region of the frame at 1500 ms outlined over that frame (the poster);
    # a browser's #t= read as the msec it equals (the words' top may be a fraction of a pixel above the window: the
    # browser scrolls by whole pixels)
    "video": ("/view?pdi={video}%23sec=1,2", "document.body.innerText.includes('video/webm')"
              " && document.getElementById('player').tagName === 'VIDEO'"
              " && document.getElementById('clip').textContent === 'The clip cited: from 1.000 s up to 2.000 s (1.000 s of 3.000 s).'"
              " && Math.abs(document.getElementById('cited-clip').getBoundingClientRect().width"
              " - document.getElementById('wave').getBoundingClientRect().width / 3) < 1"
              " && document.getElementById('clip').getBoundingClientRect().top > -1"
              " && document.getElementById('wave').getBoundingClientRect().bottom <= innerHeight"),
    "video-region": ("/view?pdi={video}%23rect=(8,6),(40,30),1500", "document.getElementById('player').poster.includes('1500')"
                     " && Math.abs(document.getElementById('cited').getBoundingClientRect().left - document.getElementById('player')"
                     ".getBoundingClientRect().left - 8 * 7) < 1"
                     " && Math.abs(document.getElementById('cited').getBoundingClientRect().height - 24 * 7) < 1"
                     " && document.getElementById('cited').getBoundingClientRect().bottom <= innerHeight"
                     " && document.getElementById('x2').value === '40' && document.getElementById('frame').value === '1500'"),
    "video-alias": ("/view?pdi={video}%23t=1.25,2.5", "document.getElementById('alias').textContent"
                    ".includes('#t=1.25,2.5 is #msec=1250,2500')"
                    " && document.getElementById('start').value === '1.250' && document.getElementById('end').value === '2.500'"),
    # an e-mail: its header fields, its body's text with the passage marked, the places for a name ready
    "email": ("/view?pdi={email}%23char=0,16", "document.querySelector('mark').textContent === 'Thank you Jesus.'"
              " && document.querySelector('dl.message').innerText.includes('Andy Grunwald')"
              " && document.querySelector('dl.message').innerText.includes('Sat, 23 Apr 2016 18:18:56 +0200')"
              " && document.querySelector('a[href^=\"/thread?pdi=\"]') !== null && document.getElementById('name') !== null"),
    # its thread: the message it answers above it (linked), the reply to it below it (linked)
    "email-thread": ("/thread?pdi={email}", "document.querySelectorAll('ol.thread li').length === 3"
                     " && document.querySelectorAll('ol.thread a[href^=\"/view?pdi=\"]').length === 3"
                     " && document.querySelector('ol.thread li.this ol li') !== null"
                     # only this message is bold: its replies, nested in its item, are not
                     " && getComputedStyle(document.querySelector('ol.thread li.this .this-message')).fontWeight === '700'"
                     " && getComputedStyle(document.querySelector('ol.thread li.this ol li')).fontWeight === '400'"),
    # a reply's header fields: its In-Reply-To id a link to the thread of the message it answers (by Message-ID)
    "email-reply": ("/view?pdi={email}", "document.querySelector('dl.message a[href^=\"/thread?mid=%3C\"]') !== null"
                    " && document.querySelector('dl.message').innerText.includes('In-Reply-To')"),
    # the thread found by a mid: URL (RFC 2392): the same three messages, the first one this one
    "email-thread-mid": ("/thread?mid=mid:1460624816.5581.114.camel%2540example.com",
                         "document.querySelectorAll('ol.thread li').length === 3"
                         " && document.querySelector('ol.thread > li.this') !== null"
                         " && document.querySelector('ol.thread > li.this').innerText.includes('1460624816.5581.114')"),
    # a Message-ID no message deposited has: not in this archive, and no advice on correcting a PDI, none given
    "email-thread-missing": ("/thread?mid=mid:nobody%40example.com", "document.querySelector('.problem h1').textContent"
                             " === 'Not in this archive' && document.querySelector('.problem').innerText.includes("
                             "'No message with the Message-ID <nobody@example.com>')"
                             " && !document.querySelector('.problem').innerText.includes('Resolve box')"),
    # a message with an attachment: its parts, each a link to its octets (#part=N)
    "email-parts": ("/view?pdi={attached}", "document.querySelectorAll('ul.parts li').length === 2"
                    " && document.querySelector('ul.parts').innerText.includes('dingusfish.gif')"),
}

MEDIA_PAGES = ("pdf", "sgml-elt", "video", "video-region", "video-alias", "email", "email-thread", "email-parts",
               "email-reply", "email-thread-mid", "email-thread-missing",
               "tombstone", "forbidden", "image-limit", "image-preview", "not-read", "email-large", "tiff-limit",
               "search-cjk")


def page_url(served: Served, media: tuple[str, dict[str, str]], page: str) -> str:
    """The URL of ``page`` of :data:`PAGES`: on the served archive, or (the new media) on ``media``'s."""
    path = PAGES[page][0]
    names = {k: urllib.parse.quote(getattr(served, k), safe="")
             for k in ("text", "page", "picture", "sound", "versioned", "long", "capture", "captured")}
    base, held = media
    return (base if page in MEDIA_PAGES else served.url) + path.format(**names, **held)


@pytest.mark.parametrize("page", list(PAGES))
def test_each_page_shows_what_it_must_and_is_saved(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    check = PAGES[page][1]
    url = page_url(served, media, page)
    check = check.replace("{replay}", served.replay_url)
    with devtools() as pipe:
        session = open_page(pipe, url)
        deadline = time.monotonic() + 30
        size = {"width": 1100, "height": 700, "deviceScaleFactor": 1, "mobile": False}
        pipe.call("Emulation.setDeviceMetricsOverride", size, session, deadline)
        shown = pipe.call("Runtime.evaluate", {"expression": f"!!({check})", "returnByValue": True}, session, deadline)
        # at 1100 px nothing makes the page scroll sideways (a table of SHA-256s did)
        sideways = pipe.call("Runtime.evaluate", {"expression": "document.documentElement.scrollWidth - document.documentElement.clientWidth",
                                                   "returnByValue": True}, session, deadline)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
        # the same page for a reader whose system asks for a dark colour scheme (CSS Media Queries 5 §11.5)
        dark(pipe, session, deadline)
        colours = pipe.call("Runtime.evaluate", {"expression": COLOURS, "returnByValue": True}, session, deadline)
        dark_shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session, deadline)
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{page}.png").write_bytes(png)  # saved first: a failing page's picture shows what went wrong
    (SHOTS / f"{page}-dark.png").write_bytes(base64.b64decode(dark_shot["data"]))
    assert shown["result"]["value"] is True, f"{page}: {check}"
    assert sideways["result"]["value"] <= 0, f"{page} scrolls sideways by {sideways['result']['value']} px at 1100 px"
    # dark: the page drawn light on dark (its background's luminance low, its text's contrast at least WCAG's 4.5:1)
    background, text = (luminance(c) for c in colours["result"]["value"])
    assert background < 0.05, f"{page} in a dark scheme: its background {colours['result']['value'][0]} is not dark"
    assert (text + 0.05) / (background + 0.05) >= 4.5, f"{page} in a dark scheme: {colours['result']['value']}"


#: The colours the page is drawn in: [the body's background, its main text], as ``rgb(r, g, b)``.
COLOURS = "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.querySelector('main')).color]"


def dark(pipe: Pipe, session: str, deadline: float) -> None:
    """Emulate a system that prefers a dark colour scheme on the page of ``session``, and wait a frame for it."""
    pipe.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
              session, deadline)
    pipe.call("Runtime.evaluate", {"expression": "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))",
                                   "awaitPromise": True}, session, deadline)


def luminance(colour: str) -> float:
    """The relative luminance of an opaque CSS ``rgb(r, g, b)`` colour (WCAG 2.2, "relative luminance")."""
    numbers = colour[colour.index("(") + 1:colour.index(")")].replace(",", " ").split()
    assert len(numbers) == 3, f"{colour}: not an opaque rgb() colour"
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (int(n) / 255 for n in numbers)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
