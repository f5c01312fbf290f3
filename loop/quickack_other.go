//go:build !linux

package loop

// quickAck: no TCP_QUICKACK outside Linux; the kernel's delayed ACK
// stands.
func quickAck(fd int) {}
