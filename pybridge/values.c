/*
 * What the WSGI environ and the ASGI scope both need: the request method
 * as one shared str object for the common methods, the hex digit value
 * their percent-decoders use, and the interning of their fixed keys.
 */
#include "shim.h"

#include <string.h>

static const char *const known_methods[] = {"GET",    "POST",    "HEAD",
                                            "PUT",    "DELETE",  "OPTIONS",
                                            "PATCH"};
#define KNOWN_METHODS (sizeof known_methods / sizeof known_methods[0])
static PyObject *v_methods[KNOWN_METHODS];

int m0_values_init(void)
{
	if (v_methods[0] != NULL)
		return 0;
	for (size_t i = 0; i < KNOWN_METHODS; i++)
		if ((v_methods[i] = PyUnicode_InternFromString(known_methods[i])) == NULL)
			return -1;
	return 0;
}

int m0_intern_all(const m0_interned *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (*names[i].slot == NULL && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
			return -1;
	return 0;
}

PyObject *m0_method_value(const char *p, size_t n)
{
	for (size_t i = 0; i < KNOWN_METHODS; i++)
		if (PyUnicode_GET_LENGTH(v_methods[i]) == (Py_ssize_t)n &&
		    memcmp(PyUnicode_1BYTE_DATA(v_methods[i]), p, n) == 0)
			return Py_NewRef(v_methods[i]);
	return PyUnicode_DecodeLatin1(p, (Py_ssize_t)n, NULL);
}

int m0_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t m0_percent_decode(const char *p, size_t n, char *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (p[i] == '%' && i + 2 < n &&
		    (hi = m0_hex_value(p[i + 1])) >= 0 && (lo = m0_hex_value(p[i + 2])) >= 0) {
			out[m++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[m++] = p[i];
		}
	}
	return m;
}
