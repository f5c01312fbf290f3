package cli

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"time"
)

// duration is a flag value taking Go durations ("30s", "1m") or plain
// seconds ("30").
type duration time.Duration

func (d *duration) String() string { return time.Duration(*d).String() }

func (d *duration) Set(s string) error {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		*d = duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 30s, 500ms or a number of seconds")
	}
	*d = duration(v)
	return nil
}

// size is a byte count with an optional K, M or G suffix (powers of 1024).
type size int64

func (s *size) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *size) Set(text string) error {
	v, err := parseSize(text)
	if err != nil {
		return err
	}
	*s = size(v)
	return nil
}

type intSize int

func (s *intSize) String() string { return strconv.Itoa(int(*s)) }

func (s *intSize) Set(text string) error {
	v, err := parseSize(text)
	if err != nil {
		return err
	}
	if v > 1<<30 {
		return errors.New("too large")
	}
	*s = intSize(v)
	return nil
}

func parseSize(text string) (int64, error) {
	shift := 0
	switch strings.ToUpper(text[len(text)-min(1, len(text)):]) {
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	}
	if shift > 0 {
		text = text[:len(text)-1]
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil || v < 0 || v > (1<<62)>>shift {
		return 0, errors.New("want a byte count such as 1048576, 512K or 10M")
	}
	return v << shift, nil
}

// headerList collects --header fields. Each Set adds one per line: a
// flag is one field, and M0_HEADER, set once, may hold several (a newline
// is the one separator no field value can contain).
type headerList []string

func (h *headerList) String() string { return strings.Join(*h, "\n") }

func (h *headerList) Set(text string) error {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			*h = append(*h, line)
		}
	}
	return nil
}

// fileMode is a file's permission bits in octal ("666", "0660").
type fileMode fs.FileMode

func (m *fileMode) String() string { return strconv.FormatUint(uint64(*m), 8) }

func (m *fileMode) Set(text string) error {
	v, err := strconv.ParseUint(text, 8, 32)
	if err != nil || v > 0o777 {
		return errors.New("want permission bits in octal, such as 666 or 660")
	}
	*m = fileMode(v)
	return nil
}

// stringList is a repeatable flag: each use adds one value.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(text string) error {
	*l = append(*l, text)
	return nil
}

// bindAddress is -b/--bind, gunicorn's one address flag: HOST:PORT
// ([::1]:8000, a bare HOST on port 8000, :PORT on every interface, as
// gunicorn reads them), unix:PATH or fd://N. It sets the flags m0serve
// has for each, which then count as given.
type bindAddress struct {
	fs  *flag.FlagSet
	set bool
}

func (b *bindAddress) String() string { return "" }

func (b *bindAddress) Set(text string) error {
	if b.set {
		return errors.New("one address at a time (m0serve listens on one socket)")
	}
	b.set = true
	if path, ok := strings.CutPrefix(text, "unix:"); ok {
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return errors.New("want unix:PATH")
		}
		return b.fs.Set("uds", path)
	}
	if fd, ok := strings.CutPrefix(text, "fd://"); ok {
		if err := b.fs.Set("fd", fd); err != nil {
			return errors.New("want fd://N, a descriptor number")
		}
		return nil
	}
	text = strings.TrimPrefix(text, "tcp://")
	host, port, err := net.SplitHostPort(text)
	if err != nil {
		// No port: gunicorn's default, which is m0serve's too.
		host, port = strings.TrimSuffix(strings.TrimPrefix(text, "["), "]"), "8000"
		if strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return errors.New("want HOST:PORT, [IPv6]:PORT, unix:PATH or fd://N")
		}
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if err := b.fs.Set("host", host); err != nil {
		return err
	}
	if err := b.fs.Set("port", port); err != nil {
		return fmt.Errorf("port %q: want a number", port)
	}
	return nil
}
