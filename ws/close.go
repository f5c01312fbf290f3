package ws

import "unicode/utf8"

// CloseCode is a status code of a Close frame, RFC 6455 §7.4.
type CloseCode uint16

const (
	CloseNormal          CloseCode = 1000
	CloseGoingAway       CloseCode = 1001
	CloseProtocolError   CloseCode = 1002
	CloseUnsupportedData CloseCode = 1003
	CloseNoStatus        CloseCode = 1005 // reported, never sent: the close had no code
	CloseAbnormal        CloseCode = 1006 // reported, never sent: the transport died
	CloseInvalidPayload  CloseCode = 1007
	ClosePolicyViolation CloseCode = 1008
	CloseMessageTooBig   CloseCode = 1009
	CloseMandatoryExt    CloseCode = 1010
	CloseInternalError   CloseCode = 1011
	CloseServiceRestart  CloseCode = 1012
	CloseTryAgainLater   CloseCode = 1013
	CloseBadGateway      CloseCode = 1014
	CloseTLSHandshake    CloseCode = 1015 // reported, never sent
)

// MaxCloseReason is the longest close reason: a control payload of 125
// bytes less the 2-byte code (§5.5.1).
const MaxCloseReason = MaxControlPayload - 2

// ValidOnWire reports whether a peer may send code in a Close frame
// (§7.4.1, §7.4.2, and the IANA registry): 1000-1003, 1007-1014 and
// 3000-4999. 1004 is reserved, 1005, 1006 and 1015 are never sent, and
// the rest of 0-2999 is reserved for the protocol.
func (c CloseCode) ValidOnWire() bool {
	switch {
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014:
		return true
	case c >= 3000 && c <= 4999:
		return true
	}
	return false
}

// ParseClose reads the payload of a Close frame (§5.5.1): an empty payload
// is CloseNoStatus; otherwise a code valid on the wire followed by a UTF-8
// reason. reason aliases payload. A one-byte payload or a code not valid
// on the wire is ErrCloseCode (1002); a reason that is not UTF-8 is
// ErrCloseReason (1007).
func ParseClose(payload []byte) (code CloseCode, reason []byte, err error) {
	switch {
	case len(payload) == 0:
		return CloseNoStatus, nil, nil
	case len(payload) == 1:
		return 0, nil, ErrCloseCode
	case len(payload) > MaxControlPayload:
		return 0, nil, ErrControlTooLong
	}
	code = CloseCode(payload[0])<<8 | CloseCode(payload[1])
	if !code.ValidOnWire() {
		return 0, nil, ErrCloseCode
	}
	reason = payload[2:]
	if !utf8.Valid(reason) {
		return 0, nil, ErrCloseReason
	}
	return code, reason, nil
}

// AppendClosePayload appends the payload of a Close frame for code and
// reason to dst. A code that may not be sent (1005, 1006, 1015, or any
// other not valid on the wire) gives an empty payload, which the peer reads
// as 1005. The reason is cut to MaxCloseReason bytes at a UTF-8 boundary,
// and dropped if it is not valid UTF-8.
func AppendClosePayload(dst []byte, code CloseCode, reason string) []byte {
	if !code.ValidOnWire() {
		return dst
	}
	dst = append(dst, byte(code>>8), byte(code))
	if !utf8.ValidString(reason) {
		return dst
	}
	if len(reason) > MaxCloseReason {
		cut := MaxCloseReason
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut]
	}
	return append(dst, reason...)
}

// AppendClose appends a whole server Close frame for code and reason to
// dst (see AppendClosePayload for what is sent).
func AppendClose(dst []byte, code CloseCode, reason string) []byte {
	n := 0
	if code.ValidOnWire() {
		n = 2
		if utf8.ValidString(reason) {
			n += min(len(reason), MaxCloseReason)
		}
	}
	at := len(dst)
	dst = AppendHeader(dst, OpClose, true, false, int64(n))
	start := len(dst)
	dst = AppendClosePayload(dst, code, reason)
	if got := len(dst) - start; got != n {
		// The reason was cut back to a rune boundary: rewrite the length.
		dst[at+1] = byte(got)
	}
	return dst
}
