//go:build linux

package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// postgres is a PostgreSQL server the test started: its own data
// directory, socket directory and port, as the postgres user when the
// test runs as root (initdb refuses root).
type postgres struct {
	bin, dir, sock string
	port           int
	cred           *syscall.Credential
}

// startPostgres initdb's and starts a private PostgreSQL (Debian's
// postgresql package: make test-packages), stopped at the test's end.
func startPostgres(t *testing.T) *postgres {
	t.Helper()
	initdb, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdb) == 0 {
		t.Fatal("no /usr/lib/postgresql/*/bin/initdb: install postgresql (make test-packages)")
	}
	pg := &postgres{bin: filepath.Dir(initdb[len(initdb)-1])}
	dir, err := os.MkdirTemp("", "m0serve-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg.dir, pg.sock = filepath.Join(dir, "data"), dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, and no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		pg.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	pg.run(t, "initdb", "-D", pg.dir, "--auth=trust", "-U", "postgres", "--no-sync")
	pg.run(t, "pg_ctl", "-D", pg.dir, "-w", "-l", filepath.Join(dir, "log"),
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=", pg.port, pg.sock), "start")
	t.Cleanup(func() { pg.run(t, "pg_ctl", "-D", pg.dir, "-m", "immediate", "stop") })
	return pg
}

func (pg *postgres) run(t *testing.T, program string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(pg.bin, program), args...)
	cmd.Dir = pg.sock
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", program, args, err, out)
	}
}

// url is --pg-listen's value for it.
func (pg *postgres) url() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres", pg.sock, pg.port)
}

// notify runs SELECT pg_notify('m0', payload) through psql.
func (pg *postgres) notify(t *testing.T, payload string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(pg.bin, "psql"), "-h", pg.sock, "-p", strconv.Itoa(pg.port), "-U", "postgres",
		"-d", "postgres", "-v", "ON_ERROR_STOP=1", "-v", "payload="+payload)
	// Variables are interpolated in a script, not in -c's command.
	cmd.Stdin = strings.NewReader("SELECT pg_notify('m0', :'payload');\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
}

// TestRealtimePGListen: with --pg-listen, a NOTIFY on channel m0 whose
// payload is {"channel", "event", "data"} reaches the held streams of
// that channel on every worker, numbered from the same counter as the
// app's publishes, once (the master listens); a malformed payload is
// refused, logged and counted, and takes no id.
func TestRealtimePGListen(t *testing.T) {
	pg := startPostgres(t)
	s := startRealtime(t, nil, "--workers", "2", "--pg-listen", pg.url())
	defer s.stop()
	clients := subscribeOnEveryWorker(t, s.addr, "pg")
	s.waitLog(t, `--pg-listen: listening`, 1, 20*time.Second)
	pg.notify(t, `{"channel":"pg","event":"db","data":"row 7"}`)
	pg.notify(t, `not json`)
	pg.notify(t, `{"channel":"elsewhere","data":"no"}`)
	pg.notify(t, `{"channel":"pg","event":"","data":"two\nlines"}`)
	for _, c := range clients {
		c.expect("id: 1\nevent: db\ndata: row 7\n\n")
		c.expect("id: 3\ndata: two\ndata: lines\n\n") // elsewhere's took 2; the refused one none
	}
	publish(t, s.addr, "pg", "data=from+the+app")
	for _, c := range clients {
		c.expect("id: 4\ndata: from the app\n\n")
	}
	s.waitLog(t, `--pg-listen: refused a NOTIFY payload \(1 so far\)`, 1, 10*time.Second)
}

// TestRealtimePGListenSingleProcess: a server without --workers listens
// itself.
func TestRealtimePGListenSingleProcess(t *testing.T) {
	pg := startPostgres(t)
	s := start(t, wsgiVariant(), "--app-dir", appsDir(t), "--realtime", "--pg-listen", pg.url(), "realtime_app:app")
	defer s.stop()
	c := subscribe(t, s.addr, "solo")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.logs.String(), "--pg-listen: listening") {
		if time.Now().After(deadline) {
			t.Fatalf("no listener:\n%s", s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pg.notify(t, `{"channel":"solo","event":"e","data":"hi"}`)
	c.expect("id: 1\nevent: e\ndata: hi\n\n")
}

// TestRealtimePGListenFlag: --pg-listen needs --realtime and a URL that
// parses; each mistake names the flag.
func TestRealtimePGListenFlag(t *testing.T) {
	for _, args := range [][]string{
		{"--pg-listen", "host=/tmp dbname=x"},
		{"--realtime", "--pg-listen", "postgres://x:notaport/db"},
	} {
		status, out := runToExit(t, cleanEnv(), append(append([]string{"--port", "0", "--app-dir", appsDir(t)}, args...), "realtime_app:app")...)
		if status != 2 || !strings.Contains(out, "--pg-listen") {
			t.Errorf("%v: status %d, %q; want 2 naming --pg-listen", args, status, out)
		}
	}
}
