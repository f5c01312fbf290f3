package loop

import (
	"slices"
	"time"

	"github.com/m0serve/m0serve/http1"
)

// newJob is a job for the request req parsed from head on slot s: the
// head is copied into the job and req swapped with the job's own, so
// neither side allocates.
func (l *Loop) newJob(s *slot, head []byte, req *http1.Request) *Job {
	j := l.getJob()
	j.Carried, l.writer.carried = l.writer.carried, nil
	j.Head = append(j.Head[:0], head...)
	*req, j.Request = j.Request, *req
	j.Request.Rebase(j.Head)
	j.RemoteAddr = s.remoteAddr()
	j.TLS = nil
	if s.tls != nil {
		j.TLS = s.tls.Facts()
	}
	j.Arrived = l.now
	j.slot, j.gen = s.index, s.gen
	return j
}

// startJob hands the request just parsed to the JobQueue. The head is
// copied into the job (the receive buffer moves on) and the parsed request
// is swapped into it, so neither side allocates.
func (l *Loop) startJob(s *slot, head []byte, webSocket bool) {
	j := l.newJob(s, head, &s.req)
	j.webSocket = webSocket
	j.expect100 = j.Request.Expect100 && j.Request.HasBody()
	j.bodyDone = !j.Request.HasBody()
	s.consume(len(head))
	s.job = j
	s.state = stateJob
	j.queue = l.deferQueue()
	if l.cfg.BufferBodies && !j.bodyDone && !j.expect100 &&
		(j.Request.Chunked || j.Request.ContentLength <= inboxLimit) {
		// serviceJob queues it once the body is in the inbox (or, chunked,
		// once the inbox is full).
		j.buffering = true
		return
	}
	l.queueJob(j)
}

// deferQueue is the queue the inline handler deferred to: Config.Jobs or
// DeferTo's.
func (l *Loop) deferQueue() *JobQueue {
	q := l.writer.queue
	if q == nil || q == l.cfg.Jobs {
		return l.cfg.Jobs
	}
	if !slices.Contains(l.otherQueues, q) {
		l.otherQueues = append(l.otherQueues, q)
	}
	return q
}

// queueJob hands a job to the JobQueue, behind any held back.
func (l *Loop) queueJob(j *Job) {
	if len(l.heldJobs) > 0 || !j.queue.push(j) {
		l.heldJobs = append(l.heldJobs, j)
	}
}

func (l *Loop) getJob() *Job {
	var j *Job
	if n := len(l.freeJobs); n > 0 {
		j = l.freeJobs[n-1]
		l.freeJobs[n-1] = nil
		l.freeJobs = l.freeJobs[:n-1]
	} else {
		j = &Job{loop: l}
		j.cond.L = &j.mu
	}
	j.reset()
	l.jobsOut++
	return j
}

// releaseJob takes back a job both sides are done with. slot 0 marks it
// released, so a stale note for it still in the ring is ignored.
func (l *Loop) releaseJob(j *Job) {
	if j.h2 != nil {
		l.releaseStream(j)
	}
	j.slot, j.gen, j.detached = 0, 0, false
	l.jobsOut--
	dropFileBody(j)
	if cap(j.inbox) > 4*inboxLimit {
		j.inbox = nil
	}
	if cap(j.outbox) > 4*outboxLimit {
		j.outbox = nil
	}
	if cap(j.trailers) > trailerKeepLimit {
		j.trailers, j.trailerSpans = nil, nil
	}
	l.freeJobs = append(l.freeJobs, j)
}

// detachJob cuts a job off its connection: the handler's Read and Write
// now fail with err, and the job is released once the handler finishes.
func (l *Loop) detachJob(j *Job, err error) {
	j.mu.Lock()
	j.detached = true
	if j.buffering {
		// Never queued: no handler will finish it.
		j.buffering, j.finished = false, true
	}
	j.writtenWanted = false // OnJobGone tells a poster instead
	if !j.finished {
		j.aborted = true
		if j.bodyErr == nil && err != ErrAborted {
			j.bodyErr = err
		}
		if j.owner != nil && l.cfg.OnJobGone != nil {
			l.cfg.OnJobGone(j.owner, ConnectionClosed)
		}
	}
	finished := j.finished
	l.tellReader(j)
	j.mu.Unlock()
	l.jobWebSocketGone(j)
	if finished {
		l.releaseJob(j)
	}
}

// jobPeerEOF: the client ended its side while a handler holds its job.
// The loop goes on serving the job (a half-closed client may still read
// the response), and an event-loop handler hears of it through
// OnJobGone (InputEnded): a task waiting for the client to leave (a long
// poll) cannot tell a close from a half-close, and would otherwise wait
// until its next send fails.
func (l *Loop) jobPeerEOF(j *Job) {
	if l.cfg.OnJobGone == nil {
		return
	}
	j.mu.Lock()
	j.inputEnded = true
	if !j.finished && j.owner != nil {
		l.cfg.OnJobGone(j.owner, InputEnded)
	}
	j.mu.Unlock()
}

// drainNotes handles every job that posted news since the last pass.
func (l *Loop) drainNotes() {
	for {
		j, ok := l.notes.pop()
		if !ok {
			return
		}
		j.mu.Lock()
		j.queued = false
		detached, finished := j.detached, j.finished
		j.mu.Unlock()
		if detached {
			if finished {
				l.releaseJob(j)
			}
			continue
		}
		if j.slot == 0 || int(j.slot) >= len(l.slots) {
			continue
		}
		if hc := j.h2; hc != nil {
			hc.markReady(j)
			l.h2Kick(hc)
			continue
		}
		s := l.slots[j.slot]
		if s == nil || s.gen != j.gen || s.job != j {
			continue
		}
		l.advance(s)
		l.touch(s)
	}
}

// pushHeldJobs retries, in order, jobs a full JobQueue refused.
func (l *Loop) pushHeldJobs() {
	n := 0
	for n < len(l.heldJobs) {
		j := l.heldJobs[n]
		if j.detached && j.Carried == nil {
			// Its connection is gone and no handler has seen it. (One that
			// carries a response the inline handler began still goes: only
			// a handler can close that response's iterable, PEP 3333.)
			j.mu.Lock()
			j.finished = true
			j.mu.Unlock()
			l.releaseJob(j)
		} else if !j.queue.push(j) {
			break
		}
		l.heldJobs[n] = nil
		n++
	}
	if n > 0 {
		rest := copy(l.heldJobs, l.heldJobs[n:])
		l.heldJobs = l.heldJobs[:rest]
	}
}

// serviceJob moves data between a connection and its deferred job: body
// bytes in, response bytes out. It reports whether the job is over and the
// connection can go on to its next request.
func (l *Loop) serviceJob(s *slot) bool {
	j := s.job
	j.mu.Lock()
	if j.aborted {
		// The handler gave up (the loop's own aborts detach first).
		if !j.headPosted {
			j.mu.Unlock()
			l.writeError(s, 500, "handler aborted")
			return false
		}
		// The head was posted: whichever pass sees the abort, the client
		// gets the head and the body so far, then the close (Abort's
		// contract: a 500 only when no head was posted).
		if s.send == nil {
			s.send = l.buffers.getSend()
		}
		if !j.headWritten {
			l.writeJobHead(s, j)
		}
		l.sendOutbox(s, j)
		s.job = nil
		j.detached = true
		finished := j.finished
		j.cond.Broadcast()
		j.mu.Unlock()
		if finished {
			l.releaseJob(j)
		}
		s.closeAfter = true
		return false
	}
	if j.wsRemote != nil {
		l.acceptJobWebSocket(s, j)
		return true // serve the frames already in
	}
	if s.send == nil {
		s.send = l.buffers.getSend()
	}
	// The 100 goes out when the handler first reads, even if it already
	// posted its head: the head is written after it in this same send.
	if j.expect100 && j.wantBody && !j.sent100 && !j.headWritten {
		s.send = append(s.send, continue100...)
		j.sent100 = true
	}
	if !j.bodyDone && (!j.expect100 || j.wantBody) {
		if !l.deliverBody(s, j) {
			return false // deliverBody answered an error and released the lock
		}
	}
	if j.headPosted && !j.headWritten {
		l.writeJobHead(s, j)
	}
	if j.headWritten {
		l.sendOutbox(s, j)
	}
	if j.file.set && j.headWritten && !l.serviceFile(s, j) {
		j.mu.Unlock()
		return false
	}
	if !j.finished && j.bodyDone && l.cfg.OnJobGone != nil && !s.peerEOF {
		// Keep a receive armed while the handler runs, so the client's
		// end of input reaches it (jobPeerEOF) on every backend, not only
		// where a multishot receive happens to be armed.
		s.recvWanted = true
	}
	if !j.finished {
		queue := j.buffering && (j.bodyDone || len(j.inbox) >= inboxLimit)
		if queue {
			j.buffering = false
		}
		j.mu.Unlock()
		if queue {
			l.queueJob(j)
		}
		return false
	}
	if j.hold != nil {
		return l.startHold(s, j)
	}
	if j.mode == http1.BodyChunked {
		s.send = j.appendLastChunk(s.send)
	}
	if j.mode == http1.BodyUntilClose || j.mode == http1.BodyLength && j.bodySent < j.contentLength {
		// Close-delimited, or shorter than declared: only a close ends it.
		s.keepAlive = false
	}
	bodyDone, skipped100 := j.bodyDone, j.expect100 && !j.sent100
	s.job = nil
	j.mu.Unlock()
	l.releaseJob(j)
	switch {
	case !s.keepAlive, !bodyDone && skipped100:
		s.closeAfter = true
		return false
	case !bodyDone:
		s.state = stateDiscard
	default:
		s.state = stateHead
	}
	s.deadline, s.deadlineKind = 0, deadlineNone
	return true
}

// writeJobHead encodes a deferred response's head. Called with j.mu held.
func (l *Loop) writeJobHead(s *slot, j *Job) {
	if j.hold != nil {
		l.writeHoldHead(s, j)
		return
	}
	// A client still waiting to be asked for its body will not get to
	// send the next request in a way we can frame: close.
	close := !s.keepAlive || j.expect100 && !j.sent100 && !j.bodyDone || j.closeAfter
	if close {
		s.keepAlive = false
	}
	j.mode = l.appendHead(s, &j.Request, j.status, j.fields, j.fieldsSet, j.contentLength, close)
	l.cfg.Stats.observe(time.Duration(l.now - j.Arrived))
	j.headWritten = true
}

// refuseBody ends a job whose body cannot be accepted: the status is
// answered when no response has started, and the connection closes.
// Called with j.mu held; returns with it released.
func (l *Loop) refuseBody(s *slot, j *Job, status int, reason string, err error) bool {
	headWritten := j.headWritten
	j.mu.Unlock()
	s.job = nil
	if !headWritten {
		// The handler still runs, but this is the response its client
		// gets (the handler's own, if any, goes nowhere).
		l.answerError(s, &j.Request, status, reason)
	} else {
		s.closeAfter = true
	}
	l.detachJob(j, err)
	return false
}

// sendOutbox moves the handler's body bytes to the connection, framed by
// the head's mode. Called with j.mu held, after the head was written.
func (l *Loop) sendOutbox(s *slot, j *Job) {
	if len(j.outbox) == 0 {
		return
	}
	switch j.mode {
	case http1.BodyChunked:
		s.send = http1.AppendChunk(s.send, j.outbox)
	case http1.BodyLength:
		// Never past the declared length: the excess would be read as
		// the next response (the job then ends with a close).
		n := int(min(int64(len(j.outbox)), j.contentLength-j.bodySent))
		s.send = append(s.send, j.outbox[:n]...)
		j.bodySent += int64(n)
		if n < len(j.outbox) {
			s.keepAlive = false
		}
	case http1.BodyUntilClose:
		s.send = append(s.send, j.outbox...)
	}
	j.outbox = j.outbox[:0]
	j.cond.Broadcast()
	l.tellWriter(j)
}
