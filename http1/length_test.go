package http1

import "testing"

func TestLengthReader(t *testing.T) {
	tests := []struct {
		remaining int64
		in        string
		data      string
		done      bool
		left      int64
	}{
		{5, "hello", "hello", true, 0},
		{5, "helloGET /", "hello", true, 0},
		{5, "hel", "hel", false, 2},
		{5, "", "", false, 5},
		{0, "GET /", "", true, 0},
		{-1, "x", "", true, -1}, // a negative length is nothing to read
	}
	for _, tt := range tests {
		r := LengthReader{Remaining: tt.remaining}
		data, done := r.Take([]byte(tt.in))
		if string(data) != tt.data || done != tt.done || r.Remaining != tt.left {
			t.Errorf("Take(%q) with %d left = %q, %v, %d left; want %q, %v, %d",
				tt.in, tt.remaining, data, done, r.Remaining, tt.data, tt.done, tt.left)
		}
		if cap(data) != len(data) {
			t.Errorf("Take(%q): data can be appended into the next message", tt.in)
		}
	}
}

// A body split across reads comes out whole, and what follows it is left.
func TestLengthReaderSplits(t *testing.T) {
	in := []byte("0123456789abcdefNEXT")
	for step := 1; step <= len(in); step++ {
		r := LengthReader{Remaining: 16}
		var got []byte
		pos, done := 0, false
		for !done {
			end := min(pos+step, len(in))
			var data []byte
			data, done = r.Take(in[pos:end])
			got = append(got, data...)
			pos += len(data)
		}
		if string(got) != "0123456789abcdef" || string(in[pos:]) != "NEXT" {
			t.Fatalf("step %d: body %q, left %q", step, got, in[pos:])
		}
	}
}
