//go:build linux

package tests

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestWSGIServerSoftware: the environ's SERVER_SOFTWARE is
// m0serve/<version>, the release the binary was stamped with (the
// VERSION file), for every request and with --workers too.
func TestWSGIServerSoftware(t *testing.T) {
	file, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := "m0serve/" + strings.TrimSpace(string(file))
	for _, args := range [][]string{nil, {"--threads", "4"}, {"--workers", "1"}} {
		s := startWSGI(t, "environ_app:app", args...)
		for range 2 {
			resp, body := get(t, s.url("/software"))
			var env map[string]any
			if err := json.Unmarshal([]byte(body), &env); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v: %d %v: %q", args, resp.StatusCode, err, body)
			}
			if got := env["SERVER_SOFTWARE"]; got != want {
				t.Errorf("%v: SERVER_SOFTWARE %q, want %q", args, got, want)
			}
		}
		s.stop()
	}
}
