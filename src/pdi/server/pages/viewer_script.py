"""The viewer's script: select → cite for texts, images and sound (inline in the page; see :mod:`pdi.server.pages.viewer`)."""

SCRIPT = r"""
(function () {
  "use strict";
  // --- offering a name: verified by resolving it before it is shown, with a copy button -----------------
  const status = document.getElementById("cite-status");
  const serial = {};  // the latest check of each offer: an older answer arriving late is dropped
  function say(message, isError) {
    status.textContent = message;
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
    input.dataset.state = "";
    input.dataset.error = "";
    document.getElementById("copy-" + id).disabled = true;
    document.getElementById("open-" + id).removeAttribute("href");
  }
  // Show `name` in the input `id` once `check()` resolves; the error it throws otherwise.
  async function offer(id, name, href, check) {
    const input = document.getElementById(id);
    const mine = serial[id] = (serial[id] || 0) + 1;
    input.value = "";
    input.dataset.state = "checking";
    input.dataset.error = "";
    input.dataset.candidate = name;
    document.getElementById("copy-" + id).disabled = true;
    document.getElementById("open-" + id).removeAttribute("href");
    say("Checking " + name + " …");
    let error = null;
    try {
      await check();
    } catch (e) {
      error = e;
    }
    if (serial[id] !== mine) return;
    if (error) {
      input.dataset.state = "error";
      input.dataset.error = name + " does not resolve as selected: " + error.message;
      say("Not offered: " + input.dataset.error, true);
      return;
    }
    input.value = name;
    input.dataset.state = "verified";
    document.getElementById("copy-" + id).disabled = false;
    document.getElementById("open-" + id).href = href;
    if (!document.querySelector(".offer input[data-state=error]")) say("Resolved and checked: " + name);
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
  function view(name) { return "/view?pdi=" + encodeURIComponent(name); }

  // A stretch dragged with the primary button on `area`: `at(event)` is where the pointer is, `moving(start, here)`
  // follows the drag, `done(start, here)` takes where it ended.
  function dragged(area, at, moving, done) {
    let start = null;
    area.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) return;
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
    const rfc = document.getElementById("rfc5147");
    const passage = document.getElementById("passage");
    if (passage) passage.scrollIntoView({block: "center"});
    // code points before a DOM point: a line break is CR and LF for PDI char (2), one character for RFC 5147
    function positions(node, offset) {
      const range = document.createRange();
      range.setStart(text, 0);
      range.setEnd(node, offset);
      let pdi = Number(text.dataset.offset || 0), rfcAt = Number(text.dataset.rfcOffset || 0);
      for (const ch of range.toString()) {
        pdi += ch === "\n" ? 2 : 1;
        rfcAt += 1;
      }
      return [pdi, rfcAt];
    }
    function lf(s) { return s.replace(/\r\n|\r\u0085|\r|\u0085/g, "\n").replace(/\0/g, "\u2400"); }
    let dragging = false, last = "", timer = 0;
    function update() {
      const selection = document.getSelection();
      if (!selection.rangeCount || selection.isCollapsed) return;
      const range = selection.getRangeAt(0);
      if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) return;
      const [a, ra] = positions(range.startContainer, range.startOffset);
      const [b, rb] = positions(range.endContainer, range.endOffset);
      const key = a + "," + b;
      if (key === last) return;
      last = key;
      const wanted = range.toString();
      const name = base + "#char=" + a + "," + b;
      offer("name", name, view(name), async function () {
        const response = await fetch("/uri-res/N2R?" + n2r(name));
        if (!response.ok) throw await problem(response);
        const charset = ((response.headers.get("content-type") || "").match(/charset=([^;\s]+)/i) || [])[1] || "utf-8";
        const got = lf(new TextDecoder(charset).decode(await response.arrayBuffer()));
        if (got !== wanted) throw new Error("it names " + JSON.stringify(got.slice(0, 80)) + ", not the selection");
      });
      if (rfc && text.dataset.rfcUrl) {
        const fragment = "char=" + ra + "," + rb + text.dataset.rfcChecks;
        const url = location.origin + text.dataset.rfcUrl + "#" + fragment;
        offer("rfc5147", url, url, async function () {
          const got = await json("/api/rfc5147?pdi=" + encodeURIComponent(base) + "&fragment=" + encodeURIComponent(fragment));
          if (got.integrity !== "ok" || got.checks.some(function (c) { return c.status !== "ok"; }))
            throw new Error("its integrity checks are " + got.integrity);
          if (lf(got.text) !== wanted) throw new Error("it names " + JSON.stringify(got.text.slice(0, 80)) + ", not the selection");
        });
      }
    }
    // Named once the selection is made: at the end of a drag, or (keyboard, script) when it stops changing.
    text.addEventListener("pointerdown", function () { dragging = true; });
    document.addEventListener("pointerup", function () {
      if (dragging) { dragging = false; setTimeout(update, 0); }
    });
    document.addEventListener("selectionchange", function () {
      clearTimeout(timer);
      if (!dragging) timer = setTimeout(update, 120);
    });
  }

  // --- image: a box dragged on the image, in the image's own pixels ---------------------------------------
  const figure = document.getElementById("figure");
  if (figure) {
    const base = figure.dataset.pdi, W = Number(figure.dataset.width), H = Number(figure.dataset.height);
    const image = document.getElementById("image"), box = document.getElementById("selection");
    const inputs = ["x1", "y1", "x2", "y2"].map(function (k) { return document.getElementById(k); });
    const frame = document.getElementById("frame");
    function pixel(event) {  // the pixel boundary nearest the pointer, whatever the image's CSS size
      const r = image.getBoundingClientRect();
      const x = Math.round((event.clientX - r.left) * W / r.width);
      const y = Math.round((event.clientY - r.top) * H / r.height);
      return [Math.max(0, Math.min(W, x)), Math.max(0, Math.min(H, y))];
    }
    function show(x1, y1, x2, y2) {
      box.hidden = false;
      box.style.left = (100 * x1 / W) + "%";
      box.style.top = (100 * y1 / H) + "%";
      box.style.width = (100 * (x2 - x1) / W) + "%";
      box.style.height = (100 * (y2 - y1) / H) + "%";
    }
    function cite() {
      const [x1, y1, x2, y2] = inputs.map(function (input) { return Number(input.value); });
      const k = frame ? Number(frame.value) : 0;
      if (!(x1 < x2 && y1 < y2)) { clear("name"); say("Drag a box on the image (or give its corners) to name a region."); return; }
      show(x1, y1, x2, y2);
      const name = base + "#rect=(" + x1 + "," + y1 + "),(" + x2 + "," + y2 + ")" + (k ? "," + k : "");
      offer("name", name, view(name), async function () {
        const got = (await json("/api/resolve?pdi=" + encodeURIComponent(name))).fragment.region;
        if (got.x1 !== x1 || got.y1 !== y1 || got.x2 !== x2 || got.y2 !== y2 || got.frame !== k)
          throw new Error("it names " + JSON.stringify(got));
      });
    }
    const cited = document.getElementById("cited");  // the region the name opened names: in view once the image is laid out
    if (cited) {
      if (image.complete) cited.scrollIntoView({block: "center"});
      else image.addEventListener("load", function () { cited.scrollIntoView({block: "center"}); }, {once: true});
    }
    function corners(a, b) { return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]), Math.max(a[1], b[1])]; }
    dragged(figure, pixel, function (start, p) { show.apply(null, corners(start, p)); }, function (start, p) {
      corners(start, p).forEach(function (v, i) { inputs[i].value = v; });
      cite();
    });
    inputs.forEach(function (input) { input.addEventListener("change", cite); });
    if (frame) frame.addEventListener("change", function () {
      image.src = frame.selectedOptions[0].dataset.src;
      if (inputs.every(function (input) { return input.value !== ""; })) cite();
    });
  }

  // --- audio: an interval selected on the waveform ---------------------------------------------------------
  const wave = document.getElementById("wave");
  if (wave) {
    const base = wave.dataset.pdi;
    const data = JSON.parse(document.getElementById("peaks").textContent);
    const duration = data.duration, peaks = data.peaks;
    const canvas = document.getElementById("wave-canvas"), band = document.getElementById("wave-selection");
    const from = document.getElementById("start"), to = document.getElementById("end");
    const player = document.getElementById("player"), play = document.getElementById("play");
    function draw() {
      const scale = window.devicePixelRatio || 1;
      canvas.width = Math.max(1, Math.round(canvas.clientWidth * scale));
      canvas.height = Math.max(1, Math.round(canvas.clientHeight * scale));
      const g = canvas.getContext("2d"), w = canvas.width, h = canvas.height;
      g.clearRect(0, 0, w, h);
      g.fillStyle = "#3d5a80";
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
    function at(event) {  // seconds under the pointer
      const r = wave.getBoundingClientRect();
      return Math.max(0, Math.min(duration, (event.clientX - r.left) / r.width * duration));
    }
    function showBand(a, b) {
      band.hidden = false;
      band.style.left = (100 * a / duration) + "%";
      band.style.width = (100 * (b - a) / duration) + "%";
    }
    if (wave.dataset.start) wave.scrollIntoView({block: "center"});  // the stretch the name opened names
    function cite() {
      const a = Number(from.value), b = Number(to.value);
      if (!(a < b)) { clear("name"); say("Drag on the waveform (or give a start and an end) to name a stretch."); return; }
      showBand(a, b);
      // whole seconds when one pixel of the waveform spans a second or more; else milliseconds
      const coarse = duration / wave.getBoundingClientRect().width >= 1;
      const ma = coarse ? 1000 * Math.round(a) : Math.round(a * 1000), mb = coarse ? 1000 * Math.round(b) : Math.round(b * 1000);
      const name = ma % 1000 === 0 && mb % 1000 === 0
        ? base + "#sec=" + ma / 1000 + "," + mb / 1000 : base + "#msec=" + ma + "," + mb;
      play.disabled = false;
      offer("name", name, view(name), async function () {
        const got = (await json("/api/resolve?pdi=" + encodeURIComponent(name))).fragment.interval;
        const first = Math.min(got.length, Math.ceil(ma * got.rate / 1000)), end = Math.min(got.length, Math.ceil(mb * got.rate / 1000));
        if (got.start !== first || got.end !== end) throw new Error("it names samples " + got.start + " to " + got.end);
      });
    }
    dragged(wave, at, function (start, t) { showBand(Math.min(start, t), Math.max(start, t)); }, function (start, t) {
      from.value = Math.min(start, t).toFixed(3);
      to.value = Math.max(start, t).toFixed(3);
      cite();
    });
    from.addEventListener("change", cite);
    to.addEventListener("change", cite);
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
  }
})();
"""
