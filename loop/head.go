package loop

import "github.com/m0serve/m0serve/http1"

// The fields of the loop's own plain-text error responses. A 405 also
// lists the methods its target allows (RFC 9110 §15.5.6): a tunnel's
// authority, the only target the loop answers 405 for, allows none.
var (
	errorFields            = []byte("Content-Type: text/plain; charset=utf-8\r\n")
	methodNotAllowedFields = []byte("Allow: \r\nContent-Type: text/plain; charset=utf-8\r\n")
)

// appendHead appends a response head to the connection's send buffer and
// counts the response: the status line, the handler's fields (fieldsSet:
// their fieldBits), the Config's default fields the handler did not set,
// and the framing fields for a body of contentLength bytes (-1: unknown).
// req is the request answered, nil for the loop's own error responses;
// close says the connection closes after this response. It returns how
// the body that follows is framed.
func (l *Loop) appendHead(s *slot, req *http1.Request, status int, fields []byte, fieldsSet uint64,
	contentLength int64, close bool) http1.BodyMode {
	head := http1.ResponseHead{
		Status:        status,
		Version:       http1.Version11,
		ContentLength: contentLength,
		Close:         close,
	}
	if req != nil {
		head.Version = req.Version
		head.KeepAlive10 = !close && req.Version == http1.Version10
		head.HeadRequest = req.MethodIs("HEAD")
	}
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	s.send = http1.AppendStatusLine(s.send, status)
	l.cfg.Stats.response(status)
	s.send = append(s.send, fields...)
	var date *http1.DateCache
	s.send, head.Server, date = l.appendDefaults(s.send, fieldsSet)
	var mode http1.BodyMode
	s.send, mode = http1.AppendFraming(s.send, &head, date)
	return mode
}
