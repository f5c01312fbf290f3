/*
 * The WSGI environ (PEP 3333): a per-app template copied per request, keys
 * interned once, a cache from the raw header name to its HTTP_* key, and
 * every value decoded as latin-1 straight from the head bytes.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

/* Interned keys and constant values, made once at start. */
static PyObject *k_request_method, *k_script_name, *k_path_info,
    *k_query_string, *k_content_type, *k_content_length, *k_server_name,
    *k_server_port, *k_server_protocol, *k_server_software, *k_remote_addr,
    *k_remote_port, *k_raw_uri, *k_wsgi_version, *k_wsgi_url_scheme, *k_wsgi_input,
    *k_wsgi_errors, *k_wsgi_multithread, *k_wsgi_multiprocess,
    *k_wsgi_run_once, *k_wsgi_file_wrapper, *k_wsgi_input_terminated;
static PyObject *v_http10, *v_http11, *v_http2, *v_empty, *v_comma, *v_semicolon,
    *v_scheme_http, *v_scheme_https;

int m0_environ_init(void)
{
	static const m0_interned keys[] = {
	    {&k_request_method, "REQUEST_METHOD"},
	    {&k_script_name, "SCRIPT_NAME"},
	    {&k_path_info, "PATH_INFO"},
	    {&k_query_string, "QUERY_STRING"},
	    {&k_content_type, "CONTENT_TYPE"},
	    {&k_content_length, "CONTENT_LENGTH"},
	    {&k_server_name, "SERVER_NAME"},
	    {&k_server_port, "SERVER_PORT"},
	    {&k_server_protocol, "SERVER_PROTOCOL"},
	    {&k_server_software, "SERVER_SOFTWARE"},
	    {&k_remote_addr, "REMOTE_ADDR"},
	    {&k_remote_port, "REMOTE_PORT"},
	    {&k_raw_uri, "RAW_URI"},
	    {&k_wsgi_version, "wsgi.version"},
	    {&k_wsgi_url_scheme, "wsgi.url_scheme"},
	    {&k_wsgi_input, "wsgi.input"},
	    {&k_wsgi_errors, "wsgi.errors"},
	    {&k_wsgi_multithread, "wsgi.multithread"},
	    {&k_wsgi_multiprocess, "wsgi.multiprocess"},
	    {&k_wsgi_run_once, "wsgi.run_once"},
	    {&k_wsgi_file_wrapper, "wsgi.file_wrapper"},
	    {&k_wsgi_input_terminated, "wsgi.input_terminated"},
	    {&v_http10, "HTTP/1.0"},
	    {&v_http11, "HTTP/1.1"},
	    {&v_http2, "HTTP/2"},
	    {&v_empty, ""},
	    {&v_comma, ", "},
	    {&v_semicolon, "; "},
	    {&v_scheme_http, "http"},
	    {&v_scheme_https, "https"},
	};
	if (M0_INTERN_ALL(keys) < 0 || m0_values_init() < 0)
		return -1;
	m0_header_keys_init();
	return 0;
}

static PyObject *latin1(const char *p, size_t n)
{
	if (n == 0)
		return Py_NewRef(v_empty);
	return PyUnicode_DecodeLatin1(p, (Py_ssize_t)n, NULL);
}

/* The value caches: the last value seen per header name (and per
 * request field) is kept, and a request sending the same bytes gets the
 * same immutable str. Browsers and clients repeat most fields verbatim
 * (Accept*, User-Agent, Host, Connection, Sec-Fetch-*), so a compare
 * replaces an allocation and a copy. Long values are not kept. */
#define VALUE_CACHE_MAX 256

static PyObject *cached_latin1(PyObject **last, const char *p, size_t n)
{
	PyObject *v = *last;
	if (v != NULL && PyUnicode_GET_LENGTH(v) == (Py_ssize_t)n &&
	    memcmp(PyUnicode_1BYTE_DATA(v), p, n) == 0)
		return Py_NewRef(v);
	v = latin1(p, n);
	if (v != NULL && n <= VALUE_CACHE_MAX)
		Py_XSETREF(*last, Py_NewRef(v));
	return v;
}

static PyObject *last_path, *last_query, *last_target, *last_remote,
    *last_port;
static int last_port_number = -1;

static PyObject *port_text(int port)
{
	char buf[16];
	int n = 0;
	if (port < 0)
		port = 0;
	do {
		buf[sizeof buf - 1 - n++] = (char)('0' + port % 10);
		port /= 10;
	} while (port > 0 && n < (int)sizeof buf);
	return PyUnicode_FromStringAndSize(buf + sizeof buf - n, n);
}

/* presize grows the template's key table by inserting and deleting
 * placeholder keys: PyDict_Copy clones the table as it is, size included
 * (while at most a third of its entries are deleted ones), so each
 * request's environ then takes a dozen header keys without a resize. */
static int presize(PyObject *d)
{
	enum { EXTRA = 10 };
	PyObject *keys[EXTRA] = {NULL};
	int rc = 0;
	for (int i = 0; i < EXTRA && rc == 0; i++) {
		keys[i] = PyUnicode_FromFormat("m0serve.placeholder.%d", i);
		rc = keys[i] ? PyDict_SetItem(d, keys[i], Py_None) : -1;
	}
	for (int i = 0; i < EXTRA; i++) {
		if (keys[i] != NULL && rc == 0)
			rc = PyDict_DelItem(d, keys[i]);
		Py_XDECREF(keys[i]);
	}
	return rc;
}

PyObject *m0_environ_template(const char *root_path, const char *server_name,
                              int server_port, const char *url_scheme,
                              const char *server_software, int multithread,
                              int multiprocess)
{
	PyObject *d = PyDict_New();
	if (d == NULL)
		return NULL;
	PyObject *errors = PySys_GetObject("stderr"); /* borrowed */
	if (errors == NULL)
		errors = Py_None;
	if (m0_set_steal(d, k_wsgi_version, Py_BuildValue("(ii)", 1, 0)) < 0 ||
	    m0_set_steal(d, k_wsgi_url_scheme, PyUnicode_InternFromString(url_scheme)) < 0 ||
	    PyDict_SetItem(d, k_wsgi_errors, errors) < 0 ||
	    PyDict_SetItem(d, k_wsgi_multithread, multithread ? Py_True : Py_False) < 0 ||
	    PyDict_SetItem(d, k_wsgi_multiprocess, multiprocess ? Py_True : Py_False) < 0 ||
	    PyDict_SetItem(d, k_wsgi_run_once, Py_False) < 0 ||
	    PyDict_SetItem(d, k_wsgi_file_wrapper, (PyObject *)&m0_FileWrapperType) < 0 ||
	    /* The bridge ends wsgi.input at the end of the body, chunked or not. */
	    PyDict_SetItem(d, k_wsgi_input_terminated, Py_True) < 0 ||
	    m0_set_steal(d, k_script_name, latin1(root_path, strlen(root_path))) < 0 ||
	    m0_set_steal(d, k_server_name, latin1(server_name, strlen(server_name))) < 0 ||
	    m0_set_steal(d, k_server_port, port_text(server_port)) < 0 ||
	    PyDict_SetItem(d, k_query_string, v_empty) < 0 ||
	    /* Placeholders for the keys every request sets: the copy then
	     * replaces values in a table already sized, where inserting them
	     * grew it (PyDict_Copy clones the template's key table). */
	    PyDict_SetItem(d, k_request_method, v_empty) < 0 ||
	    PyDict_SetItem(d, k_path_info, v_empty) < 0 ||
	    PyDict_SetItem(d, k_server_protocol, v_empty) < 0 ||
	    PyDict_SetItem(d, k_remote_addr, v_empty) < 0 ||
	    PyDict_SetItem(d, k_remote_port, v_empty) < 0 ||
	    PyDict_SetItem(d, k_raw_uri, v_empty) < 0 ||
	    PyDict_SetItem(d, k_wsgi_input, Py_None) < 0 ||
	    (server_software[0] != '\0' &&
	     m0_set_steal(d, k_server_software,
	                  latin1(server_software, strlen(server_software))) < 0) ||
	    presize(d) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* add_joined stores value under key, or joins it to a value already there:
 * repeated fields with ", " (RFC 9110 §5.3), Cookie with "; " (RFC 6265
 * §5.4). Steals value. */
static int add_joined(PyObject *env, PyObject *key, PyObject *value, int cookie)
{
	if (value == NULL)
		return -1;
	PyObject *had = PyDict_SetDefault(env, key, value); /* borrowed */
	if (had == NULL || had == value) {
		Py_DECREF(value);
		return had == NULL ? -1 : 0;
	}
	PyObject *first = PyUnicode_Concat(had, cookie ? v_semicolon : v_comma);
	PyObject *joined = first ? PyUnicode_Concat(first, value) : NULL;
	Py_XDECREF(first);
	Py_DECREF(value);
	return m0_set_steal(env, key, joined);
}

/* path_info percent-decodes the path (a malformed escape stays as sent,
 * as wsgiref and gunicorn keep it) and strips the root path. */
static PyObject *path_info(m0_thread *t, m0_app *app, const char *p, size_t n)
{
	if (t->scratch_cap < n) {
		char *s = realloc(t->scratch, n);
		if (s == NULL)
			return PyErr_NoMemory();
		t->scratch = s;
		t->scratch_cap = n;
	}
	char *out = t->scratch;
	size_t m = m0_percent_decode(p, n, out);
	if (app->root_len > 0 && m >= app->root_len &&
	    memcmp(out, app->root_path, app->root_len) == 0 &&
	    (m == app->root_len || out[app->root_len] == '/'))
		return cached_latin1(&last_path, out + app->root_len, m - app->root_len);
	return cached_latin1(&last_path, out, m);
}

/* remote_port: a keep-alive connection sends many requests from one port. */
static PyObject *remote_port(int port)
{
	if (port == last_port_number && last_port != NULL)
		return Py_NewRef(last_port);
	PyObject *v = port_text(port);
	if (v != NULL) {
		Py_XSETREF(last_port, Py_NewRef(v));
		last_port_number = port;
	}
	return v;
}

#define SPAN(s) (head + (s).start), ((size_t)((s).end - (s).start))

PyObject *m0_environ_build(m0_thread *t, m0_app *app, const m0_request *req,
                           const char *head, const m0_field *fields,
                           const char *remote)
{
	PyObject *env = PyDict_Copy(app->environ);
	if (env == NULL)
		return NULL;
	if (m0_set_steal(env, k_request_method, m0_method_value(SPAN(req->method))) < 0 ||
	    m0_set_steal(env, k_path_info, path_info(t, app, SPAN(req->path))) < 0 ||
	    (req->query.end > req->query.start &&
	     m0_set_steal(env, k_query_string, cached_latin1(&last_query, SPAN(req->query))) < 0) ||
	    PyDict_SetItem(env, k_server_protocol,
	                   req->version == 10   ? v_http10
	                   : req->version == 20 ? v_http2
	                                        : v_http11) < 0 ||
	    m0_set_steal(env, k_remote_addr, cached_latin1(&last_remote, remote, req->remote_len)) < 0 ||
	    m0_set_steal(env, k_remote_port, remote_port(req->remote_port)) < 0 ||
	    m0_set_steal(env, k_raw_uri, cached_latin1(&last_target, SPAN(req->target))) < 0 ||
	    (req->scheme != M0_SCHEME_DEFAULT &&
	     PyDict_SetItem(env, k_wsgi_url_scheme,
	                    req->scheme == M0_SCHEME_HTTPS ? v_scheme_https : v_scheme_http) < 0) ||
	    PyDict_SetItem(env, k_wsgi_input, (PyObject *)t->input) < 0 ||
	    /* An HTTP/2 body may end with trailers (RFC 9113 §8.1). */
	    (req->version == 20 && (req->chunked || req->content_length > 0) &&
	     m0_input_trailers(t->input, env) < 0) ||
	    (req->tls.end > req->tls.start && m0_tls_environ(env, SPAN(req->tls)) < 0))
		goto fail;
	for (uint32_t i = 0; i < req->nfields; i++) {
		const m0_field *f = &fields[i];
		m0_header_key spare;
		m0_header_key *e = m0_header_key_lookup(SPAN(f->name), &spare);
		if (e == NULL)
			goto fail;
		int rc = 0;
		PyObject *value = NULL;
		if (e->kind != M0_KEY_DROP)
			value = e == &spare || e->secret
			            ? latin1(SPAN(f->value))
			            : cached_latin1(&e->last_value, SPAN(f->value));
		switch (e->kind) {
		case M0_KEY_DROP:
			break;
		case M0_KEY_CONTENT_TYPE:
			rc = add_joined(env, k_content_type, value, 0);
			break;
		case M0_KEY_CONTENT_LENGTH:
			rc = add_joined(env, k_content_length, value, 0);
			break;
		default:
			rc = add_joined(env, e->key, value, e->cookie);
		}
		if (e == &spare)
			Py_XDECREF(spare.key);
		if (rc < 0)
			goto fail;
	}
	return env;
fail:
	Py_DECREF(env);
	return NULL;
}
