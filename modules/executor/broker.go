package executor

import (
	"context"
	"sync"
	"time"

	"pvebill/models"
)

// Broker wakes long-polls when an operation ends in this process.
type Broker struct {
	mu   sync.Mutex
	subs map[string][]chan struct{}
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{subs: map[string][]chan struct{}{}} }

// Subscribe returns a channel closed when id is published, and a cancel func.
func (b *Broker) Subscribe(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	b.mu.Lock()
	b.subs[id] = append(b.subs[id], ch)
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		list := b.subs[id]
		for i, c := range list {
			if c == ch {
				b.subs[id] = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(b.subs[id]) == 0 {
			delete(b.subs, id)
		}
	}
}

// Waiting is how many long-polls are subscribed to id right now: a test waits on it to act
// only once a long-poll has reached the server and parked.
func (b *Broker) Waiting(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[id])
}

// Publish wakes every subscriber of id.
func (b *Broker) Publish(id string) {
	b.mu.Lock()
	list := b.subs[id]
	delete(b.subs, id)
	b.mu.Unlock()
	for _, ch := range list {
		close(ch)
	}
}

// WaitTerminal returns the operation once it is terminal or when ctx ends (then the latest
// row). It wakes on the broker when this process finishes the operation, and re-reads every
// recheck for operations finished by another replica.
func WaitTerminal(ctx context.Context, db *models.DB, b *Broker, id string, recheck time.Duration) (*models.Operation, error) {
	t := time.NewTicker(recheck)
	defer t.Stop()
	for {
		// Subscribe before reading, so a finish between the read and the wait is not missed.
		ch, cancel := b.Subscribe(id)
		op, err := db.GetOperation(context.WithoutCancel(ctx), id)
		if err != nil || models.IsTerminal(op.State) {
			cancel()
			return op, err
		}
		select {
		case <-ctx.Done():
			cancel()
			return op, nil
		case <-ch:
		case <-t.C:
		}
		cancel()
	}
}
