package loop

import (
	"sync"
	"testing"
)

func TestRingFIFOAndBounds(t *testing.T) {
	var r ring[int]
	r.init(3) // rounds up to 4
	for i := 0; i < 4; i++ {
		if !r.push(i) {
			t.Fatalf("push %d refused", i)
		}
	}
	if r.push(99) {
		t.Fatal("push into a full ring succeeded")
	}
	for i := 0; i < 4; i++ {
		if v, ok := r.pop(); !ok || v != i {
			t.Fatalf("pop %d: %d %v", i, v, ok)
		}
	}
	if _, ok := r.pop(); ok || !r.empty() {
		t.Fatal("pop from an empty ring succeeded")
	}
}

// TestRingManyProducersConsumers: every value pushed is popped exactly
// once, whatever the interleaving (run with -race).
func TestRingManyProducersConsumers(t *testing.T) {
	var r ring[int]
	r.init(64)
	const producers, perProducer = 4, 20000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perProducer; i++ {
				for !r.push(p*perProducer + i) {
				}
			}
		}()
	}
	seen := make([]bool, producers*perProducer)
	var mu sync.Mutex
	var consumers sync.WaitGroup
	remaining := producers * perProducer
	for c := 0; c < 2; c++ {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for {
				mu.Lock()
				if remaining == 0 {
					mu.Unlock()
					return
				}
				mu.Unlock()
				v, ok := r.pop()
				if !ok {
					continue
				}
				mu.Lock()
				if seen[v] {
					t.Errorf("%d popped twice", v)
				}
				seen[v] = true
				remaining--
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	consumers.Wait()
}

func TestJobQueueTakeParksAndClose(t *testing.T) {
	q := NewJobQueue(4)
	got := make(chan *Job)
	go func() {
		for j := q.Take(); j != nil; j = q.Take() {
			got <- j
		}
		close(got)
	}()
	jobs := []*Job{{}, {}, {}}
	for _, j := range jobs {
		if !q.push(j) {
			t.Fatal("push refused")
		}
		q.signal()
		if <-got != j {
			t.Fatal("took a different job")
		}
	}
	q.Close()
	if _, open := <-got; open {
		t.Fatal("Take returned a job after Close")
	}
}

func TestJobQueueFullRefuses(t *testing.T) {
	q := NewJobQueue(2)
	for i := 0; i < 2; i++ {
		if !q.push(&Job{}) {
			t.Fatalf("push %d refused below capacity", i)
		}
	}
	if q.push(&Job{}) {
		t.Fatal("push beyond capacity succeeded")
	}
}

func TestJobQueueTryTake(t *testing.T) {
	q := NewJobQueue(4)
	if q.TryTake() != nil {
		t.Fatal("TryTake on an empty queue returned a job")
	}
	a, b := &Job{}, &Job{}
	q.push(a)
	q.push(b)
	if q.TryTake() != a || q.TryTake() != b || q.TryTake() != nil {
		t.Fatal("TryTake out of order")
	}
}

func TestJobQueueArmNotifiesOncePerArm(t *testing.T) {
	q := NewJobQueue(4)
	calls := 0
	q.SetNotify(func() { calls++ })
	q.push(&Job{})
	q.signal()
	if calls != 0 {
		t.Fatalf("notified %d times without an Arm", calls)
	}
	if q.Arm() {
		t.Fatal("Arm armed with a job ready")
	}
	if q.TryTake() == nil || !q.Arm() {
		t.Fatal("Arm refused on an empty queue")
	}
	q.signal() // nothing pushed since: no call
	if calls != 0 {
		t.Fatalf("notified %d times with nothing pushed", calls)
	}
	q.push(&Job{})
	q.push(&Job{})
	q.signal()
	q.push(&Job{})
	q.signal()
	if calls != 1 {
		t.Fatalf("notified %d times for one Arm, want 1", calls)
	}
	q.TryTake()
	q.TryTake()
	q.TryTake()
	if !q.Arm() {
		t.Fatal("Arm refused on an empty queue")
	}
	q.Close()
	if calls != 2 {
		t.Fatalf("Close after an Arm notified %d times in all, want 2", calls)
	}
	if q.Arm() {
		t.Fatal("Arm armed on a closed queue")
	}
}

// TestJobQueueWait: Wait returns when a job is queued, leaving it to be
// taken, and false once the queue is closed and empty.
func TestJobQueueWait(t *testing.T) {
	q := NewJobQueue(4)
	waited := make(chan bool)
	go func() { waited <- q.Wait() }()
	j := &Job{}
	q.push(j)
	q.signal()
	if !<-waited {
		t.Fatal("Wait reported a closed queue")
	}
	if got := q.TryTake(); got != j {
		t.Fatalf("TryTake after Wait: %p, want the queued job %p", got, j)
	}
	go func() { waited <- q.Wait() }()
	q.Close()
	if <-waited {
		t.Fatal("Wait on a closed, empty queue reported a job")
	}
}
