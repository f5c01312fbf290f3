package server

import (
	"fmt"
	"strings"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
)

// The fields every static response carries besides its own: the seed's
// (--static-header, --static-cache-control), and two it always sends. A
// file served as the type its name says is not to be sniffed into
// another (nosniff); an SVG can hold scripts, and opened on its own it
// runs them with the site's origin unless a policy sandboxes it.

// StaticSVGPolicy is the Content-Security-Policy of a static SVG response.
const StaticSVGPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; sandbox"

// staticExtraFields parses --static-header ("Name: value", repeatable),
// with X-Content-Type-Options: nosniff first unless one of them names
// that field (it replaces it).
func staticExtraFields(headers []string) ([][2]string, error) {
	fields := [][2]string{{"X-Content-Type-Options", "nosniff"}}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || !http1.ValidFieldName([]byte(name)):
			return nil, &ConfigError{Flag: "static-header", Reason: fmt.Sprintf("%q: want 'Name: value'", h)}
		case !http1.ValidFieldValue([]byte(value)):
			return nil, &ConfigError{Flag: "static-header", Reason: fmt.Sprintf("%q: the value holds a control character", h)}
		case http1.FramingField([]byte(name)):
			return nil, &ConfigError{Flag: "static-header", Reason: fmt.Sprintf("%q: %s frames the message; the server writes it", h, name)}
		}
		if strings.EqualFold(name, "x-content-type-options") {
			fields = fields[1:]
		}
		fields = append(fields, [2]string{name, value})
	}
	return fields, nil
}

// staticExtras are the fields a staticFiles adds (set before the loop
// starts).
type staticExtras struct {
	fields       [][2]string
	cacheControl string // replaces max-age when set
	ownPolicy    bool   // a --static-header sets Content-Security-Policy
}

func (s *staticFiles) setExtras(cfg *Config) error {
	fields, err := staticExtraFields(cfg.StaticHeaders)
	if err != nil {
		return err
	}
	s.extras.fields, s.extras.cacheControl = fields, cfg.StaticCacheControl
	for _, f := range fields {
		s.extras.ownPolicy = s.extras.ownPolicy || strings.EqualFold(f[0], "content-security-policy")
	}
	return nil
}

// addExtras sets the extra fields on a response, first of its fields.
func (s *staticFiles) addExtras(j *loop.Job) {
	for _, f := range s.extras.fields {
		j.SetHeader(f[0], f[1])
	}
}

// cacheFields sets Cache-Control, and an SVG's policy.
func (s *staticFiles) cacheFields(j *loop.Job, kind string) {
	switch {
	case s.extras.cacheControl != "":
		j.SetHeader("Cache-Control", s.extras.cacheControl)
	case s.expires > 0:
		j.SetHeader("Cache-Control", fmt.Sprintf("max-age=%d", int(s.expires.Seconds())))
	}
	if !s.extras.ownPolicy && strings.HasPrefix(kind, "image/svg+xml") {
		j.SetHeader("Content-Security-Policy", StaticSVGPolicy)
	}
}
