package supervisor

import (
	"context"
	"fmt"

	"github.com/m0serve/m0serve/internal/configerr"
	"github.com/m0serve/m0serve/pglisten"
	"github.com/m0serve/m0serve/realtime"
)

// openBus makes --realtime's bus before the first worker starts: one
// datagram socket pair per worker and the event-id page, which every
// worker holds (package realtime). The master only keeps them open, so
// that a replacement worker inherits its slot's queue; it never reads or
// writes them.
func (m *master) openBus() error {
	if !m.cfg.Realtime {
		return nil
	}
	bus, err := realtime.NewBus(m.cfg.Workers)
	if err != nil {
		return fmt.Errorf("--realtime: %w", err)
	}
	m.bus = bus
	if m.cfg.PGListen == "" {
		return nil
	}
	// One listener for all the workers: each NOTIFY is published once.
	counter, err := realtime.MapCounter(bus.Page)
	if err != nil {
		return fmt.Errorf("--pg-listen: %w", err)
	}
	l, err := pglisten.New(m.cfg.PGListen)
	if err != nil {
		return &configerr.Error{Flag: "pg-listen", Reason: err.Error()}
	}
	publisher := &realtime.Worker{Writes: bus.Writes, Counter: counter}
	l.Publish, l.Counter, l.Logf = publisher.Publish, counter, m.logf
	ctx, cancel := context.WithCancel(context.Background())
	m.stopPGListen = cancel
	go l.Run(ctx)
	return nil
}

func (m *master) closeBus() {
	if m.stopPGListen != nil {
		m.stopPGListen()
	}
	if m.bus != nil {
		m.bus.Close()
	}
}

// busFull reports a slot past the bus's: the bus is sized at start, and
// every worker's publishers know its write ends from then.
func (m *master) busFull() bool {
	return m.bus != nil && len(m.slots) >= len(m.bus.Reads)
}

// busFiles adds the bus to a worker's start: its descriptors after
// workerproto's (the page, the slot's read end, every write end) and the
// variables naming them there.
func (m *master) busFiles(slot int, files []uintptr, env []string) ([]uintptr, []string) {
	if m.bus == nil || slot >= len(m.bus.Reads) {
		return files, env
	}
	page := len(files)
	files = append(files, uintptr(m.bus.Page), uintptr(m.bus.Reads[slot]))
	writes := make([]int, len(m.bus.Writes))
	for i, fd := range m.bus.Writes {
		writes[i] = len(files)
		files = append(files, uintptr(fd))
	}
	return files, append(env, m.bus.Env(page+1, page, writes)...)
}
