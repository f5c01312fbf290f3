package server

import (
	"fmt"

	"github.com/m0serve/m0serve/loop"
)

func (c *Config) validateWebSocket() error {
	switch {
	case c.WS != "auto" && c.WS != "none":
		return &ConfigError{"ws", fmt.Sprintf("%q: want auto or none", c.WS)}
	case c.WSMaxSize < 1:
		return &ConfigError{"ws-max-size", "must be at least 1 byte"}
	case c.WSMaxQueue < 1:
		return &ConfigError{"ws-max-queue", "must be at least 1"}
	case c.WSPingInterval < 0:
		return &ConfigError{"ws-ping-interval", "must not be negative (0: no pings)"}
	case c.WSPingTimeout <= 0:
		return &ConfigError{"ws-ping-timeout", "must be positive"}
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
