package backend

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Listeners are the functions registered with a backend's OnChange. A backend embeds them to implement
// OnChange and calls Notify when a cluster's state changed. The zero value is ready to use.
type Listeners struct {
	mu sync.Mutex
	fs []func(types.NamespacedName)
}

// OnChange registers f, called (from any goroutine) with the key of a cluster whose state changed.
func (l *Listeners) OnChange(f func(types.NamespacedName)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fs = append(l.fs, f)
}

// Notify calls every registered function with key, outside the lock (a function may register another).
func (l *Listeners) Notify(key types.NamespacedName) {
	l.mu.Lock()
	fs := append([]func(types.NamespacedName){}, l.fs...)
	l.mu.Unlock()
	for _, f := range fs {
		f(key)
	}
}
