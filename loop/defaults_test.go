package loop

import (
	"strings"
	"testing"

	"github.com/m0serve/m0serve/http1"
)

// ownHeaders sets Server, Date and one of the default names itself.
var ownHeaders = HandlerFunc(func(_ *Request, w *ResponseWriter) {
	w.AddHeader("server", "app/1")
	w.AddHeader("Date", "Thu, 01 Jan 2026 00:00:00 GMT")
	w.AddHeader("X-FRAME-OPTIONS", "SAMEORIGIN")
	w.Respond(200, []byte("own"))
})

func withDefaults(cfg *Config) {
	cfg.Headers = []http1.FieldLine{
		{Name: []byte("X-Frame-Options"), Value: []byte("DENY")},
		{Name: []byte("X-Extra"), Value: []byte("1")},
	}
}

// A handler's Server, Date and default-named fields replace the loop's;
// the others are added after the handler's, to its error answers too.
func TestDefaultFields(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler Handler
		request string
		want    []string
		not     []string
	}{
		{"plain", plainHello, "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
			[]string{"Server: test\r\n", "Date: ", "X-Frame-Options: DENY\r\n", "X-Extra: 1\r\n"}, nil},
		{"own", ownHeaders, "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
			[]string{"server: app/1\r\n", "Date: Thu, 01 Jan 2026", "X-FRAME-OPTIONS: SAMEORIGIN\r\n", "X-Extra: 1\r\n"},
			[]string{"Server: test", "DENY", "Date: Fri"}},
		{"error", plainHello, "GET / HTTP/1.1\r\n\r\n",
			[]string{"400", "Server: test\r\n", "X-Frame-Options: DENY\r\n", "X-Extra: 1\r\n"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := newHarness(t, c.handler, withDefaults)
			conn := hs.connect()
			hs.fb.write(conn, c.request)
			got := hs.responses(conn, 1)[0]
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestNoDateNoServer(t *testing.T) {
	hs := newHarness(t, plainHello, func(cfg *Config) { cfg.Server, cfg.NoDate = nil, true })
	conn := hs.connect()
	hs.fb.write(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(conn, 1)[0]; strings.Contains(got, "Server:") || strings.Contains(got, "Date:") {
		t.Errorf("Server or Date sent:\n%s", got)
	}
}

func TestDefaultFieldsRefused(t *testing.T) {
	for _, name := range []string{"Content-Length", "connection", "Date", "Server", "Upgrade", "bad name"} {
		_, err := New(Config{
			NewBackend: func() (Backend, error) { return nil, nil },
			Handler:    plainHello,
			Headers:    []http1.FieldLine{{Name: []byte(name), Value: []byte("v")}},
		})
		if err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// Marking the handler's names and adding the defaults allocates nothing.
func TestDefaultFieldsAllocateNothing(t *testing.T) {
	hs := newHarness(t, ownHeaders, withDefaults)
	names := [][]byte{[]byte("Content-Type"), []byte("server"), []byte("X-Extra")}
	dst := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(1000, func() {
		var set uint64
		for _, name := range names {
			set |= fieldBit(hs.l, name)
		}
		var server []byte
		dst, server, _ = hs.l.appendDefaults(dst[:0], set)
		if server != nil {
			t.Fatal("the handler's Server was not seen")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations, want 0", allocs)
	}
	if string(dst) != "X-Frame-Options: DENY\r\n" {
		t.Errorf("appended %q", dst)
	}
}

// BenchmarkAppendDefaults: marking a typical app's field names and
// adding the defaults, per response.
func BenchmarkAppendDefaults(b *testing.B) {
	for _, c := range []struct {
		name      string
		configure func(*Config)
	}{{"none", nil}, {"two-headers", withDefaults}} {
		b.Run(c.name, func(b *testing.B) {
			hs := newHarness(b, plainHello, c.configure)
			names := [][]byte{[]byte("Content-Type"), []byte("Content-Length"), []byte("Set-Cookie")}
			dst := make([]byte, 0, 1024)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var set uint64
				for _, name := range names {
					set |= fieldBit(hs.l, name)
				}
				dst, _, _ = hs.l.appendDefaults(dst[:0], set)
			}
		})
	}
}
