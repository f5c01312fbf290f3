package http2

import "encoding/binary"

// The SETTINGS parameters (RFC 9113 §6.5.2, RFC 8441 §3).
const (
	settingHeaderTableSize       = 0x1
	settingEnablePush            = 0x2
	settingMaxConcurrentStreams  = 0x3
	settingInitialWindowSize     = 0x4
	settingMaxFrameSize          = 0x5
	settingMaxHeaderListSize     = 0x6
	settingEnableConnectProtocol = 0x8
)

// Protocol bounds (§6.5.2, §6.9.1).
const (
	minMaxFrameSize   = 1 << 14
	maxMaxFrameSize   = 1<<24 - 1
	maxWindow         = 1<<31 - 1
	defaultWindow     = 65535
	defaultTableSize  = 4096
	maxStreamID       = 1<<31 - 1
	defaultFrameSize  = minMaxFrameSize
	defaultListSize   = 16 << 10
	defaultConcurrent = 100
)

// Config is what a server Conn advertises and enforces. The zero value of
// a field takes its default.
type Config struct {
	// MaxConcurrentStreams bounds the streams a client may have open,
	// counting a reset stream until its handler is done with it, so that
	// resets do not free room for more work (CVE-2023-44487). Default 100.
	MaxConcurrentStreams uint32
	// InitialWindowSize is each stream's receive window (§6.9.2): the
	// most of a request body buffered before the app takes it. Default
	// 256 KiB; never below the protocol's 65535, which a client may use
	// until it has our SETTINGS.
	InitialWindowSize uint32
	// ConnWindowSize is the connection's receive window (§6.9.1), shared
	// by its streams. Default 1 MiB.
	ConnWindowSize uint32
	// MaxFrameSize is the largest frame payload accepted (§4.2). Default
	// 16384, the protocol's minimum.
	MaxFrameSize uint32
	// MaxHeaderListSize bounds a request's decoded header list, counted
	// as §6.5.2 says (name, value and 32 octets a field). Default 16 KiB.
	MaxHeaderListSize uint32
	// EnableConnectProtocol offers extended CONNECT (RFC 8441), for
	// WebSockets over HTTP/2.
	EnableConnectProtocol bool
	// ResetBudget bounds the stream resets, by either side, not paid back
	// by a stream that ended normally; beyond it the connection is closed
	// with ENHANCE_YOUR_CALM (Rapid Reset, CVE-2023-44487; MadeYouReset,
	// CVE-2025-8671). Default 200.
	ResetBudget int
	// MaxQueuedControl bounds the control frames (SETTINGS and PING acks,
	// RST_STREAMs) queued for a peer that does not read them; beyond it
	// the connection is closed with ENHANCE_YOUR_CALM (CVE-2019-9512,
	// 9515). Default 10000, as Go's net/http.
	MaxQueuedControl int
	// MaxEmptyFrames bounds the frames that carry nothing (an empty DATA
	// frame without END_STREAM, an empty CONTINUATION) a connection may
	// send (CVE-2019-9518). Default 1000.
	MaxEmptyFrames int
}

// Defaults is the zero Config with its defaults filled in: the one source
// of the values a server's flags start from.
var Defaults = Config{}.WithDefaults()

// WithDefaults is c as a Conn takes it: each zero field set to its
// default, each out of the protocol's bounds brought within them. A user
// of the codec reads its limits here, never from a copy of the defaults.
func (c Config) WithDefaults() Config {
	if c.MaxConcurrentStreams == 0 {
		c.MaxConcurrentStreams = defaultConcurrent
	}
	c.InitialWindowSize = clampWindow(c.InitialWindowSize, 256<<10)
	c.ConnWindowSize = clampWindow(c.ConnWindowSize, 1<<20)
	if c.MaxFrameSize < minMaxFrameSize {
		c.MaxFrameSize = defaultFrameSize
	}
	if c.MaxFrameSize > maxMaxFrameSize {
		c.MaxFrameSize = maxMaxFrameSize
	}
	if c.MaxHeaderListSize == 0 {
		c.MaxHeaderListSize = defaultListSize
	}
	if c.ResetBudget == 0 {
		c.ResetBudget = 200
	}
	if c.MaxQueuedControl == 0 {
		c.MaxQueuedControl = 10000
	}
	if c.MaxEmptyFrames == 0 {
		c.MaxEmptyFrames = 1000
	}
	return c
}

func clampWindow(v, fallback uint32) uint32 {
	switch {
	case v == 0:
		return fallback
	case v < defaultWindow:
		return defaultWindow
	case v > maxWindow:
		return maxWindow
	}
	return v
}

// peerSettings is what the client said in its SETTINGS frames.
type peerSettings struct {
	headerTableSize   uint32
	initialWindowSize uint32
	maxFrameSize      uint32
	maxHeaderListSize uint32 // 0: unlimited
}

var defaultPeerSettings = peerSettings{
	headerTableSize:   defaultTableSize,
	initialWindowSize: defaultWindow,
	maxFrameSize:      defaultFrameSize,
}

// applySettings reads a SETTINGS payload (its length already checked to
// be a multiple of 6) and applies each value in order (§6.5.3), calling
// onWindow with the change of the initial window size.
func (p *peerSettings) apply(payload []byte, onWindow func(delta int64) error) error {
	for i := 0; i+6 <= len(payload); i += 6 {
		id := binary.BigEndian.Uint16(payload[i:])
		v := binary.BigEndian.Uint32(payload[i+2:])
		switch id {
		case settingHeaderTableSize:
			p.headerTableSize = v
		case settingEnablePush, settingEnableConnectProtocol:
			// A client may only turn push off, and a server does not
			// push anyway; ENABLE_CONNECT_PROTOCOL is the server's to
			// send (RFC 8441 §3). Either must still be 0 or 1.
			if v > 1 {
				return connError(ErrCodeProtocol, "SETTINGS value not 0 or 1")
			}
		case settingInitialWindowSize:
			if v > maxWindow {
				return connError(ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1")
			}
			delta := int64(v) - int64(p.initialWindowSize)
			p.initialWindowSize = v
			if err := onWindow(delta); err != nil {
				return err
			}
		case settingMaxFrameSize:
			if v < minMaxFrameSize || v > maxMaxFrameSize {
				return connError(ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE out of range")
			}
			p.maxFrameSize = v
		case settingMaxHeaderListSize:
			p.maxHeaderListSize = v
		}
		// Unknown settings are ignored (§6.5.2).
	}
	return nil
}
