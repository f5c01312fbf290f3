//go:build linux

package tests

import (
	"archive/zip"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// checkWheelMetadata: the wheel's metadata names the distribution
// m0serve-go, says it is the server written in Go, names its licence
// (with the LICENSE file in the wheel, as the repository has it) and
// links this repository (go.mod's module path).
func checkWheelMetadata(t *testing.T, wheel string, license []byte) {
	t.Helper()
	z, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string][]byte{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = data
	}
	repository := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(mustRead(t, filepath.Join("..", "go.mod"))), "\n", 2)[0], "module"))
	var metadata, licensed string
	for name, data := range files {
		switch {
		case strings.HasSuffix(name, ".dist-info/METADATA"):
			metadata = string(data)
		case strings.HasSuffix(name, ".dist-info/licenses/LICENSE"):
			licensed = string(data)
		}
	}
	for _, want := range []string{"Name: m0serve-go\n", "Summary: m0serve, the Python application server written in Go (not the Mojo m0serve)",
		"License-Expression: BSD-3-Clause\n", "License-File: LICENSE\n",
		"Project-URL: Homepage, https://" + repository + "\n", "Project-URL: Source, https://" + repository + "\n"} {
		if !strings.Contains(metadata, want) {
			t.Errorf("the wheel's METADATA has no %q:\n%s", want, metadata[:min(len(metadata), 1500)])
		}
	}
	if licensed != string(license) {
		t.Errorf("the wheel's LICENSE is not the repository's (%d bytes, want %d)", len(licensed), len(license))
	}
}

// checkWheelGlibc: the wheel's extension module needs no glibc symbol
// version newer than floor (its manylinux tag's) and no library beyond
// glibc's own (PEP 600's rule; libpython least of all).
func checkWheelGlibc(t *testing.T, wheel, floor string) {
	t.Helper()
	z, err := zip.OpenReader(wheel)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, ".so") {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		ext, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		libraries, err := ext.ImportedLibraries()
		if err != nil {
			t.Fatal(err)
		}
		for _, library := range libraries {
			switch library {
			case "libc.so.6", "libpthread.so.0", "libdl.so.2", "libresolv.so.2", "libm.so.6", "librt.so.1":
			default:
				t.Errorf("%s needs %s, beyond glibc", f.Name, library)
			}
		}
		symbols, err := ext.DynamicSymbols()
		if err != nil {
			t.Fatal(err)
		}
		newest := ""
		for _, symbol := range symbols {
			if version, ok := strings.CutPrefix(symbol.Version, "GLIBC_"); ok && newerVersion(version, newest) {
				newest = version
			}
		}
		if newest == "" || newerVersion(newest, floor) {
			t.Errorf("%s needs glibc %s, want %s at most (its tag)", f.Name, newest, floor)
		}
		return
	}
	t.Errorf("no extension module in %s", wheel)
}

// newerVersion says whether dotted version a is newer than b ("" is
// older than any).
func newerVersion(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(as), len(bs)) {
		var x, y int
		if i < len(as) {
			fmt.Sscan(as[i], &x)
		}
		if i < len(bs) {
			fmt.Sscan(bs[i], &y)
		}
		if x != y {
			return x > y
		}
	}
	return false
}
