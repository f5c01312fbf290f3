//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/pawelgaczynski/giouring"
	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by the error New returns when io_uring cannot be
// used at all on this machine, so that the server can fall back to epoll.
var ErrUnavailable = errors.New("io_uring unavailable")

// ioUringDisabledPath is the sysctl (6.6+) that turns io_uring off: 1 for
// processes outside kernel.io_uring_group, 2 for everyone.
const ioUringDisabledPath = "/proc/sys/kernel/io_uring_disabled"

// setupFailure explains why io_uring_setup failed, in one line, wrapping
// ErrUnavailable and the errno. disabledSetting is the content of
// /proc/sys/kernel/io_uring_disabled, or "" when it cannot be read.
func setupFailure(errno error, disabledSetting string) error {
	var reason string
	switch {
	case errors.Is(errno, unix.EPERM):
		switch strings.TrimSpace(disabledSetting) {
		case "2":
			reason = "refused by kernel.io_uring_disabled=2 (off for every process)"
		case "1":
			reason = "refused by kernel.io_uring_disabled=1 (off for processes outside kernel.io_uring_group)"
		case "0":
			reason = "refused by seccomp (kernel.io_uring_disabled=0, so a seccomp profile such as Docker's default blocks it)"
		default:
			reason = "refused by seccomp or kernel.io_uring_disabled"
		}
	case errors.Is(errno, unix.ENOSYS):
		reason = "kernel without io_uring"
	case errors.Is(errno, unix.EINVAL):
		reason = "kernel lacks the io_uring feature set this backend needs"
	case errors.Is(errno, unix.ENOMEM):
		reason = "not enough locked memory for the rings (RLIMIT_MEMLOCK, kernels before 5.12)"
	default:
		reason = "io_uring_setup failed"
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, reason, errno)
}

func readDisabledSetting() string {
	b, err := os.ReadFile(ioUringDisabledPath)
	if err != nil {
		return ""
	}
	return string(b)
}

// setupRing creates the ring with the best task-run mode the kernel takes
// and the disable list allows. It reports which mode it got.
//
// IORING_SETUP_TASKRUN_FLAG is not asked for with COOP_TASKRUN: it only
// tells a program that does not enter every pass that task work is
// waiting, and this loop enters every pass anyway; giouring would spend an
// extra io_uring_enter on it when peeking.
func setupRing(entries uint32, off feature) (*giouring.Ring, feature, error) {
	attempts := [...]struct {
		mode  feature
		flags uint32
	}{
		{featureDeferTaskrun, giouring.SetupSingleIssuer | giouring.SetupDeferTaskrun},
		{featureCoopTaskrun, giouring.SetupCoopTaskrun},
		{0, 0},
	}
	for _, a := range attempts {
		if off&a.mode != 0 {
			continue
		}
		ring := giouring.NewRing()
		err := ring.QueueInit(entries, a.flags)
		if err == nil {
			return ring, a.mode, nil
		}
		// EINVAL with flags means an older kernel that does not know them:
		// try the next mode. Anything else, or EINVAL with no flags, is final.
		if errors.Is(err, unix.EINVAL) && a.flags != 0 {
			continue
		}
		return nil, 0, setupFailure(err, readDisabledSetting())
	}
	return nil, 0, setupFailure(unix.EINVAL, readDisabledSetting())
}

// requiredOps are the opcodes the backend cannot do without.
var requiredOps = [...]struct {
	op   uint8
	name string
}{
	{giouring.OpAccept, "IORING_OP_ACCEPT"},
	{giouring.OpRecv, "IORING_OP_RECV"},
	{giouring.OpSend, "IORING_OP_SEND"},
	{giouring.OpClose, "IORING_OP_CLOSE"},
	{giouring.OpAsyncCancel, "IORING_OP_ASYNC_CANCEL"},
	{giouring.OpRead, "IORING_OP_READ"},
	// File bodies (QueueSendFile): splice 5.7, poll 5.1. A kernel
	// without them falls back to epoll, whose sendfile(2) is as good.
	{giouring.OpSplice, "IORING_OP_SPLICE"},
	{giouring.OpPollAdd, "IORING_OP_POLL_ADD"},
}

func checkOps(ring *giouring.Ring) error {
	probe, err := ring.GetProbeRing()
	if err != nil {
		return fmt.Errorf("%w: kernel older than 5.6 (no opcode probe): %w", ErrUnavailable, err)
	}
	for _, r := range requiredOps {
		if !probe.IsSupported(r.op) {
			return fmt.Errorf("%w: kernel lacks %s", ErrUnavailable, r.name)
		}
	}
	return nil
}

// kernelAtLeast reports whether the running kernel is at least major.minor.
// Multishot accept and receive and cancel-by-fd are not in the opcode probe
// (they are flags on existing opcodes), so the version decides them.
func kernelAtLeast(major, minor int) bool {
	ok, err := giouring.CheckKernelVersion(major, minor, 0)
	return err == nil && ok
}

// New creates the ring and arms the wake eventfd. Call it on the loop's
// locked OS thread: see the package comment.
func New(opts Options) (*Backend, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	off, err := parseDisable(opts.Disable)
	if err != nil {
		return nil, err
	}
	envOff, err := parseDisable(os.Getenv(EnvDisable))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvDisable, err)
	}
	off |= envOff

	ring, mode, err := setupRing(opts.Entries, off)
	if err != nil {
		return nil, err
	}
	b := &Backend{
		ring:     ring,
		features: mode,
		slots:    make([][]slotState, 0, 64),
		cqes:     make([]*giouring.CompletionQueueEvent, 256),
		held:     make([]heldCompletion, 0, 64),
		wakeFD:   -1,
		listenFD: -1,
	}
	if err := checkOps(ring); err != nil {
		b.Close()
		return nil, err
	}
	if off&featureMultishotAccept == 0 && kernelAtLeast(5, 19) {
		b.features |= featureMultishotAccept
	}
	if off&featureCancelFD == 0 && kernelAtLeast(5, 19) {
		b.features |= featureCancelFD
	}
	if off&featureDirectSend == 0 {
		b.features |= featureDirectSend
	}
	if off&featureBufRing == 0 {
		br, err := newBufferRing(ring, opts.BufferCount, opts.BufferSize)
		switch {
		case err == nil:
			b.buffers = br
			b.features |= featureBufRing
		case errors.Is(err, syscall.EINVAL):
			// A kernel before 5.19 does not know IORING_REGISTER_PBUF_RING:
			// receive into the slot's buffer instead.
		default:
			b.Close()
			return nil, fmt.Errorf("uring: register provided buffer ring: %w", err)
		}
	}
	// Multishot receive needs buffer selection: without a buffer ring it
	// has nowhere to put a second completion's bytes.
	if b.buffers != nil && off&featureMultishotRecv == 0 && kernelAtLeast(6, 0) {
		b.features |= featureMultishotRecv
	}
	if err := b.startWake(); err != nil {
		b.Close()
		return nil, err
	}
	b.name = describe(b.features, opts)
	return b, nil
}

func describe(f feature, opts Options) string {
	var parts []string
	switch {
	case f&featureDeferTaskrun != 0:
		parts = append(parts, "single_issuer+defer_taskrun")
	case f&featureCoopTaskrun != 0:
		parts = append(parts, "coop_taskrun")
	default:
		parts = append(parts, "plain task_work")
	}
	if f&featureMultishotAccept != 0 {
		parts = append(parts, "multishot accept")
	} else {
		parts = append(parts, "single-shot accept")
	}
	switch {
	case f&featureMultishotRecv != 0:
		parts = append(parts, fmt.Sprintf("multishot recv + buf ring (%d x %d)", opts.BufferCount, opts.BufferSize))
	case f&featureBufRing != 0:
		parts = append(parts, fmt.Sprintf("single-shot recv + buf ring (%d x %d)", opts.BufferCount, opts.BufferSize))
	default:
		parts = append(parts, "single-shot recv into slot buffers")
	}
	if f&featureCancelFD != 0 {
		parts = append(parts, "cancel by fd")
	} else {
		parts = append(parts, "cancel by user_data")
	}
	if f&featureDirectSend != 0 {
		parts = append(parts, "a lone send by send(2)")
	}
	return "io_uring: " + strings.Join(parts, ", ")
}
