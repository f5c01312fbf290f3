//go:build linux

package tests

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The deployment examples run as written, but for addresses and paths:
// examples/nginx/m0serve.conf with Debian's nginx in front of the
// FastAPI example, and examples/systemd's units through
// systemd-socket-activate.

// substitute replaces each old of pairs (old, new, old, new...) in text,
// and fails unless each is there exactly once: the test must notice when
// the example it edits changes.
func substitute(t *testing.T, what, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(text, pairs[i]); n != 1 {
			t.Fatalf("%s: %q is there %d times, want once (has the example changed?)", what, pairs[i], n)
		}
		text = strings.Replace(text, pairs[i], pairs[i+1], 1)
	}
	return text
}

// freeTCPAddr is a loopback address nobody listens on (for a program that
// takes a port number rather than a socket).
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitDial waits until something accepts on addr, or fails the test.
func waitDial(t *testing.T, s *server, addr string) {
	t.Helper()
	deadline := time.Now().Add(launchLimit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-s.exit:
			s.done = true
			t.Fatalf("exited before accepting on %s: %v\n%s", addr, err, s.logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing accepts on %s after %v: %v\n%s", addr, launchLimit, err, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startNginx runs Debian's nginx in the foreground (one process, no
// daemon, everything under prefix) with site included in its http
// block, and waits until it accepts on addr.
func startNginx(t *testing.T, prefix, site, addr string) *server {
	t.Helper()
	requireCommand(t, "nginx")
	for _, dir := range []string{"body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		if err := os.MkdirAll(filepath.Join(prefix, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(prefix, "site.conf"), site)
	// master_process off: no workers to switch to nginx's user, so the
	// test's own files and socket are reachable when run as root.
	writeFile(t, filepath.Join(prefix, "nginx.conf"), fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log stderr notice;
events { worker_connections 128; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/site.conf;
}
`, prefix))
	cmd := exec.Command("nginx", "-p", prefix+"/", "-c", filepath.Join(prefix, "nginx.conf"), "-e", "stderr")
	cmd.Env = cleanEnv()
	s, _ := launch(t, cmd, "nginx", regexp.MustCompile(`^$`), 0)
	waitDial(t, s, addr)
	return s
}

// TestExampleNginx: examples/nginx/m0serve.conf with Debian's nginx in
// front of bin/m0serve serving the FastAPI example, over the Unix socket
// the site names and over TCP: nginx serves /static/ itself, the app
// sees the client's address (from X-Forwarded-For, --proxy-headers)
// and the Host the client sent, and the WebSocket chat works through
// the upgrade.
func TestExampleNginx(t *testing.T) {
	requirePythonModules(t, "fastapi")
	site, err := os.ReadFile(filepath.Join(exampleDir(t, "nginx"), "m0serve.conf"))
	if err != nil {
		t.Fatal(err)
	}
	app := exampleDir(t, "fastapi")
	for _, upstream := range []string{"unix", "tcp"} {
		t.Run(upstream, func(t *testing.T) {
			tmp := t.TempDir()
			args := []string{"--proxy-headers", "--access-log", "--app-dir", app, "main:app"}
			var m0 *server
			var server string
			if upstream == "unix" {
				path := filepath.Join(tmp, "m0serve.sock")
				m0 = startReady(t, m0serveCommand(append([]string{"--uds", path}, args...)...),
					regexp.MustCompile(`serving on unix:`+regexp.QuoteMeta(path)), 1)
				server = "server unix:" + path + ";"
			} else {
				m0 = start(t, wsgiVariant(exampleEnv), args...)
				server = "server " + m0.addr + ";"
			}
			addr := freeTCPAddr(t)
			conf := substitute(t, "examples/nginx/m0serve.conf", string(site),
				"server unix:/run/m0serve/m0serve.sock;", server,
				"listen 80;", "listen "+addr+";",
				"listen [::]:80;", "",
				"alias /srv/app/static/;", "alias "+filepath.Join(app, "static")+"/;")
			startNginx(t, filepath.Join(tmp, "nginx"), conf, addr)

			client := &http.Client{Timeout: 30 * time.Second}
			checkChatSite(t, client, "http://"+addr, "nginx")
			req := newRequest(t, "GET", "http://"+addr+"/api/whoami", nil, "")
			req.Host = "chat.example.test"
			if got := getJSON(t, client, req, 200); got["client"] != "127.0.0.1" || got["scheme"] != "http" || got["host"] != "chat.example.test" {
				t.Errorf("GET /api/whoami through nginx: %v", got)
			}
			checkChat(t, "ws://"+addr)

			logs := m0.logs.String()
			if strings.Contains(logs, "/static/") {
				t.Errorf("a /static/ request reached m0serve:\n%s", logs)
			}
			for _, want := range []string{`"GET /api/whoami HTTP/1.1" 200`, `"GET /ws?name=alice HTTP/1.1" 101`} {
				if !strings.Contains(logs, want) {
					t.Errorf("m0serve's access log has no %s:\n%s", want, logs)
				}
			}
		})
	}
}

// unitFile reads a systemd unit's Key=value lines (comments and section
// headers left out; a key given twice keeps both values).
func unitFile(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: not Key=value: %q", path, line)
		}
		keys[key] = append(keys[key], value)
	}
	return keys
}

// unitValue is a key's one value, or fails the test.
func unitValue(t *testing.T, unit map[string][]string, key string) string {
	t.Helper()
	if len(unit[key]) != 1 {
		t.Fatalf("unit has %d %s=, want one", len(unit[key]), key)
	}
	return unit[key][0]
}

// TestExampleSystemd: examples/systemd's units as systemd would run
// them, by systemd-socket-activate: the socket of m0serve.socket's
// ListenStream (in a temporary directory; and a loopback port, the
// TCP form it mentions), the ExecStart of m0serve.service (the binary
// under test for /usr/local/bin/m0serve) in its WorkingDirectory (a
// temporary one holding the FastAPI example as main.py) with its
// Environment (a venv there as VIRTUAL_ENV). The first connection
// starts m0serve, which serves it on the passed socket with the venv.
func TestExampleSystemd(t *testing.T) {
	requireCommand(t, "systemd-socket-activate")
	requirePythonModules(t, "fastapi")
	dir := exampleDir(t, "systemd")
	socket := unitFile(t, filepath.Join(dir, "m0serve.socket"))
	service := unitFile(t, filepath.Join(dir, "m0serve.service"))
	listen := unitValue(t, socket, "ListenStream")
	workDir := unitValue(t, service, "WorkingDirectory")
	execStart := strings.Fields(unitValue(t, service, "ExecStart"))
	if execStart[0] != "/usr/local/bin/m0serve" || execStart[len(execStart)-1] != "main:app" {
		t.Fatalf("ExecStart %q: want /usr/local/bin/m0serve ... main:app", execStart)
	}
	for _, flag := range []string{"--host", "--port", "--uds", "--fd"} {
		for _, arg := range execStart {
			if arg == flag || strings.HasPrefix(arg, flag+"=") {
				t.Fatalf("ExecStart names %s: the socket unit's socket is the one to serve", flag)
			}
		}
	}
	// nginx's upstream (examples/nginx) is the socket unit's socket.
	site, err := os.ReadFile(filepath.Join(exampleDir(t, "nginx"), "m0serve.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(site), "server unix:"+listen+";") {
		t.Errorf("examples/nginx/m0serve.conf's upstream is not m0serve.socket's ListenStream=%s", listen)
	}
	main, err := os.ReadFile(filepath.Join(exampleDir(t, "fastapi"), "main.py"))
	if err != nil {
		t.Fatal(err)
	}

	for _, kind := range []string{"unix", "tcp"} {
		t.Run(kind, func(t *testing.T) {
			tmp := t.TempDir()
			work := filepath.Join(tmp, "app")
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(work, "main.py"), string(main))
			args := []string{}
			var venv string
			for _, env := range service["Environment"] {
				env = strings.ReplaceAll(env, workDir, work)
				if value, ok := strings.CutPrefix(env, "VIRTUAL_ENV="); ok {
					venv = value
				}
				args = append(args, "-E", env)
			}
			if venv == "" {
				t.Fatal("m0serve.service sets no VIRTUAL_ENV")
			}
			// The venv a deployment makes with /usr/bin/python3 -m venv;
			// FastAPI comes from Debian's packages through it.
			if out, err := exec.Command(systemPython, "-m", "venv", "--without-pip", "--system-site-packages", venv).CombinedOutput(); err != nil {
				t.Fatalf("venv: %v\n%s", err, out)
			}
			var address string
			client := &http.Client{Timeout: time.Minute}
			if kind == "unix" {
				if !strings.HasPrefix(listen, "/") {
					t.Fatalf("ListenStream=%s: want the Unix socket's path", listen)
				}
				address = filepath.Join(tmp, "m0serve.sock")
				client = unixClient(address)
				client.Timeout = time.Minute
			} else {
				address = freeTCPAddr(t)
			}
			args = append(append([]string{"-l", address}, args...), binary)
			cmd := exec.Command("systemd-socket-activate", append(args, execStart[1:]...)...)
			cmd.Dir = work
			cmd.Env = cleanEnv()
			s, _ := launch(t, cmd, "systemd-socket-activate", regexp.MustCompile(`^Listening on .* as 3\.$`), 1)

			// The first connection makes systemd-socket-activate exec
			// m0serve, which finds it waiting on the socket.
			base := "http://m0serve"
			if kind == "tcp" {
				base = "http://" + address
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/health", nil)
			if got := getJSON(t, client, req, 200); got["status"] != "ok" {
				t.Fatalf("GET /api/health: %v\n%s", got, s.logs)
			}
			if resp, page := httpGet(t, client, base+"/"); resp.StatusCode != 200 || !strings.Contains(page, "m0serve chat") {
				t.Errorf("GET /: %d\n%s", resp.StatusCode, page)
			}
			want := "serving on unix:" + address
			if kind == "tcp" {
				want = "serving on http://" + address
			}
			logs := s.logs.String()
			for _, line := range []string{"Communication attempt on fd 3.", want, venv} {
				if !strings.Contains(logs, line) {
					t.Errorf("the log does not show %q:\n%s", line, logs)
				}
			}
		})
	}
}
