//go:build linux

package uring

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestNameNamesFeaturesInUse(t *testing.T) {
	forEachCombo(t, Options{}, func(t *testing.T, b *Backend) {
		name := b.Name()
		t.Log(name)
		if !strings.HasPrefix(name, "io_uring: ") || strings.Contains(name, "\n") {
			t.Fatalf("Name %q: want one line starting \"io_uring: \"", name)
		}
		checks := []struct {
			bit     feature
			on, off string
		}{
			{featureMultishotAccept, "multishot accept", "single-shot accept"},
			{featureMultishotRecv, "multishot recv + buf ring (1024 x 4096)", "single-shot recv"},
			{featureCancelFD, "cancel by fd", "cancel by user_data"},
		}
		for _, c := range checks {
			want := c.off
			if b.features&c.bit != 0 {
				want = c.on
			}
			if !strings.Contains(name, want) {
				t.Errorf("Name %q lacks %q (features %b)", name, want, b.features)
			}
		}
		if direct := b.features&featureDirectSend != 0; strings.Contains(name, "send(2)") != direct {
			t.Errorf("Name %q: direct sends %v", name, direct)
		}
	})
}

// This kernel (6.18) has every feature: a combination must run with
// exactly the features it did not disable, or a fallback path goes
// untested.
func TestDisableForcesEachFeatureOff(t *testing.T) {
	all := featureDeferTaskrun | featureMultishotAccept | featureMultishotRecv | featureBufRing | featureCancelFD | featureDirectSend
	want := map[string]feature{
		"all":                 all,
		"no_defer_taskrun":    all&^featureDeferTaskrun | featureCoopTaskrun,
		"no_taskrun_modes":    all &^ featureDeferTaskrun,
		"no_multishot_accept": all &^ featureMultishotAccept,
		"no_multishot_recv":   all &^ featureMultishotRecv,
		"no_buf_ring":         all &^ (featureBufRing | featureMultishotRecv),
		"no_cancel_fd":        all &^ featureCancelFD,
		"no_direct_send":      all &^ featureDirectSend,
		"none":                0,
	}
	for _, combo := range combos {
		t.Run(combo.name, func(t *testing.T) {
			b := newBackend(t, Options{Disable: combo.disable})
			if b.features != want[combo.name] {
				t.Fatalf("features %06b, want %06b (%s)", b.features, want[combo.name], b.Name())
			}
		})
	}
}

func TestEnvironmentDisables(t *testing.T) {
	t.Setenv(EnvDisable, "multishot_accept, buf_ring")
	b := newBackend(t, Options{Disable: "cancel_fd"})
	for _, bit := range []feature{featureMultishotAccept, featureBufRing, featureMultishotRecv, featureCancelFD} {
		if b.features&bit != 0 {
			t.Errorf("feature %06b still on with %s=%q and Options.Disable: %s", bit, EnvDisable, "multishot_accept, buf_ring", b.Name())
		}
	}
	t.Setenv(EnvDisable, "multishot_acept")
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "multishot_acept") {
		t.Fatalf("New with a misspelt feature: err %v, want one naming it", err)
	}
}

func TestParseDisable(t *testing.T) {
	tests := []struct {
		list string
		want feature
		bad  bool
	}{
		{"", 0, false},
		{"buf_ring", featureBufRing, false},
		{" defer_taskrun ,coop_taskrun,", featureDeferTaskrun | featureCoopTaskrun, false},
		{"multishot_recv,multishot_accept,cancel_fd", featureMultishotRecv | featureMultishotAccept | featureCancelFD, false},
		{"bufring", 0, true},
		{"buf_ring,DEFER_TASKRUN", 0, true},
	}
	for _, tt := range tests {
		got, err := parseDisable(tt.list)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseDisable(%q) = %06b, %v; want %06b, error %v", tt.list, got, err, tt.want, tt.bad)
		}
	}
}

func TestOptionsRejectBadBufferCount(t *testing.T) {
	for _, count := range []uint32{3, 1000, 65536} {
		if _, err := New(Options{BufferCount: count}); err == nil {
			t.Errorf("New with BufferCount %d: no error", count)
		}
	}
}

func TestSetupFailureSaysWhy(t *testing.T) {
	tests := []struct {
		errno    unix.Errno
		disabled string
		want     string
	}{
		{unix.EPERM, "2\n", "kernel.io_uring_disabled=2"},
		{unix.EPERM, "1\n", "kernel.io_uring_disabled=1"},
		{unix.EPERM, "0\n", "seccomp"},
		{unix.EPERM, "", "refused by seccomp or kernel.io_uring_disabled"},
		{unix.ENOSYS, "", "kernel without io_uring"},
		{unix.EINVAL, "0\n", "feature set"},
		{unix.ENOMEM, "0\n", "RLIMIT_MEMLOCK"},
	}
	for _, tt := range tests {
		err := setupFailure(tt.errno, tt.disabled)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, tt.errno) {
			t.Errorf("setupFailure(%v, %q) = %v: does not wrap ErrUnavailable and the errno", tt.errno, tt.disabled, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
			t.Errorf("setupFailure(%v, %q) = %q: want one line containing %q", tt.errno, tt.disabled, msg, tt.want)
		}
	}
}

func TestUserDataRoundTrip(t *testing.T) {
	for _, k := range []kind{kindAccept, kindRecv, kindSend, kindClose, kindCancel, kindWake} {
		for _, slot := range []uint32{0, 1, 4095, MaxSlot} {
			for _, gen := range []uint32{0, 1, 1<<31 + 5, ^uint32(0)} {
				data := userData(k, slot, gen)
				if data == ^uint64(0) {
					t.Fatalf("userData(%d, %d, %d) is all ones, giouring's reserved value", k, slot, gen)
				}
				gk, gs, gg := splitUserData(data)
				if gk != k || gs != slot || gg != gen {
					t.Fatalf("split(userData(%d, %d, %d)) = %d, %d, %d", k, slot, gen, gk, gs, gg)
				}
			}
		}
	}
}
