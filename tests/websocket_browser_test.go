//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// browserPage echoes through the browser's own WebSocket to each server in
// TARGETS in turn: text, binary, a 200 KB message, a subprotocol, the
// extensions it negotiated, and close(4001); each step is a console line,
// which Chromium logs to stderr.
const browserPage = `<html><body><script>
const targets = TARGETS;
const report = (line) => console.log("WS " + line);
function run(i) {
	if (i == targets.length) {
		report("DONE");
		return;
	}
	const [name, url] = targets[i];
	const ws = new WebSocket(url, ["chat.v1"]);
	ws.binaryType = "arraybuffer";
	let step = 0;
	ws.onopen = () => {
		report(name + " open protocol=" + ws.protocol + " extensions=" + ws.extensions);
		ws.send("text é✓");
	};
	ws.onmessage = (e) => {
		step++;
		if (step == 1) {
			report(name + " text " + e.data);
			ws.send(new Uint8Array([0, 1, 255]));
		} else if (step == 2) {
			report(name + " binary " + Array.from(new Uint8Array(e.data)).join(","));
			ws.send("x".repeat(200000));
		} else if (step == 3) {
			report(name + " big " + (e.data === "x".repeat(200000)));
			ws.close(4001, "bye");
		}
	};
	ws.onclose = (e) => {
		report(name + " close " + e.code + " clean=" + e.wasClean);
		run(i + 1);
	};
}
run(0);
</script></body></html>`

// TestWebSocketBrowser: headless Chromium (Debian chromium) loads a page
// that an ASGI app under m0serve serves and echoes with new WebSocket
// through that app and through --native ws-echo.
func TestWebSocketBrowser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	requireCommand(t, chromium)
	native := start(t, variants[0], "--native", "ws-echo")
	asgi := startASGI(t, variants[0], "asgi_ws_echo_app:app")
	targets := fmt.Sprintf(`[["native", "ws://%s/"], ["asgi", "ws://%s/"]]`, native.addr, asgi.addr)
	// The app serves $E2E_DIR/echo.html.
	if err := os.WriteFile(filepath.Join(asgi.dir, "echo.html"), []byte(strings.ReplaceAll(browserPage, "TARGETS", targets)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runBrowser(t, chromium, asgi.url("/echo.html"))
	var want []string
	for _, name := range []string{"native", "asgi"} {
		want = append(want,
			name+" open protocol=chat.v1 extensions=permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			name+" text text é✓",
			name+" binary 0,1,255",
			name+" big true",
			name+" close 4001 clean=true")
	}
	want = append(want, "DONE")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the browser reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// runBrowser loads url in headless chromium and returns the lines its
// page logged with the prefix "WS ", up to "DONE". The browser trusts the
// CA certificates in trustCAs (PEM files; tls_test.go's servers).
func runBrowser(t *testing.T, chromium, url string, trustCAs ...string) []string {
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	if len(trustCAs) > 0 {
		trustInNSS(t, profile, trustCAs)
	}
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--v=0", "--user-data-dir="+profile, url)
	cmd.Env = append(cleanEnv(), "HOME="+profile)
	// Its own process group: the browser's helpers end with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, msg, ok := strings.Cut(sc.Text(), `"WS `); ok {
				lines <- strings.TrimSuffix(msg[:strings.LastIndex(msg, `"`)+1], `"`)
			}
		}
		close(lines)
	}()
	var got []string
	deadline := time.After(60 * time.Second)
wait:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				break wait
			}
			got = append(got, line)
			if line == "DONE" {
				break wait
			}
		case <-deadline:
			break wait
		}
	}
	return got
}
