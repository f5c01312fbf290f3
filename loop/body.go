package loop

import (
	"math"

	"github.com/m0serve/m0serve/http1"
)

// chunkWindowSlack is how far past the room it has consumeBody lets the
// chunked decoder see: enough for a chunk-size line, so a small room
// still makes progress, and a bound on how far a job's inbox overshoots
// inboxLimit.
const chunkWindowSlack = http1.MaxChunkLineBytes + 64

// consumeBody takes request body bytes off the connection's input: into
// *dst while room lasts, or, dst nil, nowhere (a response that is done
// only needs the body out of the way). It stops when the body ends
// (done), when room is used up, or when the input runs out, having then
// asked for more (waitBody).
//
// The body limit is enforced before the bytes arrive: dispatch refuses a
// Content-Length over it, and the chunked decoder (MaxBodyBytes, set from
// Config.MaxBodySize) a chunk size that would take the body past it, so
// the 413 does not wait for the bytes it refuses. err is then a 413
// *http1.Error, or a 400 one for malformed chunked framing; either way the
// framing of what follows is lost.
func (l *Loop) consumeBody(s *slot, dst *[]byte, room int) (done bool, err error) {
	for room > 0 {
		in := s.input()
		if len(in) == 0 {
			l.waitBody(s)
			return false, nil
		}
		var data []byte
		if s.bodyChunked {
			if room < len(in)-chunkWindowSlack {
				in = in[:room+chunkWindowSlack]
			}
			var consumed int
			data, consumed, done, err = s.chunked.Decode(in)
			if err != nil {
				return false, err
			}
			s.consume(consumed)
		} else {
			n := int(min(int64(len(in)), int64(room), s.bodyRemaining))
			data = in[:n]
			s.consume(n)
			s.bodyRemaining -= int64(n)
			done = s.bodyRemaining == 0
		}
		s.bodyRead += int64(len(data))
		if dst != nil {
			*dst = append(*dst, data...)
			room -= len(data)
		}
		if done {
			return true, nil
		}
	}
	return false, nil
}

// discardBody reads and drops the rest of a request body whose response is
// done, so the next request on the connection can be read.
func (l *Loop) discardBody(s *slot) bool {
	done, err := l.consumeBody(s, nil, math.MaxInt)
	if err != nil {
		// The response is out; nothing is left to answer.
		s.closeAfter = true
		return false
	}
	if !done {
		return false
	}
	s.state = stateHead
	s.deadline, s.deadlineKind = 0, deadlineNone
	return true
}

// deliverBody moves request body bytes from the connection's input into
// the job's inbox, up to the inbox limit. Called with j.mu held; it returns
// false after releasing the lock when the body was refused (the
// connection then closes).
func (l *Loop) deliverBody(s *slot, j *Job) bool {
	had := len(j.inbox)
	done, err := l.consumeBody(s, &j.inbox, inboxLimit-len(j.inbox))
	if err != nil {
		status, reason, cause := 400, "malformed chunked body", ErrAborted
		if perr, ok := err.(*http1.Error); ok {
			status, reason = perr.Status, perr.Reason
		}
		if status == 413 {
			reason, cause = "request body too large", ErrBodyTooLarge
		}
		return l.refuseBody(s, j, status, reason, cause)
	}
	if done {
		j.bodyDone = true
		s.deadline, s.deadlineKind = 0, deadlineNone
	}
	if done || len(j.inbox) > had {
		l.tellReader(j)
	}
	return true
}

// waitBody asks for more body bytes and arms the body stall deadline.
func (l *Loop) waitBody(s *slot) {
	if s.peerEOF {
		s.closeAfter = true
		return
	}
	if s.deadlineKind != deadlineBody {
		s.deadline, s.deadlineKind = l.now+int64(l.cfg.BodyTimeout), deadlineBody
	}
	s.recvWanted = true
}
