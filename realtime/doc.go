// Package realtime is the wire and shared state of --realtime, compatible
// with the Mojo m0serve's: the bus a publish travels on (one AF_UNIX
// datagram socket per worker, every process holding every write end), the
// event-id counter all workers share (one int64 on a page every process
// maps), the SSE frames the server writes itself (m0-gap, heartbeats) and
// the journal a worker replays to a client reconnecting with
// Last-Event-ID. It is pure Go over a few system calls: no goroutines, no
// sockets of a connection; package loop holds the connections, package
// server runs the bus's reader.
//
// m0pub.py is the Python side (from m0serve import m0pub): it writes the
// same datagrams, numbers them from the same page, and is shipped both in
// the wheel and, embedded here (PublisherSource), in bin/m0serve.
package realtime
