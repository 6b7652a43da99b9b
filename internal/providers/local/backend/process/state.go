package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// state is what a cluster directory remembers across provider restarts: its ports.
type state struct {
	// APIServerPort is the kube-apiserver's port, the port of the LocalCluster's endpoint.
	APIServerPort int `json:"apiServerPort"`
	// EtcdPort is etcd's client port; only kube-apiserver uses it, so it may change between runs.
	EtcdPort int `json:"etcdPort"`
}

func stateFile(dir string) string { return filepath.Join(dir, "state.json") }

func readState(dir string) (state, error) {
	var st state
	data, err := os.ReadFile(stateFile(dir))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return state{}, fmt.Errorf("reading %s: %w", stateFile(dir), err)
	}
	return st, nil
}

func writeState(dir string, st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(stateFile(dir), append(data, '\n'))
}
