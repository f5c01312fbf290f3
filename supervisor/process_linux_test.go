package supervisor

import (
	"os"
	"runtime"
	"testing"
)

func TestResidentBytes(t *testing.T) {
	ballast := make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	rss, err := residentBytes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 64<<20 {
		t.Errorf("resident %d bytes with 64 MiB touched", rss)
	}
	runtime.KeepAlive(ballast)
}
