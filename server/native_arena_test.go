package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"testing"
)

func TestArenaQuery(t *testing.T) {
	sums := []struct {
		query string
		sum   int
	}{
		{"a=13&b=42", 55}, {"", 0}, {"a=1", 1}, {"a=-5&b=7", 2}, {"a=x&b=3", 3},
		{"a&b=4", 4}, {"a=&b=5&", 5}, {"a=1234567890123456789&b=6", 6},
	}
	for _, c := range sums {
		if got := querySum([]byte(c.query)); got != c.sum {
			t.Errorf("querySum(%q) = %d, want %d", c.query, got, c.sum)
		}
	}
	values := []struct {
		query string
		value int
		ok    bool
	}{
		{"m=3", 3, true}, {"x=1&m=7", 7, true}, {"mm=2&m=4", 4, true}, {"m=", 0, false},
		{"m=a", 0, false}, {"n=1", 0, false}, {"", 0, false}, {"m=+2", 2, true},
	}
	for _, c := range values {
		if got, ok := queryValue([]byte(c.query), "m"); got != c.value || ok != c.ok {
			t.Errorf("queryValue(%q, m) = %d, %v; want %d, %v", c.query, got, ok, c.value, c.ok)
		}
	}
}

// withDataset loads the harness's dataset (the pinned copy) for a test.
func withDataset(t testing.TB) {
	t.Setenv("DATASET_PATH", "../arena/validate/httparena/data/dataset.json")
	loadArenaDataset(func(format string, args ...any) { t.Fatalf(format, args...) })
	if len(arenaDataset) != 50 {
		t.Fatalf("dataset: %d items, want 50", len(arenaDataset))
	}
	t.Cleanup(func() { arenaDataset = nil })
}

func TestArenaEncode(t *testing.T) {
	withDataset(t)
	var raw []map[string]any
	e := arenaEncoders.Get().(*arenaEncoder)
	for _, c := range []struct{ count, multiplier int }{{1, 3}, {12, 3}, {50, 6}, {60, 2}, {0, 1}} {
		plain, err := e.encode(c.count, c.multiplier, false)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Items []map[string]any `json:"items"`
			Count int              `json:"count"`
		}
		if err := json.Unmarshal(plain, &got); err != nil {
			t.Fatalf("%d items: %v: %s", c.count, err, plain)
		}
		want := min(c.count, 50)
		if got.Count != want || len(got.Items) != want {
			t.Fatalf("/json/%d: count %d, %d items; want %d", c.count, got.Count, len(got.Items), want)
		}
		if raw == nil {
			if err := json.Unmarshal(mustRead(t, "../arena/validate/httparena/data/dataset.json"), &raw); err != nil {
				t.Fatal(err)
			}
		}
		for i, item := range got.Items {
			total := raw[i]["price"].(float64) * raw[i]["quantity"].(float64) * float64(c.multiplier)
			if item["total"] != total || item["name"] != raw[i]["name"] || len(item) != len(raw[i])+1 {
				t.Fatalf("/json/%d?m=%d item %d: %v, want %v with total %v", c.count, c.multiplier, i, item, raw[i], total)
			}
		}
		plain = bytes.Clone(plain)
		zipped, err := e.encode(c.count, c.multiplier, true)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gzip.NewReader(bytes.NewReader(zipped))
		if err != nil {
			t.Fatal(err)
		}
		if unzipped, err := io.ReadAll(r); err != nil || !bytes.Equal(unzipped, plain) {
			t.Fatalf("gzip: %v, %d bytes against %d", err, len(unzipped), len(plain))
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// BenchmarkArenaJSON is the /json work of --native arena per request:
// the items, their serialisation and (zip) gzip at level 1.
func BenchmarkArenaJSON(b *testing.B) {
	withDataset(b)
	for _, zip := range []bool{false, true} {
		name := "plain"
		if zip {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e := arenaEncoders.Get().(*arenaEncoder)
				if _, err := e.encode(25, 4, zip); err != nil {
					b.Fatal(err)
				}
				arenaEncoders.Put(e)
			}
		})
	}
}
