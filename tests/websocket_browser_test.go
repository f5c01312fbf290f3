//go:build linux

package tests

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// browserPage echoes through the browser's own WebSocket: text, binary, a
// 200 KB message, a subprotocol, the extensions it negotiated, and
// close(4001); each step is a console line, which Chromium logs to stderr.
const browserPage = `<html><body><script>
const ws = new WebSocket("ws://ADDR/", ["chat.v1"]);
ws.binaryType = "arraybuffer";
const report = (line) => console.log("WS " + line);
let step = 0;
ws.onopen = () => {
	report("open protocol=" + ws.protocol + " extensions=" + ws.extensions);
	ws.send("text é✓");
};
ws.onmessage = (e) => {
	step++;
	if (step == 1) {
		report("text " + e.data);
		ws.send(new Uint8Array([0, 1, 255]));
	} else if (step == 2) {
		report("binary " + Array.from(new Uint8Array(e.data)).join(","));
		ws.send("x".repeat(200000));
	} else if (step == 3) {
		report("big " + (e.data === "x".repeat(200000)));
		ws.close(4001, "bye");
	}
};
ws.onclose = (e) => report("DONE close " + e.code + " clean=" + e.wasClean);
</script></body></html>`

// TestWebSocketBrowser: headless Chromium (Debian chromium) echoes through
// --native ws-echo with new WebSocket.
func TestWebSocketBrowser(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	requireCommand(t, chromium)
	s := start(t, variants[0], "--native", "ws-echo")
	dir := t.TempDir()
	page := filepath.Join(dir, "echo.html")
	if err := os.WriteFile(page, []byte(strings.ReplaceAll(browserPage, "ADDR", s.addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(dir, "profile")
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--enable-logging=stderr", "--v=0", "--user-data-dir="+profile, "file://"+page)
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
			if strings.HasPrefix(line, "DONE") {
				break wait
			}
		case <-deadline:
			break wait
		}
	}
	want := []string{
		"open protocol=chat.v1 extensions=permessage-deflate; server_no_context_takeover; client_no_context_takeover",
		"text text é✓",
		"binary 0,1,255",
		"big true",
		"DONE close 4001 clean=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the browser reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
