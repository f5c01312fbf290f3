// Package backendtest is the contract every loop.Backend keeps, as one
// test suite each backend runs on real loopback TCP sockets: io_uring,
// epoll and kqueue answer the same cases.
package backendtest

import (
	"runtime"
	"testing"

	"github.com/m0serve/m0serve/loop"
)

// Run runs the contract suite. newBackend makes a fresh backend for each
// case (it may call t.Skip or t.Fatal) on the goroutine that will drive it,
// locked to its OS thread; Run closes every backend it gets.
func Run(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	cases := []struct {
		name string
		run  func(t *testing.T, newBackend func(t *testing.T) loop.Backend)
	}{
		{"WaitTimesOut", testWaitTimesOut},
		{"AcceptMany", testAcceptMany},
		{"StopAndRearmAccept", testStopAndRearmAccept},
		{"StopAcceptLosesNothing", testStopAcceptLosesNothing},
		{"DrainWithConnectionWaiting", testDrainWithConnectionWaiting},
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
		{"SendFileRange", testSendFileRange},
		{"SendFileShort", testSendFileShort},
		{"SendFilePeerGone", testSendFilePeerGone},
		{"CloseWhileSendFilePending", testCloseWhileSendFilePending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The case's goroutine is the loop thread: a SINGLE_ISSUER
			// ring must be created and driven from one OS thread. Left
			// locked on purpose, so Close in the cleanup runs there too.
			runtime.LockOSThread()
			c.run(t, newBackend)
		})
	}
}
