package server

import (
	"fmt"

	"github.com/m0serve/m0serve/loop"
)

func (c *Config) validateWebSocket() error {
	switch {
	case c.WS != "auto" && c.WS != "none":
		return &ConfigError{Flag: "ws", Reason: fmt.Sprintf("%q: want auto or none", c.WS)}
	case c.WSMaxSize < 1:
		return &ConfigError{Flag: "ws-max-size", Reason: "must be at least 1 byte"}
	case c.WSMaxQueue < 1:
		return &ConfigError{Flag: "ws-max-queue", Reason: "must be at least 1"}
	case c.WSPingInterval < 0:
		return &ConfigError{Flag: "ws-ping-interval", Reason: "must not be negative (0: no pings)"}
	case c.WSPingTimeout <= 0:
		return &ConfigError{Flag: "ws-ping-timeout", Reason: "must be positive"}
	}
	return nil
}

// webSocket is the loop's WebSocket policy from the flags.
func (c *Config) webSocket() loop.WebSocketConfig {
	interval := c.WSPingInterval
	if interval == 0 {
		interval = -1 // the loop's "no pings"
	}
	return loop.WebSocketConfig{
		Disabled:      c.WS == "none",
		MaxMessage:    c.WSMaxSize,
		MaxQueue:      c.WSMaxQueue,
		PingInterval:  interval,
		PingTimeout:   c.WSPingTimeout,
		NoCompression: !c.WSPerMessageDeflate,
	}
}
