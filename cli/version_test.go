package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionFallbacks(t *testing.T) {
	build := func(module string, settings ...debug.BuildSetting) *debug.BuildInfo {
		info := &debug.BuildInfo{Settings: settings}
		info.Main.Version = module
		return info
	}
	revision := debug.BuildSetting{Key: "vcs.revision", Value: "7871119d1cdaf00d00aa1b5ff30c2d2c0a55e1f2"}
	cases := []struct {
		name                    string
		stampedVersion          string
		stampedCommit           string
		info                    *debug.BuildInfo
		wantVersion, wantCommit string
	}{
		{"make build", "0.4.0", "7871119", build("(devel)"), "0.4.0", "7871119"},
		{"stamp wins", "0.4.0", "abcdef0", build("v0.3.0", revision), "0.4.0", "abcdef0"},
		{"go build in git", "", "", build("(devel)", revision), "dev", "7871119"},
		{"go build, pseudo-version", "", "", build("v0.0.0-20261201145911-7871119d1cda+dirty", revision), "dev", "7871119"},
		{"go install at a tag", "", "", build("v0.4.0"), "0.4.0", "unknown"},
		{"no build info", "", "", nil, "dev", "unknown"},
	}
	for _, tc := range cases {
		if got := releaseVersion(tc.stampedVersion, tc.info); got != tc.wantVersion {
			t.Errorf("%s: version %q, want %q", tc.name, got, tc.wantVersion)
		}
		if got := buildCommit(tc.stampedCommit, tc.info); got != tc.wantCommit {
			t.Errorf("%s: commit %q, want %q", tc.name, got, tc.wantCommit)
		}
	}
}
