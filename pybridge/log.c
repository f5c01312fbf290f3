/*
 * The bridge's log: lines through the server's logger, and the raised
 * exception as text, as a traceback under a line, or inside it. Every
 * other C file may log; this one calls none of them.
 */
#include "shim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* m0_copy_text is a malloc'd copy of s (NULL when malloc fails): the
 * errors the bridge hands Go, which frees them. */
char *m0_copy_text(const char *s)
{
	size_t n = strlen(s);
	char *c = malloc(n + 1);
	if (c != NULL)
		memcpy(c, s, n + 1);
	return c;
}

/* m0_fetch_exception takes the raised exception as one object, its
 * traceback attached (3.12 deprecates the type/value/traceback triple). */
PyObject *m0_fetch_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
	return PyErr_GetRaisedException();
#else
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	if (type == NULL)
		return NULL;
	PyErr_NormalizeException(&type, &value, &tb);
	if (tb != NULL && value != NULL)
		PyException_SetTraceback(value, tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	return value;
#endif
}

/* m0_restore_exception raises exc again, taking its reference; NULL
 * leaves none raised. */
void m0_restore_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
	PyErr_SetRaisedException(exc);
#else
	if (exc == NULL) {
		PyErr_Clear();
		return;
	}
	PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}

/* m0_format_exception clears the raised exception and returns it as text,
 * the way Python prints it, in malloc'd memory. */
char *m0_format_exception(void)
{
	PyObject *exc = m0_fetch_exception();
	if (exc == NULL)
		return m0_copy_text("unknown error (no Python exception set)");
	char *text = NULL;
	PyObject *tbmod = PyImport_ImportModule("traceback");
	PyObject *lines = NULL, *empty = NULL, *joined = NULL;
	PyObject *tb = PyException_GetTraceback(exc);
	if (tbmod != NULL)
		lines = PyObject_CallMethod(tbmod, "format_exception", "OOO",
		                            (PyObject *)Py_TYPE(exc), exc,
		                            tb ? tb : Py_None);
	Py_XDECREF(tb);
	if (lines != NULL && (empty = PyUnicode_FromString("")) != NULL)
		joined = PyUnicode_Join(empty, lines);
	if (joined != NULL) {
		const char *utf8 = PyUnicode_AsUTF8(joined);
		if (utf8 != NULL)
			text = m0_copy_text(utf8);
	}
	if (text == NULL) {
		PyErr_Clear();
		PyObject *s = PyObject_Str(exc);
		const char *utf8 = s ? PyUnicode_AsUTF8(s) : NULL;
		text = m0_copy_text(utf8 ? utf8 : "unprintable Python exception");
		Py_XDECREF(s);
		PyErr_Clear();
	}
	Py_XDECREF(joined);
	Py_XDECREF(empty);
	Py_XDECREF(lines);
	Py_XDECREF(tbmod);
	Py_DECREF(exc);
	return text;
}

/* m0_log writes one line through the server's logger, so the bridge's
 * messages carry the same timestamp and format as the server's. A line
 * longer than the buffer is cut. */
static void log_line(int error, const char *format, va_list ap)
{
	char line[1024];
	int n = vsnprintf(line, sizeof line, format, ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof line)
		n = (int)sizeof line - 1;
	m0goLog(line, n, error);
}

void m0_log(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	log_line(0, format, ap);
	va_end(ap);
}

void m0_log_error(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	log_line(1, format, ap);
	va_end(ap);
}

/* m0_log_inline_tracebacks is set (SetTracebacksInline) when the log is
 * read by a machine (--log-format json): a traceback then goes inside the
 * line naming its context, one record, rather than under it. */
int m0_log_inline_tracebacks;

/* m0_log_exception logs context as one line through the server's logger,
 * then prints the raised exception's traceback under it to sys.stderr
 * (as gunicorn and uvicorn do: a timestamped line, then the traceback as
 * Python formats it), and clears it; with m0_log_inline_tracebacks the
 * traceback is part of the line.
 * PyErr_PrintEx(0) does not keep it in sys.last_*, which would hold the
 * failed request's frames alive until the next failure. */
void m0_log_exception(const char *context)
{
	if (m0_log_inline_tracebacks) {
		char *text = m0_format_exception();
		if (text == NULL) {
			/* m0_copy_text's malloc failed: the context alone. */
			m0_log_error("%s (the traceback could not be formatted: out of memory)", context);
			return;
		}
		size_t n = strlen(context) + 1 + strlen(text);
		char *line = malloc(n + 1);
		if (line != NULL) {
			snprintf(line, n + 1, "%s\n%s", context, text);
			while (n > 0 && line[n - 1] == '\n')
				n--;
			m0goLog(line, (int)n, 1);
			free(line);
			free(text);
			return;
		}
		m0_log_error("%s (%s)", context, text);
		free(text);
		return;
	}
	m0_log_error("%s", context);
	m0_print_exception();
}

/* m0_print_exception prints the raised exception's traceback to
 * sys.stderr and clears it, as PyErr_PrintEx(0) does, except that a
 * SystemExit is printed too rather than acted on: PyErr_PrintEx calls
 * Py_Exit for it, which finalises the interpreter on a handler thread
 * under the requests still running and hangs the server. An app's
 * sys.exit() in a request is that request's failure (uvicorn's rule). */
void m0_print_exception(void)
{
	if (!PyErr_ExceptionMatches(PyExc_SystemExit)) {
		PyErr_PrintEx(0);
		return;
	}
	PyObject *exc = m0_fetch_exception();
	if (exc == NULL)
		return;
	PyObject *type = (PyObject *)Py_TYPE(exc);
	PyObject *tb = PyException_GetTraceback(exc);
	PyObject *hook = PySys_GetObject("excepthook"); /* borrowed */
	PyObject *r = NULL;
	if (hook != NULL)
		r = PyObject_CallFunctionObjArgs(hook, type, exc, tb != NULL ? tb : Py_None, NULL);
	if (r == NULL) {
		/* No hook, or it failed (a SystemExit of its own included):
		 * the default display, never an exit. */
		PyErr_Clear();
		PyErr_Display(type, exc, tb != NULL ? tb : Py_None);
	}
	Py_XDECREF(r);
	Py_XDECREF(tb);
	Py_DECREF(exc);
}
