package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// buildPeers builds the peer servers into bench/peers/bin and returns, per
// peer, why it could not be built ("" when it was). go build is cached, so
// rebuilding on every run costs little and never measures a stale binary.
func buildPeers(ctx context.Context, benchDir string) map[string]string {
	peersDir := filepath.Join(benchDir, "peers")
	failures := map[string]string{}
	steps := []struct {
		name string
		argv []string
	}{
		{"fasthttp", []string{"go", "build", "-ldflags=-checklinkname=0", "-o", "bin/fasthttp", "./fasthttp"}},
		{"nethttp", []string{"go", "build", "-ldflags=-checklinkname=0", "-o", "bin/nethttp", "./nethttp"}},
		{"floor", []string{"gcc", "-O2", "-Wall", "-o", "bin/floor", "floor/floor.c"}},
	}
	for _, step := range steps {
		cmd := exec.CommandContext(ctx, step.argv[0], step.argv[1:]...)
		cmd.Dir = peersDir
		if out, err := cmd.CombinedOutput(); err != nil {
			failures[step.name] = fmt.Sprintf("build failed: %v: %s", err, lastLines(string(out), 3))
		}
	}
	return failures
}

// nativeArms is the built-in arm list: m0serve (one arm per backend its
// --help offers), then the peers. Arms that cannot run carry a SkipReason.
func nativeArms(ctx context.Context, root, benchDir string, buildFailures map[string]string) []Arm {
	arms := m0serveArms(ctx, root)
	peerBin := filepath.Join(benchDir, "peers", "bin")
	peers := []Arm{
		{Name: "fasthttp", Command: []string{filepath.Join(peerBin, "fasthttp"), "-addr", "{addr}"}},
		{Name: "nethttp", Command: []string{filepath.Join(peerBin, "nethttp"), "-addr", "{addr}"}},
		{Name: "floor", Command: []string{filepath.Join(peerBin, "floor"), "-addr", "{addr}"}},
	}
	for _, peer := range peers {
		peer.Kind = "native"
		peer.Peer = true
		peer.SkipReason = buildFailures[peer.Name]
		arms = append(arms, peer)
	}
	return arms
}

// m0serveArms probes bin/m0serve's --help: a second arm on the epoll
// backend when the binary offers --backend, and --workers 1 when it offers
// workers (one pinned core serves one worker).
func m0serveArms(ctx context.Context, root string) []Arm {
	binary := filepath.Join(root, "bin", "m0serve")
	base := Arm{Name: "m0serve", Kind: "native",
		Command: []string{binary, "--native", "hello", "--host", "{host}", "--port", "{port}"}}
	if _, err := os.Stat(binary); err != nil {
		base.SkipReason = "bin/m0serve not built (make build)"
		return []Arm{base}
	}
	probeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// --help may exit non-zero (Go's flag package exits 2 on -help); only
	// the text matters.
	help, _ := exec.CommandContext(probeCtx, binary, "--help").CombinedOutput()
	text := string(help)
	if !strings.Contains(text, "native") {
		base.SkipReason = "bin/m0serve --help does not offer --native"
		return []Arm{base}
	}
	if strings.Contains(text, "--workers") || strings.Contains(text, "-workers") {
		base.Command = append(base.Command, "--workers", "1")
	}
	if !strings.Contains(text, "backend") || !strings.Contains(text, "epoll") {
		return []Arm{base}
	}
	uring := base
	uring.Name = "m0serve-uring"
	uring.Command = append(append([]string{}, base.Command...), "--backend", "uring")
	epoll := base
	epoll.Name = "m0serve-epoll"
	epoll.Command = append(append([]string{}, base.Command...), "--backend", "epoll")
	return []Arm{uring, epoll}
}

// lastLines keeps the end of a tool's output for an error message.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
