package server

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAccessFormatCommon(t *testing.T) {
	f, err := compileAccessFormat(DefaultAccessLogFormat)
	if err != nil {
		t.Fatal(err)
	}
	req := parseHead(t, "User-Agent: curl/8\r\n")
	line := string(f.append(nil, &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200, sent: 13}))
	want := regexp.MustCompile(`^192\.0\.2\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET / HTTP/1\.1" 200 13\n$`)
	if !want.MatchString(line) {
		t.Errorf("got %q", line)
	}
	line = string(f.append(nil, &accessEntry{status: 400}))
	if !strings.HasPrefix(line, "- - - [") || !strings.HasSuffix(line, `] "-" 400 -`+"\n") {
		t.Errorf("unparsed head: got %q", line)
	}
}

func TestAccessFormatAtoms(t *testing.T) {
	t.Setenv("M0_TEST_REGION", "eu")
	f, err := compileAccessFormat(`%(m)s %(U)s %(q)s %(H)s %(B)s "%(f)s" "%(a)s" %(D)s %(M)s %(T)s %(L)s %(p)s ` +
		`%({x-request-id}i)s %({content-type}o)s %({missing}o)s %({M0_TEST_REGION}e)s 100%%`)
	if err != nil {
		t.Fatal(err)
	}
	req := parseHead(t, "Referer: http://a/\"x\r\nUser-Agent: ua\r\nX-Request-Id: r1\r\n")
	// The app's response fields ({name}o) are the end-to-end test's.
	line := string(f.append(nil, &accessEntry{remote: []byte("h"), req: req, status: 204, duration: 1500 * time.Millisecond}))
	want := `GET / - HTTP/1.1 0 "http://a/\x22x" "ua" 1500000 1500 1 1.500000 ` + strconv.Itoa(os.Getpid()) + ` r1 - - eu 100%` + "\n"
	if line != want {
		t.Errorf("got  %q\nwant %q", line, want)
	}
	for _, bad := range []string{"%(z)s", "%(h", "%d", "%({x}q)s"} {
		if _, err := compileAccessFormat(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestAccessFormatAllocs: a line in the common format, and one with
// fields and a duration, cost no allocation once the buffer has grown.
func TestAccessFormatAllocs(t *testing.T) {
	for _, format := range []string{DefaultAccessLogFormat, `%(h)s "%(r)s" %(s)s %(D)s "%(a)s" %({x-request-id}i)s`} {
		f, err := compileAccessFormat(format)
		if err != nil {
			t.Fatal(err)
		}
		req := parseHead(t, "User-Agent: ua\r\nX-Request-Id: r1\r\n")
		e := &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200, sent: 13}
		buf := make([]byte, 0, 256)
		if n := testing.AllocsPerRun(100, func() { buf = f.append(buf[:0], e) }); n != 0 {
			t.Errorf("%q: %v allocations per line", format, n)
		}
	}
}

// BenchmarkAccessLogLine is the access log's cost per request: the line
// in the common format, and its write (to /dev/null).
func BenchmarkAccessLogLine(b *testing.B) {
	f, _ := compileAccessFormat(DefaultAccessLogFormat)
	req := parseHead(b, "User-Agent: ua\r\n")
	e := &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200, sent: 13}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	fd := int(null.Fd())
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = f.append(buf[:0], e)
		unix.Write(fd, buf)
	}
}

func BenchmarkAccessLogAppend(b *testing.B) {
	f, _ := compileAccessFormat(DefaultAccessLogFormat)
	req := parseHead(b, "User-Agent: ua\r\n")
	e := &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200, sent: 13}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = f.append(buf[:0], e)
	}
}
