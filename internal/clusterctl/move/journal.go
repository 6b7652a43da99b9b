package move

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// JournalName is the name of the ConfigMap, in the namespace being moved, that records the progress of a
// move in the source cluster.
const JournalName = "clusterctl-move-journal"

// JournalLabel marks the journal; discovery never moves or reports it.
const JournalLabel = "clusterctl.cluster.x-k8s.io/move-journal"

// journalVersion is the format of the journal.
const journalVersion = 1

// maxJournalSize keeps the journal under the 1 MiB limit of a ConfigMap.
const maxJournalSize = 900 * 1024

// Phase is how far a move got.
type Phase string

// The phases of a move, in order.
const (
	// PhaseCopying: pausing the source, waiting for block-move, creating objects in the target (or
	// writing them to a directory). The source still has every object: an error undoes the move.
	PhaseCopying Phase = "Copying"
	// PhaseDeleting: every object is in the target; deleting them from the source.
	PhaseDeleting Phase = "Deleting"
	// PhaseUnpausing: the source has no moved object left; unpausing the target.
	PhaseUnpausing Phase = "Unpausing"
)

// Doing says what a move does in the phase, for messages: "copying the objects".
func (p Phase) Doing() string {
	switch p {
	case PhaseDeleting:
		return "deleting the moved objects from the source"
	case PhaseUnpausing:
		return "unpausing the target"
	default:
		return "copying the objects"
	}
}

// Whether an object existed in the target before the move created it.
const (
	targetExisted = "existed"
	targetCreated = "created"
)

// journal is the progress of a move, stored in the source cluster.
type journal struct {
	Version int `json:"version"`
	// Destination is "cluster <API server>" or "directory <path>".
	Destination string `json:"destination"`
	Phase       Phase  `json:"phase"`
	// Paused are the Clusters and ClusterClasses this move paused (in the source, then the target).
	Paused []Ref `json:"paused"`
	// Objects are the objects moved, in creation order.
	Objects []journalObject `json:"objects"`

	namespace string
	cm        *corev1.ConfigMap
}

type journalObject struct {
	Ref
	UID    types.UID `json:"uid,omitempty"`
	Group  int       `json:"group"`
	Global bool      `json:"global,omitempty"`
	// InTarget records whether the object existed in the target before the move ("existed") or the move
	// creates it ("created"); recorded before the object is created, so that undoing the move removes
	// only the copies it made.
	InTarget string `json:"inTarget,omitempty"`
}

func isJournal(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetLabels()[JournalLabel]
	return ok && obj.GetKind() == configMapKind
}

// readJournal returns the journal of a namespace; nil when no move is in progress.
func readJournal(ctx context.Context, c *Cluster, namespace string, b wait.Backoff) (*journal, error) {
	cm := &corev1.ConfigMap{}
	err := retry(ctx, b, func(ctx context.Context) error {
		return c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: JournalName}, cm)
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the move journal ConfigMap %s/%s from %s: %w", namespace, JournalName, c.Name, err)
	}
	j := &journal{}
	if err := json.Unmarshal([]byte(cm.Data[journalDataKey]), j); err != nil {
		return nil, fmt.Errorf("the move journal ConfigMap %s/%s is corrupt (%w): if no move is in progress, delete it and run the move again", namespace, JournalName, err)
	}
	if j.Version != journalVersion {
		return nil, fmt.Errorf("the move journal ConfigMap %s/%s has version %d, this clusterctl knows version %d: finish the move with the clusterctl that started it", namespace, JournalName, j.Version, journalVersion)
	}
	j.namespace, j.cm = namespace, cm
	return j, nil
}

func (j *journal) encode() ([]byte, error) { return json.Marshal(j) }

// save writes the journal. Writes are conditional: a concurrent move of the same namespace fails.
func (j *journal) save(ctx context.Context, c *Cluster, b wait.Backoff) error {
	data, err := j.encode()
	if err != nil {
		return err
	}
	if len(data) > maxJournalSize {
		return &nonRetriable{fmt.Errorf("the move journal would be %d bytes, more than a ConfigMap holds", len(data))}
	}
	err = retry(ctx, b, func(ctx context.Context) error {
		if j.cm == nil {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: j.namespace, Name: JournalName, Labels: map[string]string{JournalLabel: ""}},
				Data:       map[string]string{journalDataKey: string(data)},
			}
			if err := c.Client.Create(ctx, cm); err != nil {
				return err
			}
			j.cm = cm
			return nil
		}
		cm := j.cm.DeepCopy()
		cm.Data = map[string]string{journalDataKey: string(data)}
		if err := c.Client.Update(ctx, cm); err != nil {
			return err
		}
		j.cm = cm
		return nil
	})
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the move journal ConfigMap %s/%s changed under this move: is another clusterctl move of this namespace running? %w", j.namespace, JournalName, err)
	}
	if err != nil {
		return fmt.Errorf("writing the move journal ConfigMap %s/%s: %w", j.namespace, JournalName, err)
	}
	return nil
}

// remove deletes the journal: the move is over.
func (j *journal) remove(ctx context.Context, c *Cluster, b wait.Backoff) error {
	if j.cm == nil {
		return nil
	}
	uid := j.cm.UID
	err := retry(ctx, b, func(ctx context.Context) error {
		return c.Client.Delete(ctx, j.cm, client.Preconditions{UID: &uid})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the move journal ConfigMap %s/%s: %w", j.namespace, JournalName, err)
	}
	j.cm = nil
	return nil
}

func (j *journal) paused(ref Ref) bool {
	for _, p := range j.Paused {
		if p.key() == ref.key() {
			return true
		}
	}
	return false
}

func (j *journal) object(ref Ref) *journalObject {
	for i := range j.Objects {
		if j.Objects[i].key() == ref.key() {
			return &j.Objects[i]
		}
	}
	return nil
}

// sourceRefs maps the source UIDs of the moved objects to their references.
func (j *journal) sourceRefs() map[types.UID]Ref {
	out := map[types.UID]Ref{}
	for _, o := range j.Objects {
		if o.UID != "" {
			out[o.UID] = o.Ref
		}
	}
	return out
}
