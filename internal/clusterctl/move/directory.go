package move

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// fileName is the file an object is written to, as upstream names it: <Kind>_<namespace>_<name>.yaml.
func fileName(ref Ref) string {
	return ref.Kind + "_" + ref.Namespace + "_" + ref.Name + ".yaml"
}

// ToDirectory writes the objects of o.Namespace to dir, one YAML file per object with its UID and
// ownerReferences (what a restore needs to rebuild the graph), and leaves them in the source. The source is
// paused while the files are written, so that they are consistent, and unpaused afterwards; the journal
// makes an interrupted run resumable like a move.
func ToDirectory(ctx context.Context, from *Cluster, dir string, o Options) (*Result, error) {
	m := newMover(ctx, from, nil, o)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	dest := "directory " + abs
	j, err := readJournal(ctx, from, o.Namespace, m.b.Read)
	if err != nil {
		return nil, err
	}
	if j != nil && j.Phase != PhaseCopying {
		return nil, &PreflightError{Problems: []string{fmt.Sprintf(
			"a move of namespace %s to %s was interrupted after objects were deleted from this cluster: run it again with that destination to finish it first",
			o.Namespace, j.Destination)}}
	}
	d, err := m.discoverSource(ctx)
	if err != nil {
		return nil, err
	}
	problems := m.preflight(ctx, d, checks{from: from, provisioning: true, journal: j})
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		problems = append(problems, fmt.Sprintf("%s is not a directory", abs))
	}
	if len(problems) > 0 {
		return nil, &PreflightError{Problems: problems}
	}
	res, err := m.begin(ctx, d, j, dest)
	if err != nil {
		return nil, err
	}
	if err := m.writeDirectory(ctx, d, abs); err != nil {
		return nil, m.rollback(ctx, err)
	}
	m.log.Info("Resuming the source cluster")
	for _, ref := range m.j.Paused {
		if _, err := setPaused(ctx, from, m.b.Write, ref, false); err != nil {
			return nil, m.rollback(ctx, err)
		}
		m.checkpoint("unpause %s", ref)
	}
	if err := m.j.remove(ctx, from, m.b.Write); err != nil {
		return nil, err
	}
	m.checkpoint("done")
	res.Warnings = m.warnings
	return res, nil
}

func (m *mover) writeDirectory(ctx context.Context, d *discovered, dir string) error {
	if err := m.pauseSource(ctx, d); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &nonRetriable{fmt.Errorf("creating %s: %w", dir, err)}
	}
	m.log.Info("Writing objects to the directory", "directory", dir)
	for _, n := range d.moveNodes() {
		obj, found, err := m.from.get(ctx, m.b.Read, n.ref)
		if err != nil {
			return err
		}
		if !found || obj.GetUID() != n.uid {
			return &nonRetriable{fmt.Errorf("%s disappeared from the source during the move: something deleted it although its cluster is paused", n.ref)}
		}
		obj.SetManagedFields(nil)
		unstructured.RemoveNestedField(obj.Object, "status")
		if isPausable(n.ref) && m.j.paused(n.ref) {
			markPaused(obj)
		}
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(filepath.Join(dir, fileName(n.ref)), data); err != nil {
			return &nonRetriable{err}
		}
		m.checkpoint("write %s", n.ref)
	}
	return nil
}

// writeFileAtomic writes a file through a temporary file and a rename, so that a crash never leaves a
// truncated file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// readDirectory reads every object file of dir (*.yaml, *.yml, *.json; one object per file).
func readDirectory(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the directory to restore: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, e := range entries {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		if e.IsDir() || strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		obj, err := decodeObjectFile(name, data)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no object files (*.yaml) in %s", dir)
	}
	sort.Slice(out, func(i, j int) bool { return RefOf(out[i]).less(RefOf(out[j])) })
	return out, nil
}

// decodeObjectFile reads the object of a file of the directory, named name.
func decodeObjectFile(name string, data []byte) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return nil, fmt.Errorf("%s is not a YAML object: %w", name, err)
	}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" || obj.GetName() == "" {
		return nil, fmt.Errorf("%s is not a Kubernetes object (it needs apiVersion, kind and metadata.name)", name)
	}
	return obj, nil
}

// FromDirectory creates the objects of a directory written by ToDirectory (or upstream's
// `clusterctl move --to-directory`) in a management cluster: owners first, with new UIDs and the
// ownerReferences rebuilt, Clusters and ClusterClasses paused until everything is there. Running it again
// after an interruption finishes the restore; a journal in the target remembers what the restore paused.
func FromDirectory(ctx context.Context, to *Cluster, dir string, o Options) (*Result, error) {
	m := newMover(ctx, nil, to, o)
	objs, err := readDirectory(dir)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d := &discovered{graph: newGraph()}
	for _, obj := range objs {
		ref := RefOf(obj)
		gvk := ref.GroupVersionKind()
		mapping, err := to.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			d.problems = append(d.problems, fmt.Sprintf("the management cluster %s does not serve %s %s (for %s): install the providers that define it first (clusterctl init)",
				to.Name, gvk.Kind, gvk.GroupVersion(), ref))
			continue
		}
		t := objectType{gvk: gvk, namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace, forceMove: true}
		d.graph.add(obj, t)
	}
	d.build()

	// The journal lives in the target, in the namespace of the first Cluster restored (else the first
	// namespace).
	var jns string
	for _, n := range d.moveNodes() {
		if n.ref.Namespace != "" && (jns == "" || n.ref.Namespace < jns) {
			jns = n.ref.Namespace
		}
	}
	if clusters := d.graph.ofKind(clusterGroup, clusterKind); len(clusters) > 0 {
		jns = clusters[0].ref.Namespace
	}
	var j *journal
	if jns != "" {
		if j, err = readJournal(ctx, to, jns, m.b.Read); err != nil {
			return nil, err
		}
	}
	if problems := m.preflight(ctx, d, checks{to: to, journal: j, restore: true}); len(problems) > 0 {
		return nil, &PreflightError{Problems: problems}
	}
	m.checkpoint("preflight")

	m.sourceRefs = map[types.UID]Ref{}
	for _, n := range d.moveNodes() {
		if n.uid != "" {
			m.sourceRefs[n.uid] = n.ref
		}
	}
	if err := m.ensureNamespaces(ctx, to, d.moveNodes()); err != nil {
		return nil, err
	}
	if jns != "" {
		m.j = &journal{Version: journalVersion, Destination: "from directory " + abs, Phase: PhaseCopying, namespace: jns, Paused: d.pauseTargets()}
		if j != nil {
			m.j.cm = j.cm
		}
		if err := m.j.save(ctx, to, m.b.Write); err != nil {
			return nil, err
		}
		m.checkpoint("journal")
	}

	m.log.Info("Creating objects in the target cluster")
	var incomplete []*node
	for _, n := range d.moveNodes() {
		complete, err := m.writeToTarget(ctx, n.obj, n.globalHierarchy())
		if err != nil {
			return nil, m.restoreError(err, d)
		}
		if !complete {
			incomplete = append(incomplete, n)
		}
		m.checkpoint("create %s", n.ref)
	}
	for _, n := range incomplete {
		if _, err := m.writeToTarget(ctx, n.obj, n.globalHierarchy()); err != nil {
			return nil, m.restoreError(err, d)
		}
	}
	m.log.Info("Resuming the target cluster")
	for _, ref := range d.pauseTargets() {
		if _, err := setPaused(ctx, to, m.b.Write, ref, false); err != nil {
			return nil, m.restoreError(err, d)
		}
		m.checkpoint("unpause %s", ref)
	}
	if m.j != nil {
		if err := m.j.remove(ctx, to, m.b.Write); err != nil {
			return nil, m.restoreError(err, d)
		}
	}
	m.checkpoint("done")
	p := d.plan()
	p.Namespace = ""
	return &Result{Plan: p, Warnings: m.warnings}, nil
}

// restoreError describes a restore that failed: some objects are in the target, and running the restore
// again finishes it.
func (m *mover) restoreError(err error, d *discovered) error {
	var all []Ref
	for _, n := range d.moveNodes() {
		all = append(all, n.ref)
	}
	e := &Error{Err: err, Phase: PhaseCopying, Resumable: true, InTarget: all}
	for _, ref := range d.pauseTargets() {
		e.Paused = append(e.Paused, fmt.Sprintf("%s in %s", ref, m.to.Name))
	}
	return e
}
