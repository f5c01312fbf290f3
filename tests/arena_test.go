//go:build linux

package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestArenaValidate runs make arena-validate against the binary under
// test: HttpArena's own scripts/validate.sh (arena/validate/httparena,
// unchanged) passes for every entry of arena/, each started by its
// Dockerfile's command (arena/validate/docker stands in for docker).
func TestArenaValidate(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := filepath.Glob(filepath.Join(root, "arena", "m0serve-*"))
	if err != nil || len(entries) < 3 {
		t.Fatalf("arena entries: %v %v", entries, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "arena", "validate", "run.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "M0SERVE="+binary, "HTTPARENA=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("arena/validate/run.sh: %v\n%s", err, out)
	}
	for _, entry := range entries {
		name := filepath.Base(entry)
		if !strings.Contains(string(out), "arena-validate: "+name+": pass") {
			t.Errorf("no pass for %s:\n%s", name, out)
		}
	}
}

// launchStopScript runs an entry's launch.sh with --native arena in
// namespaces of its own (network: the fixed ports; pid: pgrep sees only
// its processes), checks that each of the four ports serves, then stops
// it with SIGTERM; then starts it again and kills one m0serve.
const launchStopScript = `
ip link set lo up
cd "$ARENA/m0serve-native"
export ARENA_DATA="$ARENA/validate/httparena/data" ARENA_CERTS="$ARENA/validate/httparena/certs" ARENA_WORKERS=1
./launch.sh --native arena >"$LOGS/first.log" 2>&1 &
launcher=$!
for i in $(seq 1 100); do
	curl -s -o /dev/null http://127.0.0.1:8080/pipeline && curl -sk -o /dev/null https://127.0.0.1:8443/pipeline &&
		curl -sk -o /dev/null https://127.0.0.1:8081/pipeline && curl -s --http2-prior-knowledge -o /dev/null http://127.0.0.1:8082/pipeline && break
	sleep 0.1
done
echo "8080 $(curl -s -w ' %{http_version}' http://127.0.0.1:8080/baseline11?a=1\&b=2)"
echo "8081 $(curl -sk -w ' %{http_version}' https://127.0.0.1:8081/baseline11?a=1\&b=2)"
echo "8082 $(curl -s --http2-prior-knowledge -w ' %{http_version}' http://127.0.0.1:8082/baseline2?a=1\&b=2)"
echo "8443 $(curl -sk --http2 -w ' %{http_version}' https://127.0.0.1:8443/baseline2?a=1\&b=2)"
kill -TERM $launcher
wait $launcher
echo "stopped: exit $?, $(pgrep -c -x m0serve) left"
./launch.sh --native arena >"$LOGS/second.log" 2>&1 &
launcher=$!
for i in $(seq 1 100); do curl -s --http2-prior-knowledge -o /dev/null http://127.0.0.1:8082/pipeline && break; sleep 0.1; done
kill -KILL $(pgrep -o -f '^m0serve .*--port 8082')
wait $launcher
echo "one killed: exit $?, $(pgrep -c -x m0serve) left"
`

// TestArenaLaunch: launch.sh serves each of HttpArena's ports with its
// protocol, a stop signal drains every m0serve and exits 0, and an
// m0serve that dies ends the others and the container with a failure.
func TestArenaLaunch(t *testing.T) {
	if exec.Command("unshare", "-rn", "--pid", "--fork", "--mount-proc", "true").Run() != nil {
		t.Skip("no network and pid namespaces here (unshare -rn --pid refused)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logs := t.TempDir()
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "m0serve")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "unshare", "-rn", "--pid", "--fork", "--kill-child", "--mount-proc", "bash", "-c", launchStopScript)
	cmd.Env = append(os.Environ(), "ARENA="+filepath.Join(root, "arena"), "LOGS="+logs,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"8080 3 1.1", "8081 3 1.1", "8082 3 2", "8443 3 2",
		"stopped: exit 0, 0 left", "one killed: exit 137, 0 left"} {
		if !strings.Contains(string(out), want) {
			first, _ := os.ReadFile(filepath.Join(logs, "first.log"))
			t.Fatalf("no %q in:\n%s\nlaunch.sh's log:\n%s", want, out, first)
		}
	}
}
