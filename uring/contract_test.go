//go:build linux

package uring

import (
	"runtime"
	"testing"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/backendtest"
)

// TestContract runs the loop.Backend contract suite under every feature
// combination.
func TestContract(t *testing.T) {
	for _, combo := range combos {
		t.Run(combo.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T) loop.Backend {
				// The suite closes the backend itself.
				runtime.LockOSThread()
				b, err := New(Options{Disable: combo.disable})
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return b
			})
		})
	}
}
