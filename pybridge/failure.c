/*
 * The failure policy WSGI (wsgi.c) and ASGI (asgi_conn.c) share: an app's
 * error is logged on a line naming the request (a traceback alone does
 * not say which URL failed), and its response becomes a 500 while nothing
 * went out, an abort after. A client that left is not the app's error:
 * no traceback, an abort.
 */
#include "shim.h"

#include <stdio.h>
#include <string.h>

/* m0_request_line writes "METHOD target" (the method cut at 16 bytes, the
 * target to fit) into dst, cap bytes at least 32; its length. */
int m0_request_line(char *dst, size_t cap, const char *head, const m0_request *req)
{
	int mlen = (int)(req->method.end - req->method.start);
	int tlen = (int)(req->target.end - req->target.start);
	if (mlen > 16)
		mlen = 16;
	if (tlen > (int)cap - 18)
		tlen = (int)cap - 18;
	memcpy(dst, head + req->method.start, (size_t)mlen);
	dst[mlen] = ' ';
	memcpy(dst + mlen + 1, head + req->target.start, (size_t)tlen);
	return mlen + 1 + tlen;
}

/* m0_log_request_exception logs the raised exception (and clears it)
 * after "m0serve: <line>: <context>". */
void m0_log_request_exception(const char *line, int len, const char *context)
{
	char text[512];
	snprintf(text, sizeof text, "m0serve: %.*s: %s", len, line, context);
	m0_log_exception(text);
}

/* m0_response_failed records a failed app's outcome in r: quiet (the
 * client left, or its body broke off) an abort; else a 500 while the
 * head has not gone out, an abort marked as the app's error after. */
void m0_response_failed(m0_response *r, int quiet, int head_sent)
{
	if (quiet || head_sent) {
		r->outcome = M0_ABORTED;
		r->app_error = !quiet;
		return;
	}
	m0_response_plain(r, 500, "Internal Server Error", 1);
}
