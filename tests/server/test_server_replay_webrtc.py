"""What a replayed page's WebRTC reaches: nothing by default; with --replay-scripts, the STUN server its script
names, as docs/reference/replay.md says (no Content-Security-Policy directive covers WebRTC).

pdi's Chromium runs ``--webrtc-ip-handling-policy=disable_non_proxied_udp`` (:data:`pdi.capture.browser._FLAGS`),
which a reader's browser does not: here Chromium runs without it. A UDP socket on 127.0.0.1 stands for the
author's STUN server and counts the datagrams it receives.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from server_helpers import with_replay
from test_server_replay_browser import SERIES, _in_frame_when, _open, _view

from pdi.archive import Archive
from pdi.capture.browser import chromium_path, devtools

#: A page whose script asks a STUN server on 127.0.0.1 (its port: UPORT) for its address, as a call would begin.
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Calls</title></head><body>
<script>
document.title = "scripted";
const call = new RTCPeerConnection({iceServers: [{urls: "stun:127.0.0.1:UPORT"}]});
call.createDataChannel("x");
call.createOffer().then((offer) => call.setLocalDescription(offer));
</script></body></html>
"""

#: A STUN binding request's first octets (RFC 8489 §5: its type, 0x0001, then after the length the magic cookie).
BINDING = (b"\x00\x01", b"\x21\x12\xa4\x42")


@contextmanager
def _stun_witness() -> Iterator[tuple[int, list[bytes]]]:
    """A UDP socket on 127.0.0.1 that keeps every datagram it is sent: its port, the datagrams."""
    heard: list[bytes] = []
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            try:
                heard.append(sock.recv(4096))
            except TimeoutError:
                continue

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1], heard
    finally:
        stop.set()
        thread.join()
        sock.close()


@pytest.mark.parametrize("scripts", [False, True], ids=["scripts-off", "scripts-on"])
def test_a_replayed_pages_webrtc_reaches_its_stun_server_only_when_its_scripts_run(tmp_path: Path, scripts: bool) -> None:
    browser = tmp_path / "chromium"  # Chromium as pdi starts it, but with WebRTC's UDP as a reader's browser has it
    browser.write_text('#!/bin/sh\nfor a; do shift; [ "$a" = --webrtc-ip-handling-policy=disable_non_proxied_udp ]'
                       f' || set -- "$@" "$a"; done\nexec "{chromium_path()}" "$@"\n')
    browser.chmod(0o755)
    location = str(tmp_path / "archive")
    with Archive.init(location) as archive:
        archive.add_series(SERIES)
    with _stun_witness() as (port, heard), with_replay(location, scripts=scripts) as (resolver, _), \
            devtools(chromium=str(browser)) as pipe:
        with Archive.open(location) as archive:
            name = str(archive.add(SERIES, PAGE.replace("UPORT", str(port)).encode(), format="html"))
        session, _ = _open(pipe, _view(resolver, name))
        title = _in_frame_when(pipe, session, "document.title", lambda t: t == "scripted" or not scripts)
        deadline = time.monotonic() + (10 if scripts else 3)  # without scripts: the time a request would take
        while not heard and time.monotonic() < deadline:
            time.sleep(0.05)
    assert title == ("scripted" if scripts else "Calls")
    if scripts:  # what no header stops: a STUN binding request reached the author's server
        assert heard and all(d[:2] == BINDING[0] and d[4:8] == BINDING[1] for d in heard), heard
    else:
        assert heard == []
