package server

import (
	"fmt"
	"net/netip"
	"strings"
	"unsafe"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/pybridge"
)

// proxyTrust is --proxy-headers with --forwarded-allow-ips: the peers
// whose X-Forwarded-For/-Proto (or, with --forwarded-headers forwarded,
// Forwarded) fields are believed. A nil proxyTrust believes none (the
// fields reach the app as any other).
type proxyTrust struct {
	all      bool // "*"
	prefixes []netip.Prefix
	// forwarded reads Forwarded instead of X-Forwarded-*. Only one family
	// is read: a proxy sets one and passes a client's own copy of the
	// other through untouched (nginx with $proxy_add_x_forwarded_for
	// forwards the client's Forwarded), so reading both lets the client
	// choose its address.
	forwarded bool
}

// newProxyTrust parses --forwarded-allow-ips: a comma list of addresses
// and CIDR prefixes, or "*" for every peer.
func newProxyTrust(list string) (*proxyTrust, error) {
	t := &proxyTrust{}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case item == "*":
			t.all = true
		case strings.Contains(item, "/"):
			prefix, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, &ConfigError{Flag: "forwarded-allow-ips", Reason: fmt.Sprintf("%q: not an address or CIDR prefix", item)}
			}
			if prefix.Addr().Is4In6() {
				prefix = netip.PrefixFrom(prefix.Addr().Unmap(), max(0, prefix.Bits()-96))
			}
			t.prefixes = append(t.prefixes, prefix.Masked())
		default:
			addr, err := netip.ParseAddr(item)
			if err != nil {
				return nil, &ConfigError{Flag: "forwarded-allow-ips", Reason: fmt.Sprintf("%q: not an address or CIDR prefix", item)}
			}
			addr = addr.Unmap().WithZone("")
			t.prefixes = append(t.prefixes, netip.PrefixFrom(addr, addr.BitLen()))
		}
	}
	return t, nil
}

// trusts reports whether addr is a proxy to believe.
func (t *proxyTrust) trusts(addr netip.Addr) bool {
	if t.all {
		return true
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range t.prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// client is who a request came from as the app and the access log see
// it: the peer, or, from a trusted proxy, the client the proxies name.
// client appends the address's text to addr (reused: no allocation once
// it has grown).
func (t *proxyTrust) client(addr []byte, peer netip.AddrPort, h *http1.Header) ([]byte, int, pybridge.Scheme) {
	addr = appendPeer(addr[:0], peer)
	// An unknown peer is a Unix socket's: only local processes the
	// socket file's mode admits can connect, the proxy among them.
	if t == nil || peer.IsValid() && !t.trusts(peer.Addr()) {
		return addr, int(peer.Port()), pybridge.SchemeDefault
	}
	if t.forwarded {
		return t.forwardedField(addr, peer, h)
	}
	return t.xForwarded(addr, peer, h)
}

// appendPeer appends the peer's address; a Unix socket's peer has none
// (REMOTE_ADDR is empty, the access log shows "-").
func appendPeer(b []byte, peer netip.AddrPort) []byte {
	if !peer.IsValid() {
		return b
	}
	return peer.Addr().AppendTo(b)
}

// xForwarded reads X-Forwarded-For from the right: each hop a trusted
// proxy names is passed, and the first untrusted one (or the leftmost) is
// the client; a client can prepend anything, but not past the proxy
// nearest it. A hop that is not an address ("unknown", "<script>") ends
// the walk and is never the client: the last address before it is.
// X-Forwarded-Proto's element at the position the walk ended at from the
// right gives the scheme (the leftmost when the list is shorter: one
// value set by the edge proxy).
func (t *proxyTrust) xForwarded(addr []byte, peer netip.AddrPort, h *http1.Header) ([]byte, int, pybridge.Scheme) {
	port := int(peer.Port())
	hops := fieldList{header: h, name: "x-forwarded-for"}
	position := -1
	for i := 0; ; i++ {
		hop, ok := hops.previous()
		if !ok {
			break
		}
		text, hopPort, hopAddr, isAddr := parseHop(hop)
		if text == nil {
			break
		}
		position = i
		if !isAddr {
			break
		}
		addr, port = hopAddr.AppendTo(addr[:0]), hopPort
		if !t.trusts(hopAddr) {
			break
		}
	}
	// position -1 (no X-Forwarded-For): the leftmost, the edge proxy's.
	scheme := pybridge.SchemeDefault
	protos := fieldList{header: h, name: "x-forwarded-proto"}
	for i := 0; ; i++ {
		proto, ok := protos.previous()
		if !ok {
			break
		}
		scheme = parseScheme(proto)
		if i == position {
			break
		}
	}
	return addr, port, scheme
}

// forwardedField reads RFC 7239's Forwarded the same way: elements from
// the right, for= naming the hop, proto= the scheme it was reached by. An
// obfuscated or malformed for= (§6.3) ends the walk, its proto= taken
// (the trusted proxy that wrote the element knows the scheme) but not its
// name.
func (t *proxyTrust) forwardedField(addr []byte, peer netip.AddrPort, h *http1.Header) ([]byte, int, pybridge.Scheme) {
	port := int(peer.Port())
	scheme := pybridge.SchemeDefault
	elements := fieldList{header: h, name: "forwarded"}
	for {
		element, ok := elements.previous()
		if !ok {
			break
		}
		forValue, proto := forwardedPairs(element)
		text, hopPort, hopAddr, isAddr := parseHop(forValue)
		if text == nil {
			// No for=: who sent it is unknown, so nothing past it is
			// believed.
			break
		}
		scheme = parseScheme(proto)
		if !isAddr {
			break
		}
		addr, port = hopAddr.AppendTo(addr[:0]), hopPort
		if !t.trusts(hopAddr) {
			break
		}
	}
	return addr, port, scheme
}

// forwardedPairs returns the for= and proto= values of one Forwarded
// element ("for=192.0.2.60;proto=http;by=203.0.113.43").
func forwardedPairs(element []byte) (forValue, proto []byte) {
	for len(element) > 0 {
		var pair []byte
		pair, element = cutOutsideQuotes(element, ';', false)
		name, value, ok := cutByte(pair, '=')
		if !ok {
			continue
		}
		name = trimSpace(name)
		switch {
		case http1.EqualFold(name, "for"):
			forValue = trimSpace(value)
		case http1.EqualFold(name, "proto"):
			proto = trimSpace(value)
		}
	}
	return forValue, proto
}

// parseHop reads one hop: an address, with a port or without, IPv6 in
// brackets, quoted or not ("192.0.2.60", "\"[2001:db8::1]:4711\""), or an
// obfuscated name ("unknown", "_hidden"). text is nil for an empty hop.
func parseHop(hop []byte) (text []byte, port int, addr netip.Addr, isAddr bool) {
	if len(hop) >= 2 && hop[0] == '"' && hop[len(hop)-1] == '"' {
		hop = trimSpace(hop[1 : len(hop)-1])
	}
	if len(hop) == 0 {
		return nil, 0, netip.Addr{}, false
	}
	// The bytes live as long as the call; nothing here keeps them. The
	// form is chosen before parsing: a failed parse allocates its error.
	s := unsafe.String(unsafe.SliceData(hop), len(hop))
	switch {
	case s[0] == '[':
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return hop, int(ap.Port()), ap.Addr().Unmap(), true
		}
		if s[len(s)-1] == ']' {
			if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
				return hop, 0, a.Unmap(), true
			}
		}
	case strings.Count(s, ":") == 1:
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return hop, int(ap.Port()), ap.Addr().Unmap(), true
		}
	case isHexDigit(s[0]) || s[0] == ':':
		if a, err := netip.ParseAddr(s); err == nil {
			return hop, 0, a.Unmap(), true
		}
	}
	return hop, 0, netip.Addr{}, false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func parseScheme(proto []byte) pybridge.Scheme {
	proto = trimSpace(proto)
	if len(proto) >= 2 && proto[0] == '"' && proto[len(proto)-1] == '"' {
		proto = proto[1 : len(proto)-1]
	}
	switch {
	case http1.EqualFold(proto, "https"), http1.EqualFold(proto, "wss"):
		return pybridge.SchemeHTTPS
	case http1.EqualFold(proto, "http"), http1.EqualFold(proto, "ws"):
		return pybridge.SchemeHTTP
	}
	return pybridge.SchemeDefault
}

// fieldList walks the comma-separated elements of every field named name,
// from the last element of the last field backwards: the order proxies
// appended them in, reversed.
type fieldList struct {
	header  *http1.Header
	name    string
	field   int // the field rest is from; 0 before the first call
	started bool
	rest    []byte
}

// previous returns the next element to the left, skipping empty ones.
func (l *fieldList) previous() ([]byte, bool) {
	if !l.started {
		l.started, l.field = true, l.header.Len()
	}
	for {
		for len(l.rest) == 0 {
			l.field--
			for l.field >= 0 {
				name, value := l.header.Field(l.field)
				if http1.EqualFold(name, l.name) {
					l.rest = value
					break
				}
				l.field--
			}
			if l.field < 0 {
				return nil, false
			}
		}
		var element []byte
		l.rest, element = cutOutsideQuotes(l.rest, ',', true)
		if element = trimSpace(element); len(element) > 0 {
			return element, true
		}
	}
}

// cutOutsideQuotes splits b at the first (or, fromRight, the last) sep
// not inside a quoted string: before and after it. Without one, before
// is b (or, fromRight, after is b).
func cutOutsideQuotes(b []byte, sep byte, fromRight bool) (before, after []byte) {
	quoted := false
	if fromRight {
		for i := len(b) - 1; i >= 0; i-- {
			switch {
			case b[i] == '"' && (i == 0 || b[i-1] != '\\'):
				quoted = !quoted
			case b[i] == sep && !quoted:
				return b[:i], b[i+1:]
			}
		}
		return nil, b
	}
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\' && quoted:
			i++
		case b[i] == '"':
			quoted = !quoted
		case b[i] == sep && !quoted:
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

func cutByte(b []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
