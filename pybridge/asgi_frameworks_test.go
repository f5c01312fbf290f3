package pybridge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// frameworkApp loads a Starlette or FastAPI test app (see missingModule
// for a Python without them).
func frameworkApp(t *testing.T, target, module string, opt ASGIOptions) *asgiServer {
	t.Helper()
	_, err := interp.LoadApp(AppSpec{Target: target})
	missingModule(t, err, module)
	if err != nil {
		t.Fatal(err)
	}
	return startASGI(t, target, opt)
}

func decode(t *testing.T, r *Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body(), &m); err != nil {
		t.Fatalf("%d %q: %v", r.Status(), r.Body(), err)
	}
	return m
}

func TestStarlette(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := frameworkApp(t, "asgi_starlette_app:app", "starlette", ASGIOptions{Loop: loop})
		if r := s.get(t, "/hello/m0").Response; r.Status() != 200 || string(r.Body()) != "hello m0" {
			t.Errorf("route: %d %q", r.Status(), r.Body())
		}
		m := decode(t, s.get(t, "/json?a=1&b=two").Response)
		if q := m["query"].(map[string]any); q["a"] != "1" || q["b"] != "two" || m["method"] != "GET" || m["state"] != "connected" {
			t.Errorf("json: %v", m)
		}
		if r := s.get(t, "/missing").Response; r.Status() != 404 {
			t.Errorf("missing: %d", r.Status())
		}

		// request.body() over a body in several pieces.
		body := strings.Repeat("abcdefgh", 20000)
		j := s.job(t, "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 160000\r\n\r\n")
		j.Body = &pieces{list: [][]byte{[]byte(body[:1000]), []byte(body[1000:100000]), []byte(body[100000:])}}
		s.run(j)
		if m := decode(t, j.Response); m["length"] != 160000.0 || m["head"] != "abcdefgh" {
			t.Errorf("body: %v", m)
		}

		j = s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &recorder{}
		j.Writer = w
		s.run(j)
		if j.Response.Outcome() != Streamed || strings.Join(w.chunks, "") != "n0;n1;n2;" {
			t.Errorf("stream: outcome %d chunks %q", j.Response.Outcome(), w.chunks)
		}

		// The background task runs after the response is complete.
		id := "bg-" + loop.String()
		if r := s.get(t, "/background?id="+id).Response; string(r.Body()) != "queued" {
			t.Errorf("background: %q", r.Body())
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(string(s.get(t, "/background-done").Response.Body()), id) {
			if time.Now().After(deadline) {
				t.Fatal("the background task never ran")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestFastAPI(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := frameworkApp(t, "asgi_fastapi_app:app", "fastapi", ASGIOptions{Loop: loop})
		post := func(body string) *Response {
			j := s.job(t, "POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+
				itoa(len(body))+"\r\n\r\n")
			j.Body = &pieces{list: [][]byte{[]byte(body)}}
			s.run(j)
			return j.Response
		}
		r := post(`{"name": "pen", "price": 1.25, "tags": ["a"]}`)
		if m := decode(t, r); r.Status() != 200 || m["name"] != "pen" || m["total"] != 2.5 {
			t.Errorf("valid POST: %d %v", r.Status(), m)
		}
		r = post(`{"name": "pen"}`)
		if m := decode(t, r); r.Status() != 422 || !strings.Contains(string(r.Body()), "price") {
			t.Errorf("invalid POST: %d %v", r.Status(), m)
		}
		if m := decode(t, s.get(t, "/items/7?q=x").Response); m["item_id"] != 7.0 || m["q"] != "x" {
			t.Errorf("GET: %v", m)
		}
		if r := s.get(t, "/items/seven").Response; r.Status() != 422 {
			t.Errorf("bad path param: %d", r.Status())
		}
	})
}
