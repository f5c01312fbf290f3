package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// image is what the runtime stage of the Dockerfile puts together: its
// environment, working directory, entrypoint, and the files it copies
// from the repository (source → path in the image).
type image struct {
	env        []string
	workdir    string
	entrypoint string
	files      map[string]string
}

var (
	dockerEntrypoint = regexp.MustCompile(`^ENTRYPOINT \["([^"]+)"\]$`)
	dockerCopy       = regexp.MustCompile(`^COPY (examples/\S+) (/\S+)$`)
)

// readImage reads the Dockerfile's last stage (continuation lines joined).
func readImage(t *testing.T) image {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	var img image
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "FROM "):
			img = image{files: map[string]string{}}
		case strings.HasPrefix(line, "WORKDIR "):
			img.workdir = strings.TrimSpace(strings.TrimPrefix(line, "WORKDIR "))
		case strings.HasPrefix(line, "ENV "):
			img.env = append(img.env, strings.Fields(strings.TrimPrefix(line, "ENV "))...)
		case dockerEntrypoint.MatchString(line):
			img.entrypoint = dockerEntrypoint.FindStringSubmatch(line)[1]
		case dockerCopy.MatchString(line):
			m := dockerCopy.FindStringSubmatch(line)
			img.files[m[1]] = m[2]
		}
	}
	if img.workdir == "" || img.entrypoint == "" || len(img.files) == 0 {
		t.Fatalf("the Dockerfile's runtime stage: no WORKDIR, ENTRYPOINT or COPY of examples/ (%+v)", img)
	}
	return img
}

// containerEnv is the container's environment as the kubelet makes it:
// the image's, then the manifest's, with limits.cpu resolved.
func containerEnv(t *testing.T, img image, c corev1.Container) []string {
	t.Helper()
	env := append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, img.env...)
	for _, e := range c.Env {
		value := e.Value
		if ref := e.ValueFrom; ref != nil {
			if ref.ResourceFieldRef == nil || ref.ResourceFieldRef.Resource != "limits.cpu" {
				t.Fatalf("env %s: only limits.cpu is resolved here", e.Name)
			}
			// The kubelet rounds up to whole divisors.
			limit := c.Resources.Limits[corev1.ResourceCPU]
			divisor := ref.ResourceFieldRef.Divisor
			value = strconv.FormatInt((limit.MilliValue()+divisor.MilliValue()-1)/divisor.MilliValue(), 10)
		}
		env = append(env, e.Name+"="+value)
	}
	return env
}

// TestDeploymentServes runs the image's command as the manifest runs it,
// without a container engine: in private mount and network namespaces
// (unshare), every mount but /proc, /sys and /dev remounted read-only
// (readOnlyRootFilesystem), a fresh tmpfs at each emptyDir's mount path,
// as the manifest's user and group with no capabilities and no new
// privileges, with the image's and the manifest's environment
// (WEB_CONCURRENCY from limits.cpu: workers), from the image's working
// directory. It must answer the readiness probe, then drain on SIGTERM
// and exit 0. Not emulated: the RuntimeDefault seccomp profile (m0serve
// falls back to epoll under it; the container test covers that).
//
// Needs root (for unshare and setpriv) and M0_BINARY, the binary to run
// (make test-deploy builds and passes it).
func TestDeploymentServes(t *testing.T) {
	binary := os.Getenv("M0_BINARY")
	if binary == "" {
		t.Skip("M0_BINARY is not set: run make test-deploy")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: unshare --mount and setpriv")
	}
	for _, tool := range []string{"unshare", "setpriv", "ip", "mount", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	deployments, _ := decodeAll(t, "deployment.yaml")
	pod := deployments[0].Spec.Template.Spec
	c := pod.Containers[0]
	img := readImage(t)

	// The image's files, readable by the pod's user, outside /tmp (an
	// emptyDir covers it).
	stage, err := os.MkdirTemp("/var/tmp", "m0serve-deploy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(stage) })
	root := filepath.Join(stage, "root")
	exe, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	put := func(path string, data []byte, mode os.FileMode) {
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	put(img.entrypoint, exe, 0o755)
	for src, dst := range img.files {
		data, err := os.ReadFile(filepath.Join("..", "..", src))
		if err != nil {
			t.Fatal(err)
		}
		put(dst, data, 0o644)
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		t.Fatal(err)
	}

	readOnly := c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem
	emptyDirs := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	var script bytes.Buffer
	script.WriteString("set -e\nip link set lo up\n")
	if readOnly {
		script.WriteString(`awk '{print $5}' /proc/self/mountinfo | while read -r m; do
	case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue;; esac
	mount -o remount,bind,ro "$m"
done
`)
	}
	for _, m := range c.VolumeMounts {
		if !emptyDirs[m.Name] {
			t.Fatalf("volume mount %s: only emptyDir volumes are emulated", m.Name)
		}
		fmt.Fprintf(&script, "mount -t tmpfs -o mode=1777,nosuid,nodev %s %s\n", m.Name, shellQuote(m.MountPath))
	}
	sc := pod.SecurityContext
	command := []string{"setpriv", "--reuid", strconv.FormatInt(*sc.RunAsUser, 10), "--regid", strconv.FormatInt(*sc.RunAsGroup, 10),
		"--clear-groups", "--no-new-privs", "--bounding-set", "-all", "--inh-caps", "-all", "env", "-i"}
	env := containerEnv(t, img, c)
	workers := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "WEB_CONCURRENCY="); ok {
			workers = v
		}
	}
	if n, err := strconv.Atoi(workers); err != nil || n < 2 {
		t.Fatalf("WEB_CONCURRENCY=%q: this test wants the manifest's workers mode (2 or more)", workers)
	}
	command = append(command, env...)
	command = append(command, filepath.Join(root, img.entrypoint))
	command = append(command, c.Args...)
	var quoted []string
	for _, word := range command {
		quoted = append(quoted, shellQuote(word))
	}
	port := 0
	for _, p := range c.Ports {
		if p.Name == c.ReadinessProbe.HTTPGet.Port.StrVal {
			port = int(p.ContainerPort)
		}
	}
	probe := fmt.Sprintf("http://127.0.0.1:%d%s", port, c.ReadinessProbe.HTTPGet.Path)
	fmt.Fprintf(&script, `cd %s
touch /m0serve-deploy-test 2>/dev/null && echo "the root file system is writable" && exit 1
%s &
server=$!
python3 - %s $server <<'EOF'
import sys, time, urllib.request
def running(pid):
    try:
        with open("/proc/%%s/stat" %% pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
for _ in range(600):
    if not running(sys.argv[2]):
        print("probe: the server exited")
        break
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
            print("probe:", r.status, r.read()[:40])
            break
    except OSError:
        time.sleep(0.1)
else:
    print("probe: no answer in 60 s")
EOF
kill -TERM $server
status=0
wait $server || status=$?
echo "server exit: $status"
`, shellQuote(filepath.Join(root, img.workdir)), strings.Join(quoted, " "), shellQuote(probe))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--net", "--propagation", "private", "--", "sh", "-c", script.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s\nscript:\n%s", err, out, script.String())
	}
	text := string(out)
	for _, want := range []string{"probe: 200 ", "server exit: 0", workers + " workers ready"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the output:\n%s", want, text)
		}
	}
	t.Logf("%s", out)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
