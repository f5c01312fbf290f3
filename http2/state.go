package http2

import "strconv"

// streamState is where a stream is in its life (RFC 9113 §5.1), seen from
// the server. Idle streams have no Stream, and a server that never
// pushes reserves none: a Stream starts open, or half-closed (remote)
// when its HEADERS carried END_STREAM. Every change goes through move,
// which refuses what §5.1's diagram does not allow.
type streamState uint8

const (
	stateOpen             streamState = iota
	stateHalfClosedRemote             // END_STREAM received: the client sends nothing more
	stateHalfClosedLocal              // END_STREAM sent: the server sends nothing more
	stateClosed                       // both END_STREAMs
	stateReset                        // RST_STREAM, either side's, or the connection's end
)

var stateNames = [...]string{"open", "half-closed (remote)", "half-closed (local)", "closed", "reset"}

func (s streamState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state " + strconv.Itoa(int(s))
}

// transitions[from] holds a bit for each state reachable from it (§5.1):
// each END_STREAM closes one half, a reset closes both, and nothing
// leaves closed or reset.
var transitions = [...]uint8{
	stateOpen:             1<<stateHalfClosedRemote | 1<<stateHalfClosedLocal | 1<<stateReset,
	stateHalfClosedRemote: 1<<stateClosed | 1<<stateReset,
	stateHalfClosedLocal:  1<<stateClosed | 1<<stateReset,
	stateClosed:           0,
	stateReset:            0,
}

// move changes s's state. A change §5.1 does not allow is a bug in this
// package, whose callers check the state first.
func (s *Stream) move(to streamState) {
	if transitions[s.state]&(1<<to) == 0 {
		panic("http2: stream " + strconv.FormatUint(uint64(s.ID), 10) + ": " + s.state.String() + " to " + to.String())
	}
	s.state = to
}

// endRemote records the client's END_STREAM.
func (s *Stream) endRemote() {
	if s.state == stateHalfClosedLocal {
		s.move(stateClosed)
		return
	}
	s.move(stateHalfClosedRemote)
}

// endLocal records the server's END_STREAM.
func (s *Stream) endLocal() {
	if s.state == stateHalfClosedRemote {
		s.move(stateClosed)
		return
	}
	s.move(stateHalfClosedLocal)
}

// remoteClosed says the client may send nothing more on s.
func (s *Stream) remoteClosed() bool { return s.state != stateOpen && s.state != stateHalfClosedLocal }

// localClosed says the server may send nothing more on s.
func (s *Stream) localClosed() bool { return s.state != stateOpen && s.state != stateHalfClosedRemote }
