package http2

import "fmt"

// ErrCode is an error code of RST_STREAM and GOAWAY (RFC 9113 §7).
type ErrCode uint32

// The error codes of RFC 9113 §7.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{
	"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
	"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM",
	"CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
	"INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
}

func (c ErrCode) String() string {
	if int(c) < len(errCodeNames) {
		return errCodeNames[c]
	}
	return fmt.Sprintf("error code 0x%x", uint32(c))
}

// ConnError is a connection error (§5.4.1): the Conn has queued a GOAWAY
// with Code, and the connection closes once its output is sent.
type ConnError struct {
	Code   ErrCode
	Reason string
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("http2: connection error %v: %s", e.Code, e.Reason)
}

func connError(code ErrCode, reason string) *ConnError {
	return &ConnError{Code: code, Reason: reason}
}

// streamError is a stream error (§5.4.2): that stream is reset with Code
// and the connection goes on.
type streamError struct {
	stream uint32
	code   ErrCode
	reason string
}

func (e *streamError) Error() string {
	return fmt.Sprintf("http2: stream %d error %v: %s", e.stream, e.code, e.reason)
}
