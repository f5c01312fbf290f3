package supervisor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// loadRandom is classic BPF's ancillary load of a random number: the
// offset SKF_AD_OFF + SKF_AD_RANDOM (-0x1000 + 56, linux/filter.h) as
// the instruction's unsigned K; x/sys does not define these.
const loadRandom = 0xfffff000 + 56

// steer makes the SO_REUSEPORT group fd belongs to send each new
// connection, at random, to one of the sockets at positions (indexes in
// the group, which the kernel keeps in the order the sockets started
// listening, a leaving socket's place taken by the last). Without it the
// kernel hashes each connection over every socket of the group, those
// whose worker is gone or being removed too.
func steer(fd int, positions []int) error {
	program := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: loadRandom},
		{Code: unix.BPF_ALU | unix.BPF_MOD | unix.BPF_K, K: uint32(len(positions))},
	}
	for i, position := range positions {
		program = append(program,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: uint32(i)},
			unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: uint32(position)})
	}
	program = append(program, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: uint32(positions[0])})
	prog := unix.SockFprog{Len: uint16(len(program)), Filter: &program[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &prog); err != nil {
		return fmt.Errorf("SO_ATTACH_REUSEPORT_CBPF: %w", err)
	}
	return nil
}

// queued is how many connections wait in a listening socket's accept
// queue (tcp_info's unacked, for a listener).
func queued(fd int) (int, error) {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, err
	}
	return int(info.Unacked), nil
}
