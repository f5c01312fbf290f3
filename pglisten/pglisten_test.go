package pglisten

import (
	"strings"
	"testing"

	"github.com/m0serve/m0serve/realtime"
)

func TestDeliverPublishesOrRefuses(t *testing.T) {
	page, err := realtime.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	counter, err := realtime.MapCounter(page)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var logged []string
	l := &Listener{
		Counter: counter,
		Publish: func(id int64, channel string, frame []byte) int {
			got = append(got, channel+"|"+string(frame))
			return 2
		},
		Logf: func(format string, args ...any) { logged = append(logged, format) },
	}
	if err := l.Deliver(`{"channel":"news","event":"up","data":"a\nb"}`); err != nil {
		t.Fatal(err)
	}
	if err := l.Deliver(`{"channel":"news","data":"c"}`); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`not json`, `{"channel":"news"}`, `{"channel":1,"data":"x"}`, `{"data":"x"}`, "{\"channel\":\"\\u0001x\",\"data\":\"x\"}"} {
		if err := l.Deliver(bad); err == nil {
			t.Errorf("%q was published", bad)
		}
	}
	want := []string{"news|id: 1\nevent: up\ndata: a\ndata: b\n\n", "news|id: 2\ndata: c\n\n"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("published %q, want %q", got, want)
	}
	if l.Published.Load() != 2 || l.Refused.Load() != 5 || len(logged) != 5 {
		t.Fatalf("published %d, refused %d, logged %d", l.Published.Load(), l.Refused.Load(), len(logged))
	}
}

func TestCheckRefusesABadURL(t *testing.T) {
	if _, err := Check("postgres://x:notaport/db"); err == nil {
		t.Fatal("a bad URL passed")
	}
	if _, err := Check("host=/tmp port=5432 user=me dbname=app"); err != nil {
		t.Fatal(err)
	}
}
