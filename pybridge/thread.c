/*
 * Handler threads: each has one PyThreadState for its whole life, made on
 * the OS thread that uses it (the Go side locks the goroutine to it).
 */
#include "shim.h"

#include <stdlib.h>

/* m0_thread_new returns with the GIL held by the new thread state. */
m0_thread *m0_thread_new(int id)
{
	m0_thread *t = calloc(1, sizeof *t);
	if (t == NULL)
		return NULL;
	t->id = id;
	t->tstate = PyThreadState_New(PyInterpreterState_Main());
	if (t->tstate == NULL) {
		free(t);
		return NULL;
	}
	PyEval_RestoreThread(t->tstate);
	t->input = m0_input_new(t);
	t->start_response = m0_start_response_new(t);
	t->write = m0_write_new(t);
	if (t->input == NULL || t->start_response == NULL || t->write == NULL) {
		PyErr_Clear();
		m0_thread_free(t);
		return NULL;
	}
	return t;
}

void m0_thread_release(m0_thread *t)
{
	t->tstate = PyEval_SaveThread();
}

void m0_thread_acquire(m0_thread *t)
{
	PyEval_RestoreThread(t->tstate);
}

/* m0_thread_free runs with the GIL held and ends with it released. */
void m0_thread_free(m0_thread *t)
{
	/* An app may still hold these: they must not reach a freed thread. */
	if (t->input != NULL)
		m0_input_detach(t->input);
	if (t->start_response != NULL)
		m0_callable_detach((PyObject *)t->start_response);
	if (t->write != NULL)
		m0_callable_detach(t->write);
	Py_CLEAR(t->input);
	Py_CLEAR(t->start_response);
	Py_CLEAR(t->write);
	PyThreadState_Clear(t->tstate);
	PyThreadState_DeleteCurrent();
	free(t->scratch);
	free(t);
}
