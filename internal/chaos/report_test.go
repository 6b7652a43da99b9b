package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// figures are what a run of the suite did: faults injected and survived, the operations' times to
// converge, the samples taken, anything lost.
type figures struct {
	mu        sync.Mutex
	scenarios []*scenarioFigures
}

// scenarioFigures are one scenario's figures, over its rounds.
type scenarioFigures struct {
	Name string `json:"name"`
	// Faults counts the faults injected, by kind.
	Faults map[string]int `json:"faults"`
	// Survived counts the faults injected in runs whose invariants all held.
	Survived int `json:"survived"`
	// Steps are the operations' times to converge, in seconds, by step, and their bound.
	Steps       map[string][]float64 `json:"convergeSeconds"`
	Bounds      map[string]float64   `json:"boundSeconds"`
	APISamples  int                  `json:"apiSamples"`
	APIFailures int                  `json:"apiFailures"`
	// SlowestAPI and SlowestEtcd are the longest a successful read of the workload API and a successful
	// list of the etcd members took, in seconds, among the samples no fault excused.
	SlowestAPI  float64 `json:"slowestAPISeconds"`
	SlowestEtcd float64 `json:"slowestEtcdSeconds"`
	EtcdSamples int     `json:"etcdSamples"`
	EtcdLosses  int     `json:"etcdQuorumLosses"`
	Violations  int     `json:"violations"`
	DataLost    int     `json:"dataLost"`

	injectedThisRun int
	dataLost        int
	survived        int
}

func (f *figures) scenario(name string) *scenarioFigures {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.scenarios {
		if s.Name == name {
			return s
		}
	}
	s := &scenarioFigures{Name: name, Faults: map[string]int{}, Steps: map[string][]float64{}, Bounds: map[string]float64{}}
	f.scenarios = append(f.scenarios, s)
	return s
}

func (s *scenarioFigures) injected(fault string) {
	s.Faults[fault]++
	s.injectedThisRun++
}

func (s *scenarioFigures) converged(step string, took, bound time.Duration) {
	s.Steps[step] = append(s.Steps[step], took.Seconds())
	s.Bounds[step] = bound.Seconds()
}

func (s *scenarioFigures) addSamples(r samples) {
	s.APISamples += r.api
	s.APIFailures += r.apiFailures
	s.SlowestAPI = max(s.SlowestAPI, r.slowestAPI.Seconds())
	s.SlowestEtcd = max(s.SlowestEtcd, r.slowestEtcd.Seconds())
	s.EtcdSamples += r.etcd
	s.EtcdLosses += r.etcdLosses
	s.Violations += len(r.violations)
}

func (s *scenarioFigures) total() int {
	n := 0
	for _, c := range s.Faults {
		n += c
	}
	return n
}

func (f *figures) print(w io.Writer, mode string, seed uint64, took time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	faults, survived := 0, 0
	fmt.Fprintf(w, "chaos: %s run, seed %d, %s\n", mode, seed, took.Round(time.Second))
	for _, s := range f.scenarios {
		s.Survived, s.DataLost = s.survived, s.dataLost
		faults += s.total()
		survived += s.Survived
		fmt.Fprintf(w, "  %s: %d faults injected, %d survived; %d API samples (%d failed, the slowest answered in %.1f s), %d etcd samples (%d without quorum, the slowest answered in %.1f s), %d violations, %d data lost\n",
			s.Name, s.total(), s.Survived, s.APISamples, s.APIFailures, s.SlowestAPI, s.EtcdSamples, s.EtcdLosses, s.SlowestEtcd, s.Violations, s.DataLost)
		kinds := make([]string, 0, len(s.Faults))
		for k := range s.Faults {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "      %3d × %s\n", s.Faults[k], k)
		}
		steps := make([]string, 0, len(s.Steps))
		for k := range s.Steps {
			steps = append(steps, k)
		}
		sort.Strings(steps)
		for _, k := range steps {
			mx, sum := 0.0, 0.0
			for _, v := range s.Steps[k] {
				mx = max(mx, v)
				sum += v
			}
			fmt.Fprintf(w, "      %s: converged in %.0f s on average, %.0f s at most (bound %.0f s), %d runs\n", k, sum/float64(len(s.Steps[k])), mx, s.Bounds[k], len(s.Steps[k]))
		}
	}
	fmt.Fprintf(w, "chaos: %d faults injected, %d survived\n", faults, survived)
}

func (f *figures) write(path, mode string, seed uint64, took time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := json.MarshalIndent(struct {
		Mode      string             `json:"mode"`
		Seed      uint64             `json:"seed"`
		Seconds   float64            `json:"seconds"`
		Scenarios []*scenarioFigures `json:"scenarios"`
	}{mode, seed, took.Seconds(), f.scenarios}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o600)
}
