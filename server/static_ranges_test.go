package server

import "testing"

func TestParseRanges(t *testing.T) {
	for _, c := range []struct {
		header string
		want   []byteRange
		ok     bool
	}{
		{"bytes=0-9", []byteRange{{0, 10}}, true},
		{"bytes=0-9,20-29", []byteRange{{0, 30}}, true},              // 10 bytes apart: one part
		{"bytes=0-9,200-209", []byteRange{{0, 10}, {200, 10}}, true}, // apart
		{"bytes=200-209,0-9", []byteRange{{200, 10}, {0, 10}}, true}, // the client's order
		{"bytes=0-9,5-14", []byteRange{{0, 15}}, true},               // overlapping
		{"bytes=-10", []byteRange{{990, 10}}, true},
		{"bytes=990-2000", []byteRange{{990, 10}}, true},
		{"bytes=5000-", nil, true}, // 416
		{"bytes=0-9,5000-", []byteRange{{0, 10}}, true},
		{"bytes=500-999,0-999", nil, false}, // more than the file
		{"bytes=9-0", nil, false},
		{"items=0-9", nil, false},
		{"bytes=0-9,,", []byteRange{{0, 10}}, true},
	} {
		got, ok := parseRanges(c.header, 1000)
		if ok != c.ok || len(got) != len(c.want) {
			t.Errorf("%q: %v %v, want %v %v", c.header, got, ok, c.want, c.ok)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: %v, want %v", c.header, got, c.want)
			}
		}
	}
	many := "bytes=0-0"
	for i := 0; i < maxRanges; i++ {
		many += ",0-0"
	}
	if _, ok := parseRanges(many, 1000); ok {
		t.Errorf("%d ranges: not ignored", maxRanges+1)
	}
}
