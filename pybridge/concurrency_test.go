package pybridge

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Many jobs at once over a group of four threads: bodies that arrive from
// other goroutines while the GIL is released, streamed and buffered
// responses interleaved. Each response must be its own request's.
func TestConcurrentJobs(t *testing.T) {
	q := NewQueue(8)
	done := make(chan *Job, 256)
	h, err := interp.StartHandlers(4, 4, q, chanCompleter(done))
	if err != nil {
		t.Fatal(err)
	}
	input := loadApp(t, "input_app:app")
	body := loadApp(t, "body_app:app")
	const n = 200
	want := map[*Job]string{}
	writers := map[*Job]*recorder{}
	var feeders sync.WaitGroup
	jobs := make([]*Job, 0, n)
	for i := 0; i < n; i++ {
		var j *Job
		switch i % 3 {
		case 0, 1:
			text := fmt.Sprintf("job %d says hello\n", i)
			j = newJob(t, input, fmt.Sprintf("POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(text)))
			g := &gated{pieces: make(chan []byte), asked: make(chan struct{}, 1)}
			j.Body = g
			// repr() of the bytes read, then of the empty read at the end.
			want[j] = "b'" + strings.ReplaceAll(text, "\n", `\n`) + "'\nb''\n"
			feeders.Add(1)
			go func() {
				defer feeders.Done()
				half := len(text) / 2
				g.pieces <- []byte(text[:half])
				g.pieces <- []byte(text[half:])
				close(g.pieces)
			}()
		case 2:
			j = newJob(t, body, "GET /generator HTTP/1.1\r\nHost: x\r\n\r\n")
			w := &recorder{}
			j.Writer = w
			writers[j] = w
		}
		jobs = append(jobs, j)
	}
	go func() {
		for _, j := range jobs {
			q.Push(j)
		}
		q.Close()
	}()
	for i := 0; i < n; i++ {
		j := <-done
		if w, ok := writers[j]; ok {
			if j.Response.Outcome() != Streamed || strings.Join(w.chunks, "") != "chunk0;chunk1;chunk2;" {
				t.Errorf("streamed job: outcome %d chunks %q", j.Response.Outcome(), w.chunks)
			}
			continue
		}
		if got := string(j.Response.Body()); got != want[j] {
			t.Errorf("got %q, want %q", got, want[j])
		}
	}
	h.Wait()
	feeders.Wait()
}
