package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m0serve/m0serve/bench/wsclient"
)

// drainTimeout bounds the wait, once the run's time is up, for the
// messages already sent to arrive.
const drainTimeout = 10 * time.Second

// runEcho is ping-pong on every connection, one goroutine each: send the
// message, read the reply, check it is the same, again until the time is
// up. Every exchange ends before its goroutine looks at the clock, so
// nothing is in flight at the end.
func runEcho(conns []*wsclient.Conn, duration time.Duration) (wsclient.LoadResult, error) {
	var stop atomic.Bool
	histograms := make([]wsclient.Histogram, len(conns))
	counts := make([]int64, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	started := time.Now()
	timer := time.AfterFunc(duration, func() { stop.Store(true) })
	defer timer.Stop()
	for i, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			histogram := &histograms[i]
			for !stop.Load() {
				sent := time.Now()
				if err := conn.Send(); err != nil {
					errs[i] = err
					stop.Store(true)
					return
				}
				_, payload, err := conn.ReadMessage()
				if err != nil {
					errs[i] = err
					stop.Store(true)
					return
				}
				histogram.Record(time.Since(sent))
				if string(payload) != string(conn.Payload()) {
					errs[i] = fmt.Errorf("echo answered %d bytes %.32q, sent %d bytes %.32q",
						len(payload), payload, len(conn.Payload()), conn.Payload())
					stop.Store(true)
					return
				}
				counts[i]++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	if err := errors.Join(errs...); err != nil {
		return wsclient.LoadResult{}, err
	}
	var total wsclient.Histogram
	result := wsclient.LoadResult{Mode: "echo", Connections: len(conns), Seconds: elapsed.Seconds()}
	for i := range conns {
		total.Merge(&histograms[i])
		result.Sent += counts[i]
	}
	result.Messages = result.Sent
	result.MessagesPerSecond = float64(result.Messages) / elapsed.Seconds()
	result.P50us = float64(total.Percentile(0.50)) / 1e3
	result.P99us = float64(total.Percentile(0.99)) / 1e3
	return result, nil
}

// runBroadcast is Granian's broadcast shape: every client sends, and the
// server sends each message to every connected client. A client sends
// its next message once it has received as many messages as there are
// clients for each it has sent, so the server holds at most about one
// round (clients × clients messages) at a time. When the time is up the
// clients stop sending and wait until every message sent has reached
// every client, so the figures cover exactly the messages the server
// handled.
func runBroadcast(conns []*wsclient.Conn, duration time.Duration) (wsclient.LoadResult, error) {
	n := int64(len(conns))
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	var failure firstError
	received := make([]atomic.Int64, len(conns))
	sent := make([]atomic.Int64, len(conns))
	var writers, readers sync.WaitGroup
	var draining atomic.Bool
	started := time.Now()
	timer := time.AfterFunc(duration, halt)
	defer timer.Stop()
	for i, conn := range conns {
		wake := make(chan struct{}, 1)
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					if !draining.Load() { // else the deadline below ended it
						failure.set(err)
						halt()
					}
					return
				}
				if received[i].Add(1) >= n*sent[i].Load() {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
		}()
		writers.Add(1)
		go func() {
			defer writers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// The count goes up before the send, so the reader's
				// comparison never sees a reply to an uncounted message.
				mine := sent[i].Add(1)
				if err := conn.Send(); err != nil {
					failure.set(err)
					halt()
					return
				}
				for received[i].Load() < n*mine {
					select {
					case <-wake:
					case <-stop:
						return
					}
				}
			}
		}()
	}
	writers.Wait()
	var total int64
	for i := range sent {
		total += sent[i].Load()
	}
	deadline := time.Now().Add(drainTimeout)
	drained := false
	for !drained && time.Now().Before(deadline) && failure.get() == nil {
		drained = true
		for i := range received {
			if received[i].Load() < total {
				drained = false
				time.Sleep(time.Millisecond)
				break
			}
		}
	}
	elapsed := time.Since(started)
	// The readers are blocked reading messages that will not come; an
	// expired deadline ends them.
	draining.Store(true)
	for _, conn := range conns {
		conn.SetReadDeadline(time.Now())
	}
	readers.Wait()
	if err := failure.get(); err != nil {
		return wsclient.LoadResult{}, err
	}
	if !drained {
		return wsclient.LoadResult{}, fmt.Errorf("broadcast: %d messages sent, not every client had them all after %v", total, drainTimeout)
	}
	result := wsclient.LoadResult{Mode: "broadcast", Connections: len(conns), Sent: total, Messages: total * n, Seconds: elapsed.Seconds()}
	result.MessagesPerSecond = float64(result.Messages) / elapsed.Seconds()
	return result, nil
}

// firstError keeps the first error of many goroutines.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
