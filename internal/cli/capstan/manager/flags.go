package manager

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// restConfig loads the API server configuration from a kubeconfig path, or as controller-runtime does
// (in-cluster, then $KUBECONFIG, then ~/.kube/config) when the path is empty.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}
