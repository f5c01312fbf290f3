// Package http1 parses HTTP/1.1 requests and encodes responses, per
// RFC 9110 (semantics) and RFC 9112 (message syntax).
//
// It is pure Go: no syscalls, no goroutines, and no allocation per request
// in steady state. A parsed request is a set of spans (offsets) into the
// caller's buffer; nothing is copied. Rejections carry the status the
// server should answer with and always mean the connection must close.
package http1
