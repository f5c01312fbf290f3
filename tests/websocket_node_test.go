//go:build linux

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWebSocketNode runs Node's ws client (pinned in tests/package.json,
// installed under tests/node_modules by make test) against --native
// ws-echo and an ASGI echo app: text, binary, permessage-deflate,
// fragments, ping, close codes and 1009.
func TestWebSocketNode(t *testing.T) {
	node := nodeWithWS(t)
	const maxSize = "--ws-max-size=1M"
	t.Run("native", func(t *testing.T) {
		s := start(t, variants[0], "--native", "ws-echo", maxSize)
		runNodeClient(t, node, "ws://"+s.addr+"/")
	})
	t.Run("ASGI", func(t *testing.T) {
		s := startASGI(t, variants[0], "asgi_ws_echo_app:app", maxSize)
		runNodeClient(t, node, "ws://"+s.addr+"/")
	})
}

// nodeWithWS returns the node binary, failing the test unless node and
// the pinned ws package are installed.
func nodeWithWS(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing (make test installs nodejs): %v", err)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "ws", "package.json")); err != nil {
		t.Fatalf("Node's ws package is missing (make test runs npm ci in tests/): %v", err)
	}
	return node
}

func runNodeClient(t *testing.T, node, url string) {
	t.Helper()
	runClientScript(t, node, "ws_node_client.js", url, "deflate-negotiated", "subprotocol", "text", "binary",
		"deflate-echo", "fragmented", "ping", "close-4001", "close-1000", "too-big")
}
