package realtime

import (
	"testing"
)

func TestDatagramRoundTrip(t *testing.T) {
	b := AppendDatagram(nil, 42, "room", []byte("id: 42\ndata: x\n\n"))
	id, ch, frame, err := ParseDatagram(b)
	if err != nil || id != 42 || string(ch) != "room" || string(frame) != "id: 42\ndata: x\n\n" {
		t.Fatalf("got %d %q %q %v", id, ch, frame, err)
	}
	b = AppendDatagram(nil, Unnumbered, "", nil)
	if id, _, _, err := ParseDatagram(b); err != nil || id != -1 {
		t.Fatalf("unnumbered: %d %v", id, err)
	}
	if _, _, _, err := ParseDatagram(b[:5]); err == nil {
		t.Fatal("a short datagram parsed")
	}
	if _, _, _, err := ParseDatagram(AppendDatagram(nil, 1, "abc", nil)[:11]); err == nil {
		t.Fatal("a cut channel parsed")
	}
}

func TestAppendEventSplitsLines(t *testing.T) {
	cases := []struct {
		id    int64
		event string
		data  string
		want  string
	}{
		{1, "", "x", "id: 1\ndata: x\n\n"},
		{2, "ev", "a\nb", "id: 2\nevent: ev\ndata: a\ndata: b\n\n"},
		{3, "", "a\r\nb\rc", "id: 3\ndata: a\ndata: b\ndata: c\n\n"},
		{-1, "", "", "data: \n\n"},
	}
	for _, c := range cases {
		if got := string(AppendEvent(nil, c.id, c.event, []byte(c.data))); got != c.want {
			t.Errorf("AppendEvent(%d, %q, %q) = %q, want %q", c.id, c.event, c.data, got, c.want)
		}
	}
}

func TestFrameData(t *testing.T) {
	if got := string(FrameData(nil, []byte("id: 2\nevent: ev\ndata: a\ndata: b\n\n"))); got != "a\nb" {
		t.Fatalf("FrameData = %q", got)
	}
	if got := string(FrameData(nil, []byte("data:x\n\n"))); got != "x" {
		t.Fatalf("FrameData = %q", got)
	}
}

func TestJournalReplayAndGap(t *testing.T) {
	j := NewJournal(3, 0)
	frame := func(id int64) []byte { return AppendEvent(nil, id, "", []byte("f")) }
	j.Add(1, []byte("a"), frame(1))
	j.Add(2, []byte("b"), frame(2))
	j.Add(3, []byte("a"), frame(3))
	if got := string(j.Replay(nil, "a", 1, 3)); got != string(frame(3)) {
		t.Fatalf("after 1: %q", got)
	}
	if got := string(j.Replay(nil, "a", 0, 3)); got != "" {
		t.Fatalf("a fresh client got %q", got)
	}
	if got := string(j.Replay(nil, "a", 9, 3)); got != "event: m0-gap\ndata: {\"last_event_id\":9,\"head\":3}\n\n" {
		t.Fatalf("past the head: %q", got)
	}
	j.Add(4, []byte("a"), frame(4)) // 1 is overwritten
	if got := string(j.Replay(nil, "a", 1, 4)); got != string(frame(3))+string(frame(4)) {
		t.Fatalf("after 1, 1 lost: %q", got)
	}
	j.Add(5, []byte("a"), frame(5)) // 2 is overwritten: after 1, 2 may be missed
	if got := string(j.Replay(nil, "a", 1, 5)); got != "event: m0-gap\ndata: {\"last_event_id\":1,\"head\":5}\n\n" {
		t.Fatalf("after 1, 2 lost: %q", got)
	}
	if got := string(NewJournal(0, 0).Replay(nil, "a", 1, 1)); got != "" {
		t.Fatalf("an empty journal at the head: %q", got)
	}
	late := NewJournal(8, 10) // started when the counter stood at 10
	if got := string(late.Replay(nil, "a", 5, 12)); got == "" {
		t.Fatal("a worker started later replayed from before its start")
	}
}

func TestCounterSharedThroughPage(t *testing.T) {
	fd, err := NewPage()
	if err != nil {
		t.Fatal(err)
	}
	a, err := MapCounter(fd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MapCounter(fd)
	if err != nil {
		t.Fatal(err)
	}
	if a.Next() != 1 || b.Next() != 2 || a.Head() != 2 {
		t.Fatal("two mappings of the page do not share the counter")
	}
}

func TestBusCarriesADatagramToItsWorker(t *testing.T) {
	bus, err := NewBus(2)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	c, err := MapCounter(bus.Page)
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{Writes: bus.Writes, Counter: c}
	if n := w.Publish(7, "room", []byte("data: x\n\n")); n != 2 {
		t.Fatalf("reached %d workers, want 2", n)
	}
	if n := w.Publish(8, "\x01ctl", []byte("data: x\n\n")); n != 0 {
		t.Fatalf("a reserved channel reached %d workers", n)
	}
	buf := make([]byte, MaxDatagram)
	for _, r := range bus.Reads {
		n, err := recv(r, buf)
		if err != nil {
			t.Fatal(err)
		}
		id, ch, frame, err := ParseDatagram(buf[:n])
		if err != nil || id != 7 || string(ch) != "room" || string(frame) != "data: x\n\n" {
			t.Fatalf("got %d %q %q %v", id, ch, frame, err)
		}
	}
}
