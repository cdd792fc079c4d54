/*
 * pdi.mhtml._encode: the base64 body of an MHTML part, as pdi.mhtml.write
 * writes it, in one pass (issue 24: the images' base64 was the largest part of
 * packing a WARC import's pages).
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
