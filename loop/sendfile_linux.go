//go:build linux

package loop

import "golang.org/x/sys/unix"

// FileEnded is the errno a backend reports (as -FileEnded in an OpSend's
// Res) when a file send found the file shorter than its range: ENODATA,
// "no data available", as no syscall returns it for a socket.
const FileEnded = unix.ENODATA
