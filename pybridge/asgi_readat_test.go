package pybridge

import "syscall"

func readAt(fd int, p []byte) (int, error) { return syscall.Pread(fd, p, 0) }
