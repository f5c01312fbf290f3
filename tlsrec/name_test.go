package tlsrec

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
)

// The subject reads last RDN first, as RFC 4514 and mod_ssl write it, with
// its escapes, multi-valued RDNs (in DER's order: a SET OF sorts them) and
// unnamed attributes. `openssl req -subj /CN=alice/O=Org/C=DE/emailAddress=a@b.example`
// reads "emailAddress=a@b.example,C=DE,O=Org,CN=alice" under -nameopt RFC2253.
func TestDistinguishedName(t *testing.T) {
	attribute := func(oid asn1.ObjectIdentifier, value any) pkix.AttributeTypeAndValue {
		return pkix.AttributeTypeAndValue{Type: oid, Value: value}
	}
	subject := pkix.RDNSequence{
		{attribute(asn1.ObjectIdentifier{2, 5, 4, 3}, " alice")},
		{attribute(asn1.ObjectIdentifier{2, 5, 4, 10}, "Org, Inc")},
		{attribute(asn1.ObjectIdentifier{2, 5, 4, 6}, "DE")},
		{attribute(asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, "u1"),
			attribute(asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, "d")},
		{attribute(asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, "a@b.example")},
		{attribute(asn1.ObjectIdentifier{2, 5, 4, 65}, "p")},
	}
	raw, err := asn1.Marshal(subject)
	if err != nil {
		t.Fatal(err)
	}
	got, err := distinguishedName(raw)
	want := `2.5.4.65=#130170,emailAddress=a@b.example,DC=d+UID=u1,C=DE,O=Org\, Inc,CN=\ alice`
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	if _, err := distinguishedName(raw[:len(raw)-1]); err == nil {
		t.Fatal("a cut subject was read")
	}
}
