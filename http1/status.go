package http1

import "strconv"

// Reason phrases from the IANA "HTTP Status Code Registry" as of RFC 9110
// (§15), which obsoleted the earlier registrations. Two entries follow the
// registry rather than folklore: 306 and 418 are registered "(Unused)"
// (RFC 9110 §15.4.7, §15.5.19), and 510 drops the registry's
// "(OBSOLETED)" annotation, which is a note, not a phrase.
var statusTexts = map[int]string{
	100: "Continue",
	101: "Switching Protocols",
	102: "Processing",
	103: "Early Hints",

	200: "OK",
	201: "Created",
	202: "Accepted",
	203: "Non-Authoritative Information",
	204: "No Content",
	205: "Reset Content",
	206: "Partial Content",
	207: "Multi-Status",
	208: "Already Reported",
	226: "IM Used",

	300: "Multiple Choices",
	301: "Moved Permanently",
	302: "Found",
	303: "See Other",
	304: "Not Modified",
	305: "Use Proxy",
	306: "(Unused)",
	307: "Temporary Redirect",
	308: "Permanent Redirect",

	400: "Bad Request",
	401: "Unauthorized",
	402: "Payment Required",
	403: "Forbidden",
	404: "Not Found",
	405: "Method Not Allowed",
	406: "Not Acceptable",
	407: "Proxy Authentication Required",
	408: "Request Timeout",
	409: "Conflict",
	410: "Gone",
	411: "Length Required",
	412: "Precondition Failed",
	413: "Content Too Large",
	414: "URI Too Long",
	415: "Unsupported Media Type",
	416: "Range Not Satisfiable",
	417: "Expectation Failed",
	418: "(Unused)",
	421: "Misdirected Request",
	422: "Unprocessable Content",
	423: "Locked",
	424: "Failed Dependency",
	425: "Too Early",
	426: "Upgrade Required",
	428: "Precondition Required",
	429: "Too Many Requests",
	431: "Request Header Fields Too Large",
	451: "Unavailable For Legal Reasons",

	500: "Internal Server Error",
	501: "Not Implemented",
	502: "Bad Gateway",
	503: "Service Unavailable",
	504: "Gateway Timeout",
	505: "HTTP Version Not Supported",
	506: "Variant Also Negotiates",
	507: "Insufficient Storage",
	508: "Loop Detected",
	510: "Not Extended",
	511: "Network Authentication Required",
}

// The registry only holds codes 100-599 (RFC 9110 §15: the first digit is
// the class, and only five classes are defined), so the table of
// precomputed lines covers that range; a registered code's line is one
// append of a string.
const (
	statusTableFirst = 100
	statusTableLast  = 599
)

var (
	reasonByCode [statusTableLast - statusTableFirst + 1]string
	statusLines  [statusTableLast - statusTableFirst + 1]string
)

func init() {
	for code, text := range statusTexts {
		reasonByCode[code-statusTableFirst] = text
		statusLines[code-statusTableFirst] = "HTTP/1.1 " + strconv.Itoa(code) + " " + text + "\r\n"
	}
}

// StatusText returns the registered reason phrase for code, or "" if code
// is not registered.
func StatusText(code int) string {
	if code < statusTableFirst || code > statusTableLast {
		return ""
	}
	return reasonByCode[code-statusTableFirst]
}

// ValidStatus reports whether code can be sent: a three-digit status code
// (RFC 9110 §15, RFC 9112 §4), registered or not.
func ValidStatus(code int) bool { return code >= 100 && code <= 999 }

// sentStatus is the status a response is written with: an invalid code
// is a server-side bug, and the client is told so rather than sent a
// status line it cannot parse.
func sentStatus(code int) int {
	if !ValidStatus(code) {
		return 500
	}
	return code
}

// AppendStatusLine appends "HTTP/1.1 <code> <reason>\r\n" to dst. The
// response is always labelled HTTP/1.1, whatever the request's minor
// version (RFC 9112 §2.3). An unregistered code in 100-999 gets an empty
// reason phrase; the space before it stays, as the grammar requires
// (RFC 9112 §4). A code outside 100-999 is written as 500: check it with
// ValidStatus first where that is not what you want.
func AppendStatusLine(dst []byte, status int) []byte {
	status = sentStatus(status)
	if status <= statusTableLast {
		if line := statusLines[status-statusTableFirst]; line != "" {
			return append(dst, line...)
		}
	}
	dst = appendStatusCode(dst, status)
	return append(dst, ' ', '\r', '\n')
}

// AppendStatusLineReason appends a status line carrying the application's
// own reason phrase (WSGI hands one over with the code). The phrase may be
// empty; it must be HTAB, SP, VCHAR or obs-text (RFC 9112 §4). On an
// invalid phrase or status code nothing is appended and the error says
// why.
func AppendStatusLineReason(dst []byte, status int, reason []byte) ([]byte, error) {
	if !ValidStatus(status) {
		return dst, errStatusCode
	}
	for i := scanControl(reason, 0); i < len(reason); i = scanControl(reason, i+1) {
		if reason[i] != '\t' {
			return dst, errReasonPhrase
		}
	}
	dst = appendStatusCode(dst, status)
	dst = append(dst, ' ')
	dst = append(dst, reason...)
	return append(dst, '\r', '\n'), nil
}

// appendStatusCode appends "HTTP/1.1 " and a code known to be 100-999.
func appendStatusCode(dst []byte, status int) []byte {
	return append(dst, 'H', 'T', 'T', 'P', '/', '1', '.', '1', ' ',
		byte('0'+status/100), byte('0'+status/10%10), byte('0'+status%10))
}

var (
	errStatusCode   = &Error{Status: 500, Reason: "http1: status code outside 100-999"}
	errReasonPhrase = &Error{Status: 500, Reason: "http1: reason phrase holds a control character"}
)
