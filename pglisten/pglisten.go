// Package pglisten is --pg-listen: it LISTENs on a Postgres channel and
// publishes each NOTIFY's payload on the realtime bus, so that a trigger,
// a cron job or psql reaches the streams --realtime holds (the Mojo
// m0serve's flag, and m0pub.notify_sql's counterpart). One listener per
// server: the master's with --workers, else the process's own. Pure Go
// (pgx's pgconn speaks the protocol: passwords, SCRAM, TLS, sockets).
package pglisten

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/m0serve/m0serve/realtime"
)

// Channel is the one Postgres channel listened on; the stream's channel
// is in the payload (m0pub.PG_NOTIFY_CHANNEL).
const Channel = "m0"

// Listener publishes what arrives on Channel.
type Listener struct {
	config *pgconn.Config
	// Publish sends a numbered frame to every worker and returns how many
	// it reached (realtime.Worker.Publish, or the master's bus).
	Publish func(id int64, channel string, frame []byte) int
	Counter *realtime.Counter
	Logf    func(format string, args ...any)

	// Published and Refused count payloads: published, and refused as
	// malformed (not the three JSON strings, or a reserved channel).
	Published, Refused atomic.Int64
}

// Check parses url (a libpq URL or keyword string) as --pg-listen's value.
func Check(url string) (*pgconn.Config, error) {
	config, err := pgconn.ParseConfig(url)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "cannot parse `"+url+"`: "))
	}
	return config, nil
}

// New is a listener on the database url names.
func New(url string) (*Listener, error) {
	config, err := Check(url)
	if err != nil {
		return nil, err
	}
	return &Listener{config: config}, nil
}

// notification is a NOTIFY payload: m0pub.notify_sql's three fields.
type notification struct {
	Channel *string `json:"channel"`
	Event   *string `json:"event"`
	Data    *string `json:"data"`
}

// Deliver publishes one payload, or refuses it and says why.
func (l *Listener) Deliver(payload string) error {
	var n notification
	if err := json.Unmarshal([]byte(payload), &n); err != nil {
		return l.refuse(fmt.Errorf("not a JSON object of strings: %v", err))
	}
	if n.Channel == nil || *n.Channel == "" || n.Data == nil {
		return l.refuse(errors.New(`"channel" and "data" are required`))
	}
	if realtime.Reserved([]byte(*n.Channel)) {
		return l.refuse(errors.New("the channel is reserved (a leading 0x01)"))
	}
	event := ""
	if n.Event != nil {
		event = *n.Event
	}
	id := l.Counter.Next()
	l.Publish(id, *n.Channel, realtime.AppendEvent(nil, id, event, []byte(*n.Data)))
	l.Published.Add(1)
	return nil
}

func (l *Listener) refuse(err error) error {
	if n := l.Refused.Add(1); n <= 10 || n%1000 == 0 {
		l.Logf("m0serve: warning: --pg-listen: refused a NOTIFY payload (%d so far): %v", n, err)
	}
	return err
}

// Run listens until ctx ends, connecting again after a failure (waiting
// 1 s, doubled up to 30 s).
func (l *Listener) Run(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > time.Minute {
			backoff = time.Second
		}
		l.Logf("m0serve: error: --pg-listen: %v; connecting again in %v", err, backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (l *Listener) listen(ctx context.Context) error {
	config := l.config.Copy()
	config.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if n.Channel == Channel {
			l.Deliver(n.Payload)
		}
	}
	dial, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgconn.ConnectConfig(dial, config)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+Channel).ReadAll(); err != nil {
		return fmt.Errorf("LISTEN %s: %w", Channel, err)
	}
	l.Logf("m0serve: --pg-listen: listening on %s, channel %s", config.Host, Channel)
	for {
		if err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
	}
}
