package server

import (
	"os"
	"os/signal"
	"syscall"
)

// startSignals holds SIGTERM and SIGINT from Run's start until the
// stopper takes them: one that comes while the app imports (a Django
// project's import takes seconds) is not lost. Python installs no handler
// of its own and an import cannot be interrupted, so the first signal
// stops the server once the app has imported, before it serves; a second
// exits at once, as it would later.
type startSignals struct {
	signals chan os.Signal
	done    chan struct{}
	first   chan os.Signal // the first signal, handed over; nil when none came
}

func holdStartSignals(logf func(string, ...any)) *startSignals {
	h := &startSignals{signals: make(chan os.Signal, 3), done: make(chan struct{}), first: make(chan os.Signal, 1)}
	signal.Notify(h.signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		var first os.Signal
		for {
			select {
			case sig := <-h.signals:
				if first == nil {
					first = sig
					logf("m0serve: %v while the app starts: stopping once it has", sig)
					continue
				}
				logf("m0serve: warning: %v again: exiting now", sig)
				os.Exit(128 + int(sig.(syscall.Signal)))
			case <-h.done:
				h.first <- first
				return
			}
		}
	}()
	return h
}

// handOver gives the stopper the registered channel, with the signal that
// came during the start back in it first.
func (h *startSignals) handOver(s *stopper) {
	close(h.done)
	if first := <-h.first; first != nil {
		// Ahead of any that came meanwhile: the channel's room is 3, and
		// the holder took every signal before this one.
		pending := []os.Signal{first}
		for more := true; more; {
			select {
			case sig := <-h.signals:
				pending = append(pending, sig)
			default:
				more = false
			}
		}
		for _, sig := range pending {
			select {
			case h.signals <- sig:
			default:
			}
		}
	}
	s.signals = h.signals
}

// release stops holding signals when Run returns before the stopper
// took them (the app did not start).
func (h *startSignals) release() {
	select {
	case <-h.done:
	default:
		close(h.done)
		<-h.first
	}
	signal.Stop(h.signals)
}
