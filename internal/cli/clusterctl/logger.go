package clusterctl

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-logr/logr"
)

// NewLogger returns a logger that writes messages up to verbosity to w, one line each:
// `Message key="value" ...`.
func NewLogger(w io.Writer, verbosity int) logr.Logger {
	return logr.New(&sink{w: w, verbosity: verbosity, mu: &sync.Mutex{}})
}

type sink struct {
	w         io.Writer
	verbosity int
	name      string
	values    []any
	mu        *sync.Mutex
}

func (s *sink) Init(logr.RuntimeInfo) {}

func (s *sink) Enabled(level int) bool { return level <= s.verbosity }

func (s *sink) Info(_ int, msg string, kv ...any) { s.write(msg, kv) }

func (s *sink) Error(err error, msg string, kv ...any) {
	s.write(msg, append([]any{"error", err.Error()}, kv...))
}

func (s *sink) write(msg string, kv []any) {
	var b strings.Builder
	if s.name != "" {
		b.WriteString(s.name + ": ")
	}
	b.WriteString(msg)
	all := append(append([]any{}, s.values...), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%q", all[i], fmt.Sprint(all[i+1]))
	}
	b.WriteString("\n")
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = io.WriteString(s.w, b.String())
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	cp := *s
	cp.values = append(append([]any{}, s.values...), kv...)
	return &cp
}

func (s *sink) WithName(name string) logr.LogSink {
	cp := *s
	if cp.name != "" {
		name = cp.name + "/" + name
	}
	cp.name = name
	return &cp
}
