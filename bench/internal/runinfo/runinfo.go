// Package runinfo records where a benchmark ran (the checkout, the
// kernel, the machine's load) and writes its result, for the bench/
// programs that keep their figures under bench/results/.
package runinfo

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Origin is the part of a result that says what was measured and when:
// a result struct embeds it, so its fields stand at the top level of the
// JSON.
type Origin struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
	Date   string `json:"date"`
	Kernel string `json:"kernel"`
}

// NewOrigin describes the checkout at root now: its HEAD, whether
// tracked files have changed, the date and the kernel release.
func NewOrigin(root string) Origin {
	return Origin{
		Commit: CommandLine(root, "git", "rev-parse", "HEAD"),
		Dirty:  CommandLine(root, "git", "status", "--porcelain", "--untracked-files=no") != "",
		Date:   time.Now().UTC().Format(time.RFC3339),
		Kernel: CommandLine(root, "uname", "-r"),
	}
}

// CommandLine is the first line of a command's output, or "" on failure
// (wrk -v exits 1 after printing its version, so output counts even then).
func CommandLine(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// LoadAverage is /proc/loadavg's first three fields.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown: " + err.Error()
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return strings.TrimSpace(string(data))
	}
	return strings.Join(fields[:3], " ")
}

// RepoRoot is the checkout's top directory, found from where the program
// runs; marker, a path under it, must exist.
func RepoRoot(marker string) (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("find the repository root (run inside the checkout): %w", err)
	}
	root := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(root, marker)); err != nil {
		return "", fmt.Errorf("%s under %s: %w", marker, root, err)
	}
	return root, nil
}

// WriteJSON writes v as indented JSON to dir/name-<stamp>.json, stamp
// being started in UTC. It writes a .tmp file first, so a run that dies
// mid-write never leaves half a result under a real name.
func WriteJSON(dir, name string, started time.Time, v any) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("results dir: %w", err)
	}
	path := filepath.Join(dir, name+"-"+started.UTC().Format("20060102T150405Z")+".json")
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode result: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("write result: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("rename result: %w", err)
	}
	return path, nil
}
