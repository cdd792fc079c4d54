/*
 * pdi.server.process._fasthead: N2L's 302 and a 304 answered from a worker's
 * facts (pdi.server.process.cache.ResponseCache), and an N2R's 200 from the
 * whole answers it keeps, straight from a read of one request head, without
 * httptools' callbacks or any Python between the read and the answer's octets
 * (issue 24: an N2L or a 304 from its fact was some 70,000 instructions of
 * Python around httptools; see docs/benchmarks.md, "Resolver").
 *
 * configure(after_location, validator_lines, n2r_prefix) -> None
 *     The octets the answers are made of, as pdi.server.process.cache makes
 *     them (its _LINES_AFTER_LOCATION, _VALIDATOR_LINES and _N2R), given once
 *     at import so that they are defined in one place.
 *
 * answer(data, facts, entries, origin, defaults[, first]) -> (bytes, bytes, int, int) | None
 *     data: one read of the connection, when the parser holds nothing of a
 *     request. It is answered here only when it is exactly one whole request
 *     head of this strict subset of RFC 9112, which llhttp reads the same way
 *     (tests/server/test_server_fasthead.py holds every head taken here to
 *     httptools' reading, near misses included):
 *
 *       ("GET" / "HEAD") SP "/uri-res/" ("N2L" / "N2R" / "I2R") "?" query SP
 *       "HTTP/1.1" CRLF *( field-name ":" *SP value CRLF ) CRLF
 *
 *     the query 1*QCHAR (unreserved, sub-delims, ":", "@", "/", "?", "%"), the
 *     target at most MAX_TARGET octets; each field one of Host, Accept,
 *     Accept-Encoding, Accept-Language, User-Agent, If-None-Match and
 *     Connection (names in any case, each at most once), its value visible
 *     ASCII and spaces, beginning and ending with a visible character;
 *     Connection only "keep-alive"; Host present, a reg-name of letters,
 *     digits, "." and "-" with an optional port of 1 to 5 digits; the whole
 *     read at most MAX_READ octets, with nothing after the head's empty line.
 *     Anything else (a body, an upgrade, a token, a cookie, a range, a date, a
 *     request id, "Connection: close", HTTP/1.0, a field another server might
 *     read differently) is None, and the caller has httptools parse it as
 *     before.
 *
 *     facts: the cache's facts (query -> packed fact, ResponseCache._facts);
 *     entries: its answers (key -> a whole answer as cache.py's Whole, a
 *     tuple whose first two items are its 200's header lines and its body,
 *     or (answer, size) for any other); origin: the
 *     connection's scheme and "://"; defaults: the lines of uvicorn's default
 *     fields (Date, Server). An N2L whose fact knows its Location is its 302
 *     (the fact now the most recently used). An N2R or I2R whose Accept
 *     negotiates nothing (pdi.server.process.cache.accept_negotiates): with
 *     a whole answer kept under its key, that answer's 200 when it has no
 *     If-None-Match (the entry now the most recently used); without one, the 304 of an If-None-Match that is
 *     exactly its fact's entity tag. Anything else None (the caller's path
 *     answers it, as before). The answer's octets are the status line, the
 *     defaults, and ResponseCache.known_wire's lines or the whole answer's
 *     (cache.py's wire(); no body to a HEAD), with the method, the status and
 *     the body's octets for the caller's counts.
 *
 *     first (true): an N2R or I2R of such a head with neither a whole answer
 *     kept under its key nor If-None-Match, and no Accept that negotiates (a
 *     first asking of the name with this Host), is (None, method, query, key,
 *     host) instead of None: the head read as httptools reads it, for the
 *     caller's public path to answer without the parser (the connection's
 *     data_received; a name it does not answer so goes to httptools as
 *     before). An N2L, or an N2R or I2R with the If-None-Match above, of a
 *     name no fact is kept for (a first asking of its 302 or 304) is
 *     (method, query, If-None-Match as str, or None for N2L) instead of None:
 *     for the caller's told path (Resolver.public_told), which reads the
 *     name's digest and answers what its fact then answers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_READ 4096
#define MAX_TARGET 2048
#define MAX_FIELDS 7

static PyObject *after_location, *validator_lines, *n2r_prefix;
static PyObject *str_move_to_end, *method_get, *method_head, *status_200, *status_302,
    *status_304, *zero;

/* tchar of RFC 9110 §5.6.2 */
static unsigned char TCHAR[256];
/* what a query may hold here: unreserved, sub-delims, ":", "@", "/", "?", "%" (RFC 3986 §3.4) */
static unsigned char QCHAR[256];

static const char STATUS_200[] = "HTTP/1.1 200 OK\r\n";
static const char STATUS_302[] = "HTTP/1.1 302 Found\r\n";
static const char STATUS_304[] = "HTTP/1.1 304 Not Modified\r\n";

enum { F_HOST, F_ACCEPT, F_ACCEPT_ENCODING, F_ACCEPT_LANGUAGE, F_USER_AGENT, F_IF_NONE_MATCH, F_CONNECTION };

static int
same_name(const char *p, Py_ssize_t n, const char *lower)
{
    Py_ssize_t i;
    if ((Py_ssize_t)strlen(lower) != n)
        return 0;
    for (i = 0; i < n; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        if (c != lower[i])
            return 0;
    }
    return 1;
}

static int
field_of(const char *p, Py_ssize_t n)
{
    switch (n) {
    case 4:
        return same_name(p, n, "host") ? F_HOST : -1;
    case 6:
        return same_name(p, n, "accept") ? F_ACCEPT : -1;
    case 10:
        if (same_name(p, n, "user-agent"))
            return F_USER_AGENT;
        return same_name(p, n, "connection") ? F_CONNECTION : -1;
    case 13:
        return same_name(p, n, "if-none-match") ? F_IF_NONE_MATCH : -1;
    case 15:
        if (same_name(p, n, "accept-encoding"))
            return F_ACCEPT_ENCODING;
        return same_name(p, n, "accept-language") ? F_ACCEPT_LANGUAGE : -1;
    }
    return -1;
}

/* whether a lower-cased Accept holds what may choose another answer (cache.py's _NEGOTIATED) */
static int
negotiates(const char *p, Py_ssize_t n)
{
    static const char *const kinds[] = {"json", "application/*", "text/plain", "image/png", "application/pdf"};
    char lower[MAX_READ];
    Py_ssize_t i;
    size_t k;
    for (i = 0; i < n; i++) {
        char c = p[i];
        lower[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        Py_ssize_t m = (Py_ssize_t)strlen(kinds[k]);
        for (i = 0; i + m <= n; i++)
            if (memcmp(lower + i, kinds[k], (size_t)m) == 0)
                return 1;
    }
    return 0;
}

static int
valid_host(const char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0, digits;
    while (i < n && ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9')
                     || p[i] == '.' || p[i] == '-'))
        i++;
    if (i == 0)
        return 0;
    if (i == n)
        return 1;
    if (p[i] != ':')
        return 0;
    digits = n - i - 1;
    if (digits < 1 || digits > 5)
        return 0;
    for (i++; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return 1;
}

/* the answer's octets: the status line, the default fields' lines, then the pieces of the answer's own lines */
static PyObject *
joined(const char *status, Py_ssize_t status_len, PyObject *defaults, const char *a, Py_ssize_t a_len,
       const char *b, Py_ssize_t b_len, const char *c, Py_ssize_t c_len, PyObject *d)
{
    Py_ssize_t total = status_len + PyBytes_GET_SIZE(defaults) + a_len + b_len + c_len + PyBytes_GET_SIZE(d);
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    char *o;
    if (out == NULL)
        return NULL;
    o = PyBytes_AS_STRING(out);
    memcpy(o, status, (size_t)status_len), o += status_len;
    memcpy(o, PyBytes_AS_STRING(defaults), (size_t)PyBytes_GET_SIZE(defaults)), o += PyBytes_GET_SIZE(defaults);
    memcpy(o, a, (size_t)a_len), o += a_len;
    memcpy(o, b, (size_t)b_len), o += b_len;
    memcpy(o, c, (size_t)c_len), o += c_len;
    memcpy(o, PyBytes_AS_STRING(d), (size_t)PyBytes_GET_SIZE(d));
    return out;
}

/* the 200 of a whole answer kept (cache.py's Whole: its header lines as sent, its body, ...), or None (any other
   answer kept: the caller's path) */
static PyObject *
whole(PyObject *entries, PyObject *key, PyObject *kept, PyObject *defaults, PyObject *method)
{
    PyObject *body, *wire = NULL, *octets = NULL, *moved, *result = NULL;
    PyObject *head;
    if (!PyTuple_CheckExact(kept) || PyTuple_GET_SIZE(kept) != 6)
        Py_RETURN_NONE;
    head = PyTuple_GET_ITEM(kept, 0);
    body = PyTuple_GET_ITEM(kept, 1);
    if (!PyBytes_CheckExact(head) || !PyBytes_CheckExact(body))
        Py_RETURN_NONE;
    if (method == method_get) {
        wire = joined(STATUS_200, sizeof STATUS_200 - 1, defaults, PyBytes_AS_STRING(head), PyBytes_GET_SIZE(head),
                      "", 0, "", 0, body);
        octets = PyLong_FromSsize_t(PyBytes_GET_SIZE(body));
    }
    else {
        wire = joined(STATUS_200, sizeof STATUS_200 - 1, defaults, "", 0, "", 0, "", 0, head);
        octets = Py_NewRef(zero);
    }
    if (wire == NULL || octets == NULL)
        goto done;
    moved = PyObject_CallMethodOneArg(entries, str_move_to_end, key);
    if (moved == NULL)
        goto done;
    Py_DECREF(moved);
    result = PyTuple_Pack(4, wire, method, status_200, octets);
done:
    Py_XDECREF(wire);
    Py_XDECREF(octets);
    return result;
}

/* the TypeError of an argument of the wrong kind, naming it, where it is and what it was */
static PyObject *
wrong_kind(const char *function, const char *name, int at, const char *kind, PyObject *given)
{
    PyErr_Format(PyExc_TypeError, "%s(): %s (argument %d) must be %s, not %.100s", function, name, at, kind,
                 Py_TYPE(given)->tp_name);
    return NULL;
}

static PyObject *
fasthead_answer(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    PyObject *data, *facts, *entries, *origin, *defaults, *query = NULL, *packed, *wire = NULL, *result = NULL;
    const char *p, *end, *line, *target, *query_at, *colon;
    const char *values[MAX_FIELDS];
    Py_ssize_t lengths[MAX_FIELDS];
    Py_ssize_t n, query_len;
    PyObject *method;
    int kind, fields = 0, f, first;

    if (nargs != 5 && nargs != 6) {
        PyErr_Format(PyExc_TypeError, "answer() takes 5 or 6 arguments (%zd given)", nargs);
        return NULL;
    }
    first = nargs == 6 ? PyObject_IsTrue(args[5]) : 0;
    if (first < 0)
        return NULL;
    data = args[0], facts = args[1], entries = args[2], origin = args[3], defaults = args[4];
    if (!PyBytes_CheckExact(data))
        return wrong_kind("answer", "data", 1, "bytes", data);
    if (!PyDict_Check(facts))
        return wrong_kind("answer", "facts", 2, "dict", facts);
    if (!PyDict_Check(entries))
        return wrong_kind("answer", "entries", 3, "dict", entries);
    if (!PyBytes_CheckExact(origin))
        return wrong_kind("answer", "origin", 4, "bytes", origin);
    if (!PyBytes_CheckExact(defaults))
        return wrong_kind("answer", "defaults", 5, "bytes", defaults);
    if (after_location == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pdi.server.process._fasthead.configure() was not called");
        return NULL;
    }
    n = PyBytes_GET_SIZE(data);
    if (n > MAX_READ || n < 4)
        Py_RETURN_NONE;
    p = PyBytes_AS_STRING(data);
    end = p + n;
    if (memcmp(end - 4, "\r\n\r\n", 4) != 0)
        Py_RETURN_NONE;
    /* the request line */
    if (n > 4 && memcmp(p, "GET ", 4) == 0)
        method = method_get, p += 4;
    else if (n > 5 && memcmp(p, "HEAD ", 5) == 0)
        method = method_head, p += 5;
    else
        Py_RETURN_NONE;
    target = p;
    if (end - p < 13 || memcmp(p, "/uri-res/", 9) != 0 || p[12] != '?')
        Py_RETURN_NONE;
    if (memcmp(p + 9, "N2L", 3) == 0)
        kind = 0;
    else if (memcmp(p + 9, "N2R", 3) == 0 || memcmp(p + 9, "I2R", 3) == 0)
        kind = 1;
    else
        Py_RETURN_NONE;
    p += 13;
    query_at = p;
    while (p < end && QCHAR[(unsigned char)*p])
        p++;
    query_len = p - query_at;
    if (query_len == 0 || p - target > MAX_TARGET)
        Py_RETURN_NONE;
    if (end - p < 11 || memcmp(p, " HTTP/1.1\r\n", 11) != 0)
        Py_RETURN_NONE;
    p += 11;
    /* the fields: the read ends with the empty line, so each line below ends with a CRLF */
    memset(values, 0, sizeof values);
    while (!(p[0] == '\r' && p[1] == '\n')) {
        const char *v, *e;
        line = p;
        while (TCHAR[(unsigned char)*p])
            p++;
        if (p == line || *p != ':')
            Py_RETURN_NONE;
        colon = p;
        f = field_of(line, colon - line);
        if (f < 0 || values[f] != NULL || ++fields > MAX_FIELDS)
            Py_RETURN_NONE;
        p++;
        while (*p == ' ')
            p++;
        v = p;
        while (*p >= 0x20 && *p <= 0x7e)
            p++;
        e = p;
        if (e == v || e[-1] == ' ' || p[0] != '\r' || p[1] != '\n')
            Py_RETURN_NONE;
        values[f] = v;
        lengths[f] = e - v;
        p += 2;
    }
    if (p + 2 != end || values[F_HOST] == NULL || !valid_host(values[F_HOST], lengths[F_HOST]))
        Py_RETURN_NONE;
    if (values[F_CONNECTION] != NULL && !same_name(values[F_CONNECTION], lengths[F_CONNECTION], "keep-alive"))
        Py_RETURN_NONE;
    if (kind == 1) {  /* N2R or I2R: another answer negotiated, or a list of tags, is the caller's */
        if (values[F_IF_NONE_MATCH] != NULL && lengths[F_IF_NONE_MATCH] != 66)
            Py_RETURN_NONE;
        if (values[F_ACCEPT] != NULL && negotiates(values[F_ACCEPT], lengths[F_ACCEPT]))
            Py_RETURN_NONE;
    }
    query = PyBytes_FromStringAndSize(query_at, query_len);
    if (query == NULL)
        return NULL;
    if (kind == 1) {
        /* the whole answer kept under the request's key (cache.py's cache_key): its 200, or the caller's */
        Py_ssize_t origin_len = PyBytes_GET_SIZE(origin), host_len = lengths[F_HOST];
        PyObject *key = PyBytes_FromStringAndSize(NULL, origin_len + host_len + 1 + query_len), *kept;
        char *k;
        if (key == NULL)
            goto done;
        k = PyBytes_AS_STRING(key);
        memcpy(k, PyBytes_AS_STRING(origin), (size_t)origin_len);
        memcpy(k + origin_len, values[F_HOST], (size_t)host_len);
        k[origin_len + host_len] = ' ';
        memcpy(k + origin_len + host_len + 1, query_at, (size_t)query_len);
        kept = PyDict_GetItemWithError(entries, key);  /* borrowed */
        if (kept == NULL && PyErr_Occurred()) {
            Py_DECREF(key);
            goto done;
        }
        if (kept != NULL) {
            if (values[F_IF_NONE_MATCH] == NULL)
                result = whole(entries, key, kept, defaults, method);
            else
                result = Py_NewRef(Py_None);  /* the entity's 304 or 200: cache.answer() */
            Py_DECREF(key);
            goto done;
        }
        if (values[F_IF_NONE_MATCH] == NULL) {
            if (first) {  /* a first asking: what the caller's public path needs to answer it without the parser */
                PyObject *host = PyBytes_FromStringAndSize(values[F_HOST], lengths[F_HOST]);
                if (host != NULL)
                    result = PyTuple_Pack(5, Py_None, method, query, key, host);
                Py_XDECREF(host);
                Py_DECREF(key);
                goto done;
            }
            Py_DECREF(key);
            goto none;
        }
        Py_DECREF(key);
    }
    packed = PyDict_GetItemWithError(facts, query);  /* borrowed */
    if (packed == NULL) {
        if (PyErr_Occurred())
            goto done;
        if (first) {  /* a first asking of N2L, or of a 304: the caller's told path, without the parser */
            PyObject *tag = kind == 0 || values[F_IF_NONE_MATCH] == NULL ? Py_NewRef(Py_None)
                : PyUnicode_DecodeASCII(values[F_IF_NONE_MATCH], lengths[F_IF_NONE_MATCH], NULL);
            if (tag != NULL)
                result = PyTuple_Pack(3, method, query, tag);
            Py_XDECREF(tag);
            goto done;
        }
        goto none;
    }
    if (!PyBytes_CheckExact(packed) || PyBytes_GET_SIZE(packed) < 32)
        goto none;
    Py_INCREF(packed);
    if (kind == 0) {
        const char *spelled = PyBytes_AS_STRING(packed) + 32;
        Py_ssize_t rest = PyBytes_GET_SIZE(packed) - 32;
        const char *nul = memchr(spelled, '\0', (size_t)rest);
        static const char LOCATED[] = "content-length: 0\r\nlocation: ";
        if (nul == NULL) {
            Py_DECREF(packed);
            goto none;
        }
        if (nul + 1 < spelled + rest)  /* a Location of its own */
            wire = joined(STATUS_302, sizeof STATUS_302 - 1, defaults, LOCATED, sizeof LOCATED - 1, nul + 1,
                          spelled + rest - nul - 1, "", 0, after_location);
        else  /* the N2R of the name's spelling */
            wire = joined(STATUS_302, sizeof STATUS_302 - 1, defaults, LOCATED, sizeof LOCATED - 1,
                          PyBytes_AS_STRING(n2r_prefix), PyBytes_GET_SIZE(n2r_prefix), spelled, nul - spelled,
                          after_location);
    }
    else {
        static const char HEX[] = "0123456789abcdef";
        char tag[6 + 66];
        const unsigned char *digest = (const unsigned char *)PyBytes_AS_STRING(packed);
        int i;
        memcpy(tag, "etag: \"", 7);
        for (i = 0; i < 32; i++) {
            tag[7 + 2 * i] = HEX[digest[i] >> 4];
            tag[8 + 2 * i] = HEX[digest[i] & 15];
        }
        tag[71] = '"';
        if (memcmp(values[F_IF_NONE_MATCH], tag + 6, 66) != 0) {
            Py_DECREF(packed);
            goto none;
        }
        wire = joined(STATUS_304, sizeof STATUS_304 - 1, defaults, tag, sizeof tag, "", 0, "", 0, validator_lines);
    }
    Py_DECREF(packed);
    if (wire == NULL)
        goto done;
    {
        PyObject *moved = PyObject_CallMethodOneArg(facts, str_move_to_end, query);
        if (moved == NULL) {
            Py_CLEAR(wire);
            goto done;
        }
        Py_DECREF(moved);
    }
    result = PyTuple_Pack(4, wire, method, kind == 0 ? status_302 : status_304, zero);
    Py_DECREF(wire);
done:
    Py_XDECREF(query);
    return result;
none:
    Py_XDECREF(query);
    Py_RETURN_NONE;
}

static PyObject *
fasthead_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    static const char *const names[] = {"after_location", "validator_lines", "n2r_prefix"};
    int i;
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "configure() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    for (i = 0; i < 3; i++)
        if (!PyBytes_CheckExact(args[i]))
            return wrong_kind("configure", names[i], i + 1, "bytes", args[i]);
    Py_INCREF(args[0]);
    Py_XSETREF(after_location, args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(validator_lines, args[1]);
    Py_INCREF(args[2]);
    Py_XSETREF(n2r_prefix, args[2]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"answer", (PyCFunction)(void (*)(void))fasthead_answer, METH_FASTCALL,
     "answer(data, facts, entries, origin, defaults[, first]): N2L's 302, a 304 from the cache's facts or a whole"
     " answer kept; with first, a first-asking N2R's (None, method, query, key, host), or a first-asking N2L's or"
     " 304's (method, query, If-None-Match or None); or None."},
    {"configure", (PyCFunction)(void (*)(void))fasthead_configure, METH_FASTCALL,
     "configure(after_location, validator_lines, n2r_prefix): the octets the answers are made of."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_fasthead",
    "N2L's 302 and a 304 answered from a worker's facts straight from one read of a request head.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__fasthead(void)
{
    const char *t = "!#$%&'*+-.^_`|~";
    const char *q = "-._~!$&'()*+,;=:@/?%";
    int c;
    PyObject *m;
    for (c = '0'; c <= '9'; c++)
        TCHAR[c] = QCHAR[c] = 1;
    for (c = 'a'; c <= 'z'; c++)
        TCHAR[c] = QCHAR[c] = 1, TCHAR[c - 32] = QCHAR[c - 32] = 1;
    for (; *t; t++)
        TCHAR[(unsigned char)*t] = 1;
    for (; *q; q++)
        QCHAR[(unsigned char)*q] = 1;
    str_move_to_end = PyUnicode_InternFromString("move_to_end");
    method_get = PyBytes_FromString("GET");
    method_head = PyBytes_FromString("HEAD");
    status_200 = PyLong_FromLong(200);
    zero = PyLong_FromLong(0);
    status_302 = PyLong_FromLong(302);
    status_304 = PyLong_FromLong(304);
    if (!str_move_to_end || !method_get || !method_head || !status_200 || !zero
        || !status_302 || !status_304)
        return NULL;
    m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "MAX_READ", MAX_READ) < 0 || PyModule_AddIntConstant(m, "MAX_TARGET", MAX_TARGET) < 0
        || PyModule_AddIntConstant(m, "MAX_FIELDS", MAX_FIELDS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
