package tlsrec

import (
	"crypto/tls"
	"encoding/pem"
	"strconv"
)

// Facts is what an app is told of the connection's TLS, encoded once per
// connection as NUL-terminated name/value pairs for pybridge to turn into
// environ entries and the ASGI TLS extension:
//
//   - upper-case names are WSGI environ entries, mod_ssl's and nginx's:
//     HTTPS, SSL_PROTOCOL, SSL_CIPHER, and with a client certificate
//     SSL_CLIENT_CERT (PEM) and SSL_CLIENT_S_DN (RFC 4514);
//   - lower-case names are the ASGI TLS extension's keys
//     (https://asgi.readthedocs.io/en/latest/specs/tls.html): tls_version
//     and cipher_suite as decimal numbers, server_cert, client_cert_name
//     and client_cert_error as strings (empty: None), and
//     client_cert_chain once per certificate, the client's first.
//
// Valid once the handshake is done; loop thread only.
func (c *Conn) Facts() []byte {
	if c.info != nil {
		return c.info.facts
	}
	st := c.tls.ConnectionState()
	version := versionName(st.Version)
	cipher := CipherName(st.CipherSuite)
	var b []byte
	pair := func(name, value string) {
		b = append(b, name...)
		b = append(b, 0)
		b = append(b, value...)
		b = append(b, 0)
	}
	pair("HTTPS", "on")
	pair("SSL_PROTOCOL", version)
	pair("SSL_CIPHER", cipher)
	var clientName string
	if len(st.PeerCertificates) > 0 {
		leaf := st.PeerCertificates[0]
		name, err := distinguishedName(leaf.RawSubject)
		if err != nil {
			// crypto/x509 parsed this subject already: not reached.
			name = leaf.Subject.String()
		}
		clientName = name
		pair("SSL_CLIENT_CERT", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})))
		pair("SSL_CLIENT_S_DN", clientName)
		pair("SSL_CLIENT_VERIFY", "SUCCESS")
	} else {
		pair("SSL_CLIENT_VERIFY", "NONE")
	}
	pair("tls_version", strconv.Itoa(int(st.Version)))
	pair("cipher_suite", strconv.Itoa(int(st.CipherSuite)))
	pair("server_cert", c.server.CertificatePEM())
	pair("client_cert_name", clientName)
	// A certificate that fails verification fails the handshake, so an
	// app never sees one with an error.
	pair("client_cert_error", "")
	for _, cert := range st.PeerCertificates {
		pair("client_cert_chain", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})))
	}
	c.info = &Info{facts: b, Version: version, Cipher: cipher}
	return b
}

// Info is a connection's negotiated parameters, for logs and tests.
type Info struct {
	facts   []byte
	Version string // "TLSv1.3", as OpenSSL names it
	Cipher  string // as SSL_CIPHER gives it
}

func versionName(v uint16) string {
	switch v {
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return tls.VersionName(v)
}
