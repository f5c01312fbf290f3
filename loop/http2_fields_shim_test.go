package loop

import (
	"github.com/m0serve/m0serve/http1"
	"golang.org/x/net/http2/hpack"
)

func benchStreamFields(l *Loop, w *ResponseWriter, head *http1.ResponseHead) ([]hpack.HeaderField, http1.BodyMode) {
	return l.streamFields(w.fields, w.spans, w.fieldsSet, head)
}
