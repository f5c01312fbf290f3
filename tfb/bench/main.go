// Command bench runs TechEmpower's plaintext and json tests the way their
// toolset's wrk commands do (TFBVerifier src/test_type/plaintext.rs and
// json.rs: the Host and Accept headers, keep-alive, --timeout 8; plaintext
// pipelined 16 deep with pipeline.lua) against the three m0serve variants
// of tfb/ and their peers: fasthttp (beside the native handler), uvicorn
// (ASGI), gunicorn and uWSGI (WSGI), each one process on one core, wrk on
// another. The arms alternate within each round, and beside requests per
// second each row gives the server's CPU time per request (its process
// tree's utime+stime over the run). `make bench-tfb` runs it from the
// repository root.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// arm is one server under test; {addr}, {host} and {port} in its command
// are filled in.
type arm struct {
	name    string
	kind    string // what it is beside: native, wsgi, asgi
	command []string
}

var arms = []arm{
	{"m0serve-native", "native", []string{"bin/m0serve", "--host", "{host}", "--port", "{port}", "--native", "tfb"}},
	{"fasthttp", "native", []string{"bench/peers/bin/tfbfasthttp", "-addr", "{addr}"}},
	{"m0serve-wsgi", "wsgi", []string{"bin/m0serve", "--host", "{host}", "--port", "{port}", "--app-dir", "tfb", "app_wsgi:app"}},
	{"gunicorn", "wsgi", []string{"/usr/bin/python3", "-m", "gunicorn", "-k", "gthread", "--threads", "1", "-w", "1",
		"-b", "{addr}", "--chdir", "tfb", "app_wsgi:app"}},
	{"uwsgi", "wsgi", []string{"uwsgi", "--plugin", "python3", "--http11-socket", "{addr}", "--master", "--processes", "1",
		"--die-on-term", "--need-app", "--disable-logging", "--pythonpath", "tfb", "--module", "app_wsgi:app"}},
	{"m0serve-asgi", "asgi", []string{"bin/m0serve", "--host", "{host}", "--port", "{port}", "--app-dir", "tfb", "app_asgi:app"}},
	{"uvicorn", "asgi", []string{"/usr/bin/python3", "-m", "uvicorn", "--host", "{host}", "--port", "{port}", "--loop", "uvloop",
		"--http", "httptools", "--workers", "1", "--no-access-log", "--log-level", "warning", "--app-dir", "tfb", "app_asgi:app"}},
}

// level is one wrk run shape: the test, its connections, pipelined or not.
type level struct {
	test        string
	connections int
}

func (l level) pipelined() bool { return l.test == "plaintext" }

const accept = "text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"
const acceptJSON = "application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7"

type result struct {
	rps, cpuPerRequest float64 // requests/s, µs of server CPU per request
	errors             string
}

func main() {
	rounds := flag.Int("rounds", 2, "rounds; the arms alternate within each")
	duration := flag.Int("duration", 5, "seconds per measured wrk run (TechEmpower: 15)")
	plaintextLevels := flag.String("plaintext", "256,1024,4096", "plaintext connection counts (TechEmpower: 256,1024,4096,16384)")
	jsonLevels := flag.String("json", "16,64,256,512", "json connection counts (TechEmpower: 16,32,64,128,256,512)")
	serverCPU := flag.String("server-cpu", "0", "taskset CPU list for the servers")
	loadCPU := flag.String("load-cpu", "1", "taskset CPU list for wrk")
	flag.Parse()

	var levels []level
	for _, spec := range []struct{ test, list string }{{"plaintext", *plaintextLevels}, {"json", *jsonLevels}} {
		for _, field := range strings.Split(spec.list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(field))
			if err != nil || n < 1 {
				fatalf("bench-tfb: -%s: %q is not a connection count", spec.test, field)
			}
			levels = append(levels, level{spec.test, n})
		}
	}
	type running struct {
		arm
		addr string
		cmd  *exec.Cmd
	}
	var servers []running
	defer func() {
		for _, s := range servers {
			s.cmd.Process.Signal(syscall.SIGTERM)
			s.cmd.Wait()
		}
	}()
	for _, a := range arms {
		if _, err := os.Stat(a.command[0]); err != nil {
			if _, err := exec.LookPath(a.command[0]); err != nil {
				fmt.Printf("bench-tfb: %s: skipped: %s not found\n", a.name, a.command[0])
				continue
			}
		}
		addr := freeAddr()
		host, port, _ := net.SplitHostPort(addr)
		args := make([]string, len(a.command))
		for i, arg := range a.command {
			args[i] = strings.NewReplacer("{addr}", addr, "{host}", host, "{port}", port).Replace(arg)
		}
		cmd := exec.Command("taskset", append([]string{"-c", *serverCPU}, args...)...)
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			fatalf("bench-tfb: %s: %v", a.name, err)
		}
		servers = append(servers, running{a, addr, cmd})
		if !waitListening(addr, 30*time.Second) {
			fatalf("bench-tfb: %s did not listen on %s within 30 s", a.name, addr)
		}
	}

	results := map[string]map[level][]result{}
	for round := 0; round < *rounds; round++ {
		for _, l := range levels {
			for i := range servers {
				// Rotate the order every round so no arm always runs first.
				s := servers[(i+round)%len(servers)]
				url := "http://" + s.addr + "/" + l.test
				runWrk(*loadCPU, url, l, 1) // warm-up, unrecorded
				r := measure(s.cmd.Process.Pid, *loadCPU, url, l, *duration)
				if results[s.name] == nil {
					results[s.name] = map[level][]result{}
				}
				results[s.name][l] = append(results[s.name][l], r)
				fmt.Fprintf(os.Stderr, "bench-tfb: round %d %s c%d %s: %.0f req/s, %.1f µs CPU/req %s\n",
					round+1, l.test, l.connections, s.name, r.rps, r.cpuPerRequest, r.errors)
			}
		}
	}

	fmt.Printf("\n| test | connections | server | requests/s (median of %d) | server CPU per request | errors |\n|---|---:|---|---:|---:|---|\n", *rounds)
	for _, l := range levels {
		for _, s := range servers {
			rs := results[s.name][l]
			sort.Slice(rs, func(i, j int) bool { return rs[i].rps < rs[j].rps })
			m := rs[len(rs)/2]
			fmt.Printf("| %s | %d | %s | %.0f | %.1f µs | %s |\n", l.test, l.connections, s.name, m.rps, m.cpuPerRequest, m.errors)
		}
	}
}

// measure runs wrk once and reads the server tree's CPU time around it.
func measure(pid int, loadCPU, url string, l level, seconds int) result {
	before := treeCPU(pid)
	out := runWrk(loadCPU, url, l, seconds)
	used := treeCPU(pid) - before
	r := result{}
	if m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindStringSubmatch(out); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	var total float64
	if m := regexp.MustCompile(`(\d+) requests in`).FindStringSubmatch(out); m != nil {
		total, _ = strconv.ParseFloat(m[1], 64)
	}
	if total > 0 {
		r.cpuPerRequest = used.Seconds() * 1e6 / total
	}
	var errs []string
	for _, re := range []*regexp.Regexp{regexp.MustCompile(`Socket errors: [^\n]+`), regexp.MustCompile(`Non-2xx or 3xx responses: \d+`)} {
		if m := re.FindString(out); m != "" {
			errs = append(errs, m)
		}
	}
	r.errors = strings.Join(errs, "; ")
	return r
}

// runWrk is TechEmpower's wrk command (one thread: wrk has one core).
func runWrk(loadCPU, url string, l level, seconds int) string {
	header := accept
	if l.test == "json" {
		header = acceptJSON
	}
	args := []string{"-c", loadCPU, "wrk", "-H", "Host: tfb-server", "-H", "Accept: " + header, "-H", "Connection: keep-alive",
		"--latency", "-d", strconv.Itoa(seconds), "-c", strconv.Itoa(l.connections), "--timeout", "8", "-t", "1", url}
	if l.pipelined() {
		args = append(args, "-s", filepath.Join("bench", "pipeline.lua"), "--", "16")
	}
	out, err := exec.Command("taskset", args...).CombinedOutput()
	if err != nil {
		fatalf("bench-tfb: wrk %s: %v\n%s", url, err, out)
	}
	return string(out)
}

// treeCPU is the utime+stime of pid and all its descendants.
func treeCPU(pid int) time.Duration {
	children := map[int][]int{}
	var ticks int64
	stats := map[int][2]int64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state ppid ... utime(14) stime(15).
		rest := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		ppid, _ := strconv.Atoi(rest[1])
		utime, _ := strconv.ParseInt(rest[11], 10, 64)
		stime, _ := strconv.ParseInt(rest[12], 10, 64)
		children[ppid] = append(children[ppid], p)
		stats[p] = [2]int64{utime, stime}
	}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		ticks += stats[p][0] + stats[p][1]
		queue = append(queue, children[p]...)
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("bench-tfb: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitListening(addr string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
