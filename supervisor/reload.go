package supervisor

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/m0serve/m0serve/internal/configerr"
)

// Reload is --reload's configuration (uvicorn's names): the directories
// watched, and which file names count (globs matched against the base
// name; a directory matching an exclude is not watched).
type Reload struct {
	Dirs     []string
	Includes []string
	Excludes []string
}

// Defaults of --reload-include and --reload-exclude, uvicorn's.
var (
	DefaultReloadIncludes = []string{"*.py"}
	DefaultReloadExcludes = []string{".*", ".py[cod]", ".sw.*", "~*"}
)

// reloadSettle is how long the watched files must stay quiet before a
// reload: an editor's save is several events (write, rename, chmod).
const reloadSettle = 200 * time.Millisecond

// sourceWatcher reports, debounced, a change to a watched file.
type sourceWatcher struct {
	cfg     Reload
	watcher *fsnotify.Watcher
	changes chan string // the last file changed in a settled burst
	done    chan struct{}
	logf    func(string, ...any)
}

// watchSources starts watching cfg.Dirs and everything under them.
func watchSources(cfg Reload, logf func(string, ...any)) (*sourceWatcher, error) {
	for flag, patterns := range map[string][]string{"reload-include": cfg.Includes, "reload-exclude": cfg.Excludes} {
		for _, pattern := range patterns {
			if _, err := filepath.Match(pattern, ""); err != nil {
				return nil, &configerr.Error{Flag: flag, Reason: fmt.Sprintf("%q: %v", pattern, err)}
			}
		}
	}
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("--reload: %w", err)
	}
	w := &sourceWatcher{cfg: cfg, watcher: watcher, changes: make(chan string, 1), done: make(chan struct{}), logf: logf}
	for _, dir := range cfg.Dirs {
		if err := w.addTree(dir); err != nil {
			watcher.Close()
			return nil, &configerr.Error{Flag: "reload-dir", Reason: err.Error()}
		}
	}
	go w.run()
	return w, nil
}

// addTree watches dir and its subdirectories (fsnotify watches one
// directory at a time), leaving out excluded ones.
func (w *sourceWatcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // gone meanwhile, or unreadable: not ours to watch
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && w.excluded(d.Name()) {
			return filepath.SkipDir
		}
		return w.watcher.Add(path)
	})
}

func (w *sourceWatcher) excluded(name string) bool {
	for _, pattern := range w.cfg.Excludes {
		if ok, _ := filepath.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

func (w *sourceWatcher) included(name string) bool {
	if w.excluded(name) {
		return false
	}
	for _, pattern := range w.cfg.Includes {
		if ok, _ := filepath.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

func (w *sourceWatcher) run() {
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	changed := ""
	for {
		select {
		case <-w.done:
			return
		case e, ok := <-w.watcher.Events:
			if !ok {
				return
			}
			if e.Has(fsnotify.Create) {
				if info, err := os.Stat(e.Name); err == nil && info.IsDir() && !w.excluded(filepath.Base(e.Name)) {
					w.addTree(e.Name)
				}
			}
			if e.Op == fsnotify.Chmod || !w.included(filepath.Base(e.Name)) {
				continue
			}
			changed = e.Name
			settle.Reset(reloadSettle)
		case err, ok := <-w.watcher.Errors:
			if !ok {
				return
			}
			w.logf("m0serve: warning: --reload: %v", err)
		case <-settle.C:
			select {
			case w.changes <- changed:
			default: // one pending reload covers this change too
			}
		}
	}
}

func (w *sourceWatcher) close() {
	close(w.done)
	w.watcher.Close()
}
