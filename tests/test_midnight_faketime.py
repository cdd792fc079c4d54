"""scripts/midnight's fix for libfaketime (scripts/support/faketime_monotonic.c), against Debian's libfaketime.

A small C program waits on a condition variable of the monotonic clock
(as CPython's GIL and Chromium's threads do) and sleeps on it
(``clock_nanosleep``, as ``time.sleep`` does); it prints how long each took
by the kernel's monotonic clock, read with the raw system call (which no
preload can change), and the year the faked wall clock shows. Under
libfaketime alone, with the monotonic clock left real, the wait returns at
once and the sleep fails; with the fix preloaded in front, each takes the
time it was asked to, and the wall clock is still the faked one.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "scripts" / "support" / "faketime_monotonic.c"

WITNESS = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double kernel_monotonic(void)
{
    struct timespec now;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

int main(void)
{
    pthread_condattr_t attr;
    pthread_cond_t cond;
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cond, &attr);

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += 300000000;  /* 0.3 s */
    if (deadline.tv_nsec >= 1000000000) { deadline.tv_sec += 1; deadline.tv_nsec -= 1000000000; }
    double start = kernel_monotonic();
    pthread_mutex_lock(&mutex);
    int waited = pthread_cond_timedwait(&cond, &mutex, &deadline);
    pthread_mutex_unlock(&mutex);
    double wait = kernel_monotonic() - start;

    struct timespec sleep_until;
    clock_gettime(CLOCK_MONOTONIC, &sleep_until);
    sleep_until.tv_nsec += 200000000;  /* 0.2 s */
    if (sleep_until.tv_nsec >= 1000000000) { sleep_until.tv_sec += 1; sleep_until.tv_nsec -= 1000000000; }
    start = kernel_monotonic();
    int slept = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &sleep_until, NULL);
    double sleep = kernel_monotonic() - start;

    time_t wall = time(NULL);
    struct tm shown;
    gmtime_r(&wall, &shown);
    printf("%d %.3f %d %.3f %d\n", waited, wait, slept, sleep, shown.tm_year + 1900);
    return 0;
}
"""


def _libfaketime() -> str:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    assert found, "libfaketime is missing: scripts/bootstrap --dev installs Debian's faketime"
    return found[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The witness program and the fix, compiled as scripts/midnight compiles it."""
    gcc = shutil.which("gcc")
    assert gcc, "gcc is missing: scripts/bootstrap installs it"
    work = tmp_path_factory.mktemp("midnight")
    (work / "witness.c").write_text(WITNESS)
    subprocess.run([gcc, "-O2", "-o", str(work / "witness"), str(work / "witness.c"), "-lpthread"], check=True)
    subprocess.run([gcc, "-O2", "-Wall", "-shared", "-fPIC", "-o", str(work / "fix.so"), str(FIX), "-ldl"], check=True)
    return work / "witness", work / "fix.so"


def _run(witness: Path, preload: str, **env: str) -> tuple[int, float, int, float, int]:
    # the faked clock ten years ahead: its year cannot be this one
    done = subprocess.run([str(witness)], capture_output=True, text=True, timeout=60, check=True,
                          env={**os.environ, "LD_PRELOAD": preload, "FAKETIME": "+3650d", "TZ": "UTC", **env})
    waited, wait, slept, sleep, year = done.stdout.split()
    return int(waited), float(wait), int(slept), float(sleep), int(year)


def test_libfaketime_alone_breaks_monotonic_waits_and_sleeps(built: tuple[Path, Path]) -> None:
    # what the fix is for: if a later libfaketime gets these right, this fails and the fix can go
    witness, _ = built
    waited, wait, slept, _, _ = _run(witness, _libfaketime(), FAKETIME_DONT_FAKE_MONOTONIC="1")
    assert wait < 0.1 or slept != 0, (waited, wait, slept)


def test_with_the_fix_monotonic_waits_and_sleeps_take_their_time_on_the_faked_wall_clock(
    built: tuple[Path, Path],
) -> None:
    witness, fix = built
    real_year = int(subprocess.run(["date", "-u", "+%Y"], capture_output=True, text=True, check=True).stdout)
    waited, wait, slept, sleep, year = _run(witness, f"{fix}:{_libfaketime()}", FAKETIME_DONT_FAKE_MONOTONIC="1")
    assert waited == 110  # ETIMEDOUT, after the deadline
    assert 0.29 <= wait < 5
    assert slept == 0 and 0.19 <= sleep < 5
    assert year >= real_year + 9  # the wall clock is still the faked one


def test_the_fix_stands_aside_unless_the_monotonic_clock_is_left_real(built: tuple[Path, Path]) -> None:
    # libfaketime reads FAKETIME_DONT_FAKE_MONOTONIC as "1" or not: "0" fakes the monotonic clock,
    # and the fix must then leave every call to libfaketime, as without it
    witness, fix = built
    alone = _run(witness, _libfaketime(), FAKETIME_DONT_FAKE_MONOTONIC="0")
    fixed = _run(witness, f"{fix}:{_libfaketime()}", FAKETIME_DONT_FAKE_MONOTONIC="0")
    assert (fixed[0], fixed[2], fixed[4]) == (alone[0], alone[2], alone[4])
