"""A first asking of N2L, 304 or N2R in one process: ``CachedAnswerProtocol.data_received`` fed requests, 64
connections in turn, each with a transport that writes nowhere (issue 24; not a ``bench_*`` file: run by hand).

    python3 bench/first_asking.py DIR KIND COUNT [SEED] [--once] [--profile OUT] [--alone PART]

``DIR`` is a catalog kept by ``bench/bench_serve_cold.py --catalog DIR`` (its ``archive`` and ``names.tsv``);
``KIND`` is ``n2l``, ``304`` or ``n2r``. Prints the CPU (``time.thread_time``) a request of ``COUNT`` names drawn
with ``SEED``, each asked once (first asking), then of the same names asked again (from their facts) unless
``--once``; ``--profile OUT`` writes cProfile's statistics of the first pass. The answer cache stays fresh once
refreshed (so that it runs the same under ``valgrind --tool=callgrind``, whose instruction counts, of a run of
300 names and one of 1,800, differenced, are the figure least moved by the machine's load). ``--alone PART``
(``answer``: ``PlainAnswers.answer``; ``named``: ``Archive.public_serial_named``, the N2R's catalog read; ``serial``:
``Archive.public_serial``; ``digest``: ``Archive.public_digest``, the N2L's and 304's; ``public``:
``Resolver.public_answer``)
calls that part through ``itertools.starmap``, so that ``valgrind --tool=callgrind --collect-atstart=no
--toggle-collect=starmap_next`` counts it alone.
"""
import asyncio
import itertools
import random
import sys
import time
from pathlib import Path

import uvicorn
import uvloop

import bench_serve as serve
from pdi.archive import Archive
from pdi.server import create_app
from pdi.server.process.connection import answering_protocol
from pdi.server.protocol.plain import PlainAnswers
from pdi.server.protocol.resolver import Resolver

#: The parts ``--alone`` names: their owner and method.
PARTS = {"answer": (PlainAnswers, "answer"), "named": (Archive, "public_serial_named"), "serial": (Archive, "public_serial"),
         "digest": (Archive, "public_digest"), "public": (Resolver, "public_answer")}


def alone(part: str) -> None:
    """Have ``part`` (of :data:`PARTS`) called through ``itertools.starmap`` (callgrind's ``starmap_next``)."""
    if part not in PARTS:
        raise SystemExit(f"--alone takes one of {', '.join(PARTS)}, not {part!r}")
    owner, name = PARTS[part]
    method = getattr(owner, name)

    def through_starmap(*args):  # type: ignore[no-untyped-def]
        return next(itertools.starmap(method, (args,)))

    setattr(owner, name, through_starmap)


class Nowhere(asyncio.Transport):
    """A transport that writes nowhere, counting the statuses of what it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.written = 0
        self.statuses: dict[bytes, int] = {}

    def get_extra_info(self, name, default=None):  # type: ignore[no-untyped-def]
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000 + id(self) % 20000)}.get(name, default)

    def write(self, data) -> None:  # type: ignore[no-untyped-def]
        self.written += 1
        status = bytes(data[9:12])
        self.statuses[status] = self.statuses.get(status, 0) + 1

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high=None, low=None) -> None:  # type: ignore[no-untyped-def]
        pass


async def main() -> None:
    serve.usage(__doc__, 3)
    home = Path(sys.argv[1])
    kind = sys.argv[2]
    count = int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 and not sys.argv[4].startswith("-") else 1
    profile = sys.argv[sys.argv.index("--profile") + 1] if "--profile" in sys.argv else None
    if "--alone" in sys.argv:
        alone(sys.argv[sys.argv.index("--alone") + 1])
    rows = [line.split("\t") for line in (home / "names.tsv").read_text().splitlines()]
    rng = random.Random(seed)
    picked = rng.sample(rows, count)
    app = create_app(str(home / "archive"))
    app.state.cache.revalidate_seconds = 1e9  # fresh once refreshed, however slowly it runs (valgrind)
    config = uvicorn.Config(app, log_level="warning", ws="none", proxy_headers=False, limit_concurrency=1000,
                            timeout_keep_alive=5)
    config.load()
    state = uvicorn.server.ServerState()
    cls = answering_protocol(10, app.state.cache, None, app.state.public)
    loop = asyncio.get_running_loop()
    protocols = []
    for _ in range(64):
        p = cls(config=config, server_state=state, app_state={}, _loop=loop)
        t = Nowhere()
        p.connection_made(t)
        protocols.append((p, t))
    requests = []
    for name, tag in picked:
        if kind == "n2l":
            requests.append(b"GET /uri-res/N2L?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n" % name.encode())
        elif kind == "304":
            requests.append(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nIf-None-Match: %s\r\n\r\n"
                            % (name.encode(), tag.encode()))
        else:
            requests.append(b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n" % name.encode())
    # warm: the interpreter's paths, on names not in the measured set
    warm = rng.sample(rows, 200)
    for i, (name, tag) in enumerate(warm):
        if kind == "304":
            req = (b"GET /uri-res/N2R?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nIf-None-Match: %s\r\n\r\n"
                   % (name.encode(), tag.encode()))
        else:
            req = b"GET /uri-res/%s?%s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n" % (
                b"N2L" if kind == "n2l" else b"N2R", name.encode())
        protocols[i % 64][0].data_received(req)
    if profile:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    started = time.thread_time()
    for i, req in enumerate(requests):
        protocols[i % 64][0].data_received(req)
    used = time.thread_time() - started
    if profile:
        prof.disable()
        prof.dump_stats(profile)
    statuses: dict[bytes, int] = {}
    for _, t in protocols:
        for k, v in t.statuses.items():
            statuses[k] = statuses.get(k, 0) + v
    again = time.thread_time()
    for i, req in enumerate(requests if "--once" not in sys.argv else []):
        protocols[i % 64][0].data_received(req)
    again = time.thread_time() - again
    print(f"{kind} {count} first {used / count * 1e6:.2f} us/req, asked again {again / count * 1e6:.2f} statuses={statuses}")
    for p, _ in protocols:
        p.connection_lost(None)


uvloop.run(main())
