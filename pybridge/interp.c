/*
 * The embedded interpreter: start, sys.path, app import, interface
 * detection, exception text, and the end.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* The thread state of the thread that initialised the interpreter, saved
 * while handler threads run; Py_FinalizeEx runs on that thread again. */
static PyThreadState *main_tstate;

static char *copy_text(const char *s)
{
	size_t n = strlen(s);
	char *c = malloc(n + 1);
	if (c != NULL)
		memcpy(c, s, n + 1);
	return c;
}

/* fetch_exception takes the raised exception as one object (3.12 deprecates
 * the type/value/traceback triple). */
static PyObject *fetch_exception(void)
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

/* m0_format_exception clears the raised exception and returns it as text,
 * the way Python prints it, in malloc'd memory. */
char *m0_format_exception(void)
{
	PyObject *exc = fetch_exception();
	if (exc == NULL)
		return copy_text("unknown error (no Python exception set)");
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
			text = copy_text(utf8);
	}
	if (text == NULL) {
		PyErr_Clear();
		PyObject *s = PyObject_Str(exc);
		const char *utf8 = s ? PyUnicode_AsUTF8(s) : NULL;
		text = copy_text(utf8 ? utf8 : "unprintable Python exception");
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

/* m0_log_exception prints the raised exception with its traceback to
 * sys.stderr after the context (which ends the current line), and clears
 * it.
 * PyErr_PrintEx(0) does not keep it in sys.last_*, which would hold the
 * failed request's frames alive until the next failure. */
void m0_log_exception(const char *context)
{
	PySys_WriteStderr("%s\n", context);
	PyErr_PrintEx(0);
}

static int sys_path_insert(Py_ssize_t at, const char *dir)
{
	PyObject *path = PySys_GetObject("path"); /* borrowed */
	PyObject *s = PyUnicode_DecodeFSDefault(dir);
	if (path == NULL || s == NULL) {
		Py_XDECREF(s);
		return -1;
	}
	int rc = PyList_Insert(path, at, s);
	Py_DECREF(s);
	return rc;
}

/* add_site_dir uses site.addsitedir so the directory's .pth files (editable
 * installs, namespace packages) work as they do under the venv's python. */
static int add_site_dir(const char *dir)
{
	PyObject *site = PyImport_ImportModule("site");
	if (site == NULL)
		return -1;
	PyObject *r = PyObject_CallMethod(site, "addsitedir", "s", dir);
	Py_DECREF(site);
	if (r == NULL)
		return -1;
	Py_DECREF(r);
	return 0;
}

/* m0_library_path is the file the Python C API was loaded from: the
 * libpython this process runs, or the program itself when Python is
 * linked in statically; NULL if the loader cannot tell. */
const char *m0_library_path(void)
{
	Dl_info info;
	if (dladdr((void *)&Py_InitializeFromConfig, &info) == 0)
		return NULL;
	return info.dli_fname;
}

/* status_text is a failed PyStatus as malloc'd text. */
static char *status_text(PyStatus status)
{
	const char *func = status.func ? status.func : "Py_InitializeFromConfig";
	const char *msg = status.err_msg ? status.err_msg : "failed";
	size_t n = strlen(func) + strlen(msg) + 3;
	char *text = malloc(n);
	if (text != NULL)
		snprintf(text, n, "%s: %s", func, msg);
	return text;
}

/* m0_init starts the interpreter with home as its prefix (its standard
 * library and lib-dynload) and executable as sys.executable, so neither
 * comes from whichever python3 is first on PATH, which is where CPython
 * looks without them. A venv's bin/python as executable makes site.py
 * set sys.prefix to the venv from its pyvenv.cfg, as under the venv's own
 * python. Either may be empty: CPython's own search then. */
char *m0_init(const char *app_dir, const char *site_dirs, const char *home,
              const char *executable)
{
	if (Py_IsInitialized())
		return copy_text("the Python interpreter is already initialised");
	PyConfig config;
	PyConfig_InitPythonConfig(&config);
	/* No Python signal handlers: signals stay the Go runtime's. */
	config.install_signal_handlers = 0;
	config.parse_argv = 0;
	PyStatus status = PyStatus_Ok();
	if (home != NULL && *home != '\0')
		status = PyConfig_SetBytesString(&config, &config.home, home);
	if (!PyStatus_Exception(status) && executable != NULL && *executable != '\0') {
		status = PyConfig_SetBytesString(&config, &config.program_name, executable);
		if (!PyStatus_Exception(status))
			status = PyConfig_SetBytesString(&config, &config.executable, executable);
	}
	if (!PyStatus_Exception(status))
		status = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(status))
		return status_text(status);
	char *err = NULL;
	/* Site dirs go in first, the app dir last at sys.path[0], so the app's
	 * own modules shadow installed ones as they do under `python app.py`. */
	const char *p = site_dirs;
	while (p != NULL && *p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n > 0) {
			char *dir = malloc(n + 1);
			if (dir == NULL)
				return copy_text("out of memory");
			memcpy(dir, p, n);
			dir[n] = '\0';
			int rc = add_site_dir(dir);
			free(dir);
			if (rc < 0) {
				err = m0_format_exception();
				goto out;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	/* threading takes the thread that first imports it for the main
	 * thread: it must be this one, or uvloop on the ASGI executor's
	 * thread believes it is the main thread and calls set_wakeup_fd,
	 * which CPython refuses off its real main thread. */
	PyObject *threading = PyImport_ImportModule("threading");
	Py_XDECREF(threading);
	if (threading == NULL || sys_path_insert(0, app_dir) < 0 || m0_environ_init() < 0 ||
	    m0_input_ready() < 0 || m0_wsgi_ready() < 0)
		err = m0_format_exception();
out:
	main_tstate = PyEval_SaveThread();
	return err;
}

int m0_finalize(void)
{
	if (main_tstate == NULL)
		return 0; /* Py_InitializeFromConfig failed: nothing to end */
	PyEval_RestoreThread(main_tstate);
	main_tstate = NULL;
	return Py_FinalizeEx();
}

/* detect_asgi: a coroutine function, or an object whose __call__ is one. */
static int detect_asgi(PyObject *app)
{
	PyObject *inspect = PyImport_ImportModule("inspect");
	if (inspect == NULL)
		return -1;
	int asgi = 0;
	PyObject *r = PyObject_CallMethod(inspect, "iscoroutinefunction", "O", app);
	if (r != NULL && !PyObject_IsTrue(r) && !PyFunction_Check(app) &&
	    !PyType_Check(app) && PyObject_HasAttrString(app, "__call__")) {
		PyObject *call = PyObject_GetAttrString(app, "__call__");
		Py_DECREF(r);
		r = call ? PyObject_CallMethod(inspect, "iscoroutinefunction", "O", call)
		         : NULL;
		Py_XDECREF(call);
	}
	if (r != NULL)
		asgi = PyObject_IsTrue(r);
	else
		asgi = -1;
	Py_XDECREF(r);
	Py_DECREF(inspect);
	return asgi;
}

/* import_target resolves "module:attr" (attr may be dotted, and may end in
 * "()" to call it as a factory); factory forces the call. */
static PyObject *import_target(const char *target, int factory)
{
	const char *colon = strchr(target, ':');
	if (colon == NULL || colon == target || colon[1] == '\0') {
		PyErr_Format(PyExc_ValueError,
		             "app %s: want module:attr (e.g. app:application)", target);
		return NULL;
	}
	PyObject *modname = PyUnicode_FromStringAndSize(target, colon - target);
	if (modname == NULL)
		return NULL;
	PyObject *obj = PyImport_Import(modname);
	Py_DECREF(modname);
	if (obj == NULL)
		return NULL;
	const char *attr = colon + 1;
	size_t alen = strlen(attr);
	if (alen > 2 && strcmp(attr + alen - 2, "()") == 0) {
		factory = 1;
		alen -= 2;
	}
	while (alen > 0) {
		const char *dot = memchr(attr, '.', alen);
		size_t n = dot ? (size_t)(dot - attr) : alen;
		PyObject *name = PyUnicode_FromStringAndSize(attr, n);
		PyObject *next = name ? PyObject_GetAttr(obj, name) : NULL;
		Py_XDECREF(name);
		Py_DECREF(obj);
		if (next == NULL)
			return NULL;
		obj = next;
		attr += n;
		alen -= n;
		if (alen > 0) {
			attr++;
			alen--;
		}
	}
	if (factory) {
		PyObject *made = PyObject_CallNoArgs(obj);
		Py_DECREF(obj);
		obj = made;
	}
	if (obj != NULL && !PyCallable_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "app %s is not callable (%s)", target,
		             Py_TYPE(obj)->tp_name);
		Py_DECREF(obj);
		return NULL;
	}
	return obj;
}

m0_app *m0_app_load(const char *target, int factory, const char *root_path,
                    const char *server_name, int server_port,
                    const char *url_scheme, int multithread, int multiprocess,
                    char **err)
{
	PyGILState_STATE g = PyGILState_Ensure();
	m0_app *app = calloc(1, sizeof *app);
	if (app == NULL) {
		*err = copy_text("out of memory");
		goto out;
	}
	app->root_len = strlen(root_path);
	app->root_path = copy_text(root_path);
	app->app = import_target(target, factory);
	if (app->app != NULL)
		app->is_asgi = detect_asgi(app->app);
	if (app->app != NULL && app->is_asgi >= 0)
		app->environ = m0_environ_template(root_path, server_name, server_port,
		                                   url_scheme, multithread, multiprocess);
	if (app->root_path == NULL || app->app == NULL || app->is_asgi < 0 ||
	    app->environ == NULL) {
		*err = PyErr_Occurred() ? m0_format_exception() : copy_text("out of memory");
		Py_XDECREF(app->app);
		Py_XDECREF(app->environ);
		free(app->root_path);
		free(app);
		app = NULL;
	}
out:
	PyGILState_Release(g);
	return app;
}

void m0_app_free(m0_app *app)
{
	PyGILState_STATE g = PyGILState_Ensure();
	Py_XDECREF(app->app);
	Py_XDECREF(app->environ);
	PyGILState_Release(g);
	free(app->root_path);
	free(app);
}
