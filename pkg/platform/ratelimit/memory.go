package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory counts in this process.
type Memory struct {
	mu     sync.Mutex
	start  time.Time // the current window; counts of older windows are dropped
	counts map[string]int64
}

// NewMemory returns an empty in-process store.
func NewMemory() *Memory { return &Memory{counts: map[string]int64{}} }

// Increment implements Store.
func (m *Memory) Increment(_ context.Context, key string, start time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case start.After(m.start):
		// A new window: the old counts are of no further use, which also bounds memory.
		m.start = start
		clear(m.counts)
	case start.Before(m.start):
		// A request stamped in the previous window, arriving after the switch: count it in the current
		// one rather than resurrect the old window (errs towards refusing).
	}
	m.counts[key]++
	return m.counts[key], nil
}

// Decrement implements Store.
func (m *Memory) Decrement(_ context.Context, key string, start time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if start.Equal(m.start) && m.counts[key] > 0 {
		m.counts[key]--
	}
	return nil
}

// Count implements Store.
func (m *Memory) Count(_ context.Context, key string, start time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if start.Before(m.start) {
		return m.counts[key], nil // as Increment: a late request sees the current window
	}
	if start.After(m.start) {
		return 0, nil
	}
	return m.counts[key], nil
}
