//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package kq_test

import (
	"testing"

	"github.com/m0serve/m0serve/kq"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/backendtest"
)

func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) loop.Backend {
		b, err := kq.New()
		if err != nil {
			t.Fatalf("kq.New: %v", err)
		}
		return b
	})
}
