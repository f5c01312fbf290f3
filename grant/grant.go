// Package grant verifies the grants a --mount PREFIX=hold opens streams
// with, on the wire of the Mojo m0serve (its m0serve.grant):
//
//	v1.<kid>.<exp>.<channel>.<sb>.<sig>
//
// kid is the first 8 hex digits of SHA-256(key), exp unix seconds after
// which the grant is refused, channel [A-Za-z0-9_:-]{1,64}, sb the
// session binding (base64url of the first 16 bytes of SHA-256(session
// cookie value), unpadded, or "-" for none) and sig base64url(HMAC-SHA256
// (key, everything before it)), unpadded. grant.py (the wheel's
// m0serve.grant, Source here) issues them.
package grant

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
)

// The environment variables the keys come from, the application's and
// the server's alike (they share a process tree); PreviousKeyEnv lets a
// key rotate.
const (
	KeyEnv         = "M0_GRANT_KEY"
	PreviousKeyEnv = "M0_GRANT_KEY_PREV"
	// CookieEnv names the session cookie a bound grant is checked
	// against; Django's sessionid unless set.
	CookieEnv     = "M0_GRANT_COOKIE"
	DefaultCookie = "sessionid"
)

// Refusal says why a grant does not verify: the reason of the 401's
// {"error": ..., "reason": ...}. Expired is the one whose error is
// "expired"; the rest are "invalid".
type Refusal uint8

const (
	OK Refusal = iota
	NoGrant
	Malformed
	UnknownKey
	BadSignature
	Expired
	NoSessionCookie
	SessionMismatch
)

var reasons = [...]string{"ok", "no grant", "malformed", "unknown key", "bad signature", "expired", "no session cookie", "session mismatch"}

func (r Refusal) String() string { return reasons[r] }

// Body is the 401's JSON body for r, as the Mojo m0serve writes it.
func (r Refusal) Body() []byte { return bodies[r] }

var bodies = func() [][]byte {
	b := make([][]byte, len(reasons))
	for r := range reasons {
		kind := "invalid"
		if Refusal(r) == Expired {
			kind = "expired"
		}
		b[r] = []byte(`{"error":"` + kind + `","reason":"` + reasons[r] + `"}`)
	}
	return b
}()

const (
	kidLen     = 8
	sigLen     = 43 // base64url of 32 bytes, unpadded
	bindingLen = 22 // base64url of 16 bytes, unpadded
	maxChannel = 64
	// MaxLen is the longest grant there is; a longer one is malformed.
	MaxLen = len("v1.") + kidLen + 1 + 20 + 1 + maxChannel + 1 + bindingLen + 1 + sigLen
)

type key struct {
	id  [kidLen]byte
	mac hash.Hash
}

// Verifier checks grants against the current key and the previous one.
// It keeps scratch space: one goroutine at a time (the loop thread),
// and Verify allocates nothing.
type Verifier struct {
	keys []key
	sum  [sha256.Size]byte
	enc  [sigLen]byte
}

// ErrNoKey is NewVerifier's answer without a current key.
var ErrNoKey = errors.New(KeyEnv + " is not set: a hold mount verifies grants the application signed with it (32 random bytes; openssl rand -base64 32)")

// NewVerifier verifies with current and, when not empty, previous: the
// keys' bytes as their variables hold them.
func NewVerifier(current, previous string) (*Verifier, error) {
	if current == "" {
		return nil, ErrNoKey
	}
	v := &Verifier{}
	for _, k := range []string{current, previous} {
		if k == "" {
			continue
		}
		var id [kidLen]byte
		copy(id[:], KeyID([]byte(k)))
		v.keys = append(v.keys, key{id: id, mac: hmac.New(sha256.New, []byte(k))})
	}
	return v, nil
}

// KeyID is the kid of key: the first 8 hex digits of its SHA-256.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:kidLen/2])
}

// Verify checks grant at unix time now; session is the session cookie's
// value and hasSession whether the request carried one. It returns the
// grant's channel (a span of grant) or why the grant is refused, in the
// Mojo m0serve's order: its form, its key, its signature, its expiry,
// its session.
func (v *Verifier) Verify(grant []byte, now int64, session []byte, hasSession bool) ([]byte, Refusal) {
	if len(grant) == 0 {
		return nil, NoGrant
	}
	if len(grant) > MaxLen {
		return nil, Malformed
	}
	var parts [6][]byte
	n, rest := 0, grant
	for n < 5 {
		i := indexDot(rest)
		if i < 0 {
			return nil, Malformed
		}
		parts[n], rest = rest[:i], rest[i+1:]
		n++
	}
	parts[5] = rest
	version, kid, exp, channel, binding, sig := parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
	expires, ok := parseExpiry(exp)
	if string(version) != "v1" || len(kid) != kidLen || !ok || !ValidChannel(channel) ||
		!(string(binding) == "-" || (len(binding) == bindingLen && base64URL(binding))) ||
		len(sig) != sigLen || !base64URL(sig) {
		return nil, Malformed
	}
	var k *key
	for i := range v.keys {
		if string(v.keys[i].id[:]) == string(kid) {
			k = &v.keys[i]
			break
		}
	}
	if k == nil {
		return nil, UnknownKey
	}
	k.mac.Reset()
	k.mac.Write(grant[:len(grant)-sigLen-1])
	base64.RawURLEncoding.Encode(v.enc[:], k.mac.Sum(v.sum[:0]))
	if subtle.ConstantTimeCompare(v.enc[:], sig) != 1 {
		return nil, BadSignature
	}
	if now > expires {
		return nil, Expired
	}
	if string(binding) == "-" {
		return channel, OK
	}
	if !hasSession {
		return nil, NoSessionCookie
	}
	v.sum = sha256.Sum256(session)
	var want [bindingLen]byte
	base64.RawURLEncoding.Encode(want[:], v.sum[:16])
	if subtle.ConstantTimeCompare(want[:], binding) != 1 {
		return nil, SessionMismatch
	}
	return channel, OK
}

// Channel is the channel field of a grant Verify accepted.
func Channel(grant []byte) []byte {
	for n := 0; n < 3; n++ {
		grant = grant[indexDot(grant)+1:]
	}
	return grant[:indexDot(grant)]
}

// ValidChannel reports whether c is [A-Za-z0-9_:-]{1,64}, the channels a
// grant may name.
func ValidChannel(c []byte) bool {
	if len(c) == 0 || len(c) > maxChannel {
		return false
	}
	for _, b := range c {
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == ':' || b == '-') {
			return false
		}
	}
	return true
}

func indexDot(b []byte) int {
	for i, c := range b {
		if c == '.' {
			return i
		}
	}
	return -1
}

// parseExpiry reads exp's decimal digits (no sign, at most 18).
func parseExpiry(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func base64URL(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
