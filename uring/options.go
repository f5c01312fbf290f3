//go:build linux

package uring

import (
	"fmt"
	"strings"
)

// EnvDisable names the environment variable New reads: a comma list of
// feature names to force off (see the package comment), added to
// Options.Disable.
const EnvDisable = "M0_URING_DISABLE"

// Options configures New. The zero value takes the defaults.
type Options struct {
	// Entries is the submission queue size (the completion queue is twice
	// that). A pass that queues more SQEs than this pays one extra
	// io_uring_enter to make room. Default 4096.
	Entries uint32
	// BufferCount and BufferSize shape the provided buffer ring: BufferCount
	// buffers (a power of two, at most 32768) of BufferSize bytes each, in
	// one mmap'd region off the Go heap. Defaults 1024 and 4096: 4 MiB, as
	// many buffers as the loop can hold for one batch of completions from
	// a thousand busy connections before a multishot receive runs dry
	// (ENOBUFS).
	BufferCount uint32
	BufferSize  uint32
	// Disable is a comma list of features to force off, the same syntax as
	// M0_URING_DISABLE: defer_taskrun, coop_taskrun, multishot_accept,
	// multishot_recv, buf_ring, cancel_fd, direct_send.
	Disable string
}

const (
	defaultEntries     = 4096
	defaultBufferCount = 1024
	defaultBufferSize  = 4096
	maxBufferCount     = 32768
)

// feature is one optional kernel feature the backend can do without.
type feature uint8

const (
	featureDeferTaskrun feature = 1 << iota
	featureCoopTaskrun
	featureMultishotAccept
	featureMultishotRecv
	featureBufRing
	featureCancelFD
	featureDirectSend
)

var featureNames = [...]struct {
	name string
	bit  feature
}{
	{"defer_taskrun", featureDeferTaskrun},
	{"coop_taskrun", featureCoopTaskrun},
	{"multishot_accept", featureMultishotAccept},
	{"multishot_recv", featureMultishotRecv},
	{"buf_ring", featureBufRing},
	{"cancel_fd", featureCancelFD},
	{"direct_send", featureDirectSend},
}

// parseDisable reads a comma list of feature names. An unknown name is an
// error: a misspelt knob that silently did nothing would make a test of a
// fallback path pass without running it.
func parseDisable(list string) (feature, error) {
	var off feature
	for _, field := range strings.Split(list, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		known := false
		for _, f := range featureNames {
			if f.name == field {
				off |= f.bit
				known = true
				break
			}
		}
		if !known {
			names := make([]string, len(featureNames))
			for i, f := range featureNames {
				names[i] = f.name
			}
			return 0, fmt.Errorf("uring: unknown feature %q in disable list %q (known: %s)", field, list, strings.Join(names, ", "))
		}
	}
	return off, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Entries == 0 {
		o.Entries = defaultEntries
	}
	if o.BufferCount == 0 {
		o.BufferCount = defaultBufferCount
	}
	if o.BufferSize == 0 {
		o.BufferSize = defaultBufferSize
	}
	if o.BufferCount&(o.BufferCount-1) != 0 || o.BufferCount > maxBufferCount {
		return o, fmt.Errorf("uring: BufferCount %d: want a power of two up to %d", o.BufferCount, maxBufferCount)
	}
	return o, nil
}
