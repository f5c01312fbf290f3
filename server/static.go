package server

import (
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// StaticMount is one --static-path-route with its --static-path-mount:
// files under Dir are served at Route (Granian's names).
type StaticMount struct {
	Route string // "/static"
	Dir   string
}

// staticWorkers is how many goroutines open files and post their heads;
// the loop sends the bodies (Job.SendFile: splice or sendfile).
const staticWorkers = 16

// staticFiles serves the mounts. The loop thread only routes (a prefix
// compare); opening and stat-ing, which may wait on a disk, happen on
// the goroutines.
type staticFiles struct {
	mounts  []staticMount
	expires time.Duration // Cache-Control max-age; 0: none
	// dotfiles serves names with a segment starting with a dot (.env,
	// .git/config); off, they are 404 (--static-path-dotfiles).
	dotfiles bool
	extras   staticExtras // static_fields.go
	queue    *loop.JobQueue
	next     loop.Handler

	// The access log (set before the loop starts): nil format, none.
	logFormat *accessFormat
	proxy     *proxyTrust
}

// staticLog is one goroutine's access-log buffers.
type staticLog struct {
	remote []byte
	line   []byte
	entry  accessEntry
}

// logAccess logs a response; it runs before the job is finished (the
// loop reuses it after).
func (s *staticFiles) logAccess(lg *staticLog, j *loop.Job, status int, sent int64) {
	lg.log(s.logFormat, s.proxy, j, status, sent)
}

// log writes a job's access-log line in format (nil: none), from a
// goroutine that serves jobs itself (static files, hold mounts).
func (lg *staticLog) log(format *accessFormat, proxy *proxyTrust, j *loop.Job, status int, sent int64) {
	if format == nil {
		return
	}
	lg.remote, _, _ = proxy.client(lg.remote, j.RemoteAddr, &j.Request.Header)
	lg.entry.setResponse(lg.remote, &j.Request, nil, status, sent)
	if format.timed {
		lg.entry.duration = time.Duration(time.Now().UnixNano() - j.Arrived)
	}
	lg.line = format.append(lg.line[:0], &lg.entry)
	unix.Write(int(accessLogFD.Load()), lg.line)
}

type staticMount struct {
	route string // without a trailing slash
	root  *os.Root
}

// newStaticFiles opens the mounts and starts the goroutines; next (the
// app's handler) is set before the loop starts.
func newStaticFiles(mounts []StaticMount, expires time.Duration, dotfiles bool) (*staticFiles, error) {
	s := &staticFiles{expires: expires, dotfiles: dotfiles, queue: loop.NewJobQueue(jobQueueSize)}
	for _, m := range mounts {
		root, err := os.OpenRoot(m.Dir)
		if err != nil {
			s.close()
			return nil, &ConfigError{Flag: "static-path-mount", Reason: err.Error()}
		}
		s.mounts = append(s.mounts, staticMount{route: strings.TrimSuffix(m.Route, "/"), root: root})
	}
	// Started last: close ends them.
	for i := 0; i < staticWorkers; i++ {
		go func() {
			lg := &staticLog{}
			for j := s.queue.Take(); j != nil; j = s.queue.Take() {
				s.serve(j, lg)
			}
		}()
	}
	return s, nil
}

func (s *staticFiles) close() {
	s.queue.Close()
	for _, m := range s.mounts {
		m.root.Close()
	}
}

// ServeInline implements loop.Handler: requests under a route go to the
// static goroutines, the rest to the app.
func (s *staticFiles) ServeInline(req *loop.Request, w *loop.ResponseWriter) {
	p := req.Bytes(req.Path)
	for i := range s.mounts {
		if under(p, s.mounts[i].route) {
			w.DeferTo(s.queue)
			return
		}
	}
	s.next.ServeInline(req, w)
}

// under: path is route or below it ("/static", "/static/a", not
// "/staticx").
func under(p []byte, route string) bool {
	return len(p) >= len(route) && string(p[:len(route)]) == route &&
		(len(p) == len(route) || p[len(route)] == '/' || route == "")
}

func (s *staticFiles) serve(j *loop.Job, lg *staticLog) {
	req := &j.Request
	s.addExtras(j)
	raw := string(req.Bytes(req.Path))
	var m *staticMount
	for i := range s.mounts {
		if under([]byte(raw), s.mounts[i].route) {
			m = &s.mounts[i]
			break
		}
	}
	if !req.MethodIs("GET") && !req.MethodIs("HEAD") {
		j.SetHeader("Allow", "GET, HEAD")
		s.text(j, lg, 405, "method not allowed")
		return
	}
	rest := raw[len(m.route):]
	if rest == "" {
		// The mount itself: its index is at the slash form.
		s.redirectToDirectory(j, lg, raw)
		return
	}
	name, directory, ok := staticName(rest)
	if !ok || !s.dotfiles && hasDotSegment(name) {
		s.text(j, lg, 404, "not found")
		return
	}
	if directory {
		// A directory's request serves its index file, as nginx's index
		// and Starlette's StaticFiles(html=True) do; no listing.
		name = path.Join(name, indexFile)
	}
	file, info, encoding := s.open(m, name, req)
	if file == nil {
		if stat, err := m.root.Stat(name); !directory && err == nil && stat.IsDir() {
			s.redirectToDirectory(j, lg, raw)
			return
		}
		s.text(j, lg, 404, "not found")
		return
	}
	s.send(j, lg, file, info, encoding, name)
}

// indexFile is what a directory's request (a path ending in a slash)
// serves.
const indexFile = "index.html"

// redirectToDirectory answers a directory's path without its trailing
// slash with 301 to the slash form, the query kept: relative links in
// its index then resolve inside it.
func (s *staticFiles) redirectToDirectory(j *loop.Job, lg *staticLog, rawPath string) {
	req := &j.Request
	location := rawPath + "/"
	if query := req.Bytes(req.Query); len(query) > 0 {
		location += "?" + string(query)
	}
	j.SetHeader("Location", location)
	s.text(j, lg, 301, "moved permanently")
}

// staticName turns the request path below the route into a name inside
// the mount, refusing what could leave it or name something else: an
// escaped slash, NUL or backslash, a ".." or "." segment (escaped or not),
// an empty segment. A path ending in a slash names a directory (the
// mount's own: name "").
func staticName(rest string) (name string, directory, ok bool) {
	lower := strings.ToLower(rest)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%00") {
		return "", false, false
	}
	decoded, ok := percentDecode(rest)
	if !ok || strings.ContainsAny(decoded, "\x00\\") || !strings.HasPrefix(decoded, "/") {
		return "", false, false
	}
	name, directory = strings.CutSuffix(decoded[1:], "/")
	if name == "" {
		return "", true, decoded == "/"
	}
	for _, segment := range strings.Split(name, "/") {
		if segment == "" || segment == "." || segment == ".." {
			return "", false, false
		}
	}
	return name, directory, true
}

// hasDotSegment: a segment of name starts with a dot. Such files are
// rarely meant for the public (.env, .git, .htpasswd): a mount that is a
// project's directory would hand them out.
func hasDotSegment(name string) bool {
	return strings.HasPrefix(name, ".") || strings.Contains(name, "/.")
}

func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

// open opens name in the mount (os.Root: symlinks may not leave it), or
// its precompressed sibling (.br, then .gz) when the client accepts that
// encoding. A directory or anything but a regular file is not served.
func (s *staticFiles) open(m *staticMount, name string, req *http1.Request) (*os.File, fs.FileInfo, string) {
	accept := string(req.Header.Get("accept-encoding"))
	for _, c := range []struct{ encoding, suffix string }{{"br", ".br"}, {"gzip", ".gz"}} {
		if !acceptsEncoding(accept, c.encoding) {
			continue
		}
		if file, info := openRegular(m.root, name+c.suffix); file != nil {
			return file, info, c.encoding
		}
	}
	file, info := openRegular(m.root, name)
	return file, info, ""
}

func openRegular(root *os.Root, name string) (*os.File, fs.FileInfo) {
	file, err := root.Open(name)
	if err != nil {
		return nil, nil
	}
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() {
		file.Close()
		return nil, nil
	}
	return file, info
}

// acceptsEncoding reports whether Accept-Encoding lists encoding with a
// q above 0.
func acceptsEncoding(accept, encoding string) bool {
	for _, item := range strings.Split(accept, ",") {
		token, params, _ := strings.Cut(strings.TrimSpace(item), ";")
		if !strings.EqualFold(strings.TrimSpace(token), encoding) {
			continue
		}
		q := strings.TrimSpace(params)
		if v, ok := strings.CutPrefix(q, "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// send answers with the file: 304 when the client's copy is current, 206
// or 416 for a Range, else 200; the loop sends the bytes (Job.SendFile).
func (s *staticFiles) send(j *loop.Job, lg *staticLog, file *os.File, info fs.FileInfo, encoding, name string) {
	req := &j.Request
	size, modified := info.Size(), info.ModTime().UTC().Truncate(time.Second)
	etag := fmt.Sprintf(`"%x-%x"`, info.ModTime().UnixNano(), size)
	if encoding != "" {
		etag = fmt.Sprintf(`"%x-%x-%s"`, info.ModTime().UnixNano(), size, encoding)
	}
	kind := mime.TypeByExtension(path.Ext(name))
	if kind == "" {
		kind = "application/octet-stream"
	}
	j.SetHeader("ETag", etag)
	j.SetHeader("Last-Modified", modified.Format(http.TimeFormat))
	j.SetHeader("Accept-Ranges", "bytes")
	j.SetHeader("Vary", "Accept-Encoding")
	if encoding != "" {
		j.SetHeader("Content-Encoding", encoding)
	}
	s.cacheFields(j, kind)
	if notModified(req, etag, modified) {
		file.Close()
		j.WriteHeader(304, 0)
		s.logAccess(lg, j, 304, 0)
		j.Finish()
		return
	}
	offset, length, status := int64(0), size, 200
	if header := string(req.Header.Get("range")); header != "" && ifRangeHolds(req, etag, modified) {
		ranges, ok := parseRanges(header, size)
		switch {
		case ok && len(ranges) == 0:
			file.Close()
			j.SetHeader("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			s.text(j, lg, 416, "range not satisfiable")
			return
		case ok && len(ranges) > 1:
			s.sendRanges(j, lg, file, ranges, kind, size)
			return
		case ok:
			r := ranges[0]
			offset, length, status = r.start, r.length, 206
			j.SetHeader("Content-Range", r.contentRange(size))
		}
	}
	// Set last: a multipart answer has its own.
	j.SetHeader("Content-Type", kind)
	if err := j.WriteHeader(status, length); err != nil {
		file.Close()
		j.Abort()
		return
	}
	// SendFile takes a descriptor the loop closes: a duplicate, so the
	// os.File closes its own.
	fd, err := unix.Dup(int(file.Fd()))
	file.Close()
	if err != nil {
		j.Abort()
		return
	}
	unix.CloseOnExec(fd)
	sent := length
	if req.MethodIs("HEAD") {
		sent = 0
	}
	s.logAccess(lg, j, status, sent)
	if err := j.SendFile(fd, offset, length); err != nil {
		unix.Close(fd)
		j.Abort()
	}
}

// notModified: If-None-Match names the ETag (or *), or, without it,
// If-Modified-Since is not before the modification (RFC 9110 §13.1).
func notModified(req *http1.Request, etag string, modified time.Time) bool {
	if match := string(req.Header.Get("if-none-match")); match != "" {
		for _, tag := range strings.Split(match, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == etag || tag == "*" {
				return true
			}
		}
		return false
	}
	// A date later than the server's clock is not a valid one (RFC 9110
	// §13.1.3, which leaves the check to the recipient); nginx answers 200.
	if since, err := http.ParseTime(string(req.Header.Get("if-modified-since"))); err == nil && !since.After(time.Now()) {
		return !modified.After(since)
	}
	return false
}

// ifRangeHolds: without If-Range, or with one naming this version, the
// Range applies; otherwise the whole file is sent (RFC 9110 §13.1.5).
func ifRangeHolds(req *http1.Request, etag string, modified time.Time) bool {
	v := strings.TrimSpace(string(req.Header.Get("if-range")))
	if v == "" {
		return true
	}
	if strings.HasPrefix(v, `"`) {
		return v == etag
	}
	t, err := http.ParseTime(v)
	return err == nil && t.Equal(modified)
}

func (s *staticFiles) text(j *loop.Job, lg *staticLog, status int, text string) {
	j.SetHeader("Content-Type", "text/plain; charset=utf-8")
	body := text + "\n"
	if err := j.WriteHeader(status, int64(len(body))); err != nil {
		j.Abort()
		return
	}
	j.Write([]byte(body))
	sent := int64(len(body))
	if j.Request.MethodIs("HEAD") {
		sent = 0
	}
	s.logAccess(lg, j, status, sent)
	j.Finish()
}
