/*
 * The response arena: one growable byte buffer and one growable span array
 * per job, in C memory, so the Go side reads the response without any
 * Python object or Go pointer crossing. Reused across requests: a reset
 * keeps the capacity.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

m0_response *m0_response_new(void)
{
	m0_response *r = calloc(1, sizeof *r);
	if (r != NULL) {
		r->file_fd = -1;
		m0_response_reset(r);
	}
	return r;
}

void m0_response_free(m0_response *r)
{
	if (r == NULL)
		return;
	m0_response_reset(r);
	free(r->buf);
	free(r->headers);
	free(r);
}

void m0_response_reset(m0_response *r)
{
	r->len = 0;
	r->nheaders = 0;
	r->status = 0;
	r->outcome = 0;
	r->app_error = 0;
	r->reason.start = r->reason.end = 0;
	r->body.start = r->body.end = 0;
	r->content_length = -1;
	/* A file the Go side did not take is closed here, not leaked. */
	if (r->file_fd >= 0)
		close(r->file_fd);
	r->file_fd = -1;
	r->file_offset = r->file_length = 0;
	r->close = 0;
	r->dropped.start = r->dropped.end = 0;
}

/* m0_response_trim gives back a buffer one large response grew, so a pooled
 * arena does not hold megabytes for the small responses after it. */
void m0_response_trim(m0_response *r)
{
	enum { KEEP = 1 << 20 };
	if (r->cap > KEEP && r->len == 0) {
		free(r->buf);
		r->buf = NULL;
		r->cap = 0;
	}
}

int m0_arena_reserve(m0_response *r, size_t n)
{
	if (r->cap - r->len >= n)
		return 0;
	/* Spans are 32-bit: a response body of 4 GiB or more must stream. */
	if (r->len + n > UINT32_MAX)
		return -1;
	size_t cap = r->cap ? r->cap : 1024;
	while (cap - r->len < n)
		cap *= 2;
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	char *buf = realloc(r->buf, cap);
	if (buf == NULL)
		return -1;
	r->buf = buf;
	r->cap = cap;
	return 0;
}

int m0_arena_append(m0_response *r, const char *p, size_t n, m0_span *at)
{
	if (m0_arena_reserve(r, n) < 0)
		return -1;
	if (n > 0)
		memcpy(r->buf + r->len, p, n);
	if (at != NULL) {
		at->start = (uint32_t)r->len;
		at->end = (uint32_t)(r->len + n);
	}
	r->len += n;
	return 0;
}

int m0_arena_add_header(m0_response *r, const char *name, size_t nlen,
                        const char *value, size_t vlen)
{
	if (r->nheaders * 2 + 2 > r->headers_cap) {
		uint32_t cap = r->headers_cap ? r->headers_cap * 2 : 32;
		m0_span *h = realloc(r->headers, cap * sizeof *h);
		if (h == NULL)
			return -1;
		r->headers = h;
		r->headers_cap = cap;
	}
	m0_span *pair = r->headers + 2 * r->nheaders;
	if (m0_arena_append(r, name, nlen, &pair[0]) < 0 ||
	    m0_arena_append(r, value, vlen, &pair[1]) < 0)
		return -1;
	r->nheaders++;
	return 0;
}

/* m0_response_plain replaces whatever head was set with a plain-text
 * answer of the bridge's own: 500 for an app's failure, 503 for a request
 * the shutdown cancelled. */
void m0_response_plain(m0_response *r, int status, const char *reason, int app_error)
{
	char body[64];
	size_t rn = strlen(reason);
	if (rn > sizeof body - 2)
		rn = sizeof body - 2;
	memcpy(body, reason, rn);
	body[rn] = '\n';
	m0_response_reset(r);
	r->status = status;
	r->app_error = app_error;
	m0_arena_append(r, reason, rn, &r->reason);
	m0_arena_add_header(r, "Content-Type", 12, "text/plain; charset=utf-8", 25);
	m0_arena_append(r, body, rn + 1, &r->body);
	r->content_length = (int64_t)(rn + 1);
	r->outcome = M0_COMPLETE;
}
