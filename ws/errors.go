package ws

// Error is a failed connection (§7.1.7): the close code the server sends
// before it closes, and a short reason for the log and the close frame.
// Every decoding error is one of the variables below, so returning one
// allocates nothing.
type Error struct {
	Code   CloseCode
	Reason string
}

func (e *Error) Error() string { return "websocket: " + e.Reason }

var (
	ErrReservedBits          = &Error{CloseProtocolError, "reserved bits set"}
	ErrReservedOpcode        = &Error{CloseProtocolError, "reserved opcode"}
	ErrUnmasked              = &Error{CloseProtocolError, "client frame not masked"}
	ErrControlTooLong        = &Error{CloseProtocolError, "control frame payload over 125 bytes"}
	ErrControlFragmented     = &Error{CloseProtocolError, "fragmented control frame"}
	ErrLengthMSB             = &Error{CloseProtocolError, "payload length has its most significant bit set"}
	ErrContinuationExpected  = &Error{CloseProtocolError, "new data frame inside a fragmented message"}
	ErrContinuationNoMessage = &Error{CloseProtocolError, "continuation frame with no message to continue"}
	ErrCloseCode             = &Error{CloseProtocolError, "invalid close code"}
	ErrCloseReason           = &Error{CloseInvalidPayload, "close reason is not valid UTF-8"}
	ErrInvalidUTF8           = &Error{CloseInvalidPayload, "text message is not valid UTF-8"}
	ErrMessageTooBig         = &Error{CloseMessageTooBig, "message over the size limit"}
	ErrInflate               = &Error{CloseInvalidPayload, "compressed message does not inflate"}
)
