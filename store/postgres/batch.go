package postgres

import (
	"slices"
	"sync"
)

// A group lets concurrent callers that write the same row (an account, a
// chain head) share one transaction: the first caller leads and writes the
// requests pending at that moment in one batch; those that arrive meanwhile
// wait, and the first of them leads the next batch. No caller waits for a
// timer, and each returns only when the transaction holding its request
// has committed.
type group[In, Out any] struct {
	mu      sync.Mutex
	pending []*job[In, Out]
	busy    bool
}

// job is one caller's request in a group.
type job[In, Out any] struct {
	in   In
	out  Out
	err  error
	done chan bool // receives true when the receiver leads the next batch
}

// run queues in and returns its outcome. When the caller leads, write is
// called with at most max jobs (the caller's first) and must set each job's
// out or err.
func (g *group[In, Out]) run(in In, max int, write func(batch []*job[In, Out])) (Out, error) {
	j := &job[In, Out]{in: in, done: make(chan bool, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, j)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if !lead && !<-j.done {
		return j.out, j.err
	}

	// j leads: it is the first pending job.
	g.mu.Lock()
	n := min(len(g.pending), max)
	batch := slices.Clone(g.pending[:n])
	g.pending = slices.Delete(g.pending, 0, n)
	g.mu.Unlock()

	write(batch)

	g.mu.Lock()
	var next *job[In, Out]
	if len(g.pending) > 0 {
		next = g.pending[0]
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	if next != nil {
		next.done <- true
	}
	for _, b := range batch[1:] {
		b.done <- false
	}
	return j.out, j.err
}
