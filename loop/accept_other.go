//go:build !linux

package loop

// sweepAcceptQueue has nothing to take on kqueue: its listener readiness
// wakes every waiter, so no connection's wake-up is lost with a stopped
// accept (accept_linux.go).
func (l *Loop) sweepAcceptQueue() {}
