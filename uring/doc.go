// Package uring is the io_uring implementation of loop.Backend (Linux only),
// built on github.com/pawelgaczynski/giouring.
//
// # Thread
//
// New must be called on the loop's locked OS thread (runtime.LockOSThread),
// and every method but Wake must be called from that same thread afterwards:
// with IORING_SETUP_SINGLE_ISSUER the kernel binds the ring to the task that
// created it and refuses io_uring_enter from any other with EEXIST, and with
// IORING_SETUP_DEFER_TASKRUN completions are only run in that task's own
// io_uring_enter.
//
// # Features
//
// New probes the kernel and takes the best it offers, each with a fallback:
//
//	defer_taskrun      IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN (6.1)
//	coop_taskrun       IORING_SETUP_COOP_TASKRUN (5.19), when defer_taskrun is off
//	multishot_accept   IORING_ACCEPT_MULTISHOT (5.19), else one accept re-armed per connection
//	buf_ring           IORING_REGISTER_PBUF_RING (5.19), else recv into the slot's buffer
//	multishot_recv     IORING_RECV_MULTISHOT over the buffer ring (6.0), else one recv per QueueRecv
//	cancel_fd          IORING_ASYNC_CANCEL_FD|ALL (5.19), else cancel by user_data
//	direct_send        a pass's only send by send(2) (any kernel; directsend.go), else an SQE
//
// Setting M0_URING_DISABLE (or Options.Disable) to a comma list of those
// names forces each off, so that every fallback path runs on a kernel that
// would otherwise skip it. Name reports what is in use.
//
// # user_data
//
// Every SQE carries a 64-bit user_data that says what its completion is:
//
//	bits 63..56  kind (accept, recv, send, close, cancel, wake; splice in,
//	             splice out and poll out of a file send)
//	bits 55..32  slot (so slots are limited to 2^24-1)
//	bits 31..0   generation
//
// For accept the slot is 0 and the generation counts QueueAccept calls, so
// that a completion of an arm StopAccept cancelled is told from the current
// arm. The encoding never produces all ones, which giouring reserves for its
// internal timeout SQE on kernels without IORING_FEAT_EXT_ARG.
//
// # Completions and slots
//
// The backend keeps state per slot and generation (the buffer the kernel is
// writing into or reading from, the progress of a send), so that buffers
// stay referenced for as long as the kernel holds them and a short send is
// resumed without the loop seeing it. OpClose for a generation is delivered
// only after every operation the kernel still held for it has delivered its
// own completion. The loop may reuse a slot with the next generation before
// that OpClose arrives: the two generations are kept apart.
//
// # File sends
//
// QueueSendFile moves a file range to a socket with IORING_OP_SPLICE
// (5.7): file into a pipe, pipe into the socket, one pair of splices per
// pipe's worth, so the bytes go from the page cache to the socket without
// a copy through user space. Splice runs in the ring's io-wq workers,
// which take no poll for a full socket: a splice that finds it full
// completes with -EAGAIN, and an IORING_OP_POLL_ADD for POLLOUT (5.1)
// waits for room before the next. Pipe pairs come from a free list; one
// that ends a send with bytes still in it is closed, never reused.
package uring
