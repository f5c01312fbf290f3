package tlsrec

import (
	"crypto/tls"
	"fmt"
)

// MaxClientChain bounds, in bytes, a client's certificates and the chain
// verified from them, together. The session ticket that resumes the
// connection carries both (crypto/tls's SessionState), and a ticket holds
// 64 KiB at most (RFC 8446 §4.6.1, RFC 5077 §3.3); past that crypto/tls
// fails the handshake after the client's Finished, with no alert. Such a
// chain is refused with bad_certificate instead, before the Finished is
// read. (A Certificate message past 256 KiB never gets here: crypto/tls
// answers it with internal_error.)
const MaxClientChain = 60 << 10

// checkClientChain is the tls.Config's VerifyConnection while client
// certificates are asked for: it counts what the ticket would hold, each
// certificate with its length prefixes.
func checkClientChain(cs tls.ConnectionState) error {
	n := 0
	for _, c := range cs.PeerCertificates {
		n += len(c.Raw) + 5 // uint24 length, uint16 extensions
	}
	for _, chain := range cs.VerifiedChains {
		n += 3
		if len(chain) > 0 {
			for _, c := range chain[1:] { // the leaf is not repeated
				n += len(c.Raw) + 3
			}
		}
	}
	if n > MaxClientChain {
		return fmt.Errorf("tlsrec: the client's certificate chain comes to %d bytes with its verified path, over %d", n, MaxClientChain)
	}
	return nil
}
