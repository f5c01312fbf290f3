package tlsrec

import (
	"crypto/tls"
	"fmt"
	"sort"
	"strings"
)

// openSSLSuites maps OpenSSL's names of the TLS 1.2 suites Go offers
// (tls.CipherSuites: none of the insecure ones) to Go's identifiers.
// TLS 1.3's suites are not configurable in Go, nor in uvicorn's
// --ssl-ciphers (OpenSSL's set_ciphers is TLS 1.2 only).
var openSSLSuites = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
}

// openSSLName is the reverse, for SSL_CIPHER; TLS 1.3's suites have the
// same name in both (TLS_AES_128_GCM_SHA256).
var openSSLName = func() map[uint16]string {
	m := make(map[uint16]string, len(openSSLSuites))
	for name, id := range openSSLSuites {
		m[id] = name
	}
	return m
}()

// cipherSuites parses --ssl-ciphers: OpenSSL's names (or Go's), separated
// by ':'. Empty, DEFAULT and uvicorn's old default TLSv1 keep Go's choice.
func cipherSuites(list string) ([]uint16, error) {
	switch strings.TrimSpace(list) {
	case "", "DEFAULT", "TLSv1":
		return nil, nil
	}
	goNames := make(map[string]uint16)
	for _, s := range tls.CipherSuites() {
		goNames[s.Name] = s.ID
	}
	var ids []uint16
	for _, name := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		id, ok := openSSLSuites[name]
		if !ok {
			id, ok = goNames[name]
		}
		if !ok {
			known := make([]string, 0, len(openSSLSuites))
			for n := range openSSLSuites {
				known = append(known, n)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("%q is not a TLS 1.2 suite this server offers (OpenSSL's names: %s)", name, strings.Join(known, ":"))
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// CipherName is a suite's name as mod_ssl's SSL_CIPHER gives it.
func CipherName(id uint16) string {
	if name, ok := openSSLName[id]; ok {
		return name
	}
	return tls.CipherSuiteName(id)
}
