package pybridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestASGIHello(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		if s.ex.LoopName() != loop.String() {
			t.Errorf("loop %q, want %q", s.ex.LoopName(), loop)
		}
		r := s.get(t, "/hello").Response
		if r.Outcome() != Complete || r.Status() != 200 || string(r.Body()) != "hello" || r.ContentLength() != 5 {
			t.Fatalf("outcome %d status %d body %q length %d", r.Outcome(), r.Status(), r.Body(), r.ContentLength())
		}
		if v, _ := header(r, "content-type"); v != "text/plain" {
			t.Errorf("content-type %q", v)
		}
	})
}

func TestASGIScope(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop, ServerName: "test.local", ServerPort: 8080})
		j := s.job(t, "GET /scope/caf%C3%A9%20x?a=1&b=%20 HTTP/1.0\r\nHost: x\r\nX-Two: a\r\nX-TWO: b\r\n\r\n")
		s.run(j)
		var scope map[string]any
		if err := json.Unmarshal(j.Response.Body(), &scope); err != nil {
			t.Fatalf("%v: %q", err, j.Response.Body())
		}
		want := map[string]any{
			"type":         "http",
			"asgi":         map[string]any{"version": "3.0", "spec_version": "2.4"},
			"http_version": "1.0",
			"method":       "GET",
			"scheme":       "http",
			"path":         "/scope/café x",
			"raw_path":     map[string]any{"bytes": "/scope/caf%C3%A9%20x"},
			"query_string": map[string]any{"bytes": "a=1&b=%20"},
			"root_path":    "",
			"client":       []any{"127.0.0.1", 54321.0},
			"server":       []any{"test.local", 8080.0},
			"state":        map[string]any{"greeting": "from lifespan"},
			"extensions":   map[string]any{"http.response.pathsend": map[string]any{}, "http.response.trailers": map[string]any{}},
			"headers": []any{
				[]any{map[string]any{"bytes": "host"}, map[string]any{"bytes": "x"}},
				[]any{map[string]any{"bytes": "x-two"}, map[string]any{"bytes": "a"}},
				[]any{map[string]any{"bytes": "x-two"}, map[string]any{"bytes": "b"}},
			},
		}
		got, _ := json.Marshal(scope)
		exp, _ := json.Marshal(want)
		if string(got) != string(exp) {
			t.Errorf("scope\n got %s\nwant %s", got, exp)
		}
	})
}

// Under a root path, path and raw_path are the root path and the target
// (the proxy stripped the prefix), root_path the mount: ASGI 2.x's path
// includes root_path, and uvicorn builds it so.
func TestASGIRootPath(t *testing.T) {
	app, err := interp.LoadApp(AppSpec{Target: "asgi_spec_app:app", RootPath: "/mount"})
	if err != nil {
		t.Fatal(err)
	}
	q := NewQueue(8)
	ex, err := interp.StartASGI(app, ASGIOptions{Loop: LoopAsyncio}, q, waiting)
	if err != nil {
		t.Fatal(err)
	}
	s := &asgiServer{ex: ex, queue: q, app: app}
	defer func() {
		q.Close()
		if err := ex.Stop(); err != nil {
			t.Error(err)
		}
	}()
	var scope map[string]any
	if err := json.Unmarshal(s.get(t, "/scope/x").Response.Body(), &scope); err != nil {
		t.Fatal(err)
	}
	if scope["path"] != "/mount/scope/x" || scope["root_path"] != "/mount" ||
		scope["raw_path"].(map[string]any)["bytes"] != "/mount/scope/x" {
		t.Errorf("path %v root_path %v raw_path %v", scope["path"], scope["root_path"], scope["raw_path"])
	}
}

// With a Writer, a response in one body message under the buffer limit
// is still Complete: the fast path needs no Writer call.
func TestASGISmallBodyWithWriterIsComplete(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	j := s.job(t, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
	w := &recorder{}
	j.Writer = w
	s.run(j)
	if r := j.Response; r.Outcome() != Complete || string(r.Body()) != "hello" || w.heads != 0 || len(w.chunks) != 0 {
		t.Errorf("outcome %d body %q heads %d chunks %d", r.Outcome(), r.Body(), w.heads, len(w.chunks))
	}
}

// receive and send are awaitables made in C, not coroutines: asyncio's
// ensure_future and gather take them, and a request's task carries the
// executor's name.
func TestASGIAwaitables(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		r := s.get(t, "/awaitables").Response
		if r.Status() != 200 || string(r.Body()) != "http.request False m0serve ASGI request" {
			t.Fatalf("%d %q", r.Status(), r.Body())
		}
	})
}

// A task factory the app sets at startup makes the request tasks, as
// loop.create_task would use it.
func TestASGITaskFactory(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:task_factory", ASGIOptions{Loop: loop, Lifespan: LifespanOn})
		if r := s.get(t, "/x").Response; string(r.Body()) != "from the factory" {
			t.Fatalf("%d %q", r.Status(), r.Body())
		}
	})
}

// A request's first step runs in its own task and context, eagerly on
// every Python (asgi_eager.c before 3.12): stepped by the server's loop
// thread, no Python frame is below it, where a step from the loop's
// queue has asyncio's Handle._run. A context variable one request sets
// is not the next one's.
func TestASGIFirstStep(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		for i, want := range []string{"unset", "unset"} {
			r := s.get(t, fmt.Sprintf("/first-step?%d", i)).Response
			got := strings.Split(string(r.Body()), "|")
			if r.Status() != 200 || len(got) != 3 {
				t.Fatalf("%d %q", r.Status(), r.Body())
			}
			if got[0] != "m0serve ASGI request" || got[1] != want {
				t.Errorf("request %d: task %q, context variable %q; want the request's task and %q", i, got[0], got[1], want)
			}
			if drivenTests && got[2] != "none" {
				t.Errorf("request %d: the first step ran below %s, not in the task's constructor", i, got[2])
			}
		}
	})
}

// A request its first step answers is done when its task registers, and
// stays out of asyncio's registry of tasks (asgi_eager.c before 3.12, as
// 3.12 does); a task left pending is listed by all_tasks() as ever.
func TestASGIAnsweredTaskUnregistered(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		if r := s.get(t, "/registered?keep").Response; r.Status() != 200 || string(r.Body()) != "kept" {
			t.Fatalf("%d %q", r.Status(), r.Body())
		}
		r := s.get(t, "/registered").Response
		if r.Status() != 200 || string(r.Body()) != "False|True" {
			t.Fatalf("%d %q; want the answered task unregistered and the pending one listed (False|True)", r.Status(), r.Body())
		}
	})
}

// An app whose call returns an awaitable other than a coroutine runs in
// asgi_task.c through its __await__; one that raises when called gets a 500
// and the executor serves on.
func TestASGIAwaitableApp(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:AwaitableApp", ASGIOptions{Loop: loop, Lifespan: LifespanOff})
		if r := s.get(t, "/x").Response; r.Status() != 200 || string(r.Body()) != "awaitable /x" {
			t.Fatalf("%d %q", r.Status(), r.Body())
		}
		if r := s.get(t, "/raise-on-call").Response; r.Status() != 500 {
			t.Fatalf("raised when called: %d %q", r.Status(), r.Body())
		}
		if r := s.get(t, "/y").Response; r.Status() != 200 || string(r.Body()) != "awaitable /y" {
			t.Fatalf("after the 500: %d %q", r.Status(), r.Body())
		}
	})
}

// A receive and send kept past their request's task touch nothing of the
// next request on the same slot: receive says http.disconnect, send
// raises, and the next request's body is all its own.
func TestASGIStaleReceiveAndSend(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		if r := s.get(t, "/keep").Response; string(r.Body()) != "kept" {
			t.Fatalf("%d %q", r.Status(), r.Body())
		}
		j := s.job(t, "POST /stale HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
		j.Body = &pieces{list: [][]byte{[]byte("abc")}}
		s.run(j)
		if r := j.Response; r.Status() != 200 || string(r.Body()) != "http.disconnect RuntimeError abc" {
			t.Fatalf("%d %q", r.Status(), r.Body())
		}
	})
}
