// Package netcount counts, in benchmarks, the bytes a client's connections carry: install Counter.Dial as a
// rest.Config's Dial and every connection of the clients built from it is counted, TLS and HTTP framing
// included, as the API server at the other end sends and receives them.
package netcount

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// Counter counts the bytes of the connections it dials.
type Counter struct {
	sent, received atomic.Int64
	dialer         net.Dialer
}

// New returns a Counter that dials as client-go's default transport does (30 s timeout and keep-alive).
func New() *Counter {
	return &Counter{dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// Dial is a rest.Config's Dial.
func (c *Counter) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := c.dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: conn, c: c}, nil
}

// Bytes are the bytes counted so far.
type Bytes struct {
	// Sent are the bytes written to the connections (what the server received); Received those read from
	// them (what the server sent).
	Sent, Received int64
}

// Since returns the bytes counted after before.
func (b Bytes) Since(before Bytes) Bytes {
	return Bytes{Sent: b.Sent - before.Sent, Received: b.Received - before.Received}
}

// Bytes returns the bytes counted so far.
func (c *Counter) Bytes() Bytes { return Bytes{Sent: c.sent.Load(), Received: c.received.Load()} }

type countedConn struct {
	net.Conn
	c *Counter
}

func (cc *countedConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.received.Add(int64(n))
	return n, err
}

func (cc *countedConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}
