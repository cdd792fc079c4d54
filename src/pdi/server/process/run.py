"""Running the resolver: the listening socket, uvicorn's server around the app, and worker processes.

:func:`listening_socket` binds before anything is served, so ``pdi serve``
can say where it serves (and a port in use is one clear error).
:func:`serve` runs uvicorn on that socket with the resolver's limits
(:mod:`pdi.server.process.limits`): in this process for one worker, or in several
worker processes forked after binding, all accepting from the one socket
(as uvicorn's and gunicorn's own workers do), so a request uses whichever
core is free. Each worker makes its own app (and opens its own archive:
a SQLite or PostgreSQL connection must not cross a fork).

The first process stays as the supervisor (:class:`Workers`): ``SIGINT``
or ``SIGTERM`` closes its listening sockets and stops every worker (each
stops accepting, finishes the requests in hand, for up to
:data:`GRACE_SECONDS`: see below for one that does not); ``SIGHUP`` is passed on to every
worker (and to the ``companions``: ``pdi serve --indexer``'s indexer), which reopens its access log
(:func:`pdi.server.process.observe.reopen_logs`). A worker that dies is
replaced at once and the death said in the log (``pdi.serve``, a warning: on standard error, a JSON record with
``--log-format json``); when workers die more than
twice as often as there are workers within :data:`DEATH_WINDOW_SECONDS`,
something is wrong with every one of them, and the server stops with a
:class:`~pdi.errors.PDIError` saying so (``pdi serve`` exits 1).

A stop is bounded even when a request never ends (a loop that stops moving on a stranger's input, a bug): uvicorn
gives the requests in hand :data:`GRACE_SECONDS`, then cancels their tasks, but a thread working for one runs on,
and the one process of ``--workers 1`` waited for it for ever (a ``SIGTERM`` then stopped nothing; ``SIGKILL``
did), where a worker of several ended quietly, exiting 0. So a worker (that one process too) with a thread still at
work for a request once uvicorn has stopped, or not ended :data:`STUCK_SECONDS` after the signal, ends itself
(:class:`_StopWatch`: ``os._exit`` with :data:`STUCK_STATUS`), saying in the log which worker, after what and where
its threads were in pdi's code; the supervisor kills one still there :data:`KILL_SECONDS` after it (``SIGKILL``:
a thread that holds the GIL stops the watch too), saying so, and ``pdi serve`` exits 1 naming each worker stopped
so. Nothing durable is lost: a deposit is written to the catalog in one transaction, after its octets are staged,
so one cut short leaves the archive as it was (a staged blob no catalog row names is swept later).

For pdi's own tests only, ``$PDI_TEST_LOOP_WATCH`` (unset otherwise) makes each worker watch its event loop
(:func:`watch_loop`) and write its long stretches of work to the file it names.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, NoReturn

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.errors import PDIError
from pdi.server.http.forwarded import NO_PROXIES, TrustedProxies
from pdi.server.process.limits import DEFAULT_SEND_SECONDS
from pdi.server.process.observe import reopen_logs

#: How long a stopping worker lets the requests in hand finish (uvicorn's graceful shutdown) before it cancels them.
GRACE_SECONDS = 5
#: How long after ``SIGTERM`` or ``SIGINT`` a worker that has not ended (a thread still working for a request
#: cancelled at :data:`GRACE_SECONDS`) ends itself, and the status it exits with (:class:`_StopWatch`).
STUCK_SECONDS = GRACE_SECONDS + 2
STUCK_STATUS = 1
#: How long after ``SIGTERM`` the supervisor kills a worker still there (a worker whose watch could not run); within
#: the ten seconds systemd waits (``TimeoutStopSec=10s`` in pdi's unit) before it kills what is left itself.
KILL_SECONDS = GRACE_SECONDS + 4
#: The window in which more than twice as many deaths as workers stop the server.
DEATH_WINDOW_SECONDS = 60.0
#: Connections the kernel holds for the workers to accept (as nginx's default ``listen … backlog``).
BACKLOG = 511
_SUPERVISED = {signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP}
#: What ``pdi serve`` holds (blocked) from the line that says it serves until it acts on them (:func:`hold_signals`).
HELD = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


def hold_signals() -> None:
    """Hold :data:`HELD` until :func:`serve` acts on them: the supervisor of several workers waits for them
    (:class:`Workers`), one worker in this process lets them go once uvicorn's own handlers are in place (its app's
    lifespan starts inside them: :func:`_released`). So a ``SIGTERM`` sent as soon as ``pdi serve`` says it serves,
    while it still imports what its workers answer with, stops it as one sent later does (exit 0), not by the
    signal's default action (exit 143), nor is it lost to a handler set for after uvicorn has stopped (found by a
    probe, 2026-11-30). Called in the main thread, when no other thread runs: a thread that does not block them
    would take them (``pdi serve`` starts NumPy's OpenBLAS without a thread pool, ``OPENBLAS_NUM_THREADS=1``)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD)


def _released(app: ASGIApp, release: bool = True, watch: _StopWatch | None = None) -> ASGIApp:
    """``app``, when uvicorn starts it (its lifespan, which uvicorn's ``Server.serve`` runs with its own signal
    handlers in place), arming ``watch`` on the signals that stop it (:meth:`_StopWatch.arm_on`) and, with
    ``release``, letting :data:`HELD` go: a signal held since :func:`hold_signals` is then uvicorn's to act on."""

    async def releasing(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            if watch is not None:
                watch.arm_on((signal.SIGTERM, signal.SIGINT))
            if release:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
            if watch is not None:
                receive = _shutdown_watched(receive, watch)
        await app(scope, receive, send)

    return releasing


def _shutdown_watched(receive: Receive, watch: _StopWatch) -> Receive:
    """The lifespan's ``receive``, :meth:`_StopWatch.end_if_still_at_work` awaited when it gives the shutdown: uvicorn sends
    it once the requests in hand have had their grace and their tasks are cancelled (a worker of several is then
    ended by the signal uvicorn raises again, its default action: the threads still at work would go unsaid)."""

    async def receiving() -> Message:
        message = await receive()
        if message["type"] == "lifespan.shutdown":
            await watch.end_if_still_at_work()
        return message

    return receiving


class _StopWatch:
    """A worker's bound on its own stop, armed by the first ``SIGTERM`` or ``SIGINT`` (chained before uvicorn's
    handler, :meth:`arm_on`). Once uvicorn has stopped (its grace, :data:`GRACE_SECONDS`, given to the requests in
    hand, then their tasks cancelled), a thread still at work for one (:func:`_at_work`) :data:`STUCK_SECONDS` after
    the signal ends the worker (:meth:`end_if_still_at_work`, :meth:`end_if_at_work`); and a daemon thread ends it if it is still there :data:`STUCK_SECONDS` after the
    signal (uvicorn waiting on something that never ends). Either says so in the log (which worker, after which
    signal, where its threads were in pdi's code) and ends it with ``os._exit`` (:data:`STUCK_STATUS`), the
    ``companions`` (``pdi serve --indexer``'s indexer, in the one process of ``--workers 1``) sent ``SIGTERM``
    first."""

    def __init__(self, companions: Callable[[], list[int]] = list) -> None:
        self.companions = companions
        self.signum: int | None = None
        #: When the signal came (``time.monotonic``).
        self.armed_at: float | None = None
        #: Whether uvicorn has stopped with no thread at work: the watch's thread then ends nothing.
        self.done = False

    def arm_on(self, signals: tuple[signal.Signals, ...]) -> None:
        """Each of ``signals`` arms the watch, then does what its handler did (uvicorn's: stop serving); nothing in a
        thread other than the main one, where no handler can be set (uvicorn sets none there either)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in signals:
            previous = signal.getsignal(signum)
            if not callable(previous):
                continue

            def chained(number: int, frame: Any, previous: Callable[[int, Any], Any] = previous) -> None:
                self.arm(number)
                previous(number, frame)

            signal.signal(signum, chained)

    def arm(self, signum: int) -> None:
        """Start the watch (once) for the signal ``signum``. (A thread that holds the GIL, a regular expression
        backtracking, keeps the main thread from running the handler that arms it: the supervisor's ``SIGKILL``
        ends such a worker, the service manager the one process of ``--workers 1``: systemd after
        ``TimeoutStopSec``.)"""
        if self.signum is not None:
            return
        self.signum = signum
        self.armed_at = time.monotonic()
        threading.Thread(target=self._watch, name="pdi stop watch", daemon=True).start()

    def stand_down(self) -> None:
        """uvicorn has stopped with no thread at work: the watch ends nothing now."""
        self.done = True

    def end_if_at_work(self) -> None:
        """Once uvicorn's loop is over: the worker ended if a thread is still at work for a request once it is
        :data:`STUCK_SECONDS` after the signal (as :meth:`end_if_still_at_work`, with no loop left to wait on)."""
        deadline = (self.armed_at if self.armed_at is not None else time.monotonic()) + STUCK_SECONDS
        places = _at_work()
        while places and time.monotonic() < deadline:
            time.sleep(0.05)
            places = _at_work()
        if places:
            self._end(f"still at work {STUCK_SECONDS:g} s after it, once its server had stopped", places)

    async def end_if_still_at_work(self) -> None:
        """Once uvicorn has stopped: the worker ended if a thread is still at work for a request (one its grace
        did not see end), which would keep the process for ever (a thread that is no daemon is waited for), once
        it is still at work :data:`STUCK_SECONDS` after the signal. Until then the event loop runs (this waits on
        it, never blocks it): a thread whose request was cancelled at the grace ends as it learns so, by the loop
        (found by a review: a deposit's body still coming in at ``SIGTERM``, its thread waiting on the loop for
        the next piece, was taken for one stuck, and an ordinary stop exited 1)."""
        deadline = (self.armed_at if self.armed_at is not None else time.monotonic()) + STUCK_SECONDS
        places = _at_work()
        while places and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            places = _at_work()
        if places:
            self._end(f"still at work {STUCK_SECONDS:g} s after it, past the {GRACE_SECONDS:g} s its requests in"
                      " hand were given", places)

    def _watch(self) -> None:
        time.sleep(STUCK_SECONDS)
        if self.done:
            return
        self._end(f"not ended {STUCK_SECONDS:g} s after it", _at_work())

    def _end(self, what: str, places: list[str]) -> NoReturn:
        where = ("a thread in " + ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")
                 if places else "no thread in pdi's code")
        said = "a signal" if self.signum is None else signal.Signals(self.signum).name
        _log.error("pdi: worker %d %s (%s; %s): ended without finishing them", os.getpid(), what, said, where)
        for pid in self.companions():
            _signal(pid, signal.SIGTERM)
        logger: logging.Logger | None = _log
        while logger is not None:  # the record written out (a --log-file's buffer) before the exit
            for handler in logger.handlers:
                handler.flush()
            logger = logger.parent if logger.propagate else None
        sys.stderr.flush()
        os._exit(STUCK_STATUS)


def _at_work() -> list[str]:
    """Where the threads at work for a request are in pdi's code, sorted: each thread that is no daemon (pdi's own
    threads are daemons; a request's work runs in anyio's or asyncio's, which are not) whose innermost frame in a
    ``pdi`` module is not in this one (the main thread's, serving), by that frame: ``pdi.mail.large._next_line``."""
    frames = sys._current_frames()
    found: set[str] = set()
    for thread in threading.enumerate():
        if thread.daemon or thread is threading.current_thread() or thread.ident not in frames:
            continue
        at: Any = frames[thread.ident]
        while at is not None:
            module = str(at.f_globals.get("__name__", ""))
            if module.startswith("pdi."):
                if module != __name__:
                    found.add(f"{module}.{at.f_code.co_name}")
                break
            at = at.f_back
    return sorted(found)


#: For tests only, off unless set: the file a worker's event loop says its long turns in (:func:`watch_loop`).
LOOP_WATCH_ENV = "PDI_TEST_LOOP_WATCH"
#: How often the watch takes its turn on the loop, and the shortest stretch of the loop's own CPU between two of
#: its turns that it writes down (seconds).
LOOP_WATCH_PERIOD = 0.002
LOOP_WATCH_LEAST = 0.001


def default_workers() -> int:
    """Worker processes ``pdi serve`` runs unless told: one a core this process may use, at most 4."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


def listening_socket(host: str, port: int, *, what: str = "", instead: str = "") -> socket.socket:
    """A TCP socket bound to ``host`` and ``port`` (0: any free port); a :class:`PDIError` if it cannot be.

    The refusal names the port, ``what`` it was for (`` for the replay origin``) and
    ``instead``, what to do about it (``; give another --replay-port``); where the host is at fault (a name
    that does not resolve, an address that is not this machine's), what to do about the host instead.

    It is made ``IPPROTO_TCP`` explicitly: asyncio sets ``TCP_NODELAY`` only
    on connections accepted from a socket that says it is TCP, and without it
    Nagle's algorithm held every small answer until the client's delayed ACK
    (about 40 ms a request).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
            instead = "; give another --host: an address of this machine (127.0.0.1, ::1, or 0.0.0.0 for all)"
        raise PDIError(f"cannot listen on {host} port {port}{what}: {exc.strerror}{instead}") from exc
    return listener


def serve(
    make_app: Callable[[], ASGIApp], listener: socket.socket, *,
    workers: int = 1, header_timeout: float, max_connections: int, replay: socket.socket | None = None,
    json_logs: bool = False, own_logging: bool = False, trusted: TrustedProxies = NO_PROXIES,
    send_timeout: float = DEFAULT_SEND_SECONDS, companions: Callable[[], list[int]] = list,
) -> None:
    """Serve ``make_app()`` on ``listener`` until interrupted: in this process, or in ``workers`` processes.

    ``max_connections`` is a bound for each worker (uvicorn's
    ``limit_concurrency``). With more than one worker, ``make_app`` is called
    in each worker after the fork, never in this process. ``replay`` is the
    replay origin's socket, served by the same processes: the app tells its
    requests apart by their local port (:class:`pdi.server.process.origins.ByPort`).
    ``json_logs``: the answers connections write from the cache of whole answers
    (:mod:`pdi.server.process.connection`) get a request id and a JSON record too. ``own_logging``: uvicorn leaves the
    logging configuration as it is (:func:`pdi.server.process.observe.configure_logging` made it).
    ``trusted``: the proxies whose ``X-Forwarded-*`` fields the connections believe (the app reads them itself:
    :class:`pdi.server.http.forwarded.TrustedForwarding`); uvicorn's own reading of them is off.
    ``send_timeout``: a connection whose client takes none of an answer's octets for so many seconds is dropped.
    ``companions``: the processes beside the workers (``pdi serve --indexer``'s) that ``SIGHUP`` is passed on to.
    """
    if workers < 1:
        raise ValueError("workers must be at least 1")
    listeners = [listener] if replay is None else [listener, replay]
    for each in listeners:
        each.listen(BACKLOG)
    replay_port = None if replay is None else replay.getsockname()[1]
    options: dict[str, Any] = {"header_timeout": header_timeout, "max_connections": max_connections,
                               "replay_port": replay_port, "json_logs": json_logs,
                               "own_logging": own_logging, "trusted": trusted, "send_timeout": send_timeout}
    if workers == 1:
        # uvicorn raises the SIGTERM it stopped on again once it has stopped, to the handler it found: this
        # one ignores it, so a server stopped by SIGTERM exits 0, as the supervisor of several workers does
        def hangup(*_: object) -> None:
            reopen_logs()
            for pid in companions():
                _signal(pid, signal.SIGHUP)

        previous = {signal.SIGHUP: signal.signal(signal.SIGHUP, hangup),
                    signal.SIGTERM: signal.signal(signal.SIGTERM, _stopped)}
        try:
            _uvicorn(make_app(), listeners, **options, release=True, companions=companions)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return

    def work() -> None:
        signal.signal(signal.SIGHUP, reopen_logs)
        _uvicorn(make_app(), listeners, **options)

    Workers(work, workers, listeners=listeners, companions=companions).run()


def _uvicorn(
    app: ASGIApp, listeners: list[socket.socket], *, header_timeout: float, max_connections: int,
    replay_port: int | None = None, json_logs: bool = False, own_logging: bool = False,
    trusted: TrustedProxies = NO_PROXIES, send_timeout: float = DEFAULT_SEND_SECONDS, release: bool = False,
    companions: Callable[[], list[int]] = list,
) -> None:
    """uvicorn on ``listeners`` until a signal stops it; ``release``: the signals held since :func:`hold_signals`
    let go once uvicorn's handlers are in place (:func:`_released`). A signal that stops it starts its
    :class:`_StopWatch` (``companions``: the processes it stops too if it has to end itself).

    HTTP/1.1 with the request-head deadline, answering what the app's cache
    of whole answers holds (``app.state.cache``, as :func:`pdi.server.create_app`
    makes it) straight from the connection (:mod:`pdi.server.process.cache`), and
    the plain N2R of a name it does not hold yet (``app.state.public``); under a path (``--base-url
    https://host/pdi/``) too, the paths of those answers made under it where they are made (:mod:`pdi.server.http.site`).
    """
    import uvicorn

    from pdi.server.process.connection import answering_protocol

    state = getattr(app, "state", None)
    cache = getattr(state, "cache", None)
    watch = os.environ.get(LOOP_WATCH_ENV)  # tests only
    served = _watched(app, watch) if watch else app  # (the app's own state read above: a wrapper has none)
    stop_watch = _StopWatch(companions)
    config = uvicorn.Config(
        _released(served, release, stop_watch),
        log_level="warning", log_config=None if own_logging else uvicorn.config.LOGGING_CONFIG,
        http=answering_protocol(header_timeout, cache, replay_port, None if cache is None else getattr(state, "public", None),
                                getattr(state, "access", None), json_logs, trusted, send_timeout),
        # X-Forwarded-* are read only from --trusted-proxy, by the app and the connections (uvicorn's own
        # reading would believe 127.0.0.1's, or $FORWARDED_ALLOW_IPS's, and leave X-Forwarded-Host out)
        proxy_headers=False,
        # no WebSocket: pdi has no such route, and an upgraded connection would leave the protocol uncounted
        # (CachedAnswerProtocol.clients) whatever library uvicorn finds installed
        ws="none",
        limit_concurrency=max_connections, timeout_keep_alive=5,
        timeout_graceful_shutdown=GRACE_SECONDS,
    )
    # What the worker made to start (its modules, the app, their objects) moved out of the collector's reach
    # (gc.freeze): a full collection, which runs on whichever thread's allocation sets it off (the loop's too),
    # walked them all each time, 13 to 29 ms of the loop's own work on end while a manifest page was made beside
    # it (tests/server/test_server_loop_free.py, gc.callbacks); it walks only what the requests made since.
    gc.freeze()
    # the socket itself: uvicorn would read an fd= as a Unix socket (no TCP_NODELAY again)
    uvicorn.Server(config).run(sockets=listeners)
    stop_watch.end_if_at_work()
    stop_watch.stand_down()  # what follows (the --indexer stopped, the exit) is no request's: not ended for it


def _watched(app: ASGIApp, path: str) -> ASGIApp:
    """``app``, starting :func:`watch_loop` on the event loop it is first called on (uvicorn's lifespan)."""
    watching: list[asyncio.Task[None]] = []  # the task kept: the loop holds its tasks weakly

    async def watched(scope: Scope, receive: Receive, send: Send) -> None:
        if not watching:
            watching.append(asyncio.get_running_loop().create_task(watch_loop(path)))
        await app(scope, receive, send)

    return watched


async def watch_loop(path: str) -> None:
    """Tests' watch of the event loop (``$PDI_TEST_LOOP_WATCH``): a turn every :data:`LOOP_WATCH_PERIOD`, which
    appends to ``path`` a line ``MONOTONIC CPU WALL`` (seconds) when the loop's thread spent
    :data:`LOOP_WATCH_LEAST` or more of its own CPU time since the turn before (:func:`time.thread_time`: its
    callbacks' work, whatever else the machine runs and however long the thread waited for a core or the GIL);
    ``WALL``, the clock's time between the two turns. One callback that works on the loop for long is one long
    stretch; work moved to a thread is not on the loop's CPU at all."""
    with open(path, "a", encoding="ascii") as out:
        cpu, wall = time.thread_time(), time.monotonic()
        while True:
            await asyncio.sleep(LOOP_WATCH_PERIOD)
            now_cpu, now_wall = time.thread_time(), time.monotonic()
            if now_cpu - cpu >= LOOP_WATCH_LEAST:
                out.write(f"{now_wall:.6f} {now_cpu - cpu:.6f} {now_wall - wall:.6f}\n")
                out.flush()
            cpu, wall = now_cpu, now_wall


class Workers:
    """``count`` forked processes each running ``work()``, kept at ``count`` until a signal stops them all.

    The supervisor waits for ``SIGINT``, ``SIGTERM`` and ``SIGCHLD`` with the
    three blocked (``sigwait``), so a signal can never arrive between two
    steps of a fork or a reap; each worker unblocks them before it works.
    """

    def __init__(
        self, work: Callable[[], None], count: int, *, listeners: list[socket.socket] | None = None,
        companions: Callable[[], list[int]] = list,
    ) -> None:
        self.work = work
        #: The sockets the workers accept from, closed here first when stopping: new connections are refused.
        self.listeners = listeners or []
        self.count = count
        #: The processes beside the workers that ``SIGHUP`` is passed on to as well.
        self.companions = companions
        self.pids: set[int] = set()
        self._deaths: deque[float] = deque()

    def run(self) -> None:
        """Start the workers and supervise them until ``SIGINT`` or ``SIGTERM``; every worker is gone on return.
        A :class:`PDIError` if a worker had to be ended (:meth:`_stop`)."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SUPERVISED)
        stopped = False
        try:
            for _ in range(self.count):
                self._spawn()
            while (signum := signal.sigwait(_SUPERVISED)) in (signal.SIGCHLD, signal.SIGHUP):
                if signum == signal.SIGHUP:
                    reopen_logs()  # a log file this process writes to (a worker's death, said here)
                    for pid in [*self.pids, *self.companions()]:
                        _signal(pid, signal.SIGHUP)
                    continue
                for pid, status in self._reap():
                    self._replace(pid, status)
            stopped = True
            ended = self._stop(signal.Signals(signum).name)
        finally:
            if not stopped:
                self._stop("an error")
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if ended:
            raise PDIError(f"stopped, but not cleanly: {'; '.join(ended)} (pdi serve's log says where)")

    def _spawn(self) -> None:
        pid = os.fork()
        if pid == 0:
            self._be_worker()
        self.pids.add(pid)

    def _be_worker(self) -> NoReturn:
        code = 1
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _SUPERVISED)
            self.work()
            code = 0
        except KeyboardInterrupt:  # uvicorn raises the SIGINT it stopped on again once it has stopped
            code = 0
        except Exception:
            _log.exception("pdi: worker %d failed:", os.getpid())
        finally:
            logging.shutdown()  # the log's handlers flushed (standard error, a --log-file) before the exit
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # never return into the supervisor's code

    def _reap(self) -> list[tuple[int, int]]:
        """The workers that have ended, without waiting: ``(pid, wait status)``."""
        ended = []
        while self.pids:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            if pid in self.pids:
                self.pids.discard(pid)
                ended.append((pid, status))
        return ended

    def _replace(self, pid: int, status: int) -> None:
        now = time.monotonic()
        self._deaths.append(now)
        while self._deaths and self._deaths[0] < now - DEATH_WINDOW_SECONDS:
            self._deaths.popleft()
        how = _how_it_ended(status)
        if len(self._deaths) > 2 * self.count:
            raise PDIError(
                f"workers keep dying ({len(self._deaths)} within {DEATH_WINDOW_SECONDS:g} s, the last {pid}: "
                f"{how}): stopping"
            )
        _log.warning("pdi: worker %d %s; starting another", pid, how)
        self._spawn()

    def _stop(self, why: str) -> list[str]:
        """The listening sockets closed, ``SIGTERM`` to every worker; those still there :data:`KILL_SECONDS` after it
        are killed; all are reaped. What befell each worker that did not end as a stopped one does (exit 0, or the
        signal's default action before it served: ``SIGTERM``, ``SIGINT``), said in the log (``why``: what stopped
        the server) and returned."""
        for listener in self.listeners:
            listener.close()
        for pid in self.pids:
            _signal(pid, signal.SIGTERM)
        ended: list[str] = []

        def reaped() -> None:
            for pid, status in self._reap():
                if os.waitstatus_to_exitcode(status) not in (0, -signal.SIGTERM, -signal.SIGINT):
                    ended.append(f"worker {pid} {_how_it_ended(status)}")
                    _log.error("pdi: worker %d %s while stopping (after %s)", pid, _how_it_ended(status), why)

        deadline = time.monotonic() + KILL_SECONDS
        while self.pids and time.monotonic() < deadline:
            signal.sigtimedwait({signal.SIGCHLD}, max(0.01, deadline - time.monotonic()))
            reaped()
        for pid in sorted(self.pids):
            _log.error("pdi: worker %d had not ended %g s after %s: killed (SIGKILL)", pid, KILL_SECONDS, why)
            ended.append(f"worker {pid} killed {KILL_SECONDS:g} s after {why}")
            _signal(pid, signal.SIGKILL)
        while self.pids:
            pid, _ = os.waitpid(-1, 0)
            self.pids.discard(pid)
        return ended


#: Where the supervisor says a worker's death and a worker its failure (pdi's log: its JSON records, or plain text).
_log = logging.getLogger("pdi.serve")


def _stopped(signum: int, frame: object) -> None:
    """What ``SIGTERM`` does once uvicorn has stopped on it: nothing more (``pdi serve`` returns and exits 0)."""


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass  # it has just ended: the reaping that follows collects it


def _how_it_ended(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        return f"was killed by signal {-code} ({signal.Signals(-code).name})"
    return f"exited with status {code}"
