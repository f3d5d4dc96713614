package executor

import (
	"sync"
	"time"

	"pvebill/models"
)

// Secrets holds transient secrets (root passwords) for queued operations in memory only: never
// in the database, a payload or a log line (R26). They are dropped when the operation ends.
type Secrets struct {
	mu sync.Mutex
	m  map[string]map[string]string
	// owner and pin are the executor's lease owner and lease: see Pin.
	owner string
	pin   time.Duration
}

// Pin reserves a queued operation whose secrets this process holds for this process's
// workers: the row is written with this replica as lease owner until the pin expires. Other
// replicas, which cannot see the secrets, leave it alone meanwhile; if this replica dies, the
// pin expires and another one claims it (and fails it as interrupted, for the billing system
// to retry). Call it before the row is inserted.
func (s *Secrets) Pin(op *models.Operation) {
	if s.owner == "" || s.pin <= 0 {
		return
	}
	owner, until := s.owner, models.Now().Add(s.pin)
	op.LeaseOwner, op.LeaseUntil = &owner, &until
}

// PinNow is the lease owner and lease end of a pin taken now (see Pin): a parked operation
// woken with the secret it waited for is pinned so (R58). ok is false when this store pins
// nothing.
func (s *Secrets) PinNow() (owner string, until time.Time, ok bool) {
	if s.owner == "" || s.pin <= 0 {
		return "", time.Time{}, false
	}
	return s.owner, models.Now().Add(s.pin), true
}

// NewSecrets returns an empty store.
func NewSecrets() *Secrets { return &Secrets{m: map[string]map[string]string{}} }

// Put stores secrets for an operation.
func (s *Secrets) Put(opID string, kv map[string]string) {
	if len(kv) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := make(map[string]string, len(kv))
	for k, v := range kv {
		cp[k] = v
	}
	s.m[opID] = cp
}

// Get returns one secret.
func (s *Secrets) Get(opID, name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[opID][name]
	return v, ok
}

// Drop forgets an operation's secrets.
func (s *Secrets) Drop(opID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, opID)
}
