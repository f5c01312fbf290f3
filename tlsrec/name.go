package tlsrec

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
)

// attributeNames are the short names RFC 4514 §3 lists, and the ones
// OpenSSL's -nameopt RFC2253 prints beside them (emailAddress,
// serialNumber), by object identifier.
var attributeNames = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.5":                    "serialNumber",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "STREET",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"0.9.2342.19200300.100.1.1":  "UID",
	"0.9.2342.19200300.100.1.25": "DC",
	"1.2.840.113549.1.9.1":       "emailAddress",
}

// distinguishedName is a certificate's raw subject as RFC 4514 writes it:
// the last RDN first (the certificate's own order reversed, as mod_ssl's
// SSL_CLIENT_S_DN and `openssl x509 -nameopt RFC2253` give it, not Go's
// pkix.Name.String, which puts the fields in a fixed order). An attribute
// without a short name, or whose value is not a string, is its object
// identifier and the value's DER in hex (§2.4).
func distinguishedName(raw []byte) (string, error) {
	var sequence pkix.RDNSequence
	if rest, err := asn1.Unmarshal(raw, &sequence); err != nil {
		return "", fmt.Errorf("the subject: %w", err)
	} else if len(rest) > 0 {
		return "", fmt.Errorf("the subject: %d bytes after it", len(rest))
	}
	var b strings.Builder
	for i := len(sequence) - 1; i >= 0; i-- {
		if i < len(sequence)-1 {
			b.WriteByte(',')
		}
		for j, attribute := range sequence[i] {
			if j > 0 {
				b.WriteByte('+') // a multi-valued RDN (§2.2)
			}
			oid := attribute.Type.String()
			name, known := attributeNames[oid]
			value, text := attribute.Value.(string)
			if !known || !text {
				der, err := asn1.Marshal(attribute.Value)
				if err != nil {
					return "", fmt.Errorf("the subject's %s: %w", oid, err)
				}
				b.WriteString(oid + "=#" + hex.EncodeToString(der))
				continue
			}
			b.WriteString(name)
			b.WriteByte('=')
			writeEscaped(&b, value)
		}
	}
	return b.String(), nil
}

// writeEscaped writes an attribute value with RFC 4514 §2.4's escapes: a
// backslash before the special characters, a leading space or '#', and a
// trailing space; NUL as \00.
func writeEscaped(b *strings.Builder, value string) {
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c == 0:
			b.WriteString(`\00`)
			continue
		case strings.IndexByte(`"+,;<>\`, c) >= 0,
			i == 0 && (c == ' ' || c == '#'),
			i == len(value)-1 && c == ' ':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}
