// Command holds measures --realtime's held streams against a running
// server: it opens -n SSE streams (GET -path, each read to the view's
// body), then publishes -rounds times (GET -publish) and waits for every
// stream to read each frame. It prints, as one JSON object, the resident
// memory the server's process tree gained per held stream, the time from
// each publish to its last delivery, and the server's CPU per delivered
// frame (the process tree of -pid, /proc's ticks: the publish request
// included). The same command runs against m0serve and the Mojo m0serve,
// whose wire is the same.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8000", "the server")
	path := flag.String("path", "/events/bench", "the stream view")
	publish := flag.String("publish", "/pub/bench?x", "the view that publishes one frame")
	n := flag.Int("n", 1000, "held streams")
	rounds := flag.Int("rounds", 10, "publishes, each waited for on every stream")
	pid := flag.Int("pid", 0, "the server's (master's) pid: its process tree is measured")
	label := flag.String("label", "", "the arm's name in the output")
	flag.Parse()
	if err := run(*addr, *path, *publish, *label, *n, *rounds, *pid); err != nil {
		fmt.Fprintln(os.Stderr, "holds:", err)
		os.Exit(1)
	}
}

type result struct {
	Label             string  `json:"label"`
	Streams           int     `json:"streams"`
	Rounds            int     `json:"rounds"`
	RSSPerStreamKiB   float64 `json:"rss_per_stream_kib"`
	LastDeliveryMsP50 float64 `json:"last_delivery_ms_p50"`
	LastDeliveryMsMax float64 `json:"last_delivery_ms_max"`
	CPUMicrosPerFrame float64 `json:"cpu_us_per_delivered_frame"`
}

func run(addr, path, publish, label string, n, rounds, pid int) error {
	rssBefore, err := treeRSS(pid)
	if err != nil {
		return err
	}
	frames := make(chan int, n)
	var open sync.WaitGroup
	errs := make(chan error, n)
	conns := make([]net.Conn, n)
	gate := make(chan struct{}, 64) // connections being opened at once
	for i := range n {
		open.Add(1)
		gate <- struct{}{}
		go func() {
			defer open.Done()
			defer func() { <-gate }()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			conns[i] = c
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: bench\r\n\r\n", path)
			r := bufio.NewReader(c)
			if err := readBlock(r); err != nil { // the head
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			if err := readBlock(r); err != nil { // the view's body
				errs <- fmt.Errorf("stream %d: %w", i, err)
				return
			}
			go func() {
				for readBlock(r) == nil {
					frames <- i
				}
			}()
		}()
	}
	open.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	time.Sleep(500 * time.Millisecond) // the server settles
	rssAfter, err := treeRSS(pid)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	var lasts []float64
	cpuBefore, err := treeTicks(pid)
	if err != nil {
		return err
	}
	for range rounds {
		began := time.Now()
		resp, err := client.Get("http://" + addr + publish)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		for got := 0; got < n; got++ {
			select {
			case <-frames:
			case <-time.After(30 * time.Second):
				return fmt.Errorf("a publish reached %d of %d streams", got, n)
			}
		}
		lasts = append(lasts, float64(time.Since(began).Microseconds())/1000)
	}
	cpuAfter, err := treeTicks(pid)
	if err != nil {
		return err
	}
	for _, c := range conns {
		c.Close()
	}
	slices.Sort(lasts)
	out := result{
		Label:             label,
		Streams:           n,
		Rounds:            rounds,
		RSSPerStreamKiB:   float64(rssAfter-rssBefore) / float64(n),
		LastDeliveryMsP50: lasts[len(lasts)/2],
		LastDeliveryMsMax: lasts[len(lasts)-1],
		CPUMicrosPerFrame: float64(cpuAfter-cpuBefore) * 1e6 / clockTicks / float64(n*rounds),
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// readBlock reads up to an empty line: a head ("\r\n\r\n") or an SSE
// frame ("\n\n").
func readBlock(r *bufio.Reader) error {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\n" || line == "\r\n" {
			return nil
		}
	}
}

// clockTicks is USER_HZ: /proc's ticks per second on Linux.
const clockTicks = 100

// tree is pid and its descendants (/proc/PID/task/TID/children).
func tree(pid int) []int {
	var all []int
	pending := []int{pid}
	for len(pending) > 0 {
		p := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		all = append(all, p)
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					pending = append(pending, c)
				}
			}
		}
	}
	return all
}

// treeRSS is the resident memory of pid's tree in KiB.
func treeRSS(pid int) (int64, error) {
	var total int64
	for _, p := range tree(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kib, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				total += kib
			}
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("no resident memory found for pid %d", pid)
	}
	return total, nil
}

// treeTicks is the utime+stime of pid's tree.
func treeTicks(pid int) (uint64, error) {
	var total uint64
	for _, p := range tree(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		for _, i := range []int{11, 12} { // utime, stime (fields 14, 15)
			v, _ := strconv.ParseUint(fields[i], 10, 64)
			total += v
		}
	}
	return total, nil
}
