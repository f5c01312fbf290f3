/*
 * The embedded interpreter: start, sys.path, app import, interface
 * detection, and the end.
 */
#include "shim.h"

#include <stdarg.h>
#include <stdio.h>
#include <dlfcn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

/* The thread state of the thread that initialised the interpreter, saved
 * while handler threads run; Py_FinalizeEx runs on that thread again. */
static PyThreadState *main_tstate;

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

/* m0_static_prefix is the prefix of the Python linked into the program
 * (pkg-config.sh defines M0_PYTHON_PREFIX for a static link), or NULL
 * when the program loads libpython. */
const char *m0_static_prefix(void)
{
#ifdef M0_PYTHON_PREFIX
	return M0_PYTHON_PREFIX;
#else
	return NULL;
#endif
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

/* prepare puts the site dirs and the app dir on sys.path and readies the
 * shim's types, holding the GIL; malloc'd text on failure. */
static char *prepare(const char *app_dir, const char *site_dirs)
{
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
				return m0_copy_text("out of memory");
			memcpy(dir, p, n);
			dir[n] = '\0';
			int rc = add_site_dir(dir);
			free(dir);
			if (rc < 0)
				return m0_format_exception();
		}
		p = nl ? nl + 1 : NULL;
	}
	/* threading takes the thread that first imports it for the main
	 * thread: it must be this one, or uvloop on the ASGI executor's
	 * thread believes it is the main thread and calls set_wakeup_fd,
	 * which CPython refuses off its real main thread. (In a running
	 * interpreter the extension imported it on the main thread first.) */
	PyObject *threading = PyImport_ImportModule("threading");
	Py_XDECREF(threading);
	if (threading == NULL || sys_path_insert(0, app_dir) < 0 || m0_environ_init() < 0 ||
	    m0_input_ready() < 0 || m0_wsgi_ready() < 0)
		err = m0_format_exception();
	return err;
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
		return m0_copy_text("the Python interpreter is already initialised");
#ifdef __GLIBC__
	/* glibc gives a heap's free top back to the kernel past
	 * M_TRIM_THRESHOLD, 128 KiB until the process frees its first mapped
	 * block (which raises it, and python3's start-up does): below that a
	 * request freeing a few hundred KiB (zlib's deflate buffers) faults
	 * them back in, zeroed, on the next. These are the values glibc moves
	 * to itself after freeing a 1 MiB mapping. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 2 << 20);
#endif
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
	char *err = prepare(app_dir, site_dirs);
	main_tstate = PyEval_SaveThread();
	return err;
}

/* In a running interpreter (the extension module), the thread that
 * prepared it took a thread state of its own, which m0_finalize gives
 * back instead of finalising: the interpreter is the host's. */
static int adopted;
static PyGILState_STATE adopted_gil;

/* m0_adopt is m0_init for the interpreter this process already runs (the
 * extension module's host): no configuration, no home, no executable to
 * find; sys.prefix, sys.executable and site-packages are the host's. */
char *m0_adopt(const char *app_dir, const char *site_dirs)
{
	if (!Py_IsInitialized())
		return m0_copy_text("no Python interpreter runs in this process");
	adopted_gil = PyGILState_Ensure();
	adopted = 1;
	char *err = prepare(app_dir, site_dirs);
	main_tstate = PyEval_SaveThread();
	return err;
}

int m0_finalize(void)
{
	if (main_tstate == NULL)
		return 0; /* Py_InitializeFromConfig failed: nothing to end */
	PyEval_RestoreThread(main_tstate);
	main_tstate = NULL;
	if (adopted) {
		adopted = 0;
		PyGILState_Release(adopted_gil);
		return 0;
	}
	return Py_FinalizeEx();
}

/* detect_asgi: a coroutine function, or an object whose __call__ is one. */
static int detect_asgi(PyObject *app)
{
	PyObject *inspect = PyImport_ImportModule("inspect");
	if (inspect == NULL)
		return -1;
	PyObject *r = PyObject_CallMethod(inspect, "iscoroutinefunction", "O", app);
	int asgi = r != NULL ? PyObject_IsTrue(r) : -1;
	if (asgi == 0 && !PyFunction_Check(app) && !PyType_Check(app) &&
	    PyObject_HasAttrString(app, "__call__")) {
		PyObject *call = PyObject_GetAttrString(app, "__call__");
		Py_DECREF(r);
		r = call ? PyObject_CallMethod(inspect, "iscoroutinefunction", "O", call)
		         : NULL;
		Py_XDECREF(call);
		asgi = r != NULL ? PyObject_IsTrue(r) : -1;
	}
	Py_XDECREF(r);
	Py_DECREF(inspect);
	return asgi;
}

/* The attributes a target without ":attr" is looked up as, in order:
 * gunicorn's default, then uvicorn's and Flask's habit. */
static const char *const default_attrs[] = {"application", "app"};

/* Then, for a package that has neither (a Django project's, a FastAPI
 * layout's), these submodules and attributes, in the seed's order; each
 * names what was taken after the module's own name. */
static const struct {
	const char *submodule, *attr, *found;
} default_submodules[] = {
	{"asgi", "application", ".asgi:application"},
	{"wsgi", "application", ".wsgi:application"},
	{"main", "app", ".main:app"},
};

/* import_submodule_attr imports module.sub and returns its attr: a new
 * reference; NULL with no error set when module.sub does not exist or
 * lacks attr; NULL with the error set for anything else (its import
 * failing inside is the app's error, shown as such). */
static PyObject *import_submodule_attr(const char *module, size_t module_len,
                                       const char *sub, const char *attr)
{
	char dotted[512];
	if (snprintf(dotted, sizeof dotted, "%.*s.%s", (int)module_len, module, sub) >= (int)sizeof dotted)
		return NULL; /* no such module name */
	PyObject *name = PyUnicode_FromString(dotted);
	if (name == NULL)
		return NULL;
	PyObject *mod = PyImport_Import(name);
	if (mod == NULL) {
		int absent = 0;
		if (PyErr_ExceptionMatches(PyExc_ModuleNotFoundError)) {
			PyObject *exc = m0_fetch_exception();
			PyObject *missing = exc ? PyObject_GetAttrString(exc, "name") : NULL;
			absent = missing != NULL && PyUnicode_Check(missing) &&
			         PyUnicode_Compare(missing, name) == 0;
			if (missing == NULL)
				PyErr_Clear();
			Py_XDECREF(missing);
			if (!absent && exc != NULL)
				m0_restore_exception(exc);
			else
				Py_XDECREF(exc);
		}
		Py_DECREF(name);
		return NULL;
	}
	Py_DECREF(name);
	PyObject *app = PyObject_GetAttrString(mod, attr);
	Py_DECREF(mod);
	if (app == NULL && PyErr_ExceptionMatches(PyExc_AttributeError))
		PyErr_Clear();
	return app;
}

/* can_bind: whether a callable of signature sig takes nargs positional
 * arguments: 1 or 0, or -1 with a Python error. */
static int can_bind(PyObject *sig, int nargs)
{
	PyObject *args = PyTuple_New(nargs);
	if (args == NULL)
		return -1;
	for (int i = 0; i < nargs; i++)
		PyTuple_SET_ITEM(args, i, Py_NewRef(Py_None));
	PyObject *bind = PyObject_GetAttrString(sig, "bind");
	PyObject *bound = bind ? PyObject_Call(bind, args, NULL) : NULL;
	Py_XDECREF(bind);
	Py_DECREF(args);
	if (bound != NULL) {
		Py_DECREF(bound);
		return 1;
	}
	if (PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		return 0;
	}
	return -1;
}

/* looks_like_factory: obj is a function (or bound method) that can be
 * called with no arguments but not with a WSGI app's two or an ASGI
 * app's three: served as the app it would fail every request, so it is
 * meant to make the app. A class is not one (it may be an ASGI 2 app,
 * or its instances the app). 1 or 0, or -1 with a Python error. */
static int looks_like_factory(PyObject *obj)
{
	if (!PyFunction_Check(obj) && !PyMethod_Check(obj))
		return 0;
	PyObject *inspect = PyImport_ImportModule("inspect");
	if (inspect == NULL)
		return -1;
	PyObject *sig = PyObject_CallMethod(inspect, "signature", "O", obj);
	Py_DECREF(inspect);
	if (sig == NULL) {
		/* No signature to read (some C-level wrappers): not a verdict. */
		if (PyErr_ExceptionMatches(PyExc_ValueError) ||
		    PyErr_ExceptionMatches(PyExc_TypeError)) {
			PyErr_Clear();
			return 0;
		}
		return -1;
	}
	int factory = can_bind(sig, 0);
	for (int nargs = 2; factory == 1 && nargs <= 3; nargs++) {
		int takes = can_bind(sig, nargs);
		factory = takes < 0 ? -1 : !takes;
	}
	Py_DECREF(sig);
	return factory;
}

/* import_target resolves "module:attr" (attr may be dotted, and may end in
 * "()" to call it as a factory); factory forces the call. A bare "module"
 * means its application, else its app, and *found names the one taken.
 * A mistake in the target itself (no such default attribute, a factory
 * served as the app) comes back as one line in *mistake, with no Python
 * error set; anything else is a Python error. */
static PyObject *import_target(const char *target, int factory,
                               const char **found, char **mistake)
{
	const char *colon = strchr(target, ':');
	if (colon == target || (colon != NULL && colon[1] == '\0') || target[0] == '\0') {
		PyErr_Format(PyExc_ValueError,
		             "app %s: want module:attr (e.g. app:application)", target);
		return NULL;
	}
	size_t module_len = colon ? (size_t)(colon - target) : strlen(target);
	PyObject *modname = PyUnicode_FromStringAndSize(target, module_len);
	if (modname == NULL)
		return NULL;
	PyObject *obj = PyImport_Import(modname);
	Py_DECREF(modname);
	if (obj == NULL)
		return NULL;
	if (colon == NULL) {
		PyObject *app = NULL;
		for (size_t i = 0; app == NULL && i < sizeof default_attrs / sizeof *default_attrs; i++) {
			app = PyObject_GetAttrString(obj, default_attrs[i]);
			if (app != NULL) {
				*found = default_attrs[i];
			} else if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
				PyErr_Clear();
			} else {
				Py_DECREF(obj);
				return NULL;
			}
		}
		Py_DECREF(obj);
		for (size_t i = 0; app == NULL && i < sizeof default_submodules / sizeof *default_submodules; i++) {
			app = import_submodule_attr(target, module_len, default_submodules[i].submodule,
			                            default_submodules[i].attr);
			if (app != NULL)
				*found = default_submodules[i].found;
			else if (PyErr_Occurred())
				return NULL;
		}
		if (app == NULL) {
			char line[512];
			snprintf(line, sizeof line,
			         "%s: the module has no \"application\" or \"app\" attribute, "
			         "nor %s.asgi:application, %s.wsgi:application or %s.main:app: "
			         "give module:attr", target, target, target, target);
			*mistake = m0_copy_text(line);
			return NULL;
		}
		obj = app;
	}
	const char *attr = colon ? colon + 1 : "";
	size_t alen = colon ? strlen(attr) : 0;
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
	} else {
		int made_by_call = looks_like_factory(obj);
		if (made_by_call != 0) {
			Py_DECREF(obj);
			if (made_by_call < 0)
				return NULL;
			char line[512];
			snprintf(line, sizeof line,
			         "%s%s%s looks like an application factory (a function taking "
			         "no arguments): use --factory",
			         target, colon || (*found)[0] == '.' ? "" : ":", colon ? "" : *found);
			*mistake = m0_copy_text(line);
			return NULL;
		}
	}
	if (obj != NULL && !PyCallable_Check(obj)) {
		PyErr_Format(PyExc_TypeError, "app %s is not callable (%s)", target,
		             Py_TYPE(obj)->tp_name);
		Py_DECREF(obj);
		return NULL;
	}
	return obj;
}

/* missing_module is the name of the module a raised ModuleNotFoundError
 * names (malloc'd), or NULL; the exception stays raised. */
static char *missing_module(void)
{
	if (!PyErr_ExceptionMatches(PyExc_ModuleNotFoundError))
		return NULL;
	PyObject *exc = m0_fetch_exception();
	char *name = NULL;
	PyObject *attr = exc ? PyObject_GetAttrString(exc, "name") : NULL;
	if (attr != NULL && PyUnicode_Check(attr)) {
		const char *utf8 = PyUnicode_AsUTF8(attr);
		if (utf8 != NULL)
			name = m0_copy_text(utf8);
	}
	Py_XDECREF(attr);
	PyErr_Clear();
	m0_restore_exception(exc);
	return name;
}

m0_app *m0_app_load(const char *target, int factory, const char *root_path,
                    const char *server_name, int server_port,
                    const char *url_scheme, const char *server_software,
                    int multithread, int multiprocess, m0_load_result *result)
{
	PyGILState_STATE g = PyGILState_Ensure();
	m0_app *app = calloc(1, sizeof *app);
	if (app == NULL) {
		result->error = m0_copy_text("out of memory");
		goto out;
	}
	app->root_len = strlen(root_path);
	app->root_path = m0_copy_text(root_path);
	app->app = import_target(target, factory, &result->found, &result->mistake);
	if (app->app != NULL)
		app->is_asgi = detect_asgi(app->app);
	if (app->app != NULL && app->is_asgi >= 0)
		app->environ = m0_environ_template(root_path, server_name, server_port,
		                                   url_scheme, server_software,
		                                   multithread, multiprocess);
	if (app->root_path == NULL || app->app == NULL || app->is_asgi < 0 ||
	    app->environ == NULL) {
		if (result->mistake == NULL && PyErr_Occurred())
			result->missing = missing_module();
		if (result->mistake == NULL)
			result->error = PyErr_Occurred() ? m0_format_exception()
			                                 : m0_copy_text("out of memory");
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
