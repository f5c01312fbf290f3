/*
 * The C side of the ASGI executor: the scope, the _m0asgi module, and one
 * object per request in flight that owns the request's whole protocol.
 * Everything here runs on the executor's thread with the GIL held, but
 * m0_wakefd_* and m0_asgi_unavailable, which touch no Python object.
 */
#ifndef M0_ASGI_H
#define M0_ASGI_H

#include "shim.h"

/* Slots are process-wide: the bound of the Go side's table (asgi_slot.go),
 * the one table of requests in flight. */
#define M0_ASGI_MAX_SLOTS 65536
#define M0_ASGI_MAX_EXECUTORS 64
/* Apps one executor serves (--mount): each job names its own. */
#define M0_ASGI_MAX_APPS 64

/* One app of an executor's: its scope template, lifespan state and
 * callable. */
typedef struct {
	m0_app *app;
	PyObject *scope;    /* the template copied per request */
	PyObject *state;    /* the lifespan state, copied into each scope */
	PyObject *callable; /* Executor.apps[i]: the app, ASGI 2 wrapped */
} m0_asgi_app;

/* One executor: its apps, their event loop and the Python Executor. */
typedef struct {
	int id;
	int napps;
	m0_asgi_app apps[M0_ASGI_MAX_APPS];
	PyObject *executor;
	PyObject *loop;         /* the executor's event loop */
	int direct_tasks;       /* no task factory: asyncio.Task itself */
	PyObject *step;         /* Executor.step, while a loop thread drives it */
	PyObject *ready;        /* then the loop's queue of ready callbacks */
	PyObject *eager;        /* before 3.12: the eager first step (asgi_eager.c) */
} m0_asgi;

typedef struct m0_asgi_conn m0_asgi_conn;

/* A send that waits for the write ahead of it (two tasks sending at
 * once): its message, kept until its turn. */
typedef struct {
	PyObject *future;
	PyObject *body;        /* bytes, or NULL */
	m0_response *trailers; /* an HTTP write's trailers, or NULL */
	int8_t message;        /* -1 an HTTP write; 0 a text, 1 a binary WebSocket message */
} m0_asgi_queued_write;

/* What a connection type does with the shared plumbing's events: an
 * HTTP request (asgi_request.c) or a WebSocket (asgi_websocket.c). */
typedef struct {
	/* read: a body read came back (n bytes at p; 0 the end; -1 failed). */
	void (*read)(m0_asgi_conn *c, const char *p, long n);
	/* written: the writes handed out have all gone out (after the task's
	 * end too: a close may wait for them). */
	void (*written)(m0_asgi_conn *c);
	/* gone: the client left; waiting receives end. */
	void (*gone)(m0_asgi_conn *c);
	/* input_ended: the client sends no more (a half-close) but may still
	 * read: receives past the body end, sends go on (RFC 9112 §9.6). */
	void (*input_ended)(m0_asgi_conn *c);
	/* end: the task is over; later calls touch nothing. 0 or -1. */
	int (*end)(m0_asgi_conn *c);
	/* responded: the app completed its response. */
	int (*responded)(m0_asgi_conn *c);
} m0_asgi_kind;

/* m0_asgi_conn is the plumbing every ASGI connection type shares, the
 * first member of each: the slot the Go side names it by (the Go slot
 * holds a reference, in_slot, until the task has ended and no read or
 * write is out: settle, asgi_conn.c), the job's arena, the futures
 * receives and sends wait on, the one write and the one read that may be
 * out, the writes queued behind it, and the log line. */
struct m0_asgi_conn {
	PyObject_HEAD
	const m0_asgi_kind *kind;
	int id;
	/* the job's arena until the response is final (then NULL: the
	 * server may reuse the job while the task still runs) */
	m0_response *resp;
	PyObject *loop;       /* where futures come from */
	PyObject *held;       /* the bytes a queued write reads from */
	PyObject *write_done; /* the future of the send waiting on the write */
	PyObject *waiters;    /* futures of waiting receives, oldest first */
	/* writes behind the one out, in call order (made at first use) */
	m0_asgi_queued_write *queue;
	uint32_t queue_head, queue_len, queue_cap;
	/* reading, writing: a read or write is out on the Go side;
	 * handing_back: the response is final and the job goes back once
	 * neither is; ended: the task is over; in_slot: the Go slot holds
	 * the connection (and a reference) until settle frees it. */
	uint8_t writer, head_sent, reading, writing, handing_back, client_gone, read_failed,
	    input_ended, closed, ended, in_slot;
	uint8_t app_failed; /* the app raised (a WebSocket closes with 1011) */
	int line_len;
	char line[232]; /* "METHOD target" for log lines */
};

/* Per-app scope (asgi_scope.c). */
int m0_asgi_scope_init(void);
PyObject *m0_asgi_scope_template(m0_app *app, const char *server_name,
                                 int server_port, const char *scheme);
PyObject *m0_asgi_scope_build(const m0_asgi_app *app, const m0_request *req,
                              const char *head, const m0_field *fields,
                              const char *remote);

/* The response head and trailers through the C API (asgi_head.c). */
int m0_asgi_read_head(m0_response *r, PyObject *status, PyObject *headers);
int m0_asgi_read_fields(m0_response *r, PyObject *headers, const char *what);

/* The shared plumbing (asgi_conn.c). */
extern PyObject *m0_asgi_client_disconnected; /* _m0asgi.ClientDisconnected */
extern PyObject *m0_asgi_ready_none;          /* an awaitable done with None */
int m0_asgi_conn_init(PyObject *module);
void m0_asgi_conn_start(m0_asgi_conn *c, const m0_asgi_kind *kind, m0_asgi *ex,
                        int slot, const m0_request *req, const char *head,
                        m0_response *resp, int writer);
void m0_asgi_conn_clear(m0_asgi_conn *c);
int m0_asgi_conn_traverse(m0_asgi_conn *c, visitproc visit, void *arg);
PyObject *m0_asgi_ready(PyObject *value);
PyObject *m0_asgi_wait(m0_asgi_conn *c);
int m0_asgi_deliver(m0_asgi_conn *c, PyObject *message);
int m0_asgi_deliver_all(m0_asgi_conn *c, PyObject *message);
int m0_asgi_deliver_error(m0_asgi_conn *c);
int m0_asgi_has_waiter(m0_asgi_conn *c);
void m0_asgi_read(m0_asgi_conn *c);
PyObject *m0_asgi_write(m0_asgi_conn *c, PyObject *body, m0_response *trailers);
PyObject *m0_asgi_write_message(m0_asgi_conn *c, PyObject *payload, int binary);
int m0_asgi_is_kind(PyObject *kind, PyObject *want);
PyObject *m0_asgi_get(PyObject *message, PyObject *key, PyObject *fallback);
PyObject *m0_asgi_as_bytes(PyObject *body);
int m0_asgi_live(m0_asgi_conn *c);
void m0_asgi_complete(m0_asgi_conn *c);
void m0_asgi_log_exception(m0_asgi_conn *c, const char *context);
void m0_asgi_raise_again(PyObject *exc);
void m0_asgi_fail(m0_asgi_conn *c, PyObject *exc, const char *context);
void m0_asgi_cancel(m0_asgi_conn *c);
int m0_asgi_release(m0_asgi_conn *c);

/* The HTTP request type receive and send are bound to (asgi_request.c). */
int m0_asgi_request_init(PyObject *module);
PyObject *m0_asgi_request_new(m0_asgi *ex, int slot, const m0_request *req,
                              const char *head, m0_response *resp, int writer);

/* The WebSocket type (asgi_websocket.c). */
int m0_asgi_websocket_init(void);
PyObject *m0_asgi_websocket_new(m0_asgi *ex, int slot, const m0_request *req, const char *head,
                                const m0_field *fields, m0_response *resp);
int m0_asgi_websocket_scope(PyObject *scope, PyObject *conn);
void m0_asgi_ws_message(m0_asgi_conn *c, int binary, const char *p, long n);
void m0_asgi_ws_closed(m0_asgi_conn *c, int code, const char *reason, long n);

/* The coroutine a request's task runs (asgi_task.c). */
int m0_asgi_task_init(void);
int m0_asgi_is_task_coro(PyObject *op);
PyObject *m0_asgi_task_coro_new(PyObject *request, PyObject *app_awaitable);
void m0_asgi_app_raised(PyObject *request);

/* The module (asgi_module.c), which keeps the executors by id, and the
 * executor (asgi_executor.c), which makes them. */
int m0_asgi_module_init(void);
m0_asgi *m0_asgi_executor_get(int id);
void m0_asgi_executor_set(int id, m0_asgi *ex);

m0_asgi *m0_asgi_new(int id, m0_app **apps, int napps, const char *source,
                     const char *loop, const char *lifespan,
                     const char *server_name, int server_port,
                     const char *scheme, double cancel_timeout, int wake_fd,
                     int driven, char **err);
char *m0_asgi_run(m0_asgi *ex);
int m0_asgi_enter(m0_asgi *ex);
double m0_asgi_step(m0_asgi *ex, int io, int timer_due);
void m0_asgi_leave(m0_asgi *ex);
char *m0_asgi_finish(m0_asgi *ex);
void m0_asgi_free(m0_asgi *ex);

/* asgi_eager.c: before Python 3.12, a request task's first step runs in
 * its constructor while armed, as eager_start does from 3.12. */
int m0_asgi_eager_install(m0_asgi *ex);
void m0_asgi_eager_arm(m0_asgi *ex, int armed);
void m0_asgi_eager_remove(m0_asgi *ex);
void m0_asgi_spawn(m0_asgi *ex, int app, int slot, const m0_request *req,
                   const char *head, const m0_field *fields,
                   const char *remote, m0_response *resp, int writer,
                   m0_asgi_conn **conn);
/* The Go slot's news for its connection (NULL: none, and nothing
 * happens). */
void m0_asgi_resume_read(m0_asgi_conn *c, const char *p, long n);
void m0_asgi_resume_write(m0_asgi_conn *c, int rc);
void m0_asgi_client_gone(m0_asgi_conn *c);
void m0_asgi_input_ended(m0_asgi_conn *c);
void m0_asgi_unavailable(m0_response *r);

/* The wake descriptor: an eventfd where there is one, else a pipe. */
int m0_wakefd_new(int *read_fd, int *write_fd);
void m0_wakefd_signal(int write_fd);
void m0_wakefd_drain(int read_fd);
void m0_wakefd_close(int read_fd, int write_fd);

/* Go callbacks (asgi_callbacks.go), made with the GIL held: none blocks. */
extern int m0goASGIWake(int executor, int last);
extern void m0goASGIStarted(int executor, char *err, char *loop);
extern void m0goASGIComplete(int slot); /* hand the job back */
extern void m0goASGIRead(int slot);
extern int m0goASGIWrite(int slot, int head, char *p, size_t n, m0_response *trailers);
extern void m0goASGIFree(int slot); /* the slot id may be given out again */
extern int m0goASGIWSAccept(int slot, char *protocol, size_t n, m0_response *headers);
extern int m0goASGIWSSend(int slot, int binary, char *p, size_t n);
extern void m0goASGIWSClose(int slot, int code, char *reason, size_t n);
extern void m0goASGIWSTaken(int slot);

#endif
