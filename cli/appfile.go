package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/m0serve/m0serve/server"
)

// appFromFile reads a target given as a file name, `m0serve app.py` or
// `m0serve src/app.py:api`, as the module in that file, imported from its
// directory: cfg.App becomes "app" (the module's application, else its
// app) or "app:api", and cfg.AppDir the file's directory. A target that
// is a module (a package app with a module py) or a file that does not
// exist is left as it is; --app-dir naming another directory than the
// file's is a mistake.
func appFromFile(cfg *server.Config, appDirGiven bool) error {
	file, attr, hasAttr := strings.Cut(cfg.App, ":")
	if !strings.HasSuffix(file, ".py") {
		return nil
	}
	base := cfg.AppDir
	if base == "" {
		base = "."
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, file)
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() {
		return nil
	}
	asModule := filepath.Join(base, strings.ReplaceAll(strings.TrimSuffix(file, ".py"), ".", string(filepath.Separator)), "py")
	if _, err := os.Stat(asModule + ".py"); err == nil {
		return nil // package app's module py: as Python would read it
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return err
	}
	module := strings.TrimSuffix(filepath.Base(path), ".py")
	if module == "" || strings.ContainsAny(module, ".-") {
		return fmt.Errorf("%s: a file whose name is no module name: rename it (e.g. %s.py) and give module:attr", cfg.App, strings.NewReplacer(".", "_", "-", "_").Replace(module))
	}
	if appDirGiven {
		given, err := filepath.Abs(cfg.AppDir)
		if err == nil && given != dir {
			return fmt.Errorf("%s is in %s, not in --app-dir %s: give %s with --app-dir %s", cfg.App, dir, cfg.AppDir, module, dir)
		}
	}
	cfg.AppDir = dir
	cfg.App = module
	if hasAttr {
		cfg.App += ":" + attr
	}
	return nil
}
