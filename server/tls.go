package server

import (
	"errors"
	"strings"

	"github.com/m0serve/m0serve/tlsrec"
)

// TLS: the loop terminates it (loop/tls.go, package tlsrec); here the
// settings are loaded once at start, and SIGHUP reloads the certificate
// in a single process (with --workers the master's rolling reload starts
// workers that load it afresh).

// loadTLS loads the certificate, key and CAs when --ssl-certfile is set;
// a mistake is a ConfigError naming the flag.
func (c *Config) loadTLS() error {
	s := c.TLS
	if s.CertFile == "" {
		for _, set := range []struct {
			flag string
			set  bool
		}{{"ssl-keyfile", s.KeyFile != ""}, {"ssl-keyfile-password", s.KeyPassword != ""},
			{"ssl-ca-certs", s.CAFile != ""}, {"ssl-cert-reqs", s.CertReqs != 0},
			{"ssl-ciphers", s.Ciphers != ""}, {"ssl-protocol-min", s.MinVersion != "" && s.MinVersion != "tls1.2"}} {
			if set.set {
				return &ConfigError{Flag: set.flag, Reason: "needs --ssl-certfile"}
			}
		}
		return nil
	}
	s.NextProtos = c.alpn()
	srv, err := tlsrec.NewServer(s)
	if err != nil {
		var e *tlsrec.Error
		if errors.As(err, &e) {
			return &ConfigError{Flag: e.Flag, Reason: e.Err.Error()}
		}
		return &ConfigError{Flag: "ssl-certfile", Reason: err.Error()}
	}
	c.tls = srv
	return nil
}

// urlScheme is wsgi.url_scheme and the ASGI scope's scheme.
func (c *Config) urlScheme() string {
	if c.TLS.CertFile != "" {
		return "https"
	}
	return "http"
}

// reloadTLS reloads the certificate and key (SIGHUP): new connections get
// the new pair, open ones carry on; one that does not load leaves the old.
func (c *Config) reloadTLS(logf func(string, ...any)) {
	if err := c.tls.Reload(); err != nil {
		logf("m0serve: SIGHUP: the TLS certificate was not reloaded, the old one stays: %v", err)
		return
	}
	logf("m0serve: SIGHUP: TLS certificate reloaded from %s", c.TLS.CertFile)
}

// ListenerURL is where l serves, for the start line: https with TLS.
func (c *Config) ListenerURL(l *Listener) string {
	url := l.URL()
	if c.TLS.CertFile != "" {
		url = strings.Replace(url, "http://", "https://", 1)
	}
	return url
}

// CheckTLS loads the TLS settings' files again, for a master about to
// start workers that will (a rolling reload): nil when they load or TLS
// is off.
func (c *Config) CheckTLS() error {
	if c.TLS.CertFile == "" {
		return nil
	}
	_, err := tlsrec.NewServer(c.TLS)
	return err
}
