package wsclient

// LoadResult is one run of bench/wsload: the figures it prints as one
// JSON line and the harness reads.
type LoadResult struct {
	Mode        string `json:"mode"`
	Connections int    `json:"connections"`
	// Sent is the messages the clients sent; Messages the messages they
	// received: equal in echo, Connections times Sent in broadcast.
	Sent     int64   `json:"sent"`
	Messages int64   `json:"messages"`
	Seconds  float64 `json:"seconds"`
	// MessagesPerSecond is Messages over Seconds.
	MessagesPerSecond float64 `json:"messages_per_second"`
	// P50us and P99us are echo round trips, send to reply; 0 in
	// broadcast, where a message has no single reply.
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
}
