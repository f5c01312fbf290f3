//go:build linux

package epoll_test

import (
	"testing"

	"github.com/m0serve/m0serve/epoll"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/backendtest"
)

func TestContract(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) loop.Backend {
		b, err := epoll.New()
		if err != nil {
			t.Fatalf("epoll.New: %v", err)
		}
		return b
	})
}
