package tlsrec

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/youmark/pkcs8"
)

// Settings are uvicorn's --ssl-* flags (and Granian's
// --ssl-protocol-min), as given.
type Settings struct {
	CertFile    string // PEM: the certificate, then its chain
	KeyFile     string // PEM; empty: the key is in CertFile
	KeyPassword string // for an encrypted key (PKCS#8 or legacy PEM)
	CAFile      string // PEM: the CAs client certificates must chain to
	CertReqs    int    // 0: no client certificate, 1: optional, 2: required
	Ciphers     string // TLS 1.2 suites, OpenSSL's names, ':'-separated
	MinVersion  string // "tls1.2" (default) or "tls1.3"
	// NextProtos are the ALPN protocols offered, in the server's order
	// of preference; nil: "http/1.1" alone.
	NextProtos []string
}

// Error is a setting that cannot be used; Flag names it.
type Error struct {
	Flag string // without the dashes: "ssl-keyfile"
	Err  error
}

func (e *Error) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Server holds what every connection shares: the tls.Config, and the
// certificate, which Reload swaps under it (new handshakes take the new
// one through GetCertificate; open connections carry on).
type Server struct {
	settings Settings
	config   *tls.Config
	cert     atomic.Pointer[certificate]
}

type certificate struct {
	tls.Certificate
	pem string // the leaf in PEM, for the ASGI TLS extension's server_cert
}

// NewServer checks the settings and loads the certificate.
func NewServer(s Settings) (*Server, error) {
	srv := &Server{settings: s}
	cert, err := loadCertificate(s)
	if err != nil {
		return nil, err
	}
	srv.cert.Store(cert)
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: s.NextProtos,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return &srv.cert.Load().Certificate, nil
		},
		// The loop seals a pass's whole output at once: full-size records
		// cost fewer seals, and the send is one write whatever their size.
		DynamicRecordSizingDisabled: true,
	}
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{"http/1.1"}
	}
	switch strings.ToLower(s.MinVersion) {
	case "", "tls1.2":
	case "tls1.3":
		cfg.MinVersion = tls.VersionTLS13
	default:
		return nil, &Error{"ssl-protocol-min", fmt.Errorf("%q: want tls1.2 or tls1.3", s.MinVersion)}
	}
	suites, err := cipherSuites(s.Ciphers)
	if err != nil {
		return nil, &Error{"ssl-ciphers", err}
	}
	cfg.CipherSuites = suites
	switch s.CertReqs {
	case 0:
		cfg.ClientAuth = tls.NoClientCert
	case 1:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case 2:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, &Error{"ssl-cert-reqs", fmt.Errorf("%d: want 0 (none), 1 (optional) or 2 (required)", s.CertReqs)}
	}
	if cfg.ClientAuth != tls.NoClientCert {
		cfg.VerifyConnection = checkClientChain
	}
	if s.CertReqs != 0 && s.CAFile == "" {
		return nil, &Error{"ssl-cert-reqs", errors.New("client certificates need --ssl-ca-certs to verify them")}
	}
	if s.CAFile != "" {
		pool, err := loadCAs(s.CAFile)
		if err != nil {
			return nil, &Error{"ssl-ca-certs", err}
		}
		cfg.ClientCAs = pool
		if s.CertReqs == 0 {
			// uvicorn's CERT_NONE: the CAs are loaded, no certificate asked.
			cfg.ClientAuth = tls.NoClientCert
		}
	}
	srv.config = cfg
	return srv, nil
}

// Config is the tls.Config every connection uses (read only).
func (s *Server) Config() *tls.Config { return s.config }

// Reload reads the certificate and key again. On an error the certificate
// in use stays: new connections keep getting it.
func (s *Server) Reload() error {
	cert, err := loadCertificate(s.settings)
	if err != nil {
		return err
	}
	s.cert.Store(cert)
	return nil
}

// CertificatePEM is the server's certificate in use, in PEM.
func (s *Server) CertificatePEM() string { return s.cert.Load().pem }

func loadCertificate(s Settings) (*certificate, error) {
	if s.CertFile == "" {
		return nil, &Error{"ssl-certfile", errors.New("required for TLS")}
	}
	certPEM, err := os.ReadFile(s.CertFile)
	if err != nil {
		return nil, &Error{"ssl-certfile", err}
	}
	keyFlag, keyPEM := "ssl-keyfile", certPEM
	if s.KeyFile != "" {
		if keyPEM, err = os.ReadFile(s.KeyFile); err != nil {
			return nil, &Error{"ssl-keyfile", err}
		}
	} else {
		keyFlag = "ssl-certfile"
	}
	keyDER, err := privateKeyPEM(keyPEM, s.KeyPassword)
	if err != nil {
		if errors.Is(err, errPassword) {
			return nil, &Error{"ssl-keyfile-password", err}
		}
		return nil, &Error{keyFlag, err}
	}
	pair, err := tls.X509KeyPair(certPEM, keyDER)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return nil, &Error{keyFlag, fmt.Errorf("the key does not match the certificate in %s", s.CertFile)}
		}
		return nil, &Error{"ssl-certfile", err}
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, &Error{"ssl-certfile", err}
		}
		pair.Leaf = leaf
	}
	return &certificate{Certificate: pair, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}))}, nil
}

var errPassword = errors.New("wrong password for the key, or none given for an encrypted key")

// privateKeyPEM finds the private key block and returns it as an
// unencrypted PEM block tls.X509KeyPair takes.
func privateKeyPEM(data []byte, password string) ([]byte, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM private key found")
		}
		switch {
		case block.Type == "ENCRYPTED PRIVATE KEY":
			if password == "" {
				return nil, errPassword
			}
			key, err := pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(password))
			if err != nil {
				return nil, fmt.Errorf("%w (%v)", errPassword, err)
			}
			der, err := x509.MarshalPKCS8PrivateKey(key)
			if err != nil {
				return nil, err
			}
			return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
		case strings.HasSuffix(block.Type, "PRIVATE KEY"):
			//lint:ignore SA1019 legacy encrypted PEM ("Proc-Type: 4,ENCRYPTED") is what `openssl rsa -aes256` writes
			if x509.IsEncryptedPEMBlock(block) {
				if password == "" {
					return nil, errPassword
				}
				//lint:ignore SA1019 as above: no other decoder for this format
				der, err := x509.DecryptPEMBlock(block, []byte(password))
				if err != nil || !parsesAsKey(der) {
					// A wrong password passes the format's padding check
					// about once in 256 and yields bytes that are no key.
					return nil, errPassword
				}
				return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
			}
			return pem.EncodeToMemory(block), nil
		}
	}
}

// parsesAsKey reports whether der is a private key in one of the forms a
// legacy encrypted PEM block holds (PKCS #1, SEC 1, PKCS #8).
func parsesAsKey(der []byte) bool {
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return true
	}
	if _, err := x509.ParseECPrivateKey(der); err == nil {
		return true
	}
	_, err := x509.ParsePKCS8PrivateKey(der)
	return err == nil
}

func loadCAs(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}
