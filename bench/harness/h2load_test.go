package main

import "testing"

// h2load 1.52's report, as make bench-h2 reads it.
const h2loadReport = `starting benchmark...
spawning thread #0: 16 total client(s). 10 total requests
Application protocol: h2c
progress: 10% done

finished in 2.00s, 45678.50 req/s, 1.90MB/s
requests: 91357 total, 91517 started, 91357 done, 91350 succeeded, 7 failed, 0 errored, 0 timeout
status codes: 91350 2xx, 0 3xx, 7 4xx, 0 5xx
traffic: 3.80MB (3984123) total, 1.05MB (1099999) headers (space savings 93.10%), 1.13MB (1187550) data
                     min         max         mean         sd        +/- sd
time for request:      125us     12.10ms      3.46ms      1.01ms    70.12%
`

func TestParseH2load(t *testing.T) {
	r, err := parseH2load(h2loadReport)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 91350 || r.RPS != 45678.50 || r.Seconds != 2 || r.Non2xx != 7 ||
		r.SocketErrors != "failed 7, errored 0, timeout 0" || r.P50us != 0 {
		t.Fatalf("%+v", r)
	}
	if _, err := parseH2load("starting benchmark...\n"); err == nil {
		t.Fatal("a report without totals parsed")
	}
}
