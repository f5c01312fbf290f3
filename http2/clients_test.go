package http2

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// h2c is Go's client speaking HTTP/2 in clear text by prior knowledge.
func h2c() *http.Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &protocols}}
}

// TestGoClient: Go's HTTP/2 client on one connection, many streams at
// once: a 64 MiB upload beside small requests (flow control both ways
// keeps both moving), and a response larger than every initial window.
func TestGoClient(t *testing.T) {
	s := newTestServer(t)
	client := h2c()
	base := "http://" + s.addr()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	wg.Add(1)
	go func() {
		defer wg.Done()
		upload := bytes.Repeat([]byte("0123456789abcdef"), 4<<20)
		sum := sha256.Sum256(upload)
		resp, err := client.Post(base+"/upload", "application/octet-stream", bytes.NewReader(upload))
		if err != nil {
			errs <- err
			return
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if string(got) != hex.EncodeToString(sum[:]) || resp.ProtoMajor != 2 {
			errs <- fmt.Errorf("upload: %s %q", resp.Proto, got)
		}
	}()
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			size := 1 + i*4099
			resp, err := client.Get(fmt.Sprintf("%s/size/%d", base, size))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if len(got) != size {
				errs <- fmt.Errorf("GET /size/%d: %d bytes", size, len(got))
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	resp, err := client.Get(base + "/size/3000000")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) != 3000000 {
		t.Fatalf("3 MB response: %d bytes", len(got))
	}
}

// h2specPath finds h2spec, which make test installs with go install.
func h2specPath(t *testing.T) string {
	if p, err := exec.LookPath("h2spec"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "h2spec")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("h2spec not found: make test installs it (go install github.com/summerwind/h2spec/cmd/h2spec)")
	return ""
}

// TestH2Spec runs h2spec's whole suite, and its strict mode, against the
// codec: no case may fail.
func TestH2Spec(t *testing.T) {
	bin := h2specPath(t)
	s := newTestServer(t)
	_, port, _ := net.SplitHostPort(s.addr())
	for _, mode := range [][]string{nil, {"-S"}} {
		args := append([]string{"-h", "127.0.0.1", "-p", port, "-o", "5"}, mode...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		summary := string(out)
		if i := strings.LastIndex(summary, "\n1"); i >= 0 {
			summary = summary[i+1:]
		}
		if err != nil || !strings.Contains(string(out), " 0 failed") {
			t.Errorf("h2spec %v: %v\n%s", mode, err, out)
			continue
		}
		t.Logf("h2spec %v: %s", mode, strings.TrimSpace(summary))
	}
}
