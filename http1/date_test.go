package http1

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"
)

func TestAppendHTTPDateMatchesTimeFormat(t *testing.T) {
	check := func(tm time.Time) {
		t.Helper()
		got := AppendHTTPDate([]byte("x"), tm)
		want := "x" + tm.UTC().Format(http.TimeFormat)
		if string(got) != want {
			t.Fatalf("%v: got %q, want %q", tm, got, want)
		}
	}
	// Every day from 1970 to 2200 crosses every weekday, month, leap
	// rule and digit carry in the year.
	for tm := time.Unix(0, 0); tm.Year() < 2200; tm = tm.Add(24*time.Hour + 1*time.Second) {
		check(tm)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		check(time.Unix(rng.Int64N(253402300799), 0)) // up to 9999-12-31
	}
	// A non-UTC location is written in GMT.
	check(time.Date(2024, 2, 29, 23, 59, 59, 0, time.FixedZone("X", 5*3600+1800)))
	check(time.Date(999, 1, 1, 0, 0, 0, 0, time.UTC)) // four digits with a leading zero
}

func TestDateCacheFormatsOncePerSecond(t *testing.T) {
	base := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	c := NewDateCache(base)
	first := c.current.Load()
	c.Tick(base.Add(999 * time.Millisecond))
	if c.current.Load() != first {
		t.Fatal("Tick within the same second formatted again")
	}
	if got := string(c.AppendDate(nil)); got != "Mon, 30 Nov 2026 09:00:00 GMT" {
		t.Fatalf("AppendDate = %q", got)
	}
	c.Tick(base.Add(time.Second))
	if c.current.Load() == first {
		t.Fatal("Tick in a new second did not refresh")
	}
	if got := string(c.AppendDate(nil)); got != "Mon, 30 Nov 2026 09:00:01 GMT" {
		t.Fatalf("AppendDate after tick = %q", got)
	}
	c.Tick(base) // a clock stepped back is followed
	if got := string(c.AppendDate(nil)); got != "Mon, 30 Nov 2026 09:00:00 GMT" {
		t.Fatalf("AppendDate after a backwards step = %q", got)
	}
}

func TestDateCacheZeroValueReadsNow(t *testing.T) {
	var c DateCache
	before := time.Now().Unix()
	got := c.AppendDate(nil)
	after := time.Now().Unix()
	tm, err := http.ParseTime(string(got))
	if err != nil {
		t.Fatalf("zero-value cache gave %q: %v", got, err)
	}
	if tm.Unix() < before || tm.Unix() > after {
		t.Fatalf("zero-value cache gave %v, not between %d and %d", tm, before, after)
	}
}

// Readers on other threads see a whole date, never a torn one, while the
// loop ticks. Run with -race to have the detector check the publication.
func TestDateCacheConcurrentReaders(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewDateCache(base)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, DateLen)
			for {
				select {
				case <-stop:
					return
				default:
				}
				buf = c.AppendDate(buf[:0])
				if tm, err := http.ParseTime(string(buf)); err != nil || tm.Before(base) {
					errs <- string(buf)
					return
				}
			}
		}()
	}
	for s := range 2000 {
		c.Tick(base.Add(time.Duration(s) * time.Second))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("reader saw %q", e)
	}
}

func TestDateCacheAllocs(t *testing.T) {
	c := NewDateCache(time.Now())
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(1000, func() { buf = c.AppendDate(buf[:0]) })
	if allocs != 0 {
		t.Errorf("AppendDate allocates %v times per read", allocs)
	}
	now := time.Now()
	allocs = testing.AllocsPerRun(1000, func() { c.Tick(now) })
	if allocs != 0 {
		t.Errorf("Tick within the held second allocates %v times", allocs)
	}
}

func BenchmarkDateAppend(b *testing.B) {
	c := NewDateCache(time.Now())
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = c.AppendDate(buf[:0])
	}
}

func BenchmarkDateTick(b *testing.B) {
	c := NewDateCache(time.Now())
	base := time.Now()
	i := 0
	for b.Loop() {
		i++
		c.Tick(base.Add(time.Duration(i) * time.Second))
	}
}
