package backend

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1 "github.com/capstan-dev/capstan/api/infrastructure/local/v1alpha1"
)

// changesBuffer is how many notifications wait for a controller before more are dropped.
const changesBuffer = 1024

// Changes returns a source of the clusters whose state b reports changed (OnChange: an API server became
// ready, a process crashed), each a generic event of a LocalCluster that carries only its key, which h maps
// to the controller's objects. The backend reports from its own goroutines; a full buffer drops a
// notification, which the controllers' RetryInterval makes up for.
func Changes(b Backend, h handler.EventHandler) source.Source {
	changes := make(chan event.GenericEvent, changesBuffer)
	b.OnChange(func(key types.NamespacedName) {
		obj := &infrav1.LocalCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		select {
		case changes <- event.GenericEvent{Object: obj}:
		default:
		}
	})
	return source.Channel(changes, h)
}
