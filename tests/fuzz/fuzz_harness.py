"""The fuzzing harness: targets, their seed corpus, the sandbox every input runs in, and the inputs.

A *target* is one parser that takes a stranger's input, wrapped as a function
from bytes to nothing: one module in ``fuzz_targets/`` that defines ``TARGET``
(:class:`Target`). It may return or raise a :class:`pdi.errors.PDIError`;
anything else it raises (an ``AssertionError`` from a broken round trip
included) is a failure. Its seed corpus is ``tests/data/fuzz/<name>/``: every
file there is replayed on each run, and mutated to make new inputs.

Every input runs in a :class:`Sandbox`, a worker process (started once, with
``spawn``, and again only after it had to be killed), so that a hang or a
memory blow-up is a failure that names the input instead of a stuck or
killed test run:

* **Time**: each call may use :data:`CPU_SECONDS` (1 s) of CPU time. CPU time,
  not wall time, because the machine is shared: a call that waited for a core
  did not hang. The worker arms ``ITIMER_PROF`` for that budget; when it fires
  in Python code the call stops with a traceback of where it was. Code stuck
  in C never returns to Python, so the parent also reads the worker's CPU
  time from ``/proc`` and kills it a second later (or after :data:`WALL_SECONDS`
  of wall time, for a call that blocks without using CPU).
* **Memory**: the worker's address space is capped (``RLIMIT_AS``) at what it
  uses after start-up plus :data:`MEMORY_MB` (512 MiB); an allocation past
  the cap raises ``MemoryError`` (Python and Pillow, numpy, libsndfile alike),
  which is a failure even when the code under test turned it into a
  :class:`~pdi.errors.PDIError`. An address-space cap, rather than watching
  the resident size, stops a runaway allocation before it touches the
  machine's memory, and it is exact per call. Start-up (imports, a first run
  of every target on a small valid input so lazy imports are done) happens
  before the cap and the clock.
* A worker that dies (a segmentation fault, an abort in a C library) is a
  failure too; a new worker takes over.
* **Warnings are errors**, as under ``python -W error`` and in pytest
  (``pyproject.toml``): a warning a library gives of a stranger's input is a
  failure, unless the code under test answers it. So is an exception raised
  where no caller can catch it (in a C library's callback, a finalizer:
  printed as "Exception ignored", :func:`sys.unraisablehook`).

Environment (all optional): ``PDI_FUZZ_EXAMPLES`` (inputs per target in the
normal run), ``PDI_FUZZ_SECONDS`` (fuzz each target this long instead, in
rounds of random inputs), ``PDI_FUZZ_SAVE=1`` (write the smallest failing
input of each failing target into its seed folder), ``PDI_FUZZ_CPU_SECONDS``,
``PDI_FUZZ_MEMORY_MB``.
"""

from __future__ import annotations

import hashlib
import importlib
import multiprocessing
import os
import pkgutil
import resource
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CORPUS = REPO / "tests" / "data" / "fuzz"

CPU_SECONDS = float(os.environ.get("PDI_FUZZ_CPU_SECONDS", "1"))
MEMORY_MB = int(os.environ.get("PDI_FUZZ_MEMORY_MB", "512"))
#: A call that neither returns nor uses CPU (blocked) is a hang after this long.
WALL_SECONDS = 60.0
#: How long past its CPU budget a call stuck in C code runs before it is killed.
GRACE_SECONDS = 1.0
#: Inputs are cut to this size: the time and memory limits are for inputs this big.
MAX_INPUT = 64 * 1024


@dataclass(frozen=True)
class Target:
    """One parser under fuzzing.

    ``run`` takes the input bytes and returns, or raises a PDIError;
    ``warmup`` is a small valid input run once when a worker starts;
    ``tokens`` are byte strings the parser gives meaning to, which mutations
    insert (and the coverage-guided runner uses as its dictionary);
    ``generate`` is an optional hypothesis strategy of well-formed inputs
    beyond the mutated seeds; ``examples`` scales the normal run (1.0 = the
    default number of inputs) for targets much slower or faster than most.
    """

    name: str
    run: Callable[[bytes], object]
    warmup: bytes = b""
    tokens: tuple[bytes, ...] = ()
    generate: Any = None
    examples: float = 1.0


def targets() -> dict[str, Target]:
    """Every target: the ``TARGET`` of each module in ``fuzz_targets/`` (modules starting ``_`` are helpers)."""
    import fuzz_targets

    found: dict[str, Target] = {}
    for info in sorted(pkgutil.iter_modules(fuzz_targets.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"fuzz_targets.{info.name}")
        target = module.TARGET
        if target.name != info.name:
            raise RuntimeError(f"fuzz_targets/{info.name}.py names its target {target.name!r}")
        found[target.name] = target
    return found


def seed_files(name: str) -> list[Path]:
    """The seed corpus of target ``name``: every file in ``tests/data/fuzz/<name>/``, sorted."""
    folder = CORPUS / name
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


# --- the worker ---------------------------------------------------------------------------------


class _OutOfTime(BaseException):
    """Raised in the worker when a call has used its CPU budget (a BaseException: no ``except Exception`` swallows it)."""


_armed = False


def _on_profile_timer(signum: int, frame: object) -> None:
    if _armed:
        raise _OutOfTime(f"the call used more than {CPU_SECONDS:g} s of CPU time")


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def _caused_by_memory_error(exc: BaseException) -> bool:
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, MemoryError):
            return True
        todo += [e.__cause__, e.__context__]
    return False


def _self_test_targets() -> dict[str, Target]:
    """Targets that misbehave on purpose, so the harness's own tests can see it catch each kind of failure."""
    import itertools

    from pdi.errors import LimitError, ParseError

    def crash(data: bytes) -> None:
        if data:
            raise KeyError(data)
        raise ParseError("empty")

    def spin(data: bytes) -> None:
        while True:
            data = hashlib.sha1(data).digest()

    def spin_in_c(data: bytes) -> None:
        sum(itertools.repeat(0, 10**13))  # one C call that does not return to Python for hours

    def block(data: bytes) -> None:
        time.sleep(3600)

    def grab(data: bytes) -> None:
        bytearray(2 * MEMORY_MB * 2**20)

    def grab_and_hide(data: bytes) -> None:
        try:
            bytearray(2 * MEMORY_MB * 2**20)
        except MemoryError as exc:
            raise LimitError("too big") from exc

    def die(data: bytes) -> None:
        os.kill(os.getpid(), signal.SIGSEGV)

    def warn(data: bytes) -> None:
        warnings.warn(f"a warning of {len(data)} octets", UserWarning, stacklevel=1)
        raise ParseError("after the warning")

    def unraisable(data: bytes) -> None:
        class Closing:
            def __del__(self) -> None:
                raise ValueError("in a finalizer, as in a C library's callback")

        Closing()  # finalized at once: its exception reaches no caller
        raise ParseError("after the finalizer")

    functions = {
        "crash": crash, "spin": spin, "spin_in_c": spin_in_c, "block": block,
        "grab": grab, "grab_and_hide": grab_and_hide, "die": die, "warn": warn, "unraisable": unraisable,
    }
    return {f"selftest-{n}": Target(f"selftest-{n}", f) for n, f in functions.items()}


def _limit_malloc_arenas() -> None:
    # glibc reserves 64 MiB of address space for each thread's malloc arena; with the
    # address-space cap, that would count as memory the call used.
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-8, 1)  # M_ARENA_MAX
    except (OSError, AttributeError):  # not glibc: nothing to limit
        pass


def _worker(conn: Connection, cpu_seconds: float, memory_mb: int, warm: bool) -> None:
    """The worker's loop: receive ``(target, data)``, run it under the limits, send back the outcome."""
    global _armed
    _limit_malloc_arenas()
    warnings.simplefilter("ignore")  # the warm-up's (imports); the inputs' are errors (below)
    from pdi.errors import PDIError

    registry = {**targets(), **_self_test_targets()}
    if warm:
        for target in targets().values():
            try:
                target.run(target.warmup)
            except PDIError:
                pass
    signal.signal(signal.SIGPROF, _on_profile_timer)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    conn.send(("ready", ""))
    # a warning is an error, as under ``python -W error`` and in pytest (pyproject.toml): what a stranger's input
    # makes a library warn of must be answered, not left on stderr; an exception raised where nothing catches it
    # (a C library's callback, a finalizer: :func:`sys.unraisablehook`) is a crash of the input that raised it
    warnings.simplefilter("error")
    unraisable: list[str] = []
    sys.unraisablehook = lambda raised: unraisable.append(
        f"an exception no caller could catch ({raised.err_msg or 'Exception ignored in'} {raised.object!r}):\n"
        + "".join(traceback.format_exception(raised.exc_value)))
    while True:
        try:
            name, data = conn.recv()
        except EOFError:
            return
        kind, detail = "ok", ""
        start = time.process_time()
        _armed = True
        signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
        try:
            registry[name].run(data)
        except _OutOfTime:
            _armed = False
            kind, detail = "hang", traceback.format_exc()
        except PDIError as exc:
            _armed = False
            if _caused_by_memory_error(exc):
                kind, detail = "memory", traceback.format_exc()
            else:
                detail = type(exc).__name__
        except MemoryError:
            _armed = False
            kind, detail = "memory", traceback.format_exc()
        except BaseException:  # everything else is what fuzzing looks for
            _armed = False
            kind, detail = "crash", traceback.format_exc()
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_PROF, 0)
        if unraisable and kind == "ok":
            kind, detail = "crash", unraisable[0]
        unraisable.clear()
        conn.send((kind, detail, time.process_time() - start))
        if kind == "memory":
            return  # a fresh worker for the next input: this one's heap may be in pieces


# --- the parent's side ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one call did: ``kind`` is ``ok``, ``crash``, ``hang`` or ``memory``; ``detail`` the traceback."""

    kind: str
    detail: str
    cpu: float


class FuzzFailure(AssertionError):
    """An input made a target fail; the message names the target, the input and what happened."""

    def __init__(self, target: str, data: bytes, outcome: Outcome) -> None:
        self.target, self.data, self.outcome = target, data, outcome
        digest = hashlib.sha1(data).hexdigest()
        what = {
            "crash": "raised an exception outside pdi.errors",
            "hang": f"used more than {CPU_SECONDS:g} s of CPU time (or blocked)",
            "memory": f"needed more than {MEMORY_MB} MiB",
        }.get(outcome.kind, outcome.kind)
        shown = data if len(data) <= 600 else data[:600] + b"..."
        super().__init__(
            f"fuzz target {target!r} {what} on a {len(data)}-byte input (sha1 {digest}):\n"
            f"  {shown!r}\n"
            f"keep it as a regression test: save it as tests/data/fuzz/{target}/crash-{digest[:16]}"
            f" (PDI_FUZZ_SAVE=1 does so), then fix the code\n"
            f"--- in the worker ---\n{outcome.detail}"
        )

    def save(self) -> Path:
        """Write the input into the target's seed folder; return its path."""
        path = CORPUS / self.target / f"crash-{hashlib.sha1(self.data).hexdigest()[:16]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data)
        return path


def _cpu_time(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Sandbox:
    """The parent's side of the worker: :meth:`run` one input of one target under the limits."""

    def __init__(
        self,
        *,
        cpu_seconds: float = CPU_SECONDS,
        memory_mb: int = MEMORY_MB,
        wall_seconds: float = WALL_SECONDS,
        warm: bool = True,
    ) -> None:
        self.cpu_seconds, self.memory_mb, self.wall_seconds, self.warm = cpu_seconds, memory_mb, wall_seconds, warm
        self._process: Any = None
        self._conn: Connection | None = None
        self.starts = 0

    def _start(self) -> Connection:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(
            target=_worker, args=(child, self.cpu_seconds, self.memory_mb, self.warm), daemon=True
        )
        process.start()
        child.close()
        if not parent.poll(300):
            process.kill()
            raise RuntimeError("the fuzzing worker did not start within 300 s")
        try:
            parent.recv()
        except EOFError:
            raise RuntimeError(f"the fuzzing worker died while starting (exit {process.exitcode})") from None
        self._process, self._conn = process, parent
        self.starts += 1
        return parent

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join()
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None

    def close(self) -> None:
        self._stop()

    def run(self, target: str, data: bytes) -> Outcome:
        """Run ``target`` on ``data`` in the worker and say what happened."""
        conn = self._conn or self._start()
        pid = self._process.pid
        cpu0, wall0 = _cpu_time(pid), time.monotonic()
        conn.send((target, data))
        while not conn.poll(0.1):
            if not self._process.is_alive():
                break
            cpu, wall = _cpu_time(pid) - cpu0, time.monotonic() - wall0
            if cpu > self.cpu_seconds + GRACE_SECONDS or wall > self.wall_seconds:
                self._stop()
                how = f"{cpu:.1f} s of CPU time" if wall <= self.wall_seconds else f"{wall:.0f} s without returning"
                return Outcome("hang", f"killed after {how}, in code that did not return to Python", cpu)
        try:
            kind, detail, cpu_used = conn.recv()
        except (EOFError, ConnectionError):
            self._process.join()
            code = self._process.exitcode
            self._stop()
            how = f"signal {-code} ({signal.Signals(-code).name})" if code and code < 0 else f"exit status {code}"
            return Outcome("crash", f"the worker died: {how}", 0.0)
        if kind == "memory":
            self._stop()
        return Outcome(kind, detail, cpu_used)

    def check(self, target: str, data: bytes) -> None:
        """Raise :class:`FuzzFailure` unless ``target`` returns or raises a PDIError on ``data`` within the limits."""
        outcome = self.run(target, data)
        if outcome.kind != "ok":
            raise FuzzFailure(target, data, outcome)


# --- inputs ----------------------------------------------------------------------------------------

_INTERESTING = (
    b"0", b"1", b"-1", b"00", b"255", b"256", b"65535", b"65536", b"2147483648", b"4294967296",
    b"18446744073709551616", b"99999999999999999999999", b"1e9", b"0x10",
)
_BYTES = (0, 1, 0x7F, 0x80, 0xFF, 0xC3, 0xED, 0x0A, 0x0D, 0x25, 0x3C, 0x3E, 0x22, 0x3D)


def inputs(target: Target, seeds: list[bytes]) -> Any:
    """The hypothesis strategy of inputs for ``target``: mutated seeds, random bytes, and its own generator."""
    from hypothesis import strategies as st

    tokens = list(target.tokens) or [b"\x00"]
    pool = seeds or [b""]

    @st.composite
    def mutated(draw: st.DrawFn) -> bytes:
        buf = bytearray(draw(st.sampled_from(pool)))
        for _ in range(draw(st.integers(1, 8))):
            op = draw(st.integers(0, 7))
            pos = draw(st.integers(0, len(buf)))
            if op == 0:
                buf[pos:pos] = draw(st.sampled_from(tokens))
            elif op == 1:
                buf[pos:pos] = draw(st.binary(min_size=1, max_size=8))
            elif op == 2:
                del buf[pos : pos + draw(st.integers(1, 64))]
            elif op == 3 and buf:
                buf[min(pos, len(buf) - 1)] = draw(st.sampled_from(_BYTES))
            elif op == 4:
                n = draw(st.integers(1, 256))
                piece = bytes(buf[pos : pos + n])
                buf[pos:pos] = piece * draw(st.integers(1, 64))
            elif op == 5:
                other = draw(st.sampled_from(pool))
                a = draw(st.integers(0, len(other)))
                buf[pos:pos] = other[a : a + draw(st.integers(1, 512))]
            elif op == 6:
                # replace the run of digits around pos with an interesting number
                a = b = pos
                while a > 0 and chr(buf[a - 1]).isdigit():
                    a -= 1
                while b < len(buf) and chr(buf[b]).isdigit():
                    b += 1
                buf[a:b] = draw(st.sampled_from(_INTERESTING))
            elif buf:
                i = min(pos, len(buf) - 1)
                buf[i] ^= 1 << draw(st.integers(0, 7))
        return bytes(buf[:MAX_INPUT])

    choices = [mutated(), st.binary(max_size=512)]
    if target.generate is not None:
        choices.append(target.generate.map(lambda b: b[:MAX_INPUT]))
    return st.one_of(*choices)


def examples_per_target() -> int:
    return int(os.environ.get("PDI_FUZZ_EXAMPLES", "800"))


def fuzz_seconds() -> float:
    return float(os.environ.get("PDI_FUZZ_SECONDS", "0"))


def fuzz(sandbox: Sandbox, target: Target) -> None:
    """Fuzz ``target`` with hypothesis: a bounded number of inputs, or ``PDI_FUZZ_SECONDS`` of rounds."""
    from hypothesis import HealthCheck, given, seed, settings

    seeds = [p.read_bytes()[:MAX_INPUT] for p in seed_files(target.name)]
    strategy = inputs(target, seeds)
    seconds = fuzz_seconds()
    examples = max(1, round(examples_per_target() * target.examples))

    def one(data: bytes) -> None:
        sandbox.check(target.name, data)

    # Each target its own examples database entry and derandomized sequence (as parametrize does).
    one._hypothesis_internal_add_digest = target.name.encode()  # type: ignore[attr-defined]
    checks = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
    if not seconds:
        runs: Iterator[Callable[[], None]] = iter(
            [settings(max_examples=examples, suppress_health_check=checks)(given(strategy)(one))]
        )
    else:
        stop = time.monotonic() + seconds

        def rounds() -> Iterator[Callable[[], None]]:
            n = int.from_bytes(os.urandom(4), "big")
            while time.monotonic() < stop:
                n += 1
                yield seed(n)(
                    settings(max_examples=200, suppress_health_check=checks, derandomize=False)(
                        given(strategy)(one)
                    )
                )

        runs = rounds()
    for run in runs:
        try:
            run()
        except FuzzFailure as failure:
            _maybe_save(failure)
            raise
        except BaseExceptionGroup as group:
            for failure in _failures(group):
                _maybe_save(failure)
            raise


def _failures(group: BaseExceptionGroup[Any]) -> Iterator[FuzzFailure]:
    for exc in group.exceptions:
        if isinstance(exc, FuzzFailure):
            yield exc
        elif isinstance(exc, BaseExceptionGroup):
            yield from _failures(exc)


def _maybe_save(failure: FuzzFailure) -> None:
    if os.environ.get("PDI_FUZZ_SAVE") == "1":
        path = failure.save()
        print(f"saved the failing input as {path}", file=sys.stderr)
