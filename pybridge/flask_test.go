package pybridge

import (
	"encoding/json"
	"testing"
)

func TestFlask(t *testing.T) {
	app := loadApp(t, "flask_app:app")
	j := newJob(t, app, "GET /hello/m0serve?q=%C3%A9t%C3%A9 HTTP/1.1\r\nHost: x\r\nUser-Agent: bridge-test\r\n\r\n")
	run(j)
	r := j.Response
	if r.Status() != 200 || r.Outcome() != Complete {
		t.Fatalf("%d outcome %d: %q", r.Status(), r.Outcome(), r.Body())
	}
	if ct, _ := header(r, "Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var got map[string]string
	if err := json.Unmarshal(r.Body(), &got); err != nil {
		t.Fatalf("%q: %v", r.Body(), err)
	}
	if got["greeting"] != "hello m0serve" || got["q"] != "été" || got["agent"] != "bridge-test" {
		t.Errorf("%v", got)
	}

	j = newJob(t, app, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n")
	j.Body = &pieces{list: [][]byte{[]byte("abc"), []byte("def")}}
	run(j)
	if string(j.Response.Body()) != "fedcba" {
		t.Errorf("echo: %d %q", j.Response.Status(), j.Response.Body())
	}

	j = newJob(t, app, "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
	run(j)
	if j.Response.Status() != 404 || j.Response.AppError() {
		t.Errorf("unknown route: %d", j.Response.Status())
	}
}
