package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/m0serve/m0serve/server"
)

// TestAppFromFile: a target that names a .py file is its module imported
// from the file's directory; a module path, a missing file and a name
// Python cannot import are left or refused as the comments say.
func TestAppFromFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range []string{"app.py", "src/api.py", "pkg/py.py", "pkg.py", "my-app.py"} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		target, appDir, wantApp, wantDir, wantErr string
	}{
		{"app.py", "", "app", dir, ""},
		{"app.py:server", "", "app:server", dir, ""},
		{"src/api.py:app", "", "api:app", filepath.Join(dir, "src"), ""},
		{"api.py", "src", "api", filepath.Join(dir, "src"), ""},
		{filepath.Join(dir, "src", "api.py"), "", "api", filepath.Join(dir, "src"), ""},
		{"pkg.py", "", "pkg.py", "", ""}, // package pkg's module py
		{"missing.py", "", "missing.py", "", ""},
		{"main:app", "", "main:app", "", ""},
		{"my-app.py", "", "", "", "my-app.py: a file whose name is no module name: rename it (e.g. my_app.py) and give module:attr"},
		{"src/api.py", ".", "", "", "src/api.py is in " + filepath.Join(dir, "src") + ", not in --app-dir .: give api with --app-dir " + filepath.Join(dir, "src")},
	} {
		cfg := server.Defaults
		cfg.App, cfg.AppDir = tc.target, tc.appDir
		err := appFromFile(&cfg, tc.appDir != "")
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: %v, want %s", tc.target, err, tc.wantErr)
			}
			continue
		}
		wantDir := tc.wantDir
		if wantDir == "" {
			wantDir = tc.appDir
		}
		if err != nil || cfg.App != tc.wantApp || cfg.AppDir != wantDir {
			t.Errorf("%s (--app-dir %q): %v, app %q dir %q; want %q %q", tc.target, tc.appDir, err, cfg.App, cfg.AppDir, tc.wantApp, wantDir)
		}
	}
}
