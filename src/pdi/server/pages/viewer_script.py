"""The viewer's script: select → cite for texts, images, sound, video and PDFs (inline in the page; see :mod:`pdi.server.pages.viewer`)."""

SCRIPT = r"""
(function () {
  "use strict";
  // the path the resolver is served under (pdi.server.http.site: a proxy's /pdi), empty at a host's root
  const site = document.documentElement.dataset.site || "";
  // --- offering a name: verified by resolving it before it is shown, with a copy button -----------------
  const status = document.getElementById("cite-status");
  const serial = {};  // the latest check of each offer: an older answer arriving late is dropped
  function say(message, isError) {
    status.textContent = message;
    status.classList.remove("idle");  // "Nothing selected yet." said until now
    status.classList.toggle("error", !!isError);
  }
  function n2r(name) {  // RFC 2169 query: a %23 or %25 of the name kept, then # as %23 (pdi.server.protocol.rfc2169.rfc2169_query)
    return name.replace(/%(?=2[35])/g, "%25").replace(/#/g, "%23");
  }
  async function problem(response) {
    let detail = response.status + " " + response.statusText;
    if ((response.headers.get("content-type") || "").includes("json")) {
      const body = await response.json();
      detail = (body.title ? body.title + ": " : "") + (body.detail || body.error || detail);
    }
    return new Error(detail);
  }
  async function json(url) {
    const response = await fetch(url);
    if (!response.ok) throw await problem(response);
    return response.json();
  }
  function clear(id) {
    const input = document.getElementById(id);
    if (!input) return;
    serial[id] = (serial[id] || 0) + 1;
    input.value = "";
    input.title = "";
    input.placeholder = "(not yet)";
    input.dataset.state = "";
    input.dataset.error = "";
    document.getElementById("copy-" + id).disabled = true;
    document.getElementById("open-" + id).removeAttribute("href");
  }
  // Show `name` in the input `id` once `check()` resolves (or what it returns: {value, href}); the error it throws
  // otherwise. `quiet`: one of the other forms, whose failure is said in its own box ("none …"), not in the status.
  async function offer(id, name, href, check, quiet) {
    const input = document.getElementById(id);
    if (!input) return;
    const mine = serial[id] = (serial[id] || 0) + 1;
    input.value = "";
    input.title = "";
    input.placeholder = "(checking …)";
    input.dataset.state = "checking";
    input.dataset.error = "";
    input.dataset.candidate = name;
    document.getElementById("copy-" + id).disabled = true;
    document.getElementById("open-" + id).removeAttribute("href");
    if (!quiet) say("Checking " + name + " …");
    let error = null, got = null;
    try {
      got = await check();
    } catch (e) {
      error = e;
    }
    if (serial[id] !== mine) return;
    if (error) {
      input.dataset.state = quiet ? "none" : "error";
      input.dataset.error = quiet ? error.message : name + " does not resolve as selected: " + error.message;
      input.placeholder = quiet ? "none for this selection: " + error.message : "(not offered)";
      if (!quiet) say("Not offered: " + input.dataset.error, true);
      return;
    }
    input.value = got && got.value ? got.value : name;
    input.title = input.value;
    input.scrollLeft = input.scrollWidth;  // its end in view: the fragment, where names of one document differ
    input.dataset.state = "verified";
    document.getElementById("copy-" + id).disabled = false;
    document.getElementById("open-" + id).href = got && got.href ? got.href : href;
    if (!quiet) say("Resolved and checked: " + name);
  }
  function clearAll() { ["name", "rfc5147", "textfrag", "mediafrag", "annotation"].forEach(clear); }
  // a box filled while "Other forms" was closed had no width to scroll: its end brought in view when it opens
  const forms = document.getElementById("other-forms");
  if (forms) forms.addEventListener("toggle", function () {
    forms.querySelectorAll(".offer input").forEach(function (input) { input.scrollLeft = input.scrollWidth; });
  });
  // and when the window's width changes (a phone turned, a window narrowed), each name's end stays in view
  window.addEventListener("resize", function () {
    document.querySelectorAll(".cite .offer input").forEach(function (input) { input.scrollLeft = input.scrollWidth; });
  });
  function none(id, why) {
    offer(id, "", "", async function () { throw new Error(why); }, true);
  }
  // The other forms of `primary` (a name just offered), each checked to name what it names:
  // a browser fragment (#:~:text=, #xywh=, #t=) resolved by pdi to `primary`, a W3C annotation read back to it.
  function aliasForm(id, base, fragments, primary, why) {
    if (!document.getElementById(id)) return;
    if (!fragments.length) { none(id, why); return; }
    offer(id, base + "#" + fragments[0], view(base + "#" + fragments[0]), async function () {
      let last = null;
      for (const fragment of fragments) {
        const alias = base + "#" + fragment;
        try {
          const got = await json(site + "/api/resolve?pdi=" + encodeURIComponent(alias));
          if (got.pdi === primary) return {value: alias, href: view(alias)};
          last = new Error("its words stand first elsewhere (" + got.pdi.split("#")[1] + ")");
        } catch (e) {
          last = e;
        }
      }
      throw last;
    }, true);
  }
  function annotationForm(primary) {
    if (!document.getElementById("annotation")) return;
    const href = site + "/api/annotation?pdi=" + encodeURIComponent(primary);
    offer("annotation", primary, href, async function () {
      const exported = await json(href);
      if (exported.body !== primary) throw new Error("its body is " + exported.body);
      const response = await fetch(site + "/api/annotation", {method: "POST", headers: {"Content-Type": "application/json"},
                                                        body: JSON.stringify(exported)});
      if (!response.ok) throw await problem(response);
      const back = (await response.json()).results[0];
      if (!back || back.pdi !== primary) throw new Error("its selectors are read back as " + (back ? back.pdi : "nothing"));
      return {value: JSON.stringify(exported.target.selector)};
    }, true);
  }
  // Text directives (#:~:text=) naming [s, e) of `full` (the text as shown, LF line ends), the shortest first: the
  // words (or its first and last words, then its first and last lines), then each with up to three words of
  // context on either side; none when the selection starts or ends with white space (a directive quotes words).
  function directives(full, s, e) {
    const selected = full.slice(s, e);
    if (!selected || /^\s|\s$/.test(selected)) return [];
    const enc = function (t) { return encodeURIComponent(t).replace(/-/g, "%2D"); };
    const lines = selected.split("\n"), first = lines[0], last = lines[lines.length - 1];
    const pairs = [];
    if (lines.length === 1 && selected.length <= 120) pairs.push([selected]);
    const head = first.match(/^\S+(?:\s+\S+){0,3}/)[0], tail = last.match(/(?:\S+\s+){0,3}\S+$/)[0];
    if (lines.length > 1 || head.length + tail.length < selected.length) pairs.push([head, tail]);
    if (lines.length > 1 && first.length <= 120 && last.length <= 120 && (first !== head || last !== tail)) pairs.push([first, last]);
    const lineStart = full.lastIndexOf("\n", s - 1) + 1, lineEnd = full.indexOf("\n", e);
    const before = full.slice(lineStart, s).match(/(?:\S+\s+){0,2}\S+(?=\s*$)/);
    const after = full.slice(e, lineEnd < 0 ? full.length : lineEnd).match(/^\s*(\S+(?:\s+\S+){0,2})/);
    const found = [];
    pairs.forEach(function (terms) { found.push(":~:text=" + terms.map(enc).join(",")); });
    if (before || after) pairs.forEach(function (terms) {
      found.push(":~:text=" + (before ? enc(before[0]) + "-," : "") + terms.map(enc).join(",") + (after ? ",-" + enc(after[1]) : ""));
    });
    return found;
  }
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", async function () {
      const input = document.getElementById(button.dataset.for);
      try {
        await navigator.clipboard.writeText(input.value);
        say("Copied: " + input.value);
      } catch (e) {  // no clipboard (permission, plain HTTP): select it, copy it the old way, or let the reader
        input.focus();
        input.select();
        say(document.execCommand("copy") ? "Copied: " + input.value : "Selected: press Ctrl+C (⌘C) to copy it.");
      }
    });
  });
  function view(name) { return site + "/view?pdi=" + encodeURIComponent(name); }
  // The name the page was opened at (the panel's data-cited: set by the server only when its fragment resolved and
  // the page marks what it names), shown in the PDI's box at once, as a checked selection's name is, until the reader
  // selects something else. Each medium's part below offers its other forms, checked against `primary`: the same
  // passage (region, stretch) named as a selection of it is, e.g. #char= for a #line= (the forms resolve to that).
  const cited = (document.querySelector(".cite") || {dataset: {}}).dataset.cited || "";
  if (cited && document.getElementById("name")) {
    const input = document.getElementById("name");
    serial.name = (serial.name || 0) + 1;
    input.value = cited;
    input.title = cited;
    input.scrollLeft = input.scrollWidth;  // its end in view, as a selection's is: the fragment, on a phone too
    input.dataset.state = "verified";
    input.dataset.candidate = cited;
    input.dataset.error = "";
    document.getElementById("copy-name").disabled = false;
    document.getElementById("open-name").href = view(cited);
  }
  // The window scrolled to show `el` (block "center" or "start", its scroll-margin-top kept), as scrollIntoView
  // would but for one thing: Chromium takes what scrollIntoView shows as where Tab starts, so a passage scrolled to
  // sent the first Tab past the page's controls (they come before it) to the footer. WCAG 2.2 §2.4.3: the first Tab
  // stops where it does on every page, the skip link.
  function reveal(el, block) {
    const r = el.getBoundingClientRect();
    window.scrollBy(0, block === "start" ? r.top - (parseFloat(getComputedStyle(el).scrollMarginTop) || 0)
                                         : r.top + r.height / 2 - innerHeight / 2);
  }

  // A stretch dragged with the primary button on `area`: `at(event)` is where the pointer is, `moving(start, here)`
  // follows the drag, `done(start, here)` takes where it ended; `when()`, if given, says whether to drag at all.
  function dragged(area, at, moving, done, when) {
    let start = null;
    area.addEventListener("pointerdown", function (event) {
      if (event.button !== 0 || (when && !when())) return;
      event.preventDefault();
      area.setPointerCapture(event.pointerId);
      start = at(event);
    });
    area.addEventListener("pointermove", function (event) {
      if (start !== null) moving(start, at(event));
    });
    area.addEventListener("pointerup", function (event) {
      if (start === null) return;
      const began = start;
      start = null;
      done(began, at(event));
    });
  }

  // --- text: a selection counted as PDI char positions and as RFC 5147 positions -------------------------
  const text = document.getElementById("text");
  if (text) {
    const base = text.dataset.pdi;
    const passage = document.getElementById("passage");
    if (passage) reveal(passage, "center");
    // code points before a DOM point: a line break is CR and LF for PDI char (2), one character for RFC 5147;
    // and the UTF-16 units before it in the text shown
    function positions(node, offset) {
      const range = document.createRange();
      range.setStart(text, 0);
      range.setEnd(node, offset);
      let pdi = Number(text.dataset.offset || 0), rfcAt = Number(text.dataset.rfcOffset || 0);
      const before = range.toString();
      for (const ch of before) {
        pdi += ch === "\n" ? 2 : 1;
        rfcAt += 1;
      }
      return [pdi, rfcAt, before.length];
    }
    function lf(s) { return s.replace(/\r\n|\r\u0085|\r|\u0085/g, "\n").replace(/\0/g, "\u2400"); }
    let dragging = false, last = "", timer = 0;
    function update(now) {
      const selection = document.getSelection();
      if (!selection.rangeCount || selection.isCollapsed) {
        if (now) say("Select a passage first: Shift with the arrow keys extends the selection from the caret.", true);
        return;
      }
      const range = selection.getRangeAt(0);
      if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) {
        if (now) say("Select a passage of the text first.", true);
        return;
      }
      const [a, ra, sa] = positions(range.startContainer, range.startOffset);
      const [b, rb, sb] = positions(range.endContainer, range.endOffset);
      const key = a + "," + b;
      if (key === last && !now) return;
      last = key;
      const wanted = range.toString();
      const name = base + "#char=" + a + "," + b;
      offer("name", name, view(name), async function () {
        const response = await fetch(site + "/uri-res/N2R?" + n2r(name));
        if (!response.ok) throw await problem(response);
        const charset = ((response.headers.get("content-type") || "").match(/charset=([^;\s]+)/i) || [])[1] || "utf-8";
        const got = lf(new TextDecoder(charset).decode(await response.arrayBuffer()));
        if (got !== wanted) throw new Error("it names " + JSON.stringify(got.slice(0, 80)) + ", not the selection");
      });
      textForms(name, ra, rb, sa, sb, wanted);
    }
    // the other forms of the passage [a, b) named `name` (RFC 5147 positions ra, rb; sa, sb in the text shown)
    function textForms(name, ra, rb, sa, sb, wanted) {
      if (text.dataset.rfcUrl) {
        const fragment = "char=" + ra + "," + rb + text.dataset.rfcChecks;
        const url = location.origin + text.dataset.rfcUrl + "#" + fragment;
        offer("rfc5147", url, url, async function () {
          const got = await json(site + "/api/rfc5147?pdi=" + encodeURIComponent(base) + "&fragment=" + encodeURIComponent(fragment));
          if (got.integrity !== "ok" || got.checks.some(function (c) { return c.status !== "ok"; }))
            throw new Error("its integrity checks are " + got.integrity);
          if (lf(got.text) !== wanted) throw new Error("it names " + JSON.stringify(got.text.slice(0, 80)) + ", not the selection");
        }, true);
      }
      aliasForm("textfrag", base, directives(text.textContent, sa, sb), name,
                "a text fragment quotes whole words: the selection starts or ends with white space");
      annotationForm(name);
    }
    if (cited && passage) {  // the passage the page was opened at, marked: its other forms, as if it were selected
      const [a, ra, sa] = positions(passage, 0), [b, rb, sb] = positions(passage, passage.childNodes.length);
      textForms(base + "#char=" + a + "," + b, ra, rb, sa, sb, passage.textContent);
    }
    // Named once the selection is made: at the end of a drag, or (keyboard, script) when it stops changing;
    // at once by Enter in the text or the button "Cite the selection" (said in the status, which is aria-live).
    text.addEventListener("pointerdown", function () { dragging = true; });
    document.addEventListener("pointerup", function () {
      if (dragging) { dragging = false; setTimeout(update, 0); }
    });
    document.addEventListener("selectionchange", function () {
      clearTimeout(timer);
      if (!dragging) timer = setTimeout(update, 120);
      if (document.activeElement === text) caret();
    });
    const button = document.getElementById("cite-selection");
    if (button) button.addEventListener("click", function () { clearTimeout(timer); update(true); });

    // The keyboard: Tab stops on the text; the arrow keys (Ctrl: by word), Home and End move a caret the page
    // draws, Shift extends the selection from it (as a browser's caret browsing does), Enter cites.
    const mark = document.createElement("div");
    mark.className = "caret";
    mark.hidden = true;
    mark.setAttribute("aria-hidden", "true");
    document.body.appendChild(mark);
    function caret() {
      const selection = document.getSelection();
      if (document.activeElement !== text || !selection.rangeCount || !text.contains(selection.focusNode)) { mark.hidden = true; return; }
      const node = selection.focusNode, offset = selection.focusOffset, range = document.createRange();
      let x, r;
      if (node.nodeType === 3 && offset < node.length && node.data[offset] !== "\n") {
        range.setStart(node, offset); range.setEnd(node, offset + 1);
        r = range.getClientRects()[0]; x = r && r.left;
      } else if (node.nodeType === 3 && offset > 0 && node.data[offset - 1] !== "\n") {
        range.setStart(node, offset - 1); range.setEnd(node, offset);
        const rects = range.getClientRects(); r = rects[rects.length - 1]; x = r && r.right;
      } else {
        range.setStart(node, offset); range.collapse(true);
        r = range.getBoundingClientRect(); x = r.left;
        if (!r.height) { const t = text.getBoundingClientRect(); r = {top: t.top, height: 16}; x = t.left + 4; }
      }
      if (!r) { mark.hidden = true; return; }
      mark.hidden = false;
      mark.style.left = (x + scrollX - 1) + "px";
      mark.style.top = (r.top + scrollY) + "px";
      mark.style.height = r.height + "px";
    }
    const moves = {ArrowLeft: ["backward", "character", "word"], ArrowRight: ["forward", "character", "word"],
                   ArrowUp: ["backward", "line", "paragraph"], ArrowDown: ["forward", "line", "paragraph"],
                   Home: ["backward", "lineboundary", "documentboundary"], End: ["forward", "lineboundary", "documentboundary"]};
    text.addEventListener("focus", function () {
      const selection = document.getSelection();
      if (!selection.rangeCount || !text.contains(selection.focusNode)) {
        const walker = document.createTreeWalker(passage || text, NodeFilter.SHOW_TEXT);
        const first = walker.nextNode();
        if (first) selection.collapse(first, 0);
      }
      caret();
    });
    text.addEventListener("blur", function () { mark.hidden = true; });
    text.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.altKey && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        clearTimeout(timer);
        update(true);
        return;
      }
      const move = moves[event.key];
      if (!move || event.altKey || event.metaKey) return;
      event.preventDefault();
      const selection = document.getSelection();
      if (!selection.rangeCount || !text.contains(selection.focusNode)) text.dispatchEvent(new Event("focus"));
      selection.modify(event.shiftKey ? "extend" : "move", move[0], event.ctrlKey ? move[2] : move[1]);
      caret();
    });
    window.addEventListener("resize", caret);
  }

  // --- image: a box dragged on the image, in the image's own pixels ---------------------------------------
  const figure = document.getElementById("figure");
  if (figure) {
    const base = figure.dataset.pdi, W = Number(figure.dataset.width), H = Number(figure.dataset.height);
    const image = figure.querySelector("img, video"), box = document.getElementById("selection");
    const inputs = ["x1", "y1", "x2", "y2"].map(function (k) { return document.getElementById(k); });
    const frame = document.getElementById("frame");  // an image's frame, or a video's time in milliseconds
    // a video: a box is dragged in box mode, on the frame the player shows (its time, as the browser presented it)
    const video = figure.dataset.video ? image : null, boxButton = document.getElementById("video-box-mode");
    let boxMode = !video, presented = figure.dataset.at ? Number(figure.dataset.at) : null;
    if (video) {
      // the time of the frame shown, in whole milliseconds rounded down: the first frame at or after it is that frame
      const watch = function () {
        if (!video.requestVideoFrameCallback) return;
        video.requestVideoFrameCallback(function (now, meta) { presented = Math.floor(meta.mediaTime * 1000); watch(); });
      };
      watch();
      boxButton.addEventListener("click", function () {
        boxMode = !boxMode;
        boxButton.setAttribute("aria-pressed", String(boxMode));
        figure.classList.toggle("box-mode", boxMode);
        if (boxMode) video.pause();
        video.controls = !boxMode;
        say(boxMode ? "Drag a box on the frame to name that region of it." : "Mark in and out (I, O) to name a clip.");
      });
      // Escape leaves the mode the button entered, the player's controls back (as Escape closes what a control opens)
      document.addEventListener("keydown", function (event) {
        if (event.key === "Escape" && boxMode) { event.preventDefault(); boxButton.click(); }
      });
    }
    // A JPEG or PNG whose EXIF orientation (2 to 8) the browser turns it by is shown turned; its regions are of
    // the stored pixels (PDI-GRAMMAR.md): a point seen is taken to the stored pixels, and a region drawn where
    // its stored pixels are seen (as pdi.fragments.image.shown_box places them). SW x SH: the size shown.
    const O = Number(figure.dataset.orientation) || 1, SW = O >= 5 ? H : W, SH = O >= 5 ? W : H;
    function stored(u, v) {  // the stored pixel boundary seen at (u, v) of the image shown
      return ({2: [W - u, v], 3: [W - u, H - v], 4: [u, H - v], 5: [v, u], 6: [v, H - u], 7: [W - v, H - u],
               8: [W - v, u]})[O] || [u, v];
    }
    function seen(x, y) {  // where the stored pixel boundary (x, y) is seen in the image shown
      return ({2: [W - x, y], 3: [W - x, H - y], 4: [x, H - y], 5: [y, x], 6: [H - y, x], 7: [H - y, W - x],
               8: [y, W - x]})[O] || [x, y];
    }
    function pixel(event) {  // the pixel boundary nearest the pointer, whatever the image's CSS size
      const r = image.getBoundingClientRect();
      const u = Math.round((event.clientX - r.left) * SW / r.width);
      const v = Math.round((event.clientY - r.top) * SH / r.height);
      return stored(Math.max(0, Math.min(SW, u)), Math.max(0, Math.min(SH, v)));
    }
    function show(x1, y1, x2, y2) {
      const a = seen(x1, y1), b = seen(x2, y2);
      const u1 = Math.min(a[0], b[0]), v1 = Math.min(a[1], b[1]), u2 = Math.max(a[0], b[0]), v2 = Math.max(a[1], b[1]);
      box.hidden = false;
      box.style.left = (100 * u1 / SW) + "%";
      box.style.top = (100 * v1 / SH) + "%";
      box.style.width = (100 * (u2 - u1) / SW) + "%";
      box.style.height = (100 * (v2 - v1) / SH) + "%";
    }
    function cite() {
      const [x1, y1, x2, y2] = inputs.map(function (input) { return Number(input.value); });
      const k = frame ? Number(frame.value) : 0;
      if (!(x1 < x2 && y1 < y2)) { clearAll(); say("Drag a box on the image (or give its corners) to name a region."); return; }
      show(x1, y1, x2, y2);
      const name = base + "#rect=(" + x1 + "," + y1 + "),(" + x2 + "," + y2 + ")" + (k ? "," + k : "");
      offer("name", name, view(name), async function () {
        const got = (await json(site + "/api/resolve?pdi=" + encodeURIComponent(name))).fragment.region;
        if (got.x1 !== x1 || got.y1 !== y1 || got.x2 !== x2 || got.y2 !== y2 || got.frame !== k)
          throw new Error("it names " + JSON.stringify(got));
      });
      regionForms(name, x1, y1, x2, y2, k);
    }
    function regionForms(name, x1, y1, x2, y2, k) {
      aliasForm("mediafrag", base, video || k ? [] : ["xywh=" + x1 + "," + y1 + "," + (x2 - x1) + "," + (y2 - y1)], name,
                video ? "a region of a video's frame has no Media Fragment (xywh= is an image's)"
                      : "a Media Fragment names a region of an image's first frame only");
      annotationForm(name);
    }
    const citedBox = document.getElementById("cited");  // the region the name opened names: in view once the image is laid out
    if (citedBox) {
      // a video's region: the words saying it, the frame and the box below them, in view
      if (video) reveal(document.getElementById("clip") || citedBox, "start");
      else if (image.complete) reveal(citedBox, "center");
      else image.addEventListener("load", function () { reveal(citedBox, "center"); }, {once: true});
      if (cited) {  // its other forms, the region named as a box dragged on it is (its corners are in their boxes)
        const [x1, y1, x2, y2] = inputs.map(function (input) { return Number(input.value); });
        const k = frame ? Number(frame.value) : 0;
        regionForms(base + "#rect=(" + x1 + "," + y1 + "),(" + x2 + "," + y2 + ")" + (k ? "," + k : ""), x1, y1, x2, y2, k);
      }
    }
    function frameHref(ms) { return site + "/uri-res/N2R?" + n2r(base + "#rect=(0,0),(" + W + "," + H + ")," + ms); }  // as pdi decodes it
    function corners(a, b) { return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]), Math.max(a[1], b[1])]; }
    dragged(figure, pixel, function (start, p) { show.apply(null, corners(start, p)); }, function (start, p) {
      corners(start, p).forEach(function (v, i) { inputs[i].value = v; });
      // (a video this browser cannot play shows pdi's frame at the time typed: that frame's time)
      if (video) frame.value = video.error ? Math.max(0, Math.floor(Number(frame.value)) || 0)
                                           : presented !== null ? presented : Math.floor(video.currentTime * 1000);
      cite();
    }, function () { return boxMode; });
    inputs.forEach(function (input) { input.addEventListener("change", cite); });
    if (frame) frame.addEventListener("change", function () {
      if (video && video.error) video.poster = frameHref(Math.max(0, Math.floor(Number(frame.value)) || 0));
      else if (video) video.currentTime = Number(frame.value) / 1000;
      else if (frame.selectedOptions) image.src = frame.selectedOptions[0].dataset.src;
      else {  // a frame chosen by number (an image of many frames): its source is the number after the first's
        frame.value = Math.max(0, Math.min(Number(frame.max), Math.floor(Number(frame.value)) || 0));
        image.src = frame.dataset.src + frame.value;
      }
      if (inputs.every(function (input) { return input.value !== ""; })) cite();
    });
  }

  // --- audio and video: an interval selected on the waveform (a video's timeline), or marked in and out ------
  const wave = document.getElementById("wave");
  if (wave) {
    const base = wave.dataset.pdi;
    const data = JSON.parse(document.getElementById("peaks").textContent);
    const duration = data.duration, peaks = data.peaks;
    const canvas = document.getElementById("wave-canvas"), band = document.getElementById("wave-selection");
    const from = document.getElementById("start"), to = document.getElementById("end");
    const markIn = document.getElementById("mark-in"), markOut = document.getElementById("mark-out");
    const player = document.getElementById("player"), play = document.getElementById("play");
    function unplayable() {  // said at once, not first at a click on Play: the names are made without the player
      const note = document.getElementById("player-note");
      if (!note || !player.error) return;
      const why = {1: "its loading was stopped", 2: "it could not be fetched", 3: "it could not be decoded",
                   4: "its format or encoding is not one this browser plays"}[player.error.code] || "an error";
      note.title = player.error.message || "";  // the browser's own words, for whoever looks further
      note.textContent = "This browser cannot play this " + (markIn ? "video" : "recording") + ": " + why
        + " (the bytes, above, can be played elsewhere). "
        + (markIn ? "Its clips can still be named by typing their start and end in seconds. Its frames are shown as"
                    + " pdi decodes them: type a time (at ms) to see that frame, then drag a box on it (after Box on the"
                    + " frame) or type its corners."
                  : "Its stretches can still be named: drag on the waveform, or type their start and end.");
      note.hidden = false;
      const figure = document.getElementById("figure"), at = document.getElementById("frame");
      if (markIn && figure && !player.poster) {  // the frame at the time typed (else the first) as pdi decodes it
        player.poster = site + "/uri-res/N2R?" + n2r(base + "#rect=(0,0),(" + figure.dataset.width + "," + figure.dataset.height
                                              + ")," + (Math.max(0, Math.floor(Number(at && at.value))) || 0));
      }
    }
    player.addEventListener("error", unplayable);
    unplayable();
    function draw() {
      if (!canvas) return;
      const scale = window.devicePixelRatio || 1;
      canvas.width = Math.max(1, Math.round(canvas.clientWidth * scale));
      canvas.height = Math.max(1, Math.round(canvas.clientHeight * scale));
      const g = canvas.getContext("2d"), w = canvas.width, h = canvas.height;
      g.clearRect(0, 0, w, h);
      g.fillStyle = getComputedStyle(canvas).color;  // the style's ink: light or dark as the reader's scheme
      const n = peaks.length;
      for (let i = 0; i < n; i++) {
        const x0 = Math.floor(i * w / n), x1 = Math.max(x0 + 1, Math.floor((i + 1) * w / n));
        const top = (1 - peaks[i][1]) * h / 2, bottom = (1 - peaks[i][0]) * h / 2;
        g.fillRect(x0, top, x1 - x0, Math.max(1, bottom - top));
      }
      g.fillStyle = "#999";
      g.fillRect(0, Math.floor(h / 2), w, 1);
    }
    draw();
    window.addEventListener("resize", draw);
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", draw);
    function at(event) {  // seconds under the pointer
      const r = wave.getBoundingClientRect();
      return Math.max(0, Math.min(duration, (event.clientX - r.left) / r.width * duration));
    }
    function showBand(a, b) {
      band.hidden = false;
      band.style.left = (100 * a / duration) + "%";
      band.style.width = (100 * (b - a) / duration) + "%";
    }
    // the stretch the name opened names (a video's clip: the words saying it, the player and the timeline below them)
    const clipSaid = document.getElementById("clip");
    if (wave.dataset.start) reveal(clipSaid ? clipSaid : wave, clipSaid ? "start" : "center");
    function cite(fine) {  // fine: times marked at the player's (a video's), named to the millisecond whatever the width
      const a = Number(from.value), b = Number(to.value);
      if (!(a < b)) { clearAll(); say(wave.dataset.hint || "Drag on the waveform (or give a start and an end) to name a stretch."); return; }
      showBand(a, b);
      // whole seconds when one pixel of the waveform spans a second or more; else milliseconds
      const coarse = fine !== true && duration / wave.getBoundingClientRect().width >= 1;
      const ma = coarse ? 1000 * Math.round(a) : Math.round(a * 1000), mb = coarse ? 1000 * Math.round(b) : Math.round(b * 1000);
      const name = stretch(ma, mb);
      play.disabled = false;
      offer("name", name, view(name), async function () {
        const got = (await json(site + "/api/resolve?pdi=" + encodeURIComponent(name))).fragment.interval;
        const first = Math.min(got.length, Math.ceil(ma * got.rate / 1000)), end = Math.min(got.length, Math.ceil(mb * got.rate / 1000));
        if (got.start !== first || got.end !== end) throw new Error("it names samples " + got.start + " to " + got.end);
      });
      timeForms(name, ma, mb);
    }
    function stretch(ma, mb) {  // milliseconds [ma, mb) named: #sec= when both are whole seconds
      return ma % 1000 === 0 && mb % 1000 === 0 ? base + "#sec=" + ma / 1000 + "," + mb / 1000 : base + "#msec=" + ma + "," + mb;
    }
    function timeForms(name, ma, mb) {
      aliasForm("mediafrag", base, ["t=" + ma / 1000 + "," + mb / 1000], name, "");
      annotationForm(name);
    }
    if (cited && document.getElementById(markIn ? "cited-clip" : "cited")) {  // the stretch opened: its other forms
      const ma = Math.round(Number(wave.dataset.start) * 1000), mb = Math.round(Number(wave.dataset.end) * 1000);
      timeForms(stretch(ma, mb), ma, mb);
    }
    dragged(wave, at, function (start, t) { showBand(Math.min(start, t), Math.max(start, t)); }, function (start, t) {
      from.value = Math.min(start, t).toFixed(3);
      to.value = Math.max(start, t).toFixed(3);
      cite();
    });
    from.addEventListener("change", function () { cite(); });
    to.addEventListener("change", function () { cite(); });
    let stopAt = null;
    play.addEventListener("click", function () {
      if (player.error) { say("This browser cannot play this recording: " + player.error.message, true); return; }
      player.currentTime = Number(from.value);
      stopAt = Number(to.value);
      player.play().catch(function (e) { say("Cannot play: " + e.message, true); });
    });
    player.addEventListener("timeupdate", function () {
      if (stopAt !== null && player.currentTime >= stopAt) { player.pause(); stopAt = null; }
    });
    if (markIn) {  // a video: its start and end marked at the player's time, by button or by the keys I and O
      if (wave.dataset.start) stopAt = Number(wave.dataset.end);  // the clip opened stops at its end
      const head = document.getElementById("playhead");
      player.addEventListener("timeupdate", function () { head.style.left = (100 * player.currentTime / duration) + "%"; });
      function mark(input) {
        input.value = Math.min(duration, player.currentTime).toFixed(3);
        if (from.value !== "" && to.value !== "") cite(true);
        else { clearAll(); showBand(Number(input.value), Number(input.value)); say("Marked " + input.id + " at " + input.value + " s; now mark " + (input === from ? "out (O)." : "in (I).")); }
      }
      markIn.addEventListener("click", function () { mark(from); });
      markOut.addEventListener("click", function () { mark(to); });
      document.addEventListener("keydown", function (event) {
        const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
        if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
        if (event.key === "i" || event.key === "I") { event.preventDefault(); mark(from); }
        else if (event.key === "o" || event.key === "O") { event.preventDefault(); mark(to); }
      });
    }
  }
  // --- PDF: pages drawn by pdf.js as they come into view; pdi's text layer laid over them ------------------
  const pdfView = document.getElementById("pdf");
  if (pdfView) {
    const base = pdfView.dataset.pdi;
    const sizes = JSON.parse(pdfView.dataset.sizes || "[]");
    const passage = pdfView.dataset.passage ? pdfView.dataset.passage.split(",").map(Number) : null;  // [a, b) of D
    const region = pdfView.dataset.region ? pdfView.dataset.region.split(",").map(Number) : null;  // x1,y1,x2,y2,frame
    const citedPage = Number(pdfView.dataset.page || 0);
    const hasLayer = pdfView.dataset.layer === "1";
    const boxButton = document.getElementById("pdf-box-mode");
    const layers = {};  // page number -> {start, chars: its text's code points}, once its boxes are laid
    const pageEls = [];
    let boxMode = false, markedInView = false;
    if (boxButton) boxButton.addEventListener("click", function () {  // none where pdi cites no region of the PDF
      boxMode = !boxMode;
      boxButton.setAttribute("aria-pressed", String(boxMode));
      pdfView.classList.toggle("box-mode", boxMode);
      say(boxMode ? "Drag a box on a page to name that region." : "Select text on a page to name that passage.");
    });
    document.addEventListener("keydown", function (event) {  // Escape leaves box mode, as on a video
      if (event.key === "Escape" && boxMode && boxButton) { event.preventDefault(); boxButton.click(); }
    });
    const measure = document.createElement("canvas").getContext("2d");
    // the glyph as tall as its box and stretched to its width (the span has no width of its own: it is its glyph's),
    // so that a selection covers the character as drawn
    function fit(span, ch, width, height) {
      const size = Math.max(1, height);
      span.style.fontSize = size + "px";
      measure.font = size + "px sans-serif";
      const natural = measure.measureText(ch).width;
      if (natural > 0 && width > 0) span.style.transform = "scaleX(" + (width / natural) + ")";
    }
    function ordered(r) { return [Math.min(r[0], r[2]), Math.min(r[1], r[3]), Math.max(r[0], r[2]), Math.max(r[1], r[3])]; }
    function place(el, r) {
      el.style.left = r[0] + "px"; el.style.top = r[1] + "px";
      el.style.width = (r[2] - r[0]) + "px"; el.style.height = (r[3] - r[1]) + "px";
    }
    // the characters [a, b) of D as the laid pages hold them (null when a page in between is not laid yet)
    function layerText(a, b) {
      let out = "";
      const numbers = Object.keys(layers).map(Number).sort(function (x, y) { return x - y; });
      let at = a;
      for (const n of numbers) {
        const layer = layers[n], end = layer.start + layer.chars.length;
        if (end <= at) continue;
        if (layer.start > at) {
          if (layer.start === at + 1 && layers[n - 1] && at === layers[n - 1].start + layers[n - 1].chars.length) out += "\f";
          else if (layer.start > at) return null;
          at = layer.start;
        }
        if (at >= b) break;
        out += layer.chars.slice(at - layer.start, Math.min(b, end) - layer.start).join("");
        at = Math.min(b, end);
        if (at >= b) break;
      }
      return at >= b ? out : null;
    }
    function position(node, offset) {  // the offset in D of a DOM point in a text layer, or null
      const element = node.nodeType === 3 ? node.parentNode : node;
      if (element.dataset && element.dataset.i !== undefined) return Number(element.dataset.i) + (offset > 0 ? 1 : 0);
      if (element.classList && element.classList.contains("pdf-text")) {
        const child = element.childNodes[offset];
        if (child) return Number(child.dataset.i);
        return element.lastChild ? Number(element.lastChild.dataset.i) + 1 : null;
      }
      return null;
    }
    let dragging = false, last = "", timer = 0;
    function update() {
      const selection = document.getSelection();
      if (boxMode || !selection.rangeCount || selection.isCollapsed) return;
      const range = selection.getRangeAt(0);
      const a = position(range.startContainer, range.startOffset), b = position(range.endContainer, range.endOffset);
      if (a === null || b === null || !(a < b)) return;
      const key = a + "," + b;
      if (key === last) return;
      last = key;
      const wanted = layerText(a, b);
      const name = base + "#char=" + a + "," + b;
      offer("name", name, view(name), async function () {
        const response = await fetch(site + "/uri-res/N2R?" + n2r(name), {headers: {"Accept": "text/plain"}});
        if (!response.ok) throw await problem(response);
        const got = new TextDecoder("utf-8").decode(await response.arrayBuffer());
        if (wanted === null ? Array.from(got).length !== b - a : got !== wanted)
          throw new Error("it names " + JSON.stringify(got.slice(0, 80)) + ", not the selection");
      });
      annotationForm(name);
    }
    if (cited) {  // the passage or region the page was opened at: its W3C selector, as a selection's
      if (passage) annotationForm(base + "#char=" + passage[0] + "," + passage[1]);
      else if (region) annotationForm(base + "#rect=(" + region[0] + "," + region[1] + "),(" + region[2] + "," + region[3] + ")"
                                      + (region[4] ? "," + region[4] : ""));
      else annotationForm(cited);
    }
    pdfView.addEventListener("pointerdown", function () { if (!boxMode) dragging = true; });
    document.addEventListener("pointerup", function () {
      if (dragging) { dragging = false; setTimeout(update, 0); }
    });
    document.addEventListener("selectionchange", function () {
      clearTimeout(timer);
      if (!dragging) timer = setTimeout(update, 120);
    });

    // --- a region: dragged on a page in box mode, or its page and corners typed ---
    const shownOn = {};  // page number -> the function that shows a selection box on it, once it is drawn
    let pendingBox = null;  // [page, corners] typed for a page not drawn yet
    const corners = ["pdf-x1", "pdf-y1", "pdf-x2", "pdf-y2"].map(function (id) { return document.getElementById(id); });
    const pageInput = document.getElementById("pdf-region-page");
    function citeRegion(n, c) {
      pageEls.forEach(function (other, k) {
        if (k !== n - 1) other.querySelectorAll(".box.selection").forEach(function (b) { b.hidden = true; });
      });
      if (!(c[0] < c[2] && c[1] < c[3])) { clearAll(); say("Drag a box on a page (or give its page and corners) to name a region."); return; }
      pageInput.value = n;
      corners.forEach(function (input, i) { input.value = c[i]; });
      if (shownOn[n]) shownOn[n](c);
      else { pendingBox = [n, c]; if (pageEls[n - 1]) pageEls[n - 1].scrollIntoView({block: "start"}); }
      const name = base + "#rect=(" + c[0] + "," + c[1] + "),(" + c[2] + "," + c[3] + ")" + (n > 1 ? "," + (n - 1) : "");
      offer("name", name, view(name), async function () {
        const got = (await json(site + "/api/resolve?pdi=" + encodeURIComponent(name))).fragment.region;
        if (got.x1 !== c[0] || got.y1 !== c[1] || got.x2 !== c[2] || got.y2 !== c[3] || got.frame !== n - 1)
          throw new Error("it names " + JSON.stringify(got));
      });
      annotationForm(name);
    }
    if (pageInput) [pageInput].concat(corners).forEach(function (input) {
      input.addEventListener("change", function () {
        if (corners.some(function (c) { return c.value === ""; })) return;
        citeRegion(Number(pageInput.value) || 1, corners.map(function (c) { return Number(c.value); }));
      });
    });

    import(pdfView.dataset.pdfjs).then(async function (pdfjs) {
      pdfjs.GlobalWorkerOptions.workerSrc = pdfView.dataset.worker;
      const doc = await pdfjs.getDocument({url: pdfView.dataset.src, wasmUrl: pdfView.dataset.wasm,
                                            cMapUrl: pdfView.dataset.cmaps, cMapPacked: true,
                                            standardFontDataUrl: pdfView.dataset.fonts,
                                            isEvalSupported: false, enableXfa: false}).promise;
      const width = Math.min(pdfView.clientWidth - 24, 1000);
      const loading = document.getElementById("pdf-loading");
      if (loading) loading.remove();
      for (let n = 1; n <= doc.numPages; n++) {
        const size = sizes[n - 1] || sizes[0] || [612, 792];
        const el = document.createElement("div");
        el.className = "pdf-page";
        el.id = "page-" + n;
        el.dataset.page = String(n);
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", "page " + n + " of " + doc.numPages);
        el.style.width = width + "px";
        el.style.height = Math.round(width * size[1] / size[0]) + "px";
        const folio = document.createElement("span");
        folio.className = "folio";
        folio.textContent = n + " / " + doc.numPages;
        el.appendChild(folio);
        pdfView.appendChild(el);
        pageEls.push(el);
      }
      const observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          observer.unobserve(entry.target);
          draw(Number(entry.target.dataset.page)).catch(function (e) {
            say("Page " + entry.target.dataset.page + " could not be drawn: " + e.message, true);
          });
        });
      }, {rootMargin: "300px 0px"});
      pageEls.forEach(function (el) { observer.observe(el); });
      // a page scrolled to stops below the cite panel that stays at the top: its height, not a guess (it wraps)
      const citePanel = document.querySelector(".cite");
      function citeRoom() {
        if (citePanel && getComputedStyle(citePanel).position === "sticky")
          document.documentElement.style.setProperty("--cite-room", (citePanel.offsetHeight + 8) + "px");
      }
      citeRoom();
      if (citePanel && window.ResizeObserver) new ResizeObserver(citeRoom).observe(citePanel);
      if (citedPage && pageEls[citedPage - 1]) reveal(pageEls[citedPage - 1], "start");
      pdfView.dataset.ready = String(doc.numPages);

      async function draw(n) {
        // pdi's reading of the page (its characters' boxes, and /Rotate as PDFium reads it), asked for as pdf.js loads
        // it; not for a PDF with no text (a scan: PDFium would read the whole PDF again for no character)
        const asked = hasLayer ? json(site + "/api/pdf/page?pdi=" + encodeURIComponent(base) + "&page=" + n).then(
          function (data) { return {data: data}; }, function (error) { return {error: error}; }) : null;
        const page = await doc.getPage(n), el = pageEls[n - 1];
        const got = asked ? await asked : null;
        // turned as pdi renders it: a /Rotate no multiple of 90 (ISO 32000 has none) PDFium turns by whole quarters
        // towards 0 (91 and 135: 90) where pdf.js leaves the page unturned (docs/pdf-text-layer.md §3)
        const rotation = got && got.data ? got.data.rotation : page.rotate;
        const viewport = page.getViewport({scale: width / page.getViewport({scale: 1, rotation: rotation}).width,
                                          rotation: rotation});
        el.style.height = viewport.height + "px";
        const ratio = window.devicePixelRatio || 1;
        const canvas = document.createElement("canvas");
        canvas.width = Math.floor(viewport.width * ratio);
        canvas.height = Math.floor(viewport.height * ratio);
        canvas.style.width = viewport.width + "px";
        canvas.style.height = viewport.height + "px";
        el.insertBefore(canvas, el.firstChild);
        await page.render({canvas: canvas, viewport: viewport, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined}).promise;
        el.dataset.drawn = "1";
        const crop = page.view;  // its CropBox, as pdf.js draws it: [left, bottom, right, top]
        function rect(box) {  // a rectangle of user space (left, bottom, right, top) on the drawn page, CSS pixels
          const a = viewport.convertToViewportPoint(box[0], box[1]), b = viewport.convertToViewportPoint(box[2], box[3]);
          return ordered([a[0], a[1], b[0], b[1]]);
        }
        const marks = document.createElement("div");
        marks.className = "pdf-marks";
        el.appendChild(marks);
        if (region && region[4] === n - 1) {  // x, y from the CropBox's top-left, y downwards (docs/pdf-text-layer.md §3)
          const box = document.createElement("div");
          box.className = "box";
          box.id = "cited";
          place(box, rect([crop[0] + region[0], crop[3] - region[3], crop[0] + region[2], crop[3] - region[1]]));
          el.appendChild(box);
          reveal(box, "center");
        }
        const selectionBox = document.createElement("div");
        selectionBox.className = "box selection";
        selectionBox.hidden = true;
        el.appendChild(selectionBox);
        function point(event) {  // the point (whole points from the CropBox's top-left) nearest the pointer
          const r = el.getBoundingClientRect();
          const p = viewport.convertToPdfPoint(event.clientX - r.left, event.clientY - r.top);
          const W = crop[2] - crop[0], H = crop[3] - crop[1];
          return [Math.max(0, Math.min(Math.ceil(W), Math.round(p[0] - crop[0]))),
                  Math.max(0, Math.min(Math.ceil(H), Math.round(crop[3] - p[1])))];
        }
        function showBox(c) {
          selectionBox.hidden = false;
          place(selectionBox, rect([crop[0] + c[0], crop[3] - c[3], crop[0] + c[2], crop[3] - c[1]]));
        }
        shownOn[n] = showBox;
        if (pendingBox && pendingBox[0] === n) showBox(pendingBox[1]);
        dragged(el, point, function (start, p) { showBox(ordered([start[0], start[1], p[0], p[1]])); }, function (start, p) {
          citeRegion(n, ordered([start[0], start[1], p[0], p[1]]));
        }, function () { return boxMode; });
        if (!hasLayer) return;
        if (got.error) throw got.error;
        const data = got.data;
        const chars = Array.from(data.text);
        const text = document.createElement("div");
        text.className = "pdf-text";
        let prev = null;
        const lines = [];  // the cited characters' boxes, joined along each line
        const rects = [];  // each character's rectangle on the page (none for a generated one)
        const spans = [];
        chars.forEach(function (ch, i) {
          const span = document.createElement("span");
          spans.push(span);
          span.dataset.i = String(data.start + i);
          span.textContent = ch;
          const box = data.boxes[i];
          if (box) {
            const r = rect(box);
            span.style.left = r[0] + "px";
            span.style.top = r[1] + "px";
            fit(span, ch, r[2] - r[0], r[3] - r[1]);
            rects[i] = r;
            prev = r;
            const at = data.start + i;
            if (passage && passage[0] <= at && at < passage[1]) {
              const line = lines[lines.length - 1];
              const overlap = line ? Math.min(line[3], r[3]) - Math.max(line[1], r[1]) : 0;
              if (line && overlap > 0.5 * Math.min(line[3] - line[1], r[3] - r[1]) && r[0] >= line[0] - 1)
                lines[lines.length - 1] = [line[0], Math.min(line[1], r[1]), Math.max(line[2], r[2]), Math.max(line[3], r[3])];
              else lines.push(r.slice());
            }
          } else {  // a generated space or line break: no box of its own, after the character before it
            span.className = "gen";
            if (prev) {
              span.style.left = prev[2] + "px";
              span.style.top = prev[1] + "px";
              span.style.fontSize = Math.max(1, prev[3] - prev[1]) + "px";
            }
          }
          text.appendChild(span);
        });
        // a generated space spans the gap between the characters on each side of it, when they share a line
        let before = null;
        chars.forEach(function (ch, i) {
          if (rects[i]) { before = rects[i]; return; }
          if (ch !== " " || !before) return;
          let k = i + 1;
          while (k < chars.length && !rects[k]) k++;
          const after = rects[k];
          if (!after || after[0] <= before[2] || Math.min(before[3], after[3]) <= Math.max(before[1], after[1])) return;
          fit(spans[i], " ", after[0] - before[2], before[3] - before[1]);
        });
        el.appendChild(text);
        layers[n] = {start: data.start, chars: chars};
        lines.forEach(function (r, k) {
          const hl = document.createElement("div");
          hl.className = "hl";
          if (k === 0) hl.id = "passage";
          place(hl, r);
          marks.appendChild(hl);
        });
        if (lines.length && !markedInView) { markedInView = true; reveal(marks.firstChild, "center"); }
        el.dataset.laid = "1";
      }
    }).catch(function (e) {
      const loading = document.getElementById("pdf-loading");
      if (loading) loading.textContent = "pdf.js could not show this PDF: " + e.message;
      say("pdf.js could not show this PDF: " + e.message, true);
    });
  }
})();
"""
