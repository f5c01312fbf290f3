package http1

import "testing"

// An Assembler's request is what a parsed head of the same parts would
// be, and a part that could not have been parsed as one is refused.
func TestAssembler(t *testing.T) {
	var a Assembler
	var r Request
	a.Start(&r, "POST", "/a%20b?x=1")
	a.Field("host", "example.com:8443")
	a.Field("content-length", "3")
	a.Field("expect", "100-continue")
	a.FieldBytes("cookie", []byte("a=1; b=2"))
	if err := a.Finish(Version20); err != nil {
		t.Fatal(err)
	}
	if string(r.Bytes(r.Method)) != "POST" || string(r.Bytes(r.Path)) != "/a%20b" || string(r.Bytes(r.Query)) != "x=1" ||
		r.Version != Version20 || r.ContentLength != 3 || !r.Expect100 || r.Form != FormOrigin {
		t.Fatalf("built %+v", r)
	}
	if string(r.Header.Known(HeaderHost)) != "example.com:8443" || string(r.Header.Get("Cookie")) != "a=1; b=2" {
		t.Fatalf("fields %q %q", r.Header.Known(HeaderHost), r.Header.Get("cookie"))
	}
	a.Start(&r, "OPTIONS", "*")
	a.Field("host", "a")
	if err := a.Finish(Version20); err != nil || r.Form != FormAsterisk {
		t.Fatalf("OPTIONS *: %v %v", err, r.Form)
	}

	for name, tc := range map[string]struct {
		method, target string
		fields         []string
		want           *Error
	}{
		"method with a space":   {"GET /", "/", []string{"host", "a"}, errMethod},
		"method with CR LF":     {"GET\r\nx", "/", []string{"host", "a"}, errMethod},
		"empty method":          {"", "/", []string{"host", "a"}, errMethod},
		"target with CR LF":     {"GET", "/\r\nx: y", []string{"host", "a"}, errTarget},
		"target with a space":   {"GET", "/ HTTP/1.1", []string{"host", "a"}, errTarget},
		"absolute-form":         {"GET", "http://a/", []string{"host", "a"}, errTarget},
		"asterisk outside":      {"GET", "*", []string{"host", "a"}, errAsterisk},
		"name with LF":          {"GET", "/", []string{"host", "a", "x\ny", "1"}, errFieldName},
		"value with CR LF":      {"GET", "/", []string{"host", "a", "x", "1\r\ny: 2"}, errControlInField},
		"value with NUL":        {"GET", "/", []string{"host", "a", "x", "1\x00"}, errControlInField},
		"two lengths":           {"POST", "/", []string{"host", "a", "content-length", "1", "content-length", "2"}, errContentLengths},
		"two hosts":             {"GET", "/", []string{"host", "a", "host", "b"}, errManyHosts},
		"host with userinfo":    {"GET", "/", []string{"host", "u@a"}, errHost},
		"no host":               {"GET", "/", nil, errNoHost},
		"unknown expectation":   {"POST", "/", []string{"host", "a", "expect", "x"}, errExpectation},
		"transfer-encoding, CL": {"POST", "/", []string{"host", "a", "content-length", "1", "transfer-encoding", "chunked"}, errTEAndCL},
	} {
		a.Start(&r, tc.method, tc.target)
		for i := 0; i+1 < len(tc.fields); i += 2 {
			a.Field(tc.fields[i], tc.fields[i+1])
		}
		if err := a.Finish(Version20); err != tc.want {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}

	a.Limits.MaxFields = 2
	a.Start(&r, "GET", "/")
	a.Field("host", "a")
	a.Field("x", "1")
	a.Field("y", "2")
	if err := a.Finish(Version20); err != errTooManyFields {
		t.Fatalf("a field past MaxFields: %v", err)
	}
}

// The assembler allocates nothing once its buffers have grown.
func TestAssemblerAllocs(t *testing.T) {
	var a Assembler
	var r Request
	build := func() {
		a.Start(&r, "GET", "/static/app.js?v=1")
		a.Field("host", "example.com")
		a.Field("user-agent", "Mozilla/5.0")
		a.FieldBytes("cookie", []byte("a=1; b=2"))
		if err := a.Finish(Version20); err != nil {
			t.Fatal(err)
		}
	}
	build()
	if n := testing.AllocsPerRun(100, build); n != 0 {
		t.Fatalf("%v allocations a request", n)
	}
}
