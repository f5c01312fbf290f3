/*
 * The C side of pybridge: the embedded interpreter, the WSGI environ, the
 * wsgi.input stream, start_response/write, and the response arena the Go
 * side reads. Every function here but m0_init, m0_adopt, m0_app_load and
 * m0_finalize runs on a handler thread that holds the GIL.
 */
#ifndef M0_SHIM_H
#define M0_SHIM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#ifdef Py_GIL_DISABLED
/* The header and value caches, the per-thread objects and the arenas are
 * guarded by the GIL. */
#error "pybridge needs a CPython built with the GIL (not a free-threaded build)"
#endif

/* A byte range [start, end) of a buffer, the same layout as http1.Span. */
typedef struct {
	uint32_t start, end;
} m0_span;

/* One header field of the request, the same layout as http1.Field (Go
 * checks the size and offsets at start, so the Go slice is passed as is). */
typedef struct {
	m0_span name, value;
	uint8_t known;
} m0_field;

/* The request head as the Go side describes it: spans into the head
 * bytes, passed beside it. No pointer inside, so Go may pass its own. */
typedef struct {
	m0_span method, target, path, query;
	int64_t content_length; /* -1: none */
	uint32_t nfields;
	uint32_t remote_len;
	int32_t remote_port;
	uint8_t version; /* 10 or 11 */
	uint8_t chunked;
	uint8_t stream; /* a Go stream takes a body of unknown length */
	uint8_t scheme; /* M0_SCHEME_*: what a trusted proxy said, or the app's */
	uint8_t websocket; /* a checked WebSocket opening handshake (ASGI) */
	uint32_t buffer_limit; /* with a stream, a longer list body streams too */
	/* Without a stream: a body longer than this (0: no limit), or one
	 * still coming gather_us microseconds after the call began (0: no
	 * limit), is not gathered further; the response is left
	 * M0_SUSPENDED. */
	uint32_t gather_limit;
	uint32_t gather_us;
	/* The connection's TLS facts in the head buffer, after the head
	 * (tlsrec.Conn.Facts: NUL-terminated name/value pairs); empty: plain
	 * HTTP. */
	m0_span tls;
} m0_request;

/* m0_request.scheme: the app's default, or a trusted proxy's word. */
enum {
	M0_SCHEME_DEFAULT = 0,
	M0_SCHEME_HTTP = 1,
	M0_SCHEME_HTTPS = 2,
};

/* What became of a response (m0_response.outcome). */
enum {
	M0_COMPLETE = 1, /* status, headers and the whole body are in the arena */
	M0_STREAMED = 2, /* the head and body went to the Go stream; it ended well */
	M0_ABORTED = 3,  /* the head went out, then the app failed or the client
	                    left: the connection must close without a valid end */
	M0_UPGRADED = 4, /* an ASGI WebSocket was accepted: the job is the
	                    connection's now; the server finishes nothing */
	M0_SUSPENDED = 5, /* the body passed the request's gather_limit: the
	                     head and the body so far are in the arena, the
	                     rest waits in pending for m0_wsgi_resume */
};

/* The job-owned arena: C memory the Go side reads after the call. Header
 * names and values, the reason and the body are spans of buf. */
typedef struct {
	char *buf;
	size_t len, cap;
	m0_span *headers; /* pairs: headers[2i] name, headers[2i+1] value */
	uint32_t nheaders, headers_cap;
	int32_t status;
	int32_t outcome;
	int32_t app_error; /* the app failed: the 500 or the abort is ours */
	m0_span reason;
	m0_span body;
	int64_t content_length; /* body length when the bridge knows it, else -1 */
	/* A wsgi.file_wrapper over a regular file: the body is file_length
	 * bytes of file_fd (a dup the Go side takes) from file_offset. */
	int32_t file_fd;
	int64_t file_offset, file_length;
	/* The app's "Connection: close": the connection ends after this
	 * response. Other hop-by-hop fields are dropped; dropped is the
	 * first one's name, for a warning. */
	int32_t close;
	m0_span dropped;
	/* M0_SUSPENDED: the app's iterable (for close()) and, unless it is a
	 * list or tuple not yet read, the iterator to go on with; references
	 * only m0_wsgi_resume drops, with the GIL. */
	PyObject *pending, *pending_iter;
} m0_response;

/* Per-app state: the callable and its environ template. */
typedef struct {
	PyObject *app;
	PyObject *environ; /* the template copied per request */
	char *root_path;   /* SCRIPT_NAME, stripped from PATH_INFO; before ASGI's path */
	size_t root_len;
	/* root_in_path: the request's path holds the root path already (a
	 * --mount: nobody stripped it), so ASGI's path is not given it twice. */
	int root_in_path;
	int is_asgi;
} m0_app;

/* What m0_app_load says besides the app: on failure one of error (a
 * Python traceback) and mistake (one line on the target itself, such as a
 * factory named without --factory), both malloc'd; on success found, the
 * attribute taken for a target without ":attr" (static, else NULL). */
typedef struct {
	char *error;
	char *mistake;
	const char *found;
	/* With error, for a ModuleNotFoundError: the module's name
	 * (malloc'd), so that the caller can tell the app's own module from
	 * one it imports. */
	char *missing;
} m0_load_result;

typedef struct m0_input m0_input;

/* start_response (and write, the same shape): bound to a handler thread
 * and stamped with the request it serves. */
typedef struct m0_start_response {
	PyObject_HEAD
	struct m0_thread *thread;
	uint64_t generation;
	vectorcallfunc vectorcall;
} m0_start_response;

/* Per-handler-thread state: its thread state for life, the per-request
 * objects it reuses when the app kept no reference, and the state of the
 * request in flight. */
typedef struct m0_thread {
	int id; /* index of the Go handler: the callbacks find the job by it */
	PyThreadState *tstate;
	m0_input *input;
	m0_start_response *start_response;
	PyObject *write; /* start_response's write callable */
	uint64_t generation; /* per request: stale objects refuse to act */
	m0_response *resp;
	const m0_request *req; /* the request in flight, for log lines */
	const char *head;
	int streaming; /* the body goes to the Go stream once committed */
	size_t buffer_limit;
	size_t gather_limit; /* see m0_request */
	int64_t gather_until; /* CLOCK_MONOTONIC ns; 0: no limit */
	int head_set;  /* start_response was called */
	int committed; /* body data was produced: the head is final */
	int head_sent; /* the head went to the Go stream */
	int client_gone;
	int body_failed; /* the request body could not be read to its end */
	char *scratch;
	size_t scratch_cap;
} m0_thread;

/* Interpreter (interp.c). Errors come back as malloc'd text. */
char *m0_init(const char *app_dir, const char *site_dirs, const char *home,
              const char *executable);
char *m0_adopt(const char *app_dir, const char *site_dirs);
const char *m0_static_prefix(void);
const char *m0_library_path(void);
int m0_finalize(void);
m0_app *m0_app_load(const char *target, int factory, const char *root_path,
                    const char *server_name, int server_port,
                    const char *url_scheme, const char *server_software,
                    int multithread, int multiprocess, m0_load_result *result);
void m0_app_free(m0_app *app);

/* The log and exception text (log.c), which calls no other C file. */
/* m0_copy_text is a malloc'd copy of s (NULL when malloc fails). */
char *m0_copy_text(const char *s);
char *m0_format_exception(void);
/* m0_fetch_exception clears the raised exception and returns it (NULL:
 * none); m0_restore_exception raises it again, taking the reference. */
PyObject *m0_fetch_exception(void);
void m0_restore_exception(PyObject *exc);
void m0_log(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* m0_log_error is m0_log at the error level (the server's --log-level). */
void m0_log_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
void m0_log_exception(const char *context);
void m0_print_exception(void);
extern int m0_log_inline_tracebacks;

/* The failure policy WSGI and ASGI share (failure.c). */
int m0_request_line(char *dst, size_t cap, const char *head, const m0_request *req);
void m0_log_request_exception(const char *line, int len, const char *context);
void m0_response_failed(m0_response *r, int quiet, int head_sent);

/* Handler threads (thread.c). */
m0_thread *m0_thread_new(int id);
void m0_thread_release(m0_thread *t);
void m0_thread_acquire(m0_thread *t);
void m0_thread_free(m0_thread *t);

/* The header-name cache (header_keys.c). */
enum { M0_KEY_HTTP, M0_KEY_CONTENT_TYPE, M0_KEY_CONTENT_LENGTH, M0_KEY_DROP };
typedef struct {
	char *name;
	uint32_t len;
	uint8_t kind, cookie, secret; /* secret: the value cache skips it */
	PyObject *key;                /* HTTP_*, interned */
	PyObject *last_value;         /* the value cache */
} m0_header_key;
void m0_header_keys_init(void);
m0_header_key *m0_header_key_lookup(const char *name, size_t n, m0_header_key *spare);

/* Keys, environ (environ.c). */
int m0_environ_init(void);

/* Shared by the environ and the ASGI scope (values.c). */
int m0_values_init(void);
/* m0_interned names a str a file keeps for life, interned at its init. */
typedef struct {
	PyObject **slot;
	const char *text;
} m0_interned;
/* m0_intern_all fills every slot still NULL: 0, or -1 with an error. */
int m0_intern_all(const m0_interned *names, size_t n);
#define M0_INTERN_ALL(names) m0_intern_all(names, sizeof names / sizeof names[0])
/* m0_method_value returns the method as a str: one shared object for the
 * common methods (a new reference either way). */
PyObject *m0_method_value(const char *p, size_t n);
/* m0_hex_value returns a hex digit's value, or -1 for any other byte. */
int m0_hex_value(char c);
/* m0_percent_decode decodes each %XX of p[0:n] into out (room for n
 * bytes) and returns the length written; a '%' not followed by two hex
 * digits is kept as it is. PATH_INFO and the scope's path both use it. */
size_t m0_percent_decode(const char *p, size_t n, char *out);

/* m0_set_steal stores value under key and drops the caller's reference;
 * a NULL value (a failed constructor) fails the store. */
static inline int m0_set_steal(PyObject *d, PyObject *key, PyObject *value)
{
	if (value == NULL)
		return -1;
	int rc = PyDict_SetItem(d, key, value);
	Py_DECREF(value);
	return rc;
}
PyObject *m0_environ_template(const char *root_path, const char *server_name,
                              int server_port, const char *url_scheme,
                              const char *server_software, int multithread,
                              int multiprocess);
PyObject *m0_environ_build(m0_thread *t, m0_app *app, const m0_request *req,
                           const char *head, const m0_field *fields,
                           const char *remote);

/* wsgi.input (input.c). */
int m0_input_ready(void);
m0_input *m0_input_new(m0_thread *t);
int m0_input_reuse(m0_thread *t, const m0_request *req);
void m0_input_detach(m0_input *in);
int m0_input_trailers(m0_input *in, PyObject *env);
extern PyTypeObject m0_InputType;

/* start_response and write (start_response.c). */
int m0_start_response_ready(void);
m0_start_response *m0_start_response_new(m0_thread *t);
PyObject *m0_write_new(m0_thread *t);
void m0_callable_detach(PyObject *start_response_or_write);
int m0_field_check(const unsigned char *name, Py_ssize_t nn,
                   const unsigned char *value, Py_ssize_t vn);
int m0_hop_by_hop_field(m0_response *r, const unsigned char *name, Py_ssize_t nn,
                        const unsigned char *value, Py_ssize_t vn);

/* wsgi.file_wrapper (file_wrapper.c). */
int m0_file_wrapper_ready(void);
int m0_file_response(m0_thread *t, PyObject *result);
extern PyTypeObject m0_FileWrapperType;

/* The body's way out (body.c). m0_emit returns -1 with an exception set,
 * -2 when the client is gone; m0_stream and m0_send_head 0, or -2. */
int m0_emit(m0_thread *t, PyObject *chunk);
int m0_stream(m0_thread *t, int op, char *p, size_t n);
int m0_send_head(m0_thread *t);

/* The call itself (wsgi.c). */
int m0_wsgi_ready(void);

/* Modes of m0_wsgi_serve: the whole request, or a part for benchmarks. */
enum { M0_SERVE_FULL = 0, M0_SERVE_ENVIRON = 1, M0_SERVE_CALL = 2 };
void m0_wsgi_serve(m0_thread *t, m0_app *app, const m0_request *req,
                   const char *head, const m0_field *fields,
                   const char *remote, m0_response *resp, int mode);
/* m0_wsgi_resume goes on with a M0_SUSPENDED response on a thread whose
 * request has a stream (req->stream): the head and the body gathered so
 * far go out, then the rest of the iterable, as m0_wsgi_serve streams. */
void m0_wsgi_resume(m0_thread *t, const m0_request *req, const char *head,
                    m0_response *resp);

/* The arena (arena.c). */
m0_response *m0_response_new(void);
void m0_response_free(m0_response *r);
void m0_response_reset(m0_response *r);
void m0_response_trim(m0_response *r);
/* m0_response_plain makes r a whole plain-text response of the bridge's
 * own: the reason is the body too. */
void m0_response_plain(m0_response *r, int status, const char *reason, int app_error);
int m0_arena_append(m0_response *r, const char *p, size_t n, m0_span *at);
int m0_arena_add_header(m0_response *r, const char *name, size_t nlen,
                        const char *value, size_t vlen);
int m0_arena_reserve(m0_response *r, size_t n);

/* Go callbacks (exported by callbacks.go). All run with the GIL released. */
extern long m0goBodyRead(int thread, char *dst, size_t n);
extern long m0goBodyTrailers(int thread, char *dst, size_t n);
extern int m0goStream(int thread, int op, char *p, size_t n);
enum { M0_STREAM_HEAD = 1, M0_STREAM_WRITE = 2 };
/* The server's logger (log.go): one line, without its newline. */
extern void m0goLog(char *line, int n, int error);

/* tls_facts.c: the connection's TLS facts (m0_request.tls) as environ
 * entries (HTTPS, SSL_*) and as the ASGI TLS extension. */
int m0_tls_environ(PyObject *env, const char *facts, size_t n);
int m0_tls_scope(PyObject *scope, const char *facts, size_t n);

#endif
