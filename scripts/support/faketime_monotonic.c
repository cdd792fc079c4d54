/*
 * Loaded before Debian's libfaketime (0.9.10) by scripts/midnight: sleeps and
 * condition-variable waits on the monotonic clock made to work with
 * FAKETIME_DONT_FAKE_MONOTONIC=1.
 *
 * Why, with Python 3.11 under libfaketime:
 *  - With the monotonic clock faked (libfaketime's default), a lock or an
 *    event waited on with a timeout never wakes: CPython waits with
 *    sem_clockwait(CLOCK_MONOTONIC, deadline), which libfaketime does not
 *    intercept, so the kernel compares a faked deadline (hours ahead) with the
 *    real clock. threading.Event().wait(0.5) hangs.
 *  - With FAKETIME_DONT_FAKE_MONOTONIC=1 those waits are right, but
 *    libfaketime still converts an absolute CLOCK_MONOTONIC deadline as if
 *    that clock were faked, and gets it wrong:
 *     - in clock_nanosleep the kernel then answers EINVAL, and every
 *       time.sleep() fails ("OSError: [Errno 22] Invalid argument");
 *     - in pthread_cond_timedwait on a condition variable that waits on the
 *       monotonic clock the deadline comes out already past (whatever the
 *       offset, even +0s), so every such wait returns at once. CPython's GIL
 *       is one (a thread wanting the GIL waits 5 ms on it, then asks for it):
 *       three busy threads took five times as long. Chromium's threads wait
 *       on such condition variables too; it rendered a page in 21 s instead
 *       of 0.6 s, nearly all of it in futex calls.
 * Here both go straight to the C library (the kernel) when the monotonic
 * clock is not faked, and everything else to libfaketime's.
 *
 * What is looked up is looked up once, when the library is loaded: getenv()
 * on every wait could read the environment while another thread's setenv()
 * moves it (Python's os.environ[...] = ... does that).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

/* whether libfaketime leaves the monotonic clock alone: as it reads it, exactly "1" under either name */
static int monotonic_is_real;
static clock_nanosleep_fn next_nanosleep;  /* libfaketime's */
static cond_timedwait_fn libc_cond_wait;   /* the C library's own, past libfaketime's */
static cond_timedwait_fn next_cond_wait;   /* libfaketime's */

__attribute__((constructor)) static void find_them(void)
{
    const char *real = getenv("FAKETIME_DONT_FAKE_MONOTONIC");
    if (real == NULL) {
        real = getenv("DONT_FAKE_MONOTONIC");
    }
    monotonic_is_real = real != NULL && strcmp(real, "1") == 0;
    next_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    next_cond_wait = (cond_timedwait_fn)dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
    if (next_cond_wait == NULL) {
        next_cond_wait = (cond_timedwait_fn)dlsym(RTLD_NEXT, "pthread_cond_timedwait");
    }
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc != NULL) {
        /* x86_64's default version; where there is none by that name, the default one */
        libc_cond_wait = (cond_timedwait_fn)dlvsym(libc, "pthread_cond_timedwait", "GLIBC_2.3.2");
        if (libc_cond_wait == NULL) {
            libc_cond_wait = (cond_timedwait_fn)dlsym(libc, "pthread_cond_timedwait");
        }
    }
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain)
{
    if (clock == CLOCK_MONOTONIC && monotonic_is_real) {
        /* clock_nanosleep returns the error number; the raw system call sets errno */
        return syscall(SYS_clock_nanosleep, clock, flags, request, remain) == 0 ? 0 : errno;
    }
    return next_nanosleep != NULL ? next_nanosleep(clock, flags, request, remain) : ENOSYS;
}

/*
 * glibc (2.25 and later) keeps a condition variable's clock in bit 1 of
 * __data.__wrefs (__PTHREAD_COND_CLOCK_MONOTONIC_MASK in nptl's
 * pthread_cond_common.c), set by pthread_cond_init from the attribute and
 * never changed after.
 */
#define COND_CLOCK_MONOTONIC_MASK 2u

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime)
{
    if (monotonic_is_real && libc_cond_wait != NULL
        && (__atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED) & COND_CLOCK_MONOTONIC_MASK)) {
        return libc_cond_wait(cond, mutex, abstime);
    }
    return next_cond_wait != NULL ? next_cond_wait(cond, mutex, abstime) : ENOSYS;
}
