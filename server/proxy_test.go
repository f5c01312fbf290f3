package server

import (
	"net/netip"
	"testing"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/pybridge"
)

func parseHead(t testing.TB, fields string) *http1.Request {
	t.Helper()
	var p http1.Parser
	var req http1.Request
	if _, err := p.Parse([]byte("GET / HTTP/1.1\r\nHost: x\r\n"+fields+"\r\n"), &req); err != nil {
		t.Fatalf("%q: %v", fields, err)
	}
	return &req
}

func TestProxyClient(t *testing.T) {
	trust, err := newProxyTrust("127.0.0.1, 10.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	proxy := netip.MustParseAddrPort("127.0.0.1:5000")
	stranger := netip.MustParseAddrPort("192.0.2.9:6000")
	cases := []struct {
		name   string
		peer   netip.AddrPort
		fields string
		addr   string
		port   int
		scheme pybridge.Scheme
	}{
		{"no fields", proxy, "", "127.0.0.1", 5000, pybridge.SchemeDefault},
		{"one hop", proxy, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n", "203.0.113.7", 0, pybridge.SchemeHTTPS},
		{"untrusted peer", stranger, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\nForwarded: for=1.2.3.4\r\n", "192.0.2.9", 6000, pybridge.SchemeDefault},
		{"past trusted hops", proxy, "X-Forwarded-For: 198.51.100.1, 203.0.113.7, 10.1.2.3\r\n", "203.0.113.7", 0, pybridge.SchemeDefault},
		{"two fields", proxy, "X-Forwarded-For: 198.51.100.1, 203.0.113.7\r\nX-Forwarded-For: 10.1.2.3\r\n", "203.0.113.7", 0, pybridge.SchemeDefault},
		{"all trusted: leftmost", proxy, "X-Forwarded-For: 10.9.9.9, 10.1.2.3\r\n", "10.9.9.9", 0, pybridge.SchemeDefault},
		{"proto at the client's position", proxy, "X-Forwarded-For: 203.0.113.7, 10.1.2.3\r\nX-Forwarded-Proto: https, http\r\n", "203.0.113.7", 0, pybridge.SchemeHTTPS},
		{"one proto for two hops", proxy, "X-Forwarded-For: 203.0.113.7, 10.1.2.3\r\nX-Forwarded-Proto: https\r\n", "203.0.113.7", 0, pybridge.SchemeHTTPS},
		{"proto alone", proxy, "X-Forwarded-Proto: https\r\n", "127.0.0.1", 5000, pybridge.SchemeHTTPS},
		{"proto unknown", proxy, "X-Forwarded-Proto: gopher\r\n", "127.0.0.1", 5000, pybridge.SchemeDefault},
		{"hop with port", proxy, "X-Forwarded-For: 203.0.113.7:4711\r\n", "203.0.113.7", 4711, pybridge.SchemeDefault},
		{"mapped v4", proxy, "X-Forwarded-For: ::ffff:203.0.113.7\r\n", "203.0.113.7", 0, pybridge.SchemeDefault},
		// A hop that is not an address is never the client: the nearest
		// address before it is.
		{"obfuscated", proxy, "X-Forwarded-For: unknown\r\n", "127.0.0.1", 5000, pybridge.SchemeDefault},
		{"junk", proxy, "X-Forwarded-For: a\"b\\c\r\n", "127.0.0.1", 5000, pybridge.SchemeDefault},
		{"script past a trusted hop", proxy, "X-Forwarded-For: <script>, 10.1.2.3\r\n", "10.1.2.3", 0, pybridge.SchemeDefault},
		// nginx's $proxy_add_x_forwarded_for passes a client's Forwarded
		// through: under x-forwarded it is not read.
		{"forwarded ignored", proxy, "X-Forwarded-For: 203.0.113.7\r\nForwarded: for=1.2.3.4;proto=https\r\n", "203.0.113.7", 0, pybridge.SchemeDefault},
		{"forwarded alone ignored", proxy, "Forwarded: for=1.2.3.4;proto=https\r\n", "127.0.0.1", 5000, pybridge.SchemeDefault},
	}
	forwardedCases := []struct {
		name   string
		fields string
		addr   string
		port   int
		scheme pybridge.Scheme
	}{
		{"forwarded", "Forwarded: for=192.0.2.60;proto=https;by=203.0.113.43\r\n", "192.0.2.60", 0, pybridge.SchemeHTTPS},
		{"forwarded v6 quoted", "Forwarded: For=\"[2001:db8:cafe::17]:4711\";Proto=http\r\n", "2001:db8:cafe::17", 4711, pybridge.SchemeHTTP},
		{"forwarded chain", "Forwarded: for=198.51.100.1, for=203.0.113.7;proto=https, for=10.1.2.3;proto=http\r\n", "203.0.113.7", 0, pybridge.SchemeHTTPS},
		{"x-forwarded ignored", "X-Forwarded-For: 198.51.100.1\r\nX-Forwarded-Proto: https\r\nForwarded: for=203.0.113.7\r\n", "203.0.113.7", 0, pybridge.SchemeDefault},
		{"x-forwarded alone ignored", "X-Forwarded-For: 198.51.100.1\r\nX-Forwarded-Proto: https\r\n", "127.0.0.1", 5000, pybridge.SchemeDefault},
		{"forwarded without for", "Forwarded: proto=https\r\n", "127.0.0.1", 5000, pybridge.SchemeDefault},
		{"forwarded quoted comma", "Forwarded: for=203.0.113.7;ext=\"a,b\", for=10.1.2.3\r\n", "203.0.113.7", 0, pybridge.SchemeDefault},
		{"forwarded script", "Forwarded: for=\"<script>\";proto=https\r\n", "127.0.0.1", 5000, pybridge.SchemeHTTPS},
		{"forwarded hidden past a trusted hop", "Forwarded: for=_hidden, for=10.1.2.3\r\n", "10.1.2.3", 0, pybridge.SchemeDefault},
	}
	for _, c := range cases {
		req := parseHead(t, c.fields)
		addr, port, scheme := trust.client(nil, c.peer, &req.Header)
		if string(addr) != c.addr || port != c.port || scheme != c.scheme {
			t.Errorf("%s: got %s port %d scheme %d, want %s port %d scheme %d", c.name, addr, port, scheme, c.addr, c.port, c.scheme)
		}
	}
	trust.forwarded = true
	for _, c := range forwardedCases {
		req := parseHead(t, c.fields)
		addr, port, scheme := trust.client(nil, proxy, &req.Header)
		if string(addr) != c.addr || port != c.port || scheme != c.scheme {
			t.Errorf("%s: got %s port %d scheme %d, want %s port %d scheme %d", c.name, addr, port, scheme, c.addr, c.port, c.scheme)
		}
	}
	// Off: the fields change nothing.
	var off *proxyTrust
	req := parseHead(t, "X-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n")
	if addr, port, scheme := off.client(nil, proxy, &req.Header); string(addr) != "127.0.0.1" || port != 5000 || scheme != pybridge.SchemeDefault {
		t.Errorf("off: got %s %d %d", addr, port, scheme)
	}
}

func TestProxyTrustParse(t *testing.T) {
	all, err := newProxyTrust("*")
	if err != nil || !all.trusts(netip.MustParseAddr("8.8.8.8")) {
		t.Errorf("*: %v", err)
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "1.2.3"} {
		if _, err := newProxyTrust(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestProxyClientAllocs(t *testing.T) {
	trust, _ := newProxyTrust("127.0.0.1,10.0.0.0/8")
	req := parseHead(t, "X-Forwarded-For: 198.51.100.1, 203.0.113.7, 10.1.2.3\r\nX-Forwarded-Proto: https\r\nForwarded: for=\"[2001:db8::1]:80\";proto=https, for=10.0.0.1\r\n")
	peer := netip.MustParseAddrPort("127.0.0.1:5000")
	buf := make([]byte, 0, 64)
	for _, forwarded := range []bool{false, true} {
		trust.forwarded = forwarded
		if n := testing.AllocsPerRun(100, func() { buf, _, _ = trust.client(buf, peer, &req.Header) }); n != 0 {
			t.Errorf("forwarded %v: %v allocations per request, want 0", forwarded, n)
		}
	}
}
