"""One small N2R answer through ``pdi serve``'s own HTTP protocol, read three ways side by side: anonymous,
with ``Authorization: Bearer`` and with the browser's sign-in cookie (``pdi.server.pages.signin``).

An anonymous read of a public name is answered from the connection's fast path (the worker's cache of
whole answers); a read with a token (either way) goes through the app, which checks the token first,
and a public name's answer may then come from the same cache; a private name's answer is never kept,
so each read of it reads the store. One keep-alive client, in this process; rounds interleaved (the
machine may be shared): the best rate of each, in requests a second.

    python3 bench/run_all.py signin          # or: python3 bench/bench_signin.py [--requests 1500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time

import httpx
import uvicorn

import readme
from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.process.connection import answering_protocol
from pdi.server.process.run import listening_socket


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1500, help="requests of each kind a round")
    parser.add_argument("--rounds", type=int, default=5)
    readme.arguments(parser)
    options = parser.parse_args()
    if options.small:
        options.requests, options.rounds = 20, 1
    with tempfile.TemporaryDirectory() as root, Archive.init(root + "/a") as archive:
        archive.add_series("library.example.us")
        archive.add_series("court.example.us")
        public = str(archive.add("library.example.us", b"open minutes of the board\n", format="text"))
        sealed = str(archive.add("court.example.us", b"sealed minutes of the board\n", format="text"))
        archive.set_series_access("court.example.us", "private")
        _, token = archive.add_token("clerk", role="read")
        app = create_app(root + "/a", archive=archive)
        sock = listening_socket("127.0.0.1", 0)
        sock.listen()
        config = uvicorn.Config(app, log_level="critical", loop="uvloop", http=answering_protocol(10, app.state.cache))
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        kinds = {
            "anonymous, public name": (public, {}),
            "bearer, public name": (public, {"Authorization": f"Bearer {token}"}),
            "cookie, public name": (public, {"Cookie": f"pdi-token={token}"}),
            "bearer, private name": (sealed, {"Authorization": f"Bearer {token}"}),
            "cookie, private name": (sealed, {"Cookie": f"pdi-token={token}"}),
        }
        best = dict.fromkeys(kinds, 0.0)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}") as client:
                for _ in range(options.rounds):
                    for label, (name, headers) in kinds.items():
                        target = f"/uri-res/N2R?{name}"
                        assert client.get(target, headers=headers).status_code == 200
                        start = time.perf_counter()
                        for _ in range(options.requests):
                            client.get(target, headers=headers)
                        best[label] = max(best[label], options.requests / (time.perf_counter() - start))
        finally:
            server.should_exit = True
            thread.join(timeout=30)
    anonymous = best["anonymous, public name"]
    for label, rate in best.items():
        print(f"{label:24s} {rate:8.0f} requests/s   ratio to anonymous {rate / anonymous:5.2f}")
    print(f"(best of {options.rounds} interleaved rounds of {options.requests}, one keep-alive client)")


if __name__ == "__main__":
    main()
