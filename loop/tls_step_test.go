package loop

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/m0serve/m0serve/tlsrec"
	"github.com/m0serve/m0serve/tlsrec/tlstest"
)

// corkedWire lets the client's first flight through and holds what it
// writes after, until flush hands it to the loop in one receive: the
// client's Finished and its first request together, as curl sends them.
type corkedWire struct {
	fakeWire
	mu      sync.Mutex
	writes  int
	pending []byte
}

func (w *corkedWire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.writes == 1 {
		return w.fakeWire.Write(p)
	}
	w.pending = append(w.pending, p...)
	return len(p), nil
}

func (w *corkedWire) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fakeWire.Write(w.pending)
	w.pending = nil
}

// steppedJobs is a Stepper in the ASGI executor's driven shape: it
// answers, in Step, the jobs the loop queued, and has no news of its own
// (Pending is false), so a job queued after the pass's Step waits for
// whatever wakes the loop next: at worst its once-a-second tick.
type steppedJobs struct {
	q *JobQueue
}

func (s *steppedJobs) Step(int64) int64 {
	for j := s.q.TryTake(); j != nil; j = s.q.TryTake() {
		j.WriteHeader(200, 5)
		j.Write([]byte("hello"))
		j.Finish()
	}
	return 0
}

func (s *steppedJobs) Pending() bool { return false }

// TestTLSRequestWithFinishedMeetsTheStep: a request that arrives with the
// client's Finished is parsed once the handshake's goroutine has ended,
// from the loop's TLS notes; the pass's Step must see it, not the next
// tick's.
func TestTLSRequestWithFinishedMeetsTheStep(t *testing.T) {
	ca := tlstest.NewCA(t, "loop-test")
	cert := ca.Server(t, tlstest.ECDSA)
	srv, err := tlsrec.NewServer(tlsrec.Settings{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	q := NewJobQueue(16)
	var leftAfterStep atomic.Int32
	h := newHarness(t, deferEverything, func(c *Config) {
		c.TLS = srv
		c.Jobs = q
		c.Stepper = &steppedJobs{q: q}
		c.OnPassEnd = func() {
			if !q.jobs.empty() {
				leftAfterStep.Add(1)
			}
		}
	})
	c := h.connect()
	wire := &corkedWire{fakeWire: fakeWire{fb: h.fb, c: c}}
	client := tls.Client(wire, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
	done := make(chan error, 1)
	go func() {
		if err := client.Handshake(); err != nil {
			done <- err
			return
		}
		if _, err := client.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			done <- err
			return
		}
		wire.flush()
		resp, err := http.ReadResponse(bufio.NewReader(client), nil)
		if err != nil {
			done <- err
			return
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "hello" {
			err = io.ErrUnexpectedEOF
		}
		done <- err
	}()
	err = untilReceived(h, "the response", done)
	if err != nil {
		t.Fatal(err)
	}
	if n := leftAfterStep.Load(); n != 0 {
		t.Fatalf("%d passes ended with a job queued after their Step", n)
	}
}
