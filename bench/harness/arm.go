package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Arm is one server under test, held as data: a name, a command line and
// an environment. The native arms (m0serve, fasthttp, net/http, the C
// floor) are built in; arms for Python servers (uvicorn, gunicorn, uWSGI,
// m0serve running a WSGI or ASGI app) are entries of the same shape, read
// from a JSON file with -extra-arms, so adding one needs no code.
type Arm struct {
	Name string `json:"name"`
	// Kind groups rows in the table: "native", "wsgi" or "asgi".
	Kind string `json:"kind"`
	// Command is the argv; "{host}", "{port}" and "{addr}" (host:port) in
	// any argument are replaced by where the harness wants it to listen.
	Command []string `json:"command"`
	// Env entries (KEY=VALUE) are added to the harness's own environment.
	Env []string `json:"env,omitempty"`
	// Dir is the working directory; empty means the repository root.
	Dir string `json:"dir,omitempty"`
	// Peer marks an arm every row of its group is compared against in the
	// table.
	Peer bool `json:"peer,omitempty"`
	// Group names the arms that serve the same response and so may be
	// compared: ratios are taken only against peers of the row's own
	// group (a Flask JSON row against a bare hello peer would say nothing
	// about either server). Empty is the native hello group.
	Group string `json:"group,omitempty"`
	// TLS: the arm serves HTTPS (wrk and the parity GET speak TLS to it,
	// trusting any certificate: make bench-tls makes a throwaway one).
	TLS bool `json:"tls,omitempty"`
	// ExpectBody is the body the parity GET must return; empty means
	// "Hello, World!", what every hello arm sends.
	ExpectBody string `json:"expect_body,omitempty"`
	// Requires lists files (a path containing "/") or executables (looked
	// up on PATH) that must exist; when one is missing the arm is skipped,
	// not failed.
	Requires []string `json:"requires,omitempty"`
	// RequiresHelp lists flags the command's --help must mention; when
	// one is missing (a binary older than the flag) the arm is skipped.
	RequiresHelp []string `json:"requires_help,omitempty"`
	// VersionCommand, when set, is run once at start; the first line of
	// its output goes into the result (ArmRecord.Version), so a table can
	// be traced to the server release it measured.
	VersionCommand []string `json:"version_command,omitempty"`
	// SkipReason, when set, says why the arm is not measured.
	SkipReason string `json:"skip_reason,omitempty"`
	// Path is the target of every request (parity's and wrk's); empty
	// is "/".
	Path string `json:"path,omitempty"`
	// PostBody, or BodyBytes bytes of "x", makes every request a POST with
	// that body and ContentType (a framework's validated JSON body, an
	// upload).
	PostBody    string `json:"post_body,omitempty"`
	BodyBytes   int    `json:"body_bytes,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// ExpectLength, when ExpectBody is empty, is the length parity
	// requires of the body instead of its bytes: a static file, a stream.
	ExpectLength int `json:"expect_length,omitempty"`
	// WebSocketPath, when set, makes the arm a WebSocket server: it echoes
	// every message there, and wsload, not wrk, drives it.
	WebSocketPath string `json:"websocket_path,omitempty"`
	// BroadcastPath, when set, is where the arm sends every message a
	// client sends to every connected client.
	BroadcastPath string `json:"broadcast_path,omitempty"`
	// HTTP2: the arm speaks HTTP/2 (h2c by prior knowledge, or h2 by ALPN
	// with TLS): h2load drives it, in the HTTP/2 scenarios only.
	HTTP2 bool `json:"http2,omitempty"`
}

// Applies says whether the arm runs in a scenario: HTTP arms in the HTTP
// scenarios and, with wrk, in the WebSocket echo ones (the request a
// message is read against); WebSocket arms in the echo scenarios, and in
// the broadcast ones when they serve a broadcast path.
func (a Arm) Applies(s Scenario) bool {
	if a.Posts() && (s.WebSocket != "" || s.PipelineDepth > 1 || s.H2Streams > 0) {
		return false // post.lua sends one request per write
	}
	if a.HTTP2 && s.H2Streams == 0 {
		return false // wrk speaks HTTP/1.1 only
	}
	switch s.WebSocket {
	case "":
		return a.WebSocketPath == ""
	case "echo":
		return true
	case "broadcast":
		return a.BroadcastPath != ""
	}
	return false
}

// Argv is the command line with the listen address filled in.
func (a Arm) Argv(host string, port int) []string {
	addr := host + ":" + strconv.Itoa(port)
	replacer := strings.NewReplacer("{host}", host, "{port}", strconv.Itoa(port), "{addr}", addr)
	argv := make([]string, len(a.Command))
	for i, arg := range a.Command {
		argv[i] = replacer.Replace(arg)
	}
	return argv
}

// Target is the request's path.
func (a Arm) Target() string {
	if a.Path == "" {
		return "/"
	}
	return a.Path
}

// Posts says whether every request is a POST of RequestBody.
func (a Arm) Posts() bool { return a.PostBody != "" || a.BodyBytes > 0 }

// RequestBody is what a POST arm's requests carry.
func (a Arm) RequestBody() []byte {
	if a.PostBody != "" {
		return []byte(a.PostBody)
	}
	return bytes.Repeat([]byte("x"), a.BodyBytes)
}

// Body is what the arm must answer to the parity GET.
func (a Arm) Body() string {
	if a.ExpectBody == "" {
		return helloBody
	}
	return a.ExpectBody
}

// Missing names the first requirement that is not there, or "" when all
// are (the command's own executable counts as a requirement).
func (a Arm) Missing(root string) string {
	if len(a.Command) == 0 {
		return "no command"
	}
	needs := append([]string{a.Command[0]}, a.Requires...)
	for _, need := range needs {
		if strings.Contains(need, "/") {
			path := need
			if !strings.HasPrefix(path, "/") {
				path = root + "/" + path
			}
			if _, err := os.Stat(path); err != nil {
				return need + " not found"
			}
			continue
		}
		if _, err := exec.LookPath(need); err != nil {
			return need + " not on PATH"
		}
	}
	if len(a.RequiresHelp) > 0 {
		binary := a.Command[0]
		if strings.Contains(binary, "/") && !strings.HasPrefix(binary, "/") {
			binary = root + "/" + binary
		}
		// --help may exit non-zero (Go's flag package exits 2); only the
		// text matters.
		help, _ := exec.Command(binary, "--help").CombinedOutput()
		for _, flag := range a.RequiresHelp {
			if !strings.Contains(string(help), flag) {
				return a.Command[0] + " --help does not offer " + flag
			}
		}
	}
	return ""
}

// LoadArms reads a JSON array of arms (the -extra-arms file).
func LoadArms(path string) ([]Arm, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read arms %s: %w", path, err)
	}
	var arms []Arm
	if err := json.Unmarshal(data, &arms); err != nil {
		return nil, fmt.Errorf("parse arms %s: %w", path, err)
	}
	for i, arm := range arms {
		if arm.Name == "" || len(arm.Command) == 0 {
			return nil, fmt.Errorf("arms %s: entry %d needs a name and a command", path, i)
		}
		if arms[i].Kind == "" {
			arms[i].Kind = "native"
		}
	}
	return arms, nil
}

// uniqueNames refuses two arms of one name: results, logs and the table
// are keyed by it.
func uniqueNames(arms []Arm) error {
	seen := map[string]bool{}
	for _, arm := range arms {
		if seen[arm.Name] {
			return fmt.Errorf("two arms named %q", arm.Name)
		}
		seen[arm.Name] = true
	}
	return nil
}
