package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// tfbHandler answers both tests; break, if set, spoils one rule.
func tfbHandler(spoil string) http.Handler {
	cachedJSON := []byte(`{"message":"Hello, World!"}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if spoil != "no Server" {
			w.Header().Set("Server", "test")
		}
		if spoil == "cached Date" {
			w.Header().Set("Date", "Tue, 01 Dec 2026 10:00:00 GMT")
		}
		if spoil == "bad Date" {
			w.Header().Set("Date", time.Now().UTC().Format(time.RFC3339))
		}
		if spoil == "close" {
			w.Header().Set("Connection", "close")
		}
		switch r.URL.Path {
		case "/plaintext":
			w.Header().Set("Content-Type", "text/plain")
			if spoil == "html" {
				w.Header().Set("Content-Type", "text/html")
			}
			body := "Hello, World!"
			if spoil == "newline" {
				body += "\n"
			}
			fmt.Fprint(w, body)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			switch spoil {
			case "spaces":
				fmt.Fprint(w, `{"message": "Hello, World!"}`)
			case "extra key":
				fmt.Fprint(w, `{"message":"Hello, World!","x":1}`)
			case "lower case":
				fmt.Fprint(w, `{"message":"hello, world!"}`)
			default:
				w.Write(cachedJSON)
			}
		default:
			http.NotFound(w, r)
		}
	})
}

func TestVerify(t *testing.T) {
	pause := func() { time.Sleep(1100 * time.Millisecond) } // the Date has a 1 s resolution
	good := httptest.NewServer(tfbHandler(""))
	defer good.Close()
	if problems := verify(strings.TrimPrefix(good.URL, "http://"), pause); len(problems) > 0 {
		t.Fatalf("a server following the rules: %q", problems)
	}
	for spoil, want := range map[string]string{
		"no Server":   "required response header missing: Server",
		"cached Date": "cached",
		"bad Date":    "is not Mon, 02 Jan 2006",
		"html":        "Content-Type \"text/html\"",
		"newline":     "want exactly",
		"spaces":      "28 bytes where 27 do",
		"extra key":   "extra JSON key x",
		"lower case":  "message hello, world!",
		"close":       "pipelined response 2 of 16",
	} {
		t.Run(spoil, func(t *testing.T) {
			s := httptest.NewServer(tfbHandler(spoil))
			defer s.Close()
			problems := verify(strings.TrimPrefix(s.URL, "http://"), pause)
			if !strings.Contains(strings.Join(problems, "\n"), want) {
				t.Errorf("got %q, want a problem with %q", problems, want)
			}
		})
	}
}
