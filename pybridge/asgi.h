/*
 * The C side of the ASGI executor: the scope, the _m0asgi module the
 * Python half (asgi_executor.py) calls, and the per-request state the Go
 * side names by slot. Everything here runs on the executor's thread with
 * the GIL held, but m0_wakefd_* and m0_asgi_unavailable, which touch no
 * Python object.
 */
#ifndef M0_ASGI_H
#define M0_ASGI_H

#include "shim.h"

/* Slots are process-wide: the Go side's table has the same bound. */
#define M0_ASGI_MAX_SLOTS 65536
#define M0_ASGI_MAX_EXECUTORS 64

/* One request in flight. resp is the job's arena until the job is
 * complete (then NULL: the server may reuse the job while the task still
 * runs, a background task for one). */
typedef struct {
	int id, executor;
	m0_response *resp;
	m0_response *trailers; /* trailer fields, made at first use, kept */
	PyObject *request;     /* the Python Request */
	PyObject *held;        /* the bytes a queued write reads from */
	int64_t body_left;     /* request body not yet delivered; -1 unknown */
	uint32_t buffer_limit;
	uint8_t has_body, writer, head_sent, client_gone, body_failed,
	    want_trailers, writing;
	int line_len;
	char line[232]; /* "METHOD target" for log lines */
} m0_asgi_slot;

/* One executor: the app, its scope template and the Python Executor. */
typedef struct {
	int id;
	m0_app *app;
	PyObject *executor;
	PyObject *scope; /* the template copied per request */
	PyObject *state; /* the lifespan state, copied into each scope */
	PyObject *request_class; /* the Python half's Request */
	PyObject *app_callable;  /* Executor.app: the app, ASGI 2 wrapped */
	PyObject *loop;          /* the executor's event loop */
	int direct_tasks;        /* no task factory: asyncio.Task itself */
} m0_asgi;

/* Per-app scope (asgi_scope.c). */
int m0_asgi_scope_init(void);
PyObject *m0_asgi_scope_template(m0_app *app, const char *server_name,
                                 int server_port, const char *scheme);
PyObject *m0_asgi_scope_build(m0_asgi *ex, const m0_request *req,
                              const char *head, const m0_field *fields,
                              const char *remote);

/* The response head and trailers through the C API (asgi_head.c). */
int m0_asgi_read_head(m0_response *r, PyObject *status, PyObject *headers);
int m0_asgi_read_fields(m0_response *r, PyObject *headers, const char *what);
void m0_asgi_plain(m0_response *r, int status, const char *reason, int app_error);

/* The request object receive and send are bound to (asgi_request.c). */
int m0_asgi_request_init(PyObject *module);
PyObject *m0_asgi_request_new(PyTypeObject *type, PyObject *executor, m0_asgi_slot *slot);
PyObject *m0_asgi_request_message(PyObject *body, int more);
int m0_asgi_send_whole(m0_asgi_slot *s, PyObject *body);
int m0_asgi_request_responded(PyObject *request);
int m0_asgi_request_end(PyObject *request);

/* The coroutine a request's task runs (asgi_task.c). */
int m0_asgi_task_init(void);
int m0_asgi_is_task_coro(PyObject *op);
PyObject *m0_asgi_task_coro_new(PyObject *request, PyObject *app_coroutine, m0_asgi_slot *slot);
void m0_asgi_app_raised(PyObject *request, m0_asgi_slot *slot);

/* The module and the executor (asgi_module.c, asgi_executor.c). */
int m0_asgi_module_init(void);
m0_asgi_slot *m0_asgi_slot_get(int id);
m0_asgi *m0_asgi_executor_get(int id);
void m0_asgi_complete(m0_asgi_slot *s);
void m0_asgi_log_exception(m0_asgi_slot *s, const char *context);
void m0_asgi_fail(m0_asgi_slot *s, PyObject *exc, const char *context);
void m0_asgi_cancel(m0_asgi_slot *s);
int m0_asgi_release(m0_asgi_slot *s);

m0_asgi *m0_asgi_new(int id, m0_app *app, const char *source,
                     const char *loop, const char *lifespan,
                     const char *server_name, int server_port,
                     const char *scheme, double cancel_timeout, int wake_fd,
                     char **err);
char *m0_asgi_run(m0_asgi *ex);
void m0_asgi_free(m0_asgi *ex);
void m0_asgi_spawn(m0_asgi *ex, int slot, const m0_request *req,
                   const char *head, const m0_field *fields,
                   const char *remote, m0_response *resp, int writer);
void m0_asgi_resume_read(int slot, const char *p, long n);
void m0_asgi_resume_write(int slot, int rc);
void m0_asgi_client_gone(int slot);
void m0_asgi_input_ended(int slot);
void m0_asgi_unavailable(m0_response *r);

/* The wake descriptor: an eventfd where there is one, else a pipe. */
int m0_wakefd_new(int *read_fd, int *write_fd);
void m0_wakefd_signal(int write_fd);
void m0_wakefd_drain(int read_fd);
void m0_wakefd_close(int read_fd, int write_fd);

/* Go callbacks (asgi_callbacks.go), made with the GIL held: none blocks. */
extern int m0goASGIWake(int executor);
extern void m0goASGIStarted(int executor, char *err, char *loop);
extern void m0goASGIComplete(int slot);
extern void m0goASGIRead(int slot);
extern void m0goASGIWrite(int slot, int head, char *p, size_t n, int trailers);
extern void m0goASGIRelease(int slot);

#endif
