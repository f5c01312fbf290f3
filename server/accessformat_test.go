package server

import (
	"encoding/json"
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

// TestAccessFormatJSON: with --log-format json a line is one JSON object
// with the log's keys, msg the text line, and a key per atom; what a
// client sent that is not UTF-8 or would end the string stays inside it.
func TestAccessFormatJSON(t *testing.T) {
	f, err := compileAccessFormat(`%(h)s %(l)s %(t)s "%(r)s" %(s)s %(b)s %(B)s %(D)s "%(a)s" %({x-request-id}i)s %({content-type}o)s %(q)s`)
	if err != nil {
		t.Fatal(err)
	}
	f.setJSON(2)
	req := parseHead(t, "User-Agent: caf\xe9 \"x\"\r\n")
	line := f.append([]byte("kept"), &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200, sent: 13, duration: 1500 * time.Microsecond})
	text, ok := strings.CutPrefix(string(line), "kept")
	if !ok || !strings.HasSuffix(text, "}\n") || strings.Count(text, "\n") != 1 {
		t.Fatalf("got %q", line)
	}
	var entry map[string]any
	if err := json.Unmarshal([]byte(text), &entry); err != nil {
		t.Fatalf("%v: %q", err, text)
	}
	if _, err := time.Parse(time.RFC3339Nano, entry["time"].(string)); err != nil {
		t.Errorf("time: %v", err)
	}
	want := map[string]any{
		"level": "INFO", "pid": float64(os.Getpid()), "worker": float64(2),
		"remote_addr": "192.0.2.1", "request": "GET / HTTP/1.1", "status": float64(200), "bytes": float64(13),
		"duration_us": float64(1500), "user_agent": "caf\u00e9 \"x\"", "request_x_request_id": nil,
		"response_content_type": nil, "query": nil, "trace_id": nil,
	}
	for k, v := range want {
		if got, ok := entry[k]; !ok || got != v {
			t.Errorf("%s: %#v, want %#v", k, got, v)
		}
	}
	if len(entry) != len(want)+2 { // time and msg
		t.Errorf("keys: %v", entry)
	}
	msg, _ := entry["msg"].(string)
	if !regexp.MustCompile(`^192\.0\.2\.1 - \[.*\] "GET / HTTP/1\.1" 200 13 13 1500 "caf\\xe9 \\x22x\\x22" - - -$`).MatchString(msg) {
		t.Errorf("msg %q", msg)
	}
	// An unparsed head: nulls, and no worker key in a single process.
	f.setJSON(-1)
	entry = nil
	if err := json.Unmarshal(f.append(nil, &accessEntry{status: 400}), &entry); err != nil ||
		entry["request"] != nil || entry["remote_addr"] != nil || entry["status"] != float64(400) || entry["worker"] != nil {
		t.Errorf("unparsed head: %v %v", entry, err)
	}
}

// TestAccessFormatJSONAllocs: the JSON line costs no allocation either.
func TestAccessFormatJSONAllocs(t *testing.T) {
	f, _ := compileAccessFormat(DefaultAccessLogFormat)
	f.setJSON(0)
	req := parseHead(t, "User-Agent: ua\r\n")
	e := &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200, sent: 13}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf = f.append(buf[:0], e) }); n != 0 {
		t.Errorf("%v allocations per line", n)
	}
}

// TestAccessFormatTraceID: %(trace_id)s and the JSON key trace_id are
// the trace id of a W3C traceparent that parses (Trace Context 3.2), "-"
// and null otherwise; a line with one allocates nothing.
func TestAccessFormatTraceID(t *testing.T) {
	f, err := compileAccessFormat(`%(s)s %(trace_id)s`)
	if err != nil {
		t.Fatal(err)
	}
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for value, want := range map[string]string{
		"00-" + id + "-00f067aa0ba902b7-01":                       id,
		"01-" + id + "-00f067aa0ba902b7-00-future":                id, // a later version may add fields
		"00-" + id + "-00f067aa0ba902b7-01-extra":                 "-",
		"ff-" + id + "-00f067aa0ba902b7-01":                       "-",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01": "-",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": "-",
		"00-" + id + "-0000000000000000-01":                       "-",
		"00-" + id + "-00f067aa0ba902b7":                          "-",
		"":                                                        "-",
	} {
		req := parseHead(t, "Traceparent: "+value+"\r\n")
		e := &accessEntry{req: req, status: 200}
		if got := string(f.append(nil, e)); got != "200 "+want+"\n" {
			t.Errorf("%q: %q, want %q", value, got, want)
		}
	}
	req := parseHead(t, "traceparent: 00-"+id+"-00f067aa0ba902b7-01\r\n")
	e := &accessEntry{remote: []byte("192.0.2.1"), req: req, status: 200}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf = f.append(buf[:0], e) }); n != 0 {
		t.Errorf("%v allocations per line", n)
	}
	json, _ := compileAccessFormat(DefaultAccessLogFormat)
	json.setJSON(-1)
	if line := string(json.append(nil, e)); !strings.Contains(line, `,"trace_id":"`+id+`"}`) {
		t.Errorf("JSON: %s", line)
	}
}
