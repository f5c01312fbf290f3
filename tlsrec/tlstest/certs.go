// Package tlstest makes certificates for tests: a CA, and server and
// client certificates it signs, written as PEM files.
package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	Pool    *x509.CertPool
	File    string // the CA certificate's PEM file
	dir     string
	serial  int64
}

// NewCA makes a CA whose files go in t.TempDir().
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"m0serve tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{Cert: cert, Key: key, dir: t.TempDir(), serial: 1}
	ca.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	ca.Pool = x509.NewCertPool()
	ca.Pool.AddCert(cert)
	ca.File = ca.write(t, name+"-ca.pem", ca.CertPEM)
	return ca
}

// KeyKind is the key a certificate is issued for.
type KeyKind int

const (
	ECDSA KeyKind = iota // P-256
	RSA                  // 2048 bits
)

// Issued is a certificate the CA signed, with its files.
type Issued struct {
	Cert     *x509.Certificate
	Key      crypto.Signer
	CertPEM  []byte // the certificate
	KeyPEM   []byte // PKCS#8, unencrypted
	CertFile string
	KeyFile  string
	Pair     tls.Certificate
}

// Server issues a server certificate for localhost, 127.0.0.1 and ::1.
func (ca *CA) Server(t testing.TB, kind KeyKind) *Issued {
	return ca.issue(t, "localhost", kind, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate with common name cn.
func (ca *CA) Client(t testing.TB, cn string) *Issued {
	return ca.issue(t, cn, ECDSA, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(t testing.TB, cn string, kind KeyKind, usage x509.ExtKeyUsage) *Issued {
	t.Helper()
	var key crypto.Signer
	var err error
	if kind == RSA {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"m0serve tests"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issued{Key: key}
	is.Cert, _ = x509.ParseCertificate(der)
	is.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	is.KeyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	ca.serial++
	is.CertFile = ca.write(t, cn+"-"+big.NewInt(ca.serial).String()+".crt", is.CertPEM)
	is.KeyFile = ca.write(t, cn+"-"+big.NewInt(ca.serial).String()+".key", is.KeyPEM)
	is.Pair, err = tls.X509KeyPair(is.CertPEM, is.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func (ca *CA) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// EncryptedKeyFile writes is's key as a legacy encrypted PEM block
// (what `openssl rsa -aes256` writes) under password, and returns its path.
func (ca *CA) EncryptedKeyFile(t testing.TB, is *Issued, password string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(is.Key)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the legacy format is what a test needs to write
	block, err := x509.EncryptPEMBlock(rand.Reader, "PRIVATE KEY", der, []byte(password), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	ca.serial++
	return ca.write(t, "encrypted-"+big.NewInt(ca.serial).String()+".key", pem.EncodeToMemory(block))
}

// Padding makes n self-signed certificates of about 920 bytes (DER) each,
// which a client may send after its own to make a long chain that plays
// no part in the chain's verification.
func Padding(t testing.TB, n int) [][]byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(1000 + i)),
			Subject:      pkix.Name{CommonName: "padding", OrganizationalUnit: []string{strings.Repeat("p", 300)}},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
		}
		if out[i], err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
