package cli

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/m0serve/m0serve/pybridge"
	"github.com/m0serve/m0serve/server"
)

// version and commit are stamped by the Makefile's build (-X
// github.com/m0serve/m0serve/cli.version from the VERSION file, .commit
// from git). A plain go build leaves them empty, and versionLine falls back
// on what the Go toolchain recorded.
var version, commit string

// versionLine is what --version prints: the version, the commit, the
// interpreter (the CPython library in use, and the python it runs inside
// when hosted, else "embedded"), whether its GIL is enabled, the I/O
// backends built in and the one --backend auto takes here, and the Go
// toolchain.
func versionLine() string {
	info := buildInfo()
	interpreter := "embedded"
	if hostPython != "" {
		interpreter = "in " + hostPython
	}
	gil := "GIL enabled"
	if !pybridge.GILEnabled() {
		gil = "GIL disabled"
	}
	return fmt.Sprintf("m0serve %s (commit %s, CPython %s %s, %s, backends: %s, %s, %s %s/%s)",
		releaseVersion(version, info), buildCommit(commit, info), pybridge.LibraryVersion(), interpreter, gil,
		strings.Join(server.Backends(), " "), autoBackend(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// autoBackend says which backend --backend auto takes on this machine,
// and why not io_uring when it falls back.
func autoBackend() string {
	name, why := server.AutoBackend()
	switch {
	case name == "":
		return "none in use: " + why.Error()
	case why != nil:
		return name + " in use (io_uring: " + why.Error() + ")"
	}
	return name + " in use"
}

// buildInfo is what the Go toolchain recorded in the binary; nil when
// it recorded nothing.
func buildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// pseudoVersion matches the timestamp and commit of a Go pseudo-version
// (v0.0.0-20261201145911-7871119abcde), which names no release.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}`)

// releaseVersion is the stamped version; else the module's version when
// the build came from a release tag (go install ...@v0.4.0); else "dev".
func releaseVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info != nil {
		v := info.Main.Version
		if v != "" && v != "(devel)" && !pseudoVersion.MatchString(v) {
			return strings.TrimPrefix(v, "v")
		}
	}
	return "dev"
}

// buildCommit is the stamped commit; else the revision go build recorded
// from git (not recorded under -buildvcs=false); else "unknown".
func buildCommit(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info != nil {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value[:min(len(s.Value), 7)]
			}
		}
	}
	return "unknown"
}
