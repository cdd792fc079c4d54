/*
 * pdi.fragments.text._count: count, in one pass, the octets that a cold
 * text query needs (see counting.py, which also holds the numpy passes that
 * give the same counts where this module was not built).
 *
 * count(buffer, start, stop, utf8, lf, cr, nel) -> (cont, lf, cr, nel, crlf, crnel)
 *
 * Over the octets [start, stop) of any contiguous buffer (bytes, bytearray,
 * mmap, memoryview), without looking outside them:
 *   cont   UTF-8 continuation octets (80-BF), 0 unless utf8 is true;
 *   lf     octets equal to lf;            cr   octets equal to cr;
 *   nel    NELs: nel is b"" (the charset has none), one octet, or two
 *          (UTF-8 C2 85, counted where both octets are in the range);
 *   crlf   a CR followed by an LF;        crnel  a CR followed by a NEL.
 *
 * The loop compares 32 octets at a time with GCC/Clang vector extensions
 * (SSE2 or NEON code, and an AVX2 clone chosen at load time on x86-64),
 * keeps per-lane 8-bit counters and adds them up every 255 steps. The GIL
 * is released while counting, so several threads count blocks at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t cont, lf, cr, nel, crlf, crnel;
} counts_t;

/* one-octet-at-a-time counting of [i, n): the tail after the vector loop, and
   the whole range where the compiler has no vector extensions */
static void
count_scalar(const uint8_t *p, size_t i, size_t n, int utf8, uint8_t lf, uint8_t cr,
             int nel_len, uint8_t nel0, uint8_t nel1, counts_t *c)
{
    for (; i < n; i++) {
        uint8_t x = p[i];
        if (utf8 && x >= 0x80 && x < 0xC0)
            c->cont++;
        if (x == lf)
            c->lf++;
        if (nel_len == 1 && x == nel0)
            c->nel++;
        if (nel_len == 2 && x == nel0 && i + 1 < n && p[i + 1] == nel1)
            c->nel++;
        if (x == cr && i + 1 < n) {
            uint8_t y = p[i + 1];
            if (y == lf)
                c->crlf++;
            else if (nel_len == 1 && y == nel0)
                c->crnel++;
            else if (nel_len == 2 && y == nel0 && i + 2 < n && p[i + 2] == nel1)
                c->crnel++;
        }
        if (x == cr)
            c->cr++;
    }
}

#if defined(__GNUC__) || defined(__clang__)
#define W 32
typedef uint8_t u8v __attribute__((vector_size(W)));
typedef int8_t s8v __attribute__((vector_size(W)));

/* macros rather than functions: no vector passed by value, no ABI question */
#define LOAD(v, ptr) memcpy(&(v), (ptr), W)

static inline __attribute__((always_inline)) uint64_t
lanes(const u8v *acc)
{
    /* each lane holds 0..255 matches: unsigned, so the sums wrap as C defines */
    uint64_t total = 0;
    for (int k = 0; k < W; k++)
        total += (*acc)[k];
    return total;
}

/* nel_len is a constant in each caller, so the loop has no branch on it */
static inline __attribute__((always_inline)) void
count_vector(const uint8_t *p, size_t n, int utf8, uint8_t lf, uint8_t cr, int nel_len,
             uint8_t nel0, uint8_t nel1, counts_t *c)
{
    const u8v vlf = (u8v){0} + lf, vcr = (u8v){0} + cr;
    const u8v vn0 = (u8v){0} + nel0, vn1 = (u8v){0} + nel1;
    const s8v vmin = (s8v){0} - 64;
    const u8v zero = {0};
    size_t i = 0;
    /* a step reads p[i .. i + W + 1]: the octet after each octet, and the one after that.
       A comparison gives 0xFF where it holds; subtracting it adds one to that lane. */
    while (i + W + 2 <= n) {
        u8v a_cont = zero, a_lf = zero, a_cr = zero, a_nel = zero, a_crlf = zero, a_crnel = zero;
        for (int step = 0; step < 255 && i + W + 2 <= n; step++, i += W) {
            u8v x, y;
            LOAD(x, p + i);
            LOAD(y, p + i + 1);
            u8v mcr = (u8v)(x == vcr);
            u8v mlf = (u8v)(x == vlf);
            u8v ylf = (u8v)(y == vlf);
            a_lf -= mlf;
            a_cr -= mcr;
            a_crlf -= mcr & ylf;
            if (utf8)
                a_cont -= (u8v)((s8v)x < vmin);
            if (nel_len == 2) {
                u8v z;
                LOAD(z, p + i + 2);
                a_nel -= (u8v)(x == vn0) & (u8v)(y == vn1);
                a_crnel -= mcr & (u8v)(y == vn0) & (u8v)(z == vn1);
            } else if (nel_len == 1) {
                a_nel -= (u8v)(x == vn0);
                a_crnel -= mcr & (u8v)(y == vn0);
            }
        }
        c->cont += lanes(&a_cont);
        c->lf += lanes(&a_lf);
        c->cr += lanes(&a_cr);
        c->nel += lanes(&a_nel);
        c->crlf += lanes(&a_crlf);
        c->crnel += lanes(&a_crnel);
    }
    count_scalar(p, i, n, utf8, lf, cr, nel_len, nel0, nel1, c);
}

#if defined(__x86_64__) && defined(__gnu_linux__) && !defined(__clang__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

CLONES static void
count_nel2(const uint8_t *p, size_t n, int utf8, uint8_t lf, uint8_t cr, uint8_t n0, uint8_t n1,
           counts_t *c)
{
    count_vector(p, n, utf8, lf, cr, 2, n0, n1, c);
}

CLONES static void
count_nel1(const uint8_t *p, size_t n, int utf8, uint8_t lf, uint8_t cr, uint8_t n0, counts_t *c)
{
    count_vector(p, n, utf8, lf, cr, 1, n0, 0, c);
}

CLONES static void
count_nel0(const uint8_t *p, size_t n, int utf8, uint8_t lf, uint8_t cr, counts_t *c)
{
    count_vector(p, n, utf8, lf, cr, 0, 0, 0, c);
}

static void
count_range(const uint8_t *p, size_t n, int utf8, uint8_t lf, uint8_t cr, int nel_len,
            uint8_t nel0, uint8_t nel1, counts_t *c)
{
    if (nel_len == 2)
        count_nel2(p, n, utf8, lf, cr, nel0, nel1, c);
    else if (nel_len == 1)
        count_nel1(p, n, utf8, lf, cr, nel0, c);
    else
        count_nel0(p, n, utf8, lf, cr, c);
}
#else
static void
count_range(const uint8_t *p, size_t n, int utf8, uint8_t lf, uint8_t cr, int nel_len,
            uint8_t nel0, uint8_t nel1, counts_t *c)
{
    count_scalar(p, 0, n, utf8, lf, cr, nel_len, nel0, nel1, c);
}
#endif

static PyObject *
count(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t start, stop, nel_len;
    int utf8, lf, cr;
    const char *nel;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*nnpiiy#:count", &view, &start, &stop, &utf8, &lf, &cr, &nel,
                          &nel_len))
        return NULL;
    if (start < 0 || stop < start || stop > view.len) {
        PyErr_Format(PyExc_ValueError, "range [%zd, %zd) is not within the %zd octets of the buffer",
                     start, stop, view.len);
        PyBuffer_Release(&view);
        return NULL;
    }
    if (lf < 0 || lf > 255 || cr < 0 || cr > 255 || nel_len > 2 || lf == cr ||
        (nel_len > 0 && ((uint8_t)nel[0] == lf || (uint8_t)nel[0] == cr))) {
        PyErr_SetString(PyExc_ValueError,
                        "lf and cr must be two different octets (0-255), and nel at most two octets"
                        " that do not start with either");
        PyBuffer_Release(&view);
        return NULL;
    }
    counts_t c = {0, 0, 0, 0, 0, 0};
    const uint8_t *p = (const uint8_t *)view.buf + start;
    uint8_t n0 = nel_len > 0 ? (uint8_t)nel[0] : 0, n1 = nel_len > 1 ? (uint8_t)nel[1] : 0;
    Py_BEGIN_ALLOW_THREADS
    count_range(p, (size_t)(stop - start), utf8, (uint8_t)lf, (uint8_t)cr, (int)nel_len, n0, n1, &c);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return Py_BuildValue("(KKKKKK)", (unsigned long long)c.cont, (unsigned long long)c.lf,
                         (unsigned long long)c.cr, (unsigned long long)c.nel,
                         (unsigned long long)c.crlf, (unsigned long long)c.crnel);
}

static PyMethodDef methods[] = {
    {"count", count, METH_VARARGS,
     "count(buffer, start, stop, utf8, lf, cr, nel) -> (cont, lf, cr, nel, crlf, crnel)\n\n"
     "Count, in one pass over the octets [start, stop) of buffer and without looking\n"
     "outside them: UTF-8 continuation octets (when utf8 is true), LFs, CRs, NELs\n"
     "(nel: b'', one octet or two), CR+LF pairs and CR+NEL pairs."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_count",
    "One-pass octet counting for pdi.fragments.text.counting (a compiled accelerator).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__count(void)
{
    return PyModule_Create(&module);
}
