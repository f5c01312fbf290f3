/* A TLS connection's facts (tlsrec.Conn.Facts, passed in m0_request.tls)
 * as the app sees them: upper-case names are WSGI environ entries
 * (mod_ssl's and nginx's HTTPS, SSL_*), lower-case ones the ASGI TLS
 * extension's keys, scope["extensions"]["tls"]. */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

/* next splits the pair at *p: name and value, NUL-terminated each. */
static int next(const char **p, const char *end, const char **name, const char **value,
                size_t *value_len)
{
	if (*p >= end)
		return 0;
	*name = *p;
	const char *nul = memchr(*p, 0, (size_t)(end - *p));
	if (nul == NULL || nul + 1 >= end)
		return 0;
	*value = nul + 1;
	const char *vend = memchr(*value, 0, (size_t)(end - *value));
	if (vend == NULL)
		return 0;
	*value_len = (size_t)(vend - *value);
	*p = vend + 1;
	return 1;
}

int m0_tls_environ(PyObject *env, const char *facts, size_t n)
{
	const char *p = facts, *end = facts + n, *name, *value;
	size_t len;
	while (next(&p, end, &name, &value, &len)) {
		if (name[0] < 'A' || name[0] > 'Z')
			continue;
		PyObject *v = PyUnicode_DecodeLatin1(value, (Py_ssize_t)len, NULL);
		if (v == NULL || PyDict_SetItemString(env, name, v) < 0) {
			Py_XDECREF(v);
			return -1;
		}
		Py_DECREF(v);
	}
	return 0;
}

/* A number (tls_version, cipher_suite), a string, or None for empty. */
static PyObject *scope_value(const char *name, const char *value, size_t len)
{
	if (strcmp(name, "tls_version") == 0 || strcmp(name, "cipher_suite") == 0)
		return PyLong_FromString(value, NULL, 10);
	if (len == 0)
		return Py_NewRef(Py_None);
	return PyUnicode_DecodeLatin1(value, (Py_ssize_t)len, NULL);
}

int m0_tls_scope(PyObject *scope, const char *facts, size_t n)
{
	PyObject *tls = PyDict_New();
	PyObject *chain = PyList_New(0);
	PyObject *ext = NULL;
	if (tls == NULL || chain == NULL || PyDict_SetItemString(tls, "client_cert_chain", chain) < 0)
		goto fail;
	const char *p = facts, *end = facts + n, *name, *value;
	size_t len;
	while (next(&p, end, &name, &value, &len)) {
		if (name[0] < 'a' || name[0] > 'z')
			continue;
		PyObject *v = scope_value(name, value, len);
		if (v == NULL)
			goto fail;
		int rc = strcmp(name, "client_cert_chain") == 0 ? PyList_Append(chain, v)
		                                                 : PyDict_SetItemString(tls, name, v);
		Py_DECREF(v);
		if (rc < 0)
			goto fail;
	}
	/* The scope's extensions dict is the template's, shared by every
	 * request: this one gets its own. */
	PyObject *shared = PyDict_GetItemString(scope, "extensions");
	ext = shared != NULL && PyDict_Check(shared) ? PyDict_Copy(shared) : PyDict_New();
	if (ext == NULL || PyDict_SetItemString(ext, "tls", tls) < 0 ||
	    PyDict_SetItemString(scope, "extensions", ext) < 0)
		goto fail;
	Py_DECREF(ext);
	Py_DECREF(chain);
	Py_DECREF(tls);
	return 0;
fail:
	Py_XDECREF(ext);
	Py_XDECREF(chain);
	Py_XDECREF(tls);
	return -1;
}
