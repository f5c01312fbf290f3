package metrics

import (
	"testing"
)

func TestBackendLabels(t *testing.T) {
	for name, want := range map[string][2]string{
		"io_uring: single_issuer+defer_taskrun, multishot accept": {"io_uring", "single_issuer+defer_taskrun, multishot accept"},
		"epoll (edge-triggered, persistent interest)":             {"epoll", "edge-triggered, persistent interest"},
		"kqueue": {"kqueue", ""},
	} {
		if got := BackendLabels(name); got != want {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}
