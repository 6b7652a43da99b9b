// Package cborclient makes the Kubernetes clients of a capstan process accept CBOR (KEP-4222) from an API
// server that serves it, with JSON as the fallback: Enable turns on client-go's ClientsAllowCBOR feature.
//
// What it changes: the clients of unstructured objects (client-go's dynamic client, and controller-runtime's
// unstructured client and informers, which are built on its configuration) ask for
// "application/json;q=0.9,application/cbor;q=1". An API server with the CBORServingAndStorage feature (alpha
// in Kubernetes 1.37; capstan's embedded management cluster and its test harness turn it on) answers custom
// resources in CBOR, lists and watches included; an API server without it answers JSON, so nothing changes
// with it. Request bodies stay JSON (and merge and JSON patches have no CBOR form): client-go's
// ClientsPreferCBOR is left off, since controller-runtime v0.25's typed client builds its own codecs, which
// have no CBOR serializer, and would fail to encode a request or decode a response in CBOR. So typed objects
// (a manager's own kinds, read through typed informers) are read and written in JSON; the unstructured ones
// (the provider objects the core reads by contract, everything clusterctl handles as unstructured) are read
// in CBOR where the server offers it.
//
// KUBE_FEATURE_ClientsAllowCBOR=false in the environment turns it off again (client-go's own switch).
package cborclient

import (
	"os"
	"sync"

	clientfeatures "k8s.io/client-go/features"
)

// envVar is client-go's environment variable for the feature; when it is set, client-go's own reading of
// it decides.
const envVar = "KUBE_FEATURE_" + string(clientfeatures.ClientsAllowCBOR)

var once sync.Once

// Enable turns on client-go's ClientsAllowCBOR for this process, unless KUBE_FEATURE_ClientsAllowCBOR is set
// (then client-go reads it as usual). Call it first thing in main, before any client is built: client-go
// reads the feature when it builds a client's configuration.
func Enable() {
	once.Do(func() {
		if _, set := os.LookupEnv(envVar); set {
			return
		}
		clientfeatures.ReplaceFeatureGates(gates{clientfeatures.FeatureGates()})
	})
}

// gates are client-go's default gates with ClientsAllowCBOR on.
type gates struct{ clientfeatures.Gates }

func (g gates) Enabled(f clientfeatures.Feature) bool {
	if f == clientfeatures.ClientsAllowCBOR {
		return true
	}
	return g.Gates.Enabled(f)
}
