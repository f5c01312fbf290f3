// Command verify checks the TechEmpower entry in tfb/ the way their
// toolset verifies the plaintext and json tests (rules.go names the
// source), and fails on any violation: each variant of
// benchmark_config.json is started from the m0serve binary as its
// Dockerfile starts it, on loopback, and checked over HTTP; the Python
// apps are also called directly to show the json object is serialised for
// each request, not cached. `make tfb-verify` runs it.
//
//	go run ./tfb/verify -binary bin/m0serve
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// variant is what verify knows of a benchmark_config.json test beside
// its Dockerfile (which says how m0serve is started): the Python app, if
// any.
type variant struct {
	module       string // app module in tfb/, "" for the native handler
	appInterface string
}

var variants = map[string]variant{
	"default": {module: "app_wsgi", appInterface: "wsgi"},
	"asgi":    {module: "app_asgi", appInterface: "asgi"},
	"native":  {},
}

func main() {
	binary := flag.String("binary", "bin/m0serve", "the m0serve binary to run")
	dir := flag.String("dir", "tfb", "the entry's folder (benchmark_config.json, the apps)")
	python := flag.String("python", "/usr/bin/python3", "the CPython the binary embeds, to call the apps directly")
	flag.Parse()
	failed := false
	report := func(name string, problems []string) {
		if len(problems) == 0 {
			fmt.Printf("tfb-verify: %s: pass\n", name)
			return
		}
		failed = true
		for _, p := range problems {
			fmt.Printf("tfb-verify: %s: FAIL: %s\n", name, p)
		}
	}
	framework, names, problems := configTests(filepath.Join(*dir, "benchmark_config.json"))
	report("benchmark_config.json", problems)
	for _, name := range names {
		v := variants[name]
		entrypoint, cmd, err := dockerCommand(dockerfileName(*dir, framework, name))
		if err != nil {
			report(name, []string{err.Error()})
			continue
		}
		argv, workers := serverCommand(entrypoint, cmd, *binary, []string{"--host", "127.0.0.1", "--port", "0", "--app-dir", *dir})
		if !workers {
			report(name+": Dockerfile", []string{"m0serve starts without --workers: one core of TechEmpower's machine"})
		}
		addr, stop, err := startServer(argv)
		if err != nil {
			report(name, []string{err.Error()})
			continue
		}
		report(name, verify(addr, func() { time.Sleep(3 * time.Second) }))
		if err := stop(); err != nil {
			report(name, []string{err.Error()})
		}
		if v.module != "" {
			report(name+": json serialised per request", perRequest(*python, *dir, v.module, v.appInterface))
		}
	}
	if failed {
		os.Exit(1)
	}
}

// configTests reads the framework and test names of
// benchmark_config.json and checks that each test has a variant here,
// the routes verify uses, and the language its variant is written in
// (Python for an app, Go for the native handler).
func configTests(path string) (string, []string, []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, []string{err.Error()}
	}
	var config struct {
		Framework string                      `json:"framework"`
		Tests     []map[string]map[string]any `json:"tests"`
	}
	if err := json.Unmarshal(data, &config); err != nil {
		return "", nil, []string{err.Error()}
	}
	var names, problems []string
	for _, group := range config.Tests {
		for name, test := range group {
			names = append(names, name)
			v, ok := variants[name]
			if !ok {
				problems = append(problems, "test "+name+" has no variant in tfb/verify")
			}
			language := "Python"
			if v.module == "" {
				language = "Go"
			}
			if ok && test["language"] != language {
				problems = append(problems, fmt.Sprintf("test %s: language %v, want %s", name, test["language"], language))
			}
			for kind, path := range urlPaths {
				if test[kind+"_url"] != path {
					problems = append(problems, fmt.Sprintf("test %s: %s_url %v, want %s", name, kind, test[kind+"_url"], path))
				}
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		problems = append(problems, "no tests")
	}
	return config.Framework, names, problems
}

var servingLine = regexp.MustCompile(`serving on http://([0-9.]+:[0-9]+)`)

// startServer runs a variant's command line (serverCommand: on a free
// loopback port with the app folder on sys.path) and waits for its
// start line.
func startServer(argv []string) (string, func() error, error) {
	args := argv[1:]
	cmd := exec.Command(argv[0], args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	found := make(chan string, 1)
	var logs strings.Builder
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		done <- cmd.Wait()
	}()
	stop := func() error {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("m0serve %v: %v", args, err)
			}
			return nil
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("m0serve %v: still running 30 s after SIGINT", args)
		}
	}
	select {
	case addr := <-found:
		return addr, stop, nil
	case err := <-done:
		return "", nil, fmt.Errorf("m0serve %v exited before serving: %v\n%s", args, err, logs.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		return "", nil, fmt.Errorf("m0serve %v did not start within 30 s", args)
	}
}

// perRequestScript imports the app, then counts json.dumps calls while
// calling it for /json three times: an app that serialised once at import
// (or cached the bytes) makes fewer than three.
const perRequestScript = `
import asyncio, importlib, json, sys
sys.path.insert(0, sys.argv[1])
app = importlib.import_module(sys.argv[2]).app
calls, real = 0, json.dumps
def counting(*args, **kwargs):
    global calls
    calls += 1
    return real(*args, **kwargs)
json.dumps = counting
bodies = []
for _ in range(3):
    if sys.argv[3] == "wsgi":
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/json", "QUERY_STRING": "", "SERVER_NAME": "tfb",
                   "SERVER_PORT": "8080", "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.url_scheme": "http"}
        bodies.append(b"".join(app(environ, lambda status, headers, exc_info=None: None)))
    else:
        sent = []
        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}
        async def send(message):
            sent.append(message)
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
                 "scheme": "http", "path": "/json", "raw_path": b"/json", "query_string": b"",
                 "root_path": "", "headers": [], "server": ("127.0.0.1", 8080), "client": ("127.0.0.1", 1)}
        asyncio.run(app(scope, receive, send))
        bodies.append(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))
print(calls, json.loads(bodies[0])["message"] if bodies[0] else "")
`

func perRequest(python, dir, module, appInterface string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", perRequestScript, dir, module, appInterface).CombinedOutput()
	if err != nil {
		return []string{fmt.Sprintf("calling %s directly: %v\n%s", module, err, out)}
	}
	if got := strings.TrimSpace(string(out)); got != "3 Hello, World!" {
		return []string{fmt.Sprintf("3 requests to /json made %q json.dumps calls and message; want 3 (one per request)", got)}
	}
	return nil
}
