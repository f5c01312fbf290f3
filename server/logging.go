package server

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"

	"github.com/m0serve/m0serve/pybridge"
)

// The log's levels: slog's four and uvicorn's trace and critical.
const (
	LevelTrace    = slog.Level(-8)
	LevelCritical = slog.Level(12)
)

var logLevels = map[string]slog.Level{
	"trace": LevelTrace, "debug": slog.LevelDebug, "info": slog.LevelInfo,
	"warning": slog.LevelWarn, "error": slog.LevelError, "critical": LevelCritical,
}

// The packages log through one func(format, args...) with messages that
// start "m0serve: "; a level word after it ("m0serve: warning: ...") sets
// the line's level, info without one, and is not shown. A line without
// the prefix is Python's: an error.
const logPrefix = "m0serve: "

// NewLogf returns the server's log function: lines in --log-format
// (text: "2026/12/01 16:02:19 [INFO] m0serve: ...", as log.LstdFlags in
// UTC, with the level in brackets as gunicorn writes it; json: one object
// per line with time, level, msg, pid and, in a worker, worker) at
// --log-level and above. worker is the worker's slot, -1 for a master or
// a single process.
func NewLogf(w io.Writer, format, level string, worker int) (func(string, ...any), error) {
	threshold, ok := logLevels[level]
	if !ok {
		return nil, &ConfigError{Flag: "log-level", Reason: fmt.Sprintf("%q: want critical, error, warning, info, debug or trace", level)}
	}
	switch format {
	case "text":
		text := log.New(w, "", log.LstdFlags|log.LUTC)
		who := logPrefix
		if worker >= 0 {
			who = fmt.Sprintf("m0serve: worker %d (pid %d): ", worker, os.Getpid())
		}
		return func(format string, args ...any) {
			message := fmt.Sprintf(format, args...)
			level := lineLevel(message)
			if level < threshold {
				return
			}
			if rest, ok := strings.CutPrefix(message, logPrefix); ok {
				message = who + trimLevel(rest)
			}
			text.Print(levelTag(level), message)
		}, nil
	case "json":
		// A traceback in the line of the failure it belongs to.
		pybridge.SetTracebacksInline(true)
		handler := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: threshold, ReplaceAttr: levelNames})
		logger := slog.New(handler).With("pid", os.Getpid())
		if worker >= 0 {
			logger = logger.With("worker", worker)
		}
		return func(format string, args ...any) {
			message := fmt.Sprintf(format, args...)
			lineLevel := lineLevel(message)
			if !logger.Enabled(context.Background(), lineLevel) {
				return
			}
			message = trimLevel(strings.TrimPrefix(message, logPrefix))
			logger.Log(context.Background(), lineLevel, message)
		}, nil
	}
	return nil, &ConfigError{Flag: "log-format", Reason: fmt.Sprintf("%q: want text or json", format)}
}

// lineLevel is a message's level (see logPrefix).
func lineLevel(message string) slog.Level {
	rest, ok := strings.CutPrefix(message, logPrefix)
	if !ok {
		return slog.LevelError
	}
	word, _, found := strings.Cut(rest, ": ")
	if level, known := logLevels[word]; found && known {
		return level
	}
	return slog.LevelInfo
}

// trimLevel drops the level word a message after the prefix starts with:
// the text format shows lines as they always were, the JSON one has the
// level in its own field.
func trimLevel(rest string) string {
	word, after, found := strings.Cut(rest, ": ")
	if _, known := logLevels[word]; found && known {
		return after
	}
	return rest
}

// levelTag is a text line's level as gunicorn writes it, "[INFO] ":
// after the time stamp, so that lines still sort and read by time, and
// in brackets, so that grep '\[ERROR\]' finds exactly the errors (uvicorn's
// "ERROR:" has no time stamp to go after; Python's traceback lines under
// an error line have no tag at all).
func levelTag(level slog.Level) string {
	switch {
	case level < slog.LevelDebug:
		return "[TRACE] "
	case level < slog.LevelInfo:
		return "[DEBUG] "
	case level < slog.LevelWarn:
		return "[INFO] "
	case level < slog.LevelError:
		return "[WARNING] "
	case level < LevelCritical:
		return "[ERROR] "
	}
	return "[CRITICAL] "
}

// levelNames names the levels slog has no name for, and WARNING as
// Python's logging spells it.
func levelNames(_ []string, a slog.Attr) slog.Attr {
	if a.Key != slog.LevelKey {
		return a
	}
	switch level := a.Value.Any().(slog.Level); {
	case level < slog.LevelDebug:
		a.Value = slog.StringValue("TRACE")
	case level >= LevelCritical:
		a.Value = slog.StringValue("CRITICAL")
	case level == slog.LevelWarn:
		a.Value = slog.StringValue("WARNING")
	}
	return a
}
