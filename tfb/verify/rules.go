package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The rules below are TechEmpower's, as their toolset checks them
// (FrameworkBenchmarks toolset/test_types/verifications.py,
// verify_headers and verify_helloworld_object; plaintext/plaintext.py;
// json/json.py), made strict where the toolset only warns: extra bytes in
// a body, extra JSON keys and a Date in another format fail here.

// accept are the Accept headers their wrk runs send (plaintext.py,
// json.py: get_script_variables).
var accept = map[string]string{
	"plaintext": "text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7",
	"json":      "application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7",
}

// contentTypes are verify_headers' patterns.
var contentTypes = map[string]*regexp.Regexp{
	"plaintext": regexp.MustCompile(`^text/plain(; ?charset=(UTF|utf)-8)?$`),
	"json":      regexp.MustCompile(`^application/json(; ?charset=(UTF|utf)-8)?$`),
}

// pipelineDepth is how many plaintext requests their wrk script
// (pipeline.lua, run with "16") sends back to back on a connection.
const pipelineDepth = 16

// dateFormat is verify_headers' '%a, %d %b %Y %H:%M:%S %Z'.
const dateFormat = "Mon, 02 Jan 2006 15:04:05 MST"

// checkHeaders is verify_headers without its second request: Server,
// Date, Content-Type present; Content-Length or Transfer-Encoding; the
// Date in the HTTP format; the Content-Type the test's.
func checkHeaders(test string, h http.Header, chunked bool) []string {
	var problems []string
	for _, name := range []string{"Server", "Date", "Content-Type"} {
		if h.Get(name) == "" {
			problems = append(problems, "required response header missing: "+name)
		}
	}
	if h.Get("Content-Length") == "" && !chunked {
		problems = append(problems, "neither Content-Length nor Transfer-Encoding")
	}
	if date := h.Get("Date"); date != "" {
		if _, err := time.Parse(dateFormat, date); err != nil {
			problems = append(problems, fmt.Sprintf("Date %q is not %s", date, dateFormat))
		}
	}
	if ct := h.Get("Content-Type"); ct != "" && !contentTypes[test].MatchString(ct) {
		problems = append(problems, fmt.Sprintf("Content-Type %q does not match %s", ct, contentTypes[test]))
	}
	return problems
}

// checkBody: plaintext is exactly "Hello, World!"; json is one object
// {"message":"Hello, World!"}, nothing else, at most 27 bytes.
func checkBody(test string, body []byte) []string {
	if len(body) == 0 {
		return []string{"empty response"}
	}
	switch test {
	case "plaintext":
		if string(body) != "Hello, World!" {
			return []string{fmt.Sprintf("body %q, want exactly \"Hello, World!\"", body)}
		}
	case "json":
		var object map[string]any
		if err := json.Unmarshal(body, &object); err != nil {
			return []string{fmt.Sprintf("invalid JSON object %q: %v", body, err)}
		}
		var problems []string
		if message, ok := object["message"].(string); !ok || message != "Hello, World!" {
			problems = append(problems, fmt.Sprintf("message %v, want \"Hello, World!\"", object["message"]))
		}
		for key := range object {
			if key != "message" {
				problems = append(problems, "extra JSON key "+key)
			}
		}
		if len(body) > 27 {
			problems = append(problems, fmt.Sprintf("%d bytes where 27 do (whitespace?)", len(body)))
		}
		return problems
	}
	return nil
}

// request is one GET as their verifier and wrk send it.
func request(test, url string) (*http.Response, []byte, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", accept[test])
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// checkOne is one request's status, headers and body.
func checkOne(test string, resp *http.Response, body []byte) []string {
	var problems []string
	if resp.StatusCode != 200 {
		problems = append(problems, fmt.Sprintf("status %d", resp.StatusCode))
	}
	chunked := len(resp.TransferEncoding) > 0
	problems = append(problems, checkHeaders(test, resp.Header, chunked)...)
	return append(problems, checkBody(test, body)...)
}

// checkPipelined sends pipelineDepth plaintext requests in one write, as
// pipeline.lua does, and checks every response.
func checkPipelined(addr, path string) []string {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return []string{err.Error()}
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	one := "GET " + path + " HTTP/1.1\r\nHost: tfb-server\r\nAccept: " + accept["plaintext"] + "\r\nConnection: keep-alive\r\n\r\n"
	if _, err := conn.Write([]byte(strings.Repeat(one, pipelineDepth))); err != nil {
		return []string{err.Error()}
	}
	r := bufio.NewReader(conn)
	for i := 0; i < pipelineDepth; i++ {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return []string{fmt.Sprintf("pipelined response %d of %d: %v", i+1, pipelineDepth, err)}
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return []string{fmt.Sprintf("pipelined response %d of %d: %v", i+1, pipelineDepth, err)}
		}
		if problems := checkOne("plaintext", resp, body); len(problems) > 0 {
			for j := range problems {
				problems[j] = fmt.Sprintf("pipelined response %d of %d: %s", i+1, pipelineDepth, problems[j])
			}
			return problems
		}
	}
	return nil
}

// urlPaths are the benchmark_config.json routes; plaintext.py wants that
// one at least 10 characters ("/plaintext").
var urlPaths = map[string]string{"plaintext": "/plaintext", "json": "/json"}

// verify checks a running server at addr: both tests' responses, the
// plaintext test pipelined, and a Date that changes between two requests
// 3 s apart (verify_headers sleeps 3 s too).
func verify(addr string, pause func()) []string {
	var problems []string
	first := map[string]string{}
	for _, test := range []string{"plaintext", "json"} {
		resp, body, err := request(test, "http://"+addr+urlPaths[test])
		if err != nil {
			problems = append(problems, test+": "+err.Error())
			continue
		}
		for _, p := range checkOne(test, resp, body) {
			problems = append(problems, test+": "+p)
		}
		first[test] = resp.Header.Get("Date")
	}
	for _, p := range checkPipelined(addr, urlPaths["plaintext"]) {
		problems = append(problems, "plaintext: "+p)
	}
	pause()
	for _, test := range []string{"plaintext", "json"} {
		resp, _, err := request(test, "http://"+addr+urlPaths[test])
		if err != nil {
			problems = append(problems, test+": "+err.Error())
			continue
		}
		if date := resp.Header.Get("Date"); date != "" && date == first[test] {
			problems = append(problems, fmt.Sprintf("%s: Date %q cached: the same on requests 3 s apart", test, date))
		}
	}
	return problems
}
