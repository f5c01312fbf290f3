//go:build !linux

package loop

import "golang.org/x/sys/unix"

// FileEnded is the errno a backend reports (as -FileEnded in an OpSend's
// Res) when a file send found the file shorter than its range. FreeBSD
// has no ENODATA, so the BSDs and macOS say EIO.
const FileEnded = unix.EIO
