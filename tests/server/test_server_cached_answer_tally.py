"""The counts of answers a connection writes from the cache (:func:`pdi.server.process.observe.count_cached_answer`):
kept in the process, added to the metrics by a timer of its loop, and never a parent's in a forked child.

``tests/server/test_server_operate.py`` checks them end to end, through a ``pdi serve`` of three workers.
"""

from __future__ import annotations

import asyncio
import os

from prometheus_client import REGISTRY

from pdi.server.process import observe


def _requests(status: str) -> float:
    """``pdi_http_requests_total`` for a ``GET`` of ``/uri-res/{service}`` with this status, so far (this process's
    registry: the tests run outside multiprocess mode)."""
    observe.counters()  # made at first use
    found = REGISTRY.get_sample_value("pdi_http_requests_total",
                                      {"route": "/uri-res/{service}", "method": "GET", "status": status})
    return 0.0 if found is None else found


def test_answers_counted_reach_the_metrics_when_the_timer_flushes() -> None:
    # a server test before this one in the same process may have left its timer on a loop now stopped: flushed
    # here, the next count sets one on this loop (in a worker, the one loop runs as long as the process)
    observe.flush_tally()
    loop = asyncio.new_event_loop()
    try:
        before = _requests("299")
        for _ in range(3):
            observe.count_cached_answer(loop, b"GET", 299, 10, True)
        assert _requests("299") == before  # not yet: tallied in the process
        assert observe._flushing  # a flush set on this loop
        loop.run_until_complete(asyncio.sleep(observe.TALLY_SECONDS + 0.2))
        assert _requests("299") == before + 3
    finally:
        loop.close()


def test_a_forked_child_starts_with_no_count_and_no_timer_of_its_parents() -> None:
    observe.flush_tally()
    loop = asyncio.new_event_loop()
    try:
        observe.count_cached_answer(loop, b"GET", 298, 10, True)
        assert observe._tally and observe._flushing
        child = os.fork()
        if child == 0:  # the child: what the parent tallied is not its to flush
            os._exit(0 if not observe._tally and not observe._flushing else 1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert observe._tally  # the parent's are still there, for its own timer
    finally:
        observe.flush_tally()
        loop.close()
