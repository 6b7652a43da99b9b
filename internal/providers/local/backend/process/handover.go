package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
	"github.com/capstan-dev/capstan/internal/providers/local/backend"
)

// A cluster directory belongs to the backend that runs the cluster: it holds an exclusive lock (flock) on
// the directory's lock file for as long as it supervises the cluster's processes. The kernel releases the
// lock when the provider exits, however it exits, and the children do not inherit it. Another backend, of
// another provider instance or of the same process, that must run the same cluster — the provider of the
// management cluster a LocalCluster was moved to, or one that shares the data directory — waits until the
// lock is free before it touches the data, so that a cluster never runs twice and a move never kills a
// process that its supervisor would restart.
const lockFile = "lock"

// dataInUseError says that another backend holds a cluster directory.
type dataInUseError struct{ dir string }

func (e *dataInUseError) Error() string {
	return fmt.Sprintf("the cluster's data directory %s is in use by another instance of the provider", e.dir)
}

// status is what EnsureCluster reports while it waits for the directory.
func (e *dataInUseError) status() backend.ClusterStatus {
	return backend.ClusterStatus{
		Reason:  infrav1.DataInUseReason,
		Message: fmt.Sprintf("Waiting for another instance of the provider to stop running this cluster from %s", e.dir),
	}
}

// dirLock is a held lock of a cluster directory.
type dirLock struct{ f *os.File }

// lockDir takes the lock of dir without waiting: a *dataInUseError when another backend holds it, an
// error satisfying errors.Is(err, fs.ErrNotExist) when dir does not exist.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFile)
	for range 3 {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &dataInUseError{dir: dir}
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		// The holder may have taken the directory over or removed it between the open and the lock: only
		// the file that is at path now counts.
		locked, err := f.Stat()
		if err == nil {
			var current os.FileInfo
			if current, err = os.Stat(path); err == nil && os.SameFile(locked, current) {
				return &dirLock{f: f}, nil
			}
		}
		_ = f.Close()
	}
	return nil, &dataInUseError{dir: dir}
}

// release gives the lock up; it is a no-op on nil.
func (l *dirLock) release() {
	if l != nil {
		_ = l.f.Close()
	}
}

// hasData reports whether dir holds a cluster's data: its state.json, written before anything else runs
// from it and moved last when another backend takes the data over.
func hasData(dir string) bool {
	_, err := os.Stat(stateFile(dir))
	return err == nil
}

// claim makes c.dir the cluster's directory, locked by this backend for as long as it runs the cluster.
// When c.dir has no data but recorded — the directory the LocalCluster says its data is in — is another
// directory of this machine with the data of a cluster of the same namespace and name, the LocalCluster was
// moved here from another management cluster: the data is taken over from there. It returns a
// *dataInUseError while another backend runs the cluster from either directory.
func (c *cluster) claim(recorded string) (*dirLock, error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the cluster directory: %w", err)
	}
	lock, err := lockDir(c.dir)
	if err != nil {
		return nil, err
	}
	if hasData(c.dir) || !c.isMovedData(recorded) {
		return lock, nil
	}
	if err := c.takeOver(filepath.Clean(recorded)); err != nil {
		lock.release()
		return nil, err
	}
	return lock, nil
}

// isMovedData reports whether dir is another directory than c.dir that holds the data of a cluster of the
// same namespace and name (<data-dir>/<namespace>/<name>, the layout of every instance of the provider).
func (c *cluster) isMovedData(dir string) bool {
	if dir == "" || !filepath.IsAbs(dir) {
		return false
	}
	dir = filepath.Clean(dir)
	if dir == c.dir || filepath.Base(dir) != c.key.Name || filepath.Base(filepath.Dir(dir)) != c.key.Namespace {
		return false
	}
	return hasData(dir)
}

// takeOver moves the cluster's data from dir, where another instance of the provider ran the cluster, into
// c.dir (locked by this backend, without data): the same etcd data (objects, Nodes), ports and keys. It
// returns a *dataInUseError while that instance still runs the cluster. state.json moves last, so a
// take-over interrupted half way is finished by the next one.
func (c *cluster) takeOver(dir string) error {
	lock, err := lockDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // taken over by another backend meanwhile: nothing left to take
	}
	if err != nil {
		return err
	}
	defer lock.release()
	if !hasData(dir) {
		return nil
	}
	// Processes left by an instance that is gone without stopping them (it was killed where there is no
	// parent-death signal) would still write to the data.
	if _, err := killStale(dir, c.b.opts.StopTimeout); err != nil {
		return err
	}
	c.log.Info("Taking the cluster's data over from another instance of the provider", "from", dir, "dir", c.dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if name == lockFile || name == filepath.Base(stateFile(dir)) || strings.HasSuffix(name, ".pid") || strings.HasSuffix(name, ".tmp") {
			continue
		}
		if err := moveEntry(filepath.Join(dir, name), filepath.Join(c.dir, name)); err != nil {
			return fmt.Errorf("taking the cluster's data over from %s: %w", dir, err)
		}
	}
	if err := moveEntry(stateFile(dir), stateFile(c.dir)); err != nil {
		return fmt.Errorf("taking the cluster's data over from %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		c.log.Error(err, "Removing the directory the cluster's data was taken from", "dir", dir)
	}
	// Remove the namespace directory too once its last cluster is gone.
	_ = os.Remove(filepath.Dir(dir))
	return nil
}

// moveEntry moves a file or directory to to, replacing what is there; across file systems it copies, then
// removes the original.
func moveEntry(from, to string) error {
	if err := os.RemoveAll(to); err != nil {
		return err
	}
	err := os.Rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(from, to); err != nil {
		return err
	}
	return os.RemoveAll(from)
}

// copyTree copies the directories and regular files under from to to, with their permissions.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		default:
			return nil // sockets and the like are recreated by the processes that own them
		}
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// ReleaseCluster implements backend.Backend: the cluster's load balancer and processes stop and its directory is unlocked,
// its data stays, for the backend of the management cluster its LocalCluster was moved to. The processes
// are not left running for that backend to adopt: a backend supervises (restarts, stops) only its own
// children, and on Linux they die with the provider that started them.
func (b *Backend) ReleaseCluster(_ context.Context, key types.NamespacedName) error {
	b.mu.Lock()
	c := b.clusters[key]
	delete(b.clusters, key)
	b.mu.Unlock()
	if c == nil {
		return nil
	}
	c.log.Info("Releasing the cluster: its LocalCluster left this management cluster; its data stays", "dir", c.dir)
	c.stop()
	return nil
}

// lockForDeletion takes the lock of a cluster directory that is about to be removed. It returns a nil lock
// and no error when there is nothing to remove: no directory, or one another backend runs the cluster
// from (a LocalCluster of the same namespace and name in another management cluster, over the same data
// directory), whose data is not this backend's to remove.
func (b *Backend) lockForDeletion(dir string) (*dirLock, error) {
	lock, err := lockDir(dir)
	var inUse *dataInUseError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &inUse):
		b.opts.Logger.Info("Leaving the data of a deleted LocalCluster: another instance of the provider runs a cluster from it", "dir", dir)
		return nil, nil
	case err != nil:
		return nil, err
	}
	return lock, nil
}
