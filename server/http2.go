package server

import (
	"fmt"

	"github.com/m0serve/m0serve/http2"
	"github.com/m0serve/m0serve/loop"
)

// HTTP/2: the loop serves it (loop/http2.go, package http2); here
// Granian's --http auto|1|2 and the --http2-* settings become the loop's
// HTTP2Config and TLS's ALPN list.

// validateHTTP2 checks --http and the --http2-* settings against RFC
// 9113's bounds (§6.5.2).
func (c *Config) validateHTTP2() error {
	switch {
	case c.HTTP != "auto" && c.HTTP != "1" && c.HTTP != "2":
		reason := fmt.Sprintf("%q: want auto, 1 or 2", c.HTTP)
		if c.HTTP == "h11" || c.HTTP == "httptools" {
			// uvicorn's --http picks a parser; here it picks versions.
			reason += " (the HTTP versions served; m0serve has one parser of its own)"
		}
		return &ConfigError{Flag: "http", Reason: reason}
	case c.HTTP2MaxConcurrentStreams < 1 || c.HTTP2MaxConcurrentStreams > 1<<31-1:
		return &ConfigError{Flag: "http2-max-concurrent-streams", Reason: "must be between 1 and 2^31-1"}
	case c.HTTP2InitialWindowSize < 65535 || c.HTTP2InitialWindowSize > 1<<31-1:
		return &ConfigError{Flag: "http2-initial-window-size", Reason: "must be between 65535 and 2^31-1 bytes (RFC 9113 §6.9.2)"}
	case c.HTTP2MaxFrameSize < 1<<14 || c.HTTP2MaxFrameSize > 1<<24-1:
		return &ConfigError{Flag: "http2-max-frame-size", Reason: "must be between 16384 and 16777215 bytes (RFC 9113 §4.2)"}
	case c.HTTP2MaxHeaderListSize < 1024 || c.HTTP2MaxHeaderListSize > 1<<24:
		return &ConfigError{Flag: "http2-max-header-list-size", Reason: "must be between 1K and 16M bytes"}
	}
	return nil
}

// http2 is the loop's HTTP/2 configuration; nil with --http 1.
func (c *Config) http2() *loop.HTTP2Config {
	if c.HTTP == "1" {
		return nil
	}
	return &loop.HTTP2Config{
		Only: c.HTTP == "2",
		Conn: http2.Config{
			MaxConcurrentStreams: uint32(c.HTTP2MaxConcurrentStreams),
			InitialWindowSize:    uint32(c.HTTP2InitialWindowSize),
			MaxFrameSize:         uint32(c.HTTP2MaxFrameSize),
			MaxHeaderListSize:    uint32(c.HTTP2MaxHeaderListSize),
			// WebSockets over HTTP/2 (RFC 8441), wherever they are on.
			EnableConnectProtocol: c.WS != "none",
		},
	}
}

// alpn is what TLS offers by ALPN (RFC 7301): h2 first when HTTP/2 is
// on, as browsers and curl take the server's order.
func (c *Config) alpn() []string {
	switch c.HTTP {
	case "1":
		return []string{"http/1.1"}
	case "2":
		return []string{"h2"}
	}
	return []string{"h2", "http/1.1"}
}
