// Package backendtest is the contract every loop.Backend keeps, as one
// test suite each backend runs on real loopback TCP sockets: io_uring,
// epoll and kqueue answer the same cases.
package backendtest

import (
	"testing"

	"github.com/m0serve/m0serve/loop"
)

// Run runs the contract suite. newBackend makes a fresh backend for each
// case (it may call t.Skip or t.Fatal); Run closes every backend it gets.
func Run(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	cases := []struct {
		name string
		run  func(t *testing.T, newBackend func(t *testing.T) loop.Backend)
	}{
		{"WaitTimesOut", testWaitTimesOut},
		{"AcceptMany", testAcceptMany},
		{"StopAndRearmAccept", testStopAndRearmAccept},
		{"RecvIntoSlotBuffer", testRecvIntoSlotBuffer},
		{"RecvLargerThanBuffer", testRecvLargerThanBuffer},
		{"OutHoldsOne", testOutHoldsOne},
		{"LargeSendToSlowReader", testLargeSendToSlowReader},
		{"PeerReset", testPeerReset},
		{"HalfClose", testHalfClose},
		{"WakeInterruptsWait", testWakeInterruptsWait},
		{"WakesCoalesce", testWakesCoalesce},
		{"LastWakeNotLost", testLastWakeNotLost},
		{"CloseWhileRecvPending", testCloseWhileRecvPending},
		{"CloseWhileSendPending", testCloseWhileSendPending},
		{"GenerationAfterSlotReuse", testGenerationAfterSlotReuse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newBackend) })
	}
}
