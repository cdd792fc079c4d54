/*
 * Loaded before Debian's libfaketime (0.9.10) by scripts/midnight: sleeps on the
 * monotonic clock made to work with FAKETIME_DONT_FAKE_MONOTONIC.
 *
 * Why both are needed, with Python 3.11 under libfaketime:
 *  - With the monotonic clock faked (libfaketime's default), a lock or an
 *    event waited on with a timeout never wakes: CPython waits with
 *    sem_clockwait(CLOCK_MONOTONIC, deadline), which libfaketime does not
 *    intercept, so the kernel compares a faked deadline (hours ahead) with the
 *    real clock. threading.Event().wait(0.5) hangs.
 *  - With FAKETIME_DONT_FAKE_MONOTONIC=1 those waits are right, but
 *    libfaketime's clock_nanosleep still converts an absolute
 *    CLOCK_MONOTONIC deadline as if that clock were faked (it subtracts the
 *    faked wall-clock start), and the kernel answers EINVAL: every
 *    time.sleep() fails ("OSError: [Errno 22] Invalid argument").
 * This clock_nanosleep sends monotonic sleeps straight to the kernel when
 * the monotonic clock is not faked, and every other one to libfaketime's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain)
{
    static clock_nanosleep_fn next;

    if (clock == CLOCK_MONOTONIC && getenv("FAKETIME_DONT_FAKE_MONOTONIC") != NULL) {
        /* clock_nanosleep returns the error number; the raw system call sets errno */
        return syscall(SYS_clock_nanosleep, clock, flags, request, remain) == 0 ? 0 : errno;
    }
    if (next == NULL) {
        next = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
        if (next == NULL) {
            return ENOSYS;
        }
    }
    return next(clock, flags, request, remain);
}
