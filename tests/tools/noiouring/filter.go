//go:build linux

package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ioURingSetup is the io_uring_setup syscall number, the same on amd64
// and arm64 (the generic table; x86_64 kept it in step).
const ioURingSetup = 425

// x32SyscallBit marks x32-ABI syscalls on an x86_64 kernel; the filter
// refuses io_uring_setup through that door too.
const x32SyscallBit = 0x40000000

// Offsets into struct seccomp_data (linux/seccomp.h).
const (
	offsetNr   = 0
	offsetArch = 4
)

// refuseIOURingSetup is the BPF program: on x86_64 and aarch64, fail
// io_uring_setup with EPERM (what Docker's default profile does) and allow
// everything else. Once io_uring_setup fails, no ring exists for
// io_uring_enter or io_uring_register to act on.
var refuseIOURingSetup = []unix.SockFilter{
	/* 0 */ statement(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offsetArch),
	/* 1 */ jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AUDIT_ARCH_X86_64, 2, 0),
	/* 2 */ jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AUDIT_ARCH_AARCH64, 1, 0),
	/* 3 */ statement(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
	/* 4 */ statement(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offsetNr),
	/* 5 */ jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, ioURingSetup, 2, 0),
	/* 6 */ jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, ioURingSetup|x32SyscallBit, 1, 0),
	/* 7 */ statement(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
	/* 8 */ statement(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)),
}

func statement(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

// jump's offsets count instructions after the next one.
func jump(code uint16, k uint32, ifTrue, ifFalse uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: ifTrue, Jf: ifFalse, K: k}
}

// installFilter puts the program on the calling thread, which must be
// locked to its goroutine and go on to execve: a seccomp filter belongs to
// one thread and is inherited across execve.
func installFilter() error {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		// Anywhere else the program would allow everything, silently.
		return fmt.Errorf("unsupported architecture %s (the filter knows amd64 and arm64)", runtime.GOARCH)
	}
	// An unprivileged process may install a filter only with
	// no_new_privs set (seccomp(2)); it is inherited across execve too.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	program := unix.SockFprog{
		Len:    uint16(len(refuseIOURingSetup)),
		Filter: &refuseIOURingSetup[0],
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0,
		uintptr(unsafe.Pointer(&program)))
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	return nil
}
