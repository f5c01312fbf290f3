/*
 * The ASGI HTTP scope (ASGI 3.0, HTTP spec 2.4): a per-app template with
 * the fixed keys, PyDict_Copy per request plus the request's own keys,
 * built from the head bytes without a Python-level step. Header names are
 * lowercased bytes, shared per name through a small cache; values are
 * bytes as sent.
 */
#include "asgi.h"

#include <string.h>

static PyObject *k_type, *k_asgi, *k_http_version, *k_method, *k_scheme,
    *k_path, *k_raw_path, *k_query_string, *k_root_path, *k_headers,
    *k_client, *k_server, *k_state, *k_extensions;
static PyObject *v_http, *v_https, *v_10, *v_11, *v_2, *v_empty_bytes;

/* The name cache: a lowercased bytes object per raw header name, direct
 * mapped by a hash of the lowercased name. Clients send the same dozen
 * names on every request, so the bytes object is made once. */
enum { NAME_CACHE = 256, NAME_MAX_CACHED = 64 };
static PyObject *name_cache[NAME_CACHE];

/* Last values, as the environ keeps them: keep-alive clients repeat the
 * path, the query and the address. */
static PyObject *last_raw_path, *last_path, *last_query, *last_client;

int m0_asgi_scope_init(void)
{
	if (k_type != NULL)
		return 0;
	static const m0_interned keys[] = {
	    {&k_type, "type"},           {&k_asgi, "asgi"},
	    {&k_http_version, "http_version"}, {&k_method, "method"},
	    {&k_scheme, "scheme"},       {&k_path, "path"},
	    {&k_raw_path, "raw_path"},   {&k_query_string, "query_string"},
	    {&k_root_path, "root_path"}, {&k_headers, "headers"},
	    {&k_client, "client"},       {&k_server, "server"},
	    {&k_state, "state"},         {&k_extensions, "extensions"},
	    {&v_http, "http"},           {&v_https, "https"},
	    {&v_10, "1.0"},
	    {&v_11, "1.1"},
	    {&v_2, "2"},
	};
	if (M0_INTERN_ALL(keys) < 0 || m0_values_init() < 0)
		return -1;
	if ((v_empty_bytes = PyBytes_FromStringAndSize("", 0)) == NULL)
		return -1;
	return 0;
}

PyObject *m0_asgi_scope_template(m0_app *app, const char *server_name,
                                 int server_port, const char *scheme)
{
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	PyObject *asgi = Py_BuildValue("{ssss}", "version", "3.0", "spec_version", "2.4");
	PyObject *ext = Py_BuildValue("{s{}s{}}", "http.response.pathsend",
	                              "http.response.trailers");
	if (asgi == NULL || ext == NULL ||
	    PyDict_SetItem(d, k_type, v_http) < 0 ||
	    PyDict_SetItem(d, k_asgi, asgi) < 0 ||
	    PyDict_SetItem(d, k_http_version, v_11) < 0 ||
	    m0_set_steal(d, k_method, m0_method_value("GET", 3)) < 0 ||
	    m0_set_steal(d, k_scheme, PyUnicode_InternFromString(scheme)) < 0 ||
	    PyDict_SetItem(d, k_path, Py_None) < 0 ||
	    PyDict_SetItem(d, k_raw_path, v_empty_bytes) < 0 ||
	    PyDict_SetItem(d, k_query_string, v_empty_bytes) < 0 ||
	    m0_set_steal(d, k_root_path, PyUnicode_DecodeLatin1(app->root_path,
	                                                     (Py_ssize_t)app->root_len, NULL)) < 0 ||
	    PyDict_SetItem(d, k_headers, Py_None) < 0 ||
	    PyDict_SetItem(d, k_client, Py_None) < 0 ||
	    m0_set_steal(d, k_server, Py_BuildValue("(si)", server_name, server_port)) < 0 ||
	    PyDict_SetItem(d, k_state, Py_None) < 0 ||
	    PyDict_SetItem(d, k_extensions, ext) < 0) {
		Py_XDECREF(asgi);
		Py_XDECREF(ext);
		Py_DECREF(d);
		return NULL;
	}
	Py_DECREF(asgi);
	Py_DECREF(ext);
	return d;
}

static PyObject *cached_bytes(PyObject **last, const char *p, size_t n)
{
	PyObject *v = *last;
	if (v != NULL && PyBytes_GET_SIZE(v) == (Py_ssize_t)n &&
	    memcmp(PyBytes_AS_STRING(v), p, n) == 0)
		return Py_NewRef(v);
	v = PyBytes_FromStringAndSize(p, (Py_ssize_t)n);
	if (v != NULL && n <= 256)
		Py_XSETREF(*last, Py_NewRef(v));
	return v;
}

/* header_name returns the lowercased name as bytes, from the cache when
 * the same name was seen before. */
static PyObject *header_name(const char *p, size_t n)
{
	char low[NAME_MAX_CACHED];
	if (n > NAME_MAX_CACHED) {
		PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
		if (b == NULL)
			return NULL;
		char *dst = PyBytes_AS_STRING(b);
		for (size_t i = 0; i < n; i++)
			dst[i] = (p[i] >= 'A' && p[i] <= 'Z') ? (char)(p[i] + 32) : p[i];
		return b;
	}
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		char c = (p[i] >= 'A' && p[i] <= 'Z') ? (char)(p[i] + 32) : p[i];
		low[i] = c;
		h = (h ^ (unsigned char)c) * 16777619u;
	}
	PyObject **entry = &name_cache[h % NAME_CACHE];
	PyObject *v = *entry;
	if (v != NULL && PyBytes_GET_SIZE(v) == (Py_ssize_t)n &&
	    memcmp(PyBytes_AS_STRING(v), low, n) == 0)
		return Py_NewRef(v);
	v = PyBytes_FromStringAndSize(low, (Py_ssize_t)n);
	if (v != NULL)
		Py_XSETREF(*entry, Py_NewRef(v));
	return v;
}

/* decoded_path: percent-decoded, then UTF-8 with invalid sequences
 * replaced (what urllib.parse.unquote gives uvicorn), with the root path
 * in front: ASGI's path includes root_path (spec 2.x), and uvicorn puts
 * --root-path before the path it received, the proxy having stripped it;
 * a --mount's path holds its prefix already. */
static PyObject *decoded_path(m0_app *app, const char *p, size_t n)
{
	size_t root_len = app->root_in_path ? 0 : app->root_len;
	if (memchr(p, '%', n) == NULL && root_len == 0) {
		PyObject *v = last_path;
		if (v != NULL && PyUnicode_IS_ASCII(v) &&
		    PyUnicode_GET_LENGTH(v) == (Py_ssize_t)n &&
		    memcmp(PyUnicode_1BYTE_DATA(v), p, n) == 0)
			return Py_NewRef(v);
	}
	size_t total = root_len + n;
	if (total == 0)
		return PyUnicode_FromStringAndSize("", 0);
	char stack[512];
	char *out = total <= sizeof stack ? stack : PyMem_Malloc(total);
	if (out == NULL)
		return PyErr_NoMemory();
	memcpy(out, app->root_path, root_len);
	size_t m = root_len + m0_percent_decode(p, n, out + root_len);
	PyObject *v = PyUnicode_DecodeUTF8(out, (Py_ssize_t)m, "replace");
	if (out != stack)
		PyMem_Free(out);
	if (v != NULL && root_len == 0 && m <= 256)
		Py_XSETREF(last_path, Py_NewRef(v));
	return v;
}

/* raw_path is the target's path part as sent, the root path before it
 * as before path. */
static PyObject *raw_path(m0_app *app, const char *p, size_t n)
{
	if (app->root_len == 0 || app->root_in_path)
		return cached_bytes(&last_raw_path, p, n);
	PyObject *v = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(app->root_len + n));
	if (v == NULL)
		return NULL;
	memcpy(PyBytes_AS_STRING(v), app->root_path, app->root_len);
	memcpy(PyBytes_AS_STRING(v) + app->root_len, p, n);
	return v;
}

/* client is (host, port); a keep-alive connection repeats it. */
static PyObject *client(const char *remote, size_t n, int port)
{
	PyObject *v = last_client;
	if (v != NULL) {
		PyObject *host = PyTuple_GET_ITEM(v, 0);
		if (PyUnicode_GET_LENGTH(host) == (Py_ssize_t)n &&
		    memcmp(PyUnicode_1BYTE_DATA(host), remote, n) == 0 &&
		    PyLong_AsLong(PyTuple_GET_ITEM(v, 1)) == port)
			return Py_NewRef(v);
	}
	v = Py_BuildValue("(Ni)", PyUnicode_DecodeLatin1(remote, (Py_ssize_t)n, NULL), port);
	if (v != NULL)
		Py_XSETREF(last_client, Py_NewRef(v));
	return v;
}

#define SPAN(s) (head + (s).start), ((size_t)((s).end - (s).start))

static PyObject *header_list(const m0_request *req, const char *head,
                             const m0_field *fields)
{
	PyObject *list = PyList_New((Py_ssize_t)req->nfields);
	if (list == NULL)
		return NULL;
	for (uint32_t i = 0; i < req->nfields; i++) {
		PyObject *name = header_name(SPAN(fields[i].name));
		PyObject *value = name ? PyBytes_FromStringAndSize(SPAN(fields[i].value)) : NULL;
		PyObject *pair = value ? PyTuple_New(2) : NULL;
		if (pair == NULL) {
			Py_XDECREF(name);
			Py_XDECREF(value);
			Py_DECREF(list);
			return NULL;
		}
		PyTuple_SET_ITEM(pair, 0, name);
		PyTuple_SET_ITEM(pair, 1, value);
		PyList_SET_ITEM(list, i, pair);
	}
	return list;
}

PyObject *m0_asgi_scope_build(const m0_asgi_app *ex, const m0_request *req,
                              const char *head, const m0_field *fields,
                              const char *remote)
{
	PyObject *scope = PyDict_Copy(ex->scope);
	if (scope == NULL)
		return NULL;
	if ((req->version == 10 && PyDict_SetItem(scope, k_http_version, v_10) < 0) ||
	    (req->version == 20 && PyDict_SetItem(scope, k_http_version, v_2) < 0) ||
	    m0_set_steal(scope, k_method, m0_method_value(SPAN(req->method))) < 0 ||
	    m0_set_steal(scope, k_path, decoded_path(ex->app, SPAN(req->path))) < 0 ||
	    m0_set_steal(scope, k_raw_path, raw_path(ex->app, SPAN(req->path))) < 0 ||
	    (req->query.end > req->query.start &&
	     m0_set_steal(scope, k_query_string, cached_bytes(&last_query, SPAN(req->query))) < 0) ||
	    m0_set_steal(scope, k_headers, header_list(req, head, fields)) < 0 ||
	    m0_set_steal(scope, k_client, client(remote, req->remote_len, req->remote_port)) < 0 ||
	    (req->scheme != M0_SCHEME_DEFAULT &&
	     PyDict_SetItem(scope, k_scheme, req->scheme == M0_SCHEME_HTTPS ? v_https : v_http) < 0) ||
	    m0_set_steal(scope, k_state, PyDict_Copy(ex->state)) < 0 ||
	    (req->tls.end > req->tls.start && m0_tls_scope(scope, SPAN(req->tls)) < 0)) {
		Py_DECREF(scope);
		return NULL;
	}
	return scope;
}
