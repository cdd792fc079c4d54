/*
 * pdi.mhtml._encode: the bodies of MHTML parts, as pdi.mhtml.write writes
 * them, in one pass (issue 24: the images' base64 was the largest part of
 * packing a WARC import's pages, and a page's text in long lines the next).
 *
 * base64_lines(buffer) -> bytes
 *
 * The standard base64 alphabet with "=" padding (RFC 4648 §4) of the octets
 * of any contiguous buffer, cut into lines of 76 characters (RFC 2045 §6.8)
 * joined by CRLF: no line end after the last line, and b"" for no octets. The
 * same octets as write.py's pure-Python _encode_base64_py (the base64 of
 * binascii, its lines cut by a regular expression), which is used where this
 * module was not built (tests/test_mhtml_encode.py compares the two). The
 * GIL is released while encoding a large buffer.
 *
 * quoted_printable(buffer) -> bytes
 *
 * The quoted-printable of write.py's _encode_quoted_printable_py, which keeps
 * every octet (RFC 2045 §6.7): each LF-terminated line as binascii.b2a_qp
 * writes it in binary mode (quotetabs, istext and header false: printable
 * ASCII but "=" as itself, a space or tab too but as the line's last octet,
 * a "." alone on its line or before a CR or NUL at the line's start written
 * "=2E", everything else "=XX" in upper-case hex, soft breaks "=" CRLF
 * before an output line would pass 76 characters), then its LF written
 * "=0A" and a soft break (none after the last LF of the data). The
 * comparison with the pure-Python function is in tests/test_mhtml_encode.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* the two characters of each 12-bit value, made once at import */
static char PAIRS[4096][2];

/* a line of 76 characters is 57 octets: 19 groups of three */
#define LINE_OCTETS 57
#define RELEASE_GIL_FROM 16384

static void
encode(const uint8_t *p, size_t n, char *o)
{
    size_t full = n / LINE_OCTETS * LINE_OCTETS;
    size_t i = 0;
    while (i < full) {
        const uint8_t *q = p + i;
        for (int g = 0; g < LINE_OCTETS / 3; g++, q += 3) {
            uint32_t v = ((uint32_t)q[0] << 16) | ((uint32_t)q[1] << 8) | q[2];
            memcpy(o, PAIRS[v >> 12], 2);
            memcpy(o + 2, PAIRS[v & 0xFFF], 2);
            o += 4;
        }
        i += LINE_OCTETS;
        if (i < n) {
            *o++ = '\r';
            *o++ = '\n';
        }
    }
    for (; i + 3 <= n; i += 3) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8) | p[i + 2];
        memcpy(o, PAIRS[v >> 12], 2);
        memcpy(o + 2, PAIRS[v & 0xFFF], 2);
        o += 4;
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8);
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = ALPHABET[(v >> 6) & 63];
        *o++ = '=';
    }
}

/* quoted-printable: the longest output line (RFC 2045 §6.7 rule 5) */
#define QP_LINE 76

static const char HEX[] = "0123456789ABCDEF";

/* whether binascii.b2a_qp (binary mode) writes octet c of a line of n octets, at i, as "=XX" (linelen: the
 * characters already on the output line) */
static inline int
qp_escaped(const uint8_t *line, size_t i, size_t n, size_t linelen)
{
    uint8_t c = line[i];
    if (c > 126 || c == '=')
        return 1;
    if (c == '.' && linelen == 0 && (i + 1 == n || line[i + 1] == '\r' || line[i + 1] == 0))
        return 1;
    if (c == ' ' || c == '\t')
        return i + 1 == n;
    return c < 33;  /* CR, and every other control octet */
}

/* one line (no LF) as b2a_qp writes it, its soft breaks CRLF; returns the output's end, and in *tail the
 * characters after the last soft break and in *escaped whether the last unit written was "=XX" */
static char *
qp_line(const uint8_t *line, size_t n, char *o, size_t *tail, int *escaped)
{
    size_t linelen = 0;
    int last = 0;
    for (size_t i = 0; i < n; i++) {
        if (qp_escaped(line, i, n, linelen)) {
            if (linelen + 3 >= QP_LINE) {
                memcpy(o, "=\r\n", 3);
                o += 3;
                linelen = 0;
            }
            o[0] = '=';
            o[1] = HEX[line[i] >> 4];
            o[2] = HEX[line[i] & 15];
            o += 3;
            linelen += 3;
            last = 1;
        } else {
            if (i + 1 != n && linelen + 1 >= QP_LINE) {
                memcpy(o, "=\r\n", 3);
                o += 3;
                linelen = 0;
            }
            *o++ = (char)line[i];
            linelen++;
            last = 0;
        }
    }
    *tail = linelen;
    *escaped = last;
    return o;
}

static char *
qp_encode(const uint8_t *p, size_t n, char *o)
{
    size_t start = 0;
    for (;;) {
        const uint8_t *lf = memchr(p + start, '\n', n - start);
        size_t end = lf == NULL ? n : (size_t)(lf - p);
        size_t tail;
        int escaped;
        o = qp_line(p + start, end - start, o, &tail, &escaped);
        if (lf == NULL)
            return o;
        if (tail >= QP_LINE) {
            /* the line is full (only its last octet may make it 76): that octet, or its "=XX", goes after a soft
             * break, whose "=" would make 77 */
            size_t unit = escaped ? 3 : 1;
            memmove(o - unit + 3, o - unit, unit);
            memcpy(o - unit, "=\r\n", 3);
            o += 3;
        } else if (tail + 3 > QP_LINE - 1) {
            memcpy(o, "=\r\n", 3);
            o += 3;
        }
        memcpy(o, "=0A", 3);
        o += 3;
        start = end + 1;
        if (start == n)
            return o;  /* the data ends with its LF: no soft break after it */
        memcpy(o, "=\r\n", 3);
        o += 3;
    }
}

static PyObject *
quoted_printable(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    size_t n = (size_t)view.len;
    if (n > ((size_t)PY_SSIZE_T_MAX - 64) / 13) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    /* at most: each octet "=XX" (3), a soft break (3) at most every 73 characters of a line, and for each LF
     * "=0A" (counted in the 3) with up to two soft breaks (6 more) */
    size_t lfs = 0;
    for (const uint8_t *at = view.buf, *stop = at + n; (at = memchr(at, '\n', (size_t)(stop - at))) != NULL; at++)
        lfs++;
    size_t bound = 3 * n + (3 * n / 73 + 1) * 3 + 6 * lfs + 16;
    char *buffer = PyMem_RawMalloc(bound);
    if (buffer == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    char *end;
    if (n >= RELEASE_GIL_FROM) {
        Py_BEGIN_ALLOW_THREADS
        end = qp_encode((const uint8_t *)view.buf, n, buffer);
        Py_END_ALLOW_THREADS
    } else {
        end = qp_encode((const uint8_t *)view.buf, n, buffer);
    }
    PyBuffer_Release(&view);
    PyObject *out = PyBytes_FromStringAndSize(buffer, end - buffer);
    PyMem_RawFree(buffer);
    return out;
}

static PyObject *
base64_lines(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    size_t n = (size_t)view.len;
    size_t chars = (n + 2) / 3 * 4;
    size_t lines = (chars + 75) / 76;
    size_t size = chars + (lines > 1 ? 2 * (lines - 1) : 0);
    if (size > (size_t)PY_SSIZE_T_MAX) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    char *o = PyBytes_AS_STRING(out);
    const uint8_t *p = (const uint8_t *)view.buf;
    if (n >= RELEASE_GIL_FROM) {
        Py_BEGIN_ALLOW_THREADS
        encode(p, n, o);
        Py_END_ALLOW_THREADS
    } else {
        encode(p, n, o);
    }
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"base64_lines", base64_lines, METH_O,
     "base64_lines(buffer) -> bytes\n\n"
     "The base64 of the buffer's octets in lines of 76 characters joined by CRLF\n"
     "(no line end after the last; b'' for no octets)."},
    {"quoted_printable", quoted_printable, METH_O,
     "quoted_printable(buffer) -> bytes\n\n"
     "The quoted-printable of the buffer's octets that keeps every one, each LF written\n"
     "=0A and a soft break (none after a last LF), as pdi.mhtml.write writes a text part."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_encode",
    "MHTML part bodies for pdi.mhtml.write in one pass (a compiled accelerator).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__encode(void)
{
    for (int v = 0; v < 4096; v++) {
        PAIRS[v][0] = ALPHABET[v >> 6];
        PAIRS[v][1] = ALPHABET[v & 63];
    }
    return PyModule_Create(&module);
}
