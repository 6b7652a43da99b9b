package etcdtest

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Probe is what ProbeMembers found: how many voting members there are, whether a learner is among the
// members, and what each voting member with a client URL answered to its status (nil: it answered).
type Probe struct {
	Voting   int
	Learner  bool
	Answered map[string]error
	// Listed is how long the member list took.
	Listed time.Duration
}

// Healthy is the number of voting members that answered.
func (p Probe) Healthy() int {
	n := 0
	for _, err := range p.Answered {
		if err == nil {
			n++
		}
	}
	return n
}

// Failures says which voting members did not answer, and why.
func (p Probe) Failures() []string {
	var out []string
	for name, err := range p.Answered {
		if err != nil {
			out = append(out, name+": "+err.Error())
		}
	}
	return out
}

// ProbeMembers lists the members through cli within listTimeout — a linearizable read: it answers only
// while a quorum of voting members does, so an error means no quorum (or no answer in time; across a
// change of leader etcd itself gives a request 7 s) — then asks each voting member for its status within
// 3 s (a live member may answer slower on a loaded machine).
func ProbeMembers(ctx context.Context, cli *clientv3.Client, listTimeout time.Duration) (Probe, error) {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	started := time.Now()
	members, err := cli.MemberList(lctx)
	cancel()
	if err != nil {
		return Probe{}, fmt.Errorf("listing the etcd members: %w", err)
	}
	p := Probe{Answered: map[string]error{}, Listed: time.Since(started)}
	for _, m := range members.Members {
		if m.IsLearner {
			p.Learner = true
			continue
		}
		p.Voting++
		if len(m.ClientURLs) == 0 {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := cli.Status(sctx, m.ClientURLs[0])
		cancel()
		p.Answered[m.Name] = err
	}
	return p, nil
}
