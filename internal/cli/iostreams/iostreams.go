// Package iostreams holds the standard streams every command of capstan's binaries reads and writes:
// user-facing output goes to Out, progress and logs to ErrOut.
package iostreams

import (
	"io"
	"os"
)

// Streams are where a command reads and writes.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Standard returns the process's stdin, stdout and stderr.
func Standard() Streams { return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }
