"""Work on a stranger's file done in a child process, with a wall-clock deadline and resource limits.

A library that runs in-process (PDFium, through pypdfium2) has no deadline
and no memory bound of its own: a hostile file can make it loop or balloon
(a 78 KB PDF whose page is a million text operators takes PDFium two seconds
and 500 MB). :func:`run_child` runs ``python -m MODULE ARG…`` for such work:

* the child sets its own limits first thing (:func:`child_main`):
  ``RLIMIT_AS`` (address space, :attr:`ChildLimits.memory`), ``RLIMIT_CPU``
  (the deadline, rounded up, plus one second: a belt to the parent's
  braces), ``RLIMIT_FSIZE`` (what it may write, :attr:`ChildLimits.output`:
  its answer goes to a file, so this bounds it) and no core file;
* the parent waits at most :attr:`ChildLimits.seconds` of wall-clock time,
  then kills the child (``SIGKILL``) and raises :class:`ChildLimit`;
* the child's answer is its standard output (a temporary file, read back at
  most :attr:`ChildLimits.output` octets); a refusal is one JSON line on its
  standard error naming a :mod:`pdi.errors` class, its message and what the
  error holds (its JSON-safe attributes: a refusal's advice, a parse error's
  rule and offset, a withdrawal's reason), which the parent raises again as
  that error, without calling its class's constructor (which would add its
  advice to a message that already holds it). Nothing the child writes is
  unpickled or evaluated.

One child does one piece of work (a deposit's whole text layer, a few
pages' boxes, one rendering), so its start-up (an interpreter and the
library's import, about 0.1 s) is paid once per piece, not per page.
The rlimits are set by the child, not by a ``preexec_fn`` (which is unsafe
in a parent with threads, as the resolver is).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence

import pdi.errors as errors

__all__ = ["ChildLimit", "ChildLimits", "Outcome", "child_main", "run_child"]

#: The exit status of a child whose work was refused with a pdi error (its JSON line on standard error says which).
REFUSED = 2
#: The exit status of a child that ran out of memory in Python (``MemoryError`` under ``RLIMIT_AS``).
OUT_OF_MEMORY = 3
#: The exit status of a child whose answer did not all fit its output bound (``RLIMIT_FSIZE`` lets a write stop
#: short at the bound, and Python's buffered write then says how much it wrote, not that it failed).
TOO_LARGE = 4
#: The most of a child's standard error read back (octets).
_ERROR_OUTPUT = 64 << 10


@dataclasses.dataclass(frozen=True)
class ChildLimits:
    """What one child may take: wall-clock ``seconds``, ``memory`` octets of address space, ``output`` octets."""

    seconds: float
    memory: int
    output: int


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A child's answer (its standard output) and its peak resident set size (KiB, see :func:`_peak_of`)."""

    data: bytes
    peak_kib: int


class ChildLimit(Exception):  # not a pdi error: the caller words the LimitError, naming the file
    """The child passed one of its limits: ``kind`` is ``"seconds"``, ``"memory"`` or ``"output"``."""

    def __init__(self, kind: str, detail: str, peak_kib: int = 0) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.peak_kib = peak_kib


def run_child(module: str, args: Sequence[str], limits: ChildLimits, *, stdin: int | None = None) -> Outcome:
    """Run ``python -m module args…`` under ``limits`` and give back what it wrote, or raise what it refused.

    ``stdin``: a file descriptor the child reads (None: nothing). A pdi error
    the child raised is raised here again (its class and message); a child
    killed at the deadline, out of memory or past its output is a
    :class:`ChildLimit`; any other death is a :class:`pdi.errors.UnsupportedError`
    naming its signal or status.
    """
    command = [sys.executable, "-m", module, json.dumps(dataclasses.asdict(limits)), *args]
    with tempfile.TemporaryFile(prefix="pdi-child-") as out, tempfile.TemporaryFile(prefix="pdi-child-") as err:
        process = subprocess.Popen(command, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                   stdout=out, stderr=err, close_fds=True)
        killed = threading.Event()
        ended = threading.Lock()  # held by whichever comes first: the deadline's kill, or the child's end
        exited = False

        def stop() -> None:
            with ended:
                if not exited:  # not yet reaped, so its pid is still its own
                    killed.set()
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(process.pid, signal.SIGKILL)

        timer = threading.Timer(limits.seconds, stop)
        timer.start()
        watching = threading.Event()
        peaks = [0]
        watcher = threading.Thread(target=_watch_peak, args=(process.pid, watching, peaks), daemon=True)
        watcher.start()
        try:
            os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
            with ended:
                exited = True
            watching.set()
            watcher.join()  # before the reaping below: the pid it reads is the child's until then
            _, status, _usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
            watching.set()
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        peak = peaks[0]
        code = process.returncode
        if killed.is_set() and code == -signal.SIGKILL:
            raise ChildLimit("seconds", f"took longer than {limits.seconds:g} s", peak)
        if code == 0:
            if out.tell() > limits.output:
                raise ChildLimit("output", f"answered more than {limits.output:,} octets", peak)
            out.seek(0)
            return Outcome(out.read(limits.output + 1), peak)
        err.seek(0)
        said = err.read(_ERROR_OUTPUT).decode("utf-8", "replace")
        if code == REFUSED:
            raise _refusal(said)
        if code == OUT_OF_MEMORY:
            raise ChildLimit("memory", f"needed more than its {limits.memory >> 20} MiB of memory", peak)
        if code == -signal.SIGXCPU or code == -signal.SIGKILL:
            raise ChildLimit("seconds", f"took more than {math.ceil(limits.seconds) + 1} s of CPU time", peak)
        if code == -signal.SIGXFSZ or code == TOO_LARGE:
            raise ChildLimit("output", f"answered more than {limits.output:,} octets", peak)
        if code < 0:  # PDFium's allocator stops the process (SIGTRAP, SIGSEGV, SIGABRT) when it cannot have memory
            raise ChildLimit("memory", f"needed more than its {limits.memory >> 20} MiB of memory (it was stopped"
                             f" by {_signal_name(-code)}, as it is when it can have no more)", peak)
        last = said.strip().splitlines()[-1:] or ["no message"]
        raise errors.UnsupportedError(f"the child reading it stopped (exit status {code}): {last[0][:300]}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _refusal(said: str) -> errors.PDIError:
    """The pdi error a child's last standard-error line names (an UnsupportedError if it names none): of the class
    it names, its message as the child said it (its ``str()``) and the attributes the child's error held
    (:func:`_refusal_line`), set as they were, not made again by the class's constructor, which adds its own
    words (a :class:`~pdi.errors.ContentRefusal`'s advice) to what it is given. The line is bounded by the
    octets read back (:data:`_ERROR_OUTPUT`)."""
    for line in reversed(said.strip().splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if not isinstance(found, dict):
            continue
        kind = getattr(errors, str(found.get("error")), None)
        message = str(found.get("message"))
        if isinstance(kind, type) and issubclass(kind, errors.PDIError):
            error = kind.__new__(kind)
            held = found.get("held")
            for name, value in (held.items() if isinstance(held, dict) else ()):
                if _may_hold(kind, name):
                    setattr(error, name, tuple(value) if isinstance(value, list) else value)
            error.message = message
            error.args = (message,)
            return error
    return errors.UnsupportedError(f"the child reading it refused it, saying no more than {said.strip()[-300:]!r}")


#: What the child's line may not set on the error made again: its class's mappings (its exit status, its HTTP
#: status and problem), which are its class's own.
_CLASS_OWN = frozenset({"exit_code", "http_status", "title", "problem_type", "args", "message"})


def _may_hold(kind: type[errors.PDIError], name: object) -> bool:
    """Whether a child's line may set the attribute ``name`` of an error of ``kind``: a public name that is not
    one of the class's methods or mappings (a child that PDFium's bug took over still cannot make the parent's
    error answer another status, or shadow a method)."""
    return (isinstance(name, str) and name.isidentifier() and not name.startswith("_") and name not in _CLASS_OWN
            and not callable(getattr(kind, name, None)))


def _refusal_line(error: errors.PDIError) -> str:
    """The JSON line a child writes for ``error`` (:func:`_refusal` makes it again): its class's name, its
    ``str()``, and ``held``: its own attributes whose values JSON writes as they are (strings, numbers, ``None``,
    lists and tuples of them, and dictionaries of them), and its :attr:`~pdi.errors.PDIError.details`."""
    held = {name: value for name, value in vars(error).items()
            if not name.startswith("_") and name != "message" and _plain(value)}
    if error.details and _plain(error.details):  # its RFC 9457 members, kept under a name of its own (errors.py)
        held["details"] = error.details
    return json.dumps({"error": type(error).__name__, "message": str(error), "held": held})


def _plain(value: object) -> bool:
    """Whether JSON writes ``value`` and reads back the same (a tuple: as a list, made a tuple again at the top)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(v is None or isinstance(v, (str, int, float, bool)) for v in value)
    if isinstance(value, dict):
        try:
            return bool(json.loads(json.dumps(value)) == value)
        except (TypeError, ValueError):
            return False
    return False


def child_main(work: Callable[[list[str]], bytes]) -> None:
    """A child's ``__main__``: set the limits ``argv[1]`` names, run ``work(argv[2:])``, write its answer, exit."""
    limits = ChildLimits(**json.loads(sys.argv[1]))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
    cpu = math.ceil(limits.seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output, limits.output))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        answer = work(sys.argv[2:])
    except MemoryError:
        sys.stderr.write("out of memory\n")
        sys.stderr.flush()
        os._exit(OUT_OF_MEMORY)
    except errors.PDIError as error:
        sys.stderr.write(_refusal_line(error) + "\n")
        sys.stderr.flush()
        os._exit(REFUSED)
    sys.stdout.flush()
    view, written = memoryview(answer), 0
    try:
        while written < len(view):
            wrote = os.write(sys.stdout.fileno(), view[written:])
            if wrote <= 0:
                break
            written += wrote
    except OSError:  # EFBIG past the bound
        pass
    os._exit(0 if written == len(view) else TOO_LARGE)


def _watch_peak(pid: int, done: threading.Event, peaks: list[int]) -> None:
    """Read the child's ``VmHWM`` (its own peak resident set, KiB) every 10 ms until ``done``; the largest in ``peaks[0]``.

    Not ``wait4``'s ``ru_maxrss``: Linux starts that count at the size of the
    process that started the child (the memory it was forked from, before
    ``exec``), so a large resolver would see its own size there.
    """
    path = f"/proc/{pid}/status"
    while True:
        try:
            with open(path, "rb") as status:
                for line in status:
                    if line.startswith(b"VmHWM:"):
                        peaks[0] = max(peaks[0], int(line.split()[1]))
                        break
        except (OSError, ValueError, IndexError):
            pass  # ended meanwhile (a zombie has no memory to report)
        if done.wait(0.01):
            return
