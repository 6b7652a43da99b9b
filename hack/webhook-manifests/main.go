// Command webhook-manifests writes the webhook Service and configurations of each capstan manager that
// serves webhooks into its config directory, from the hooks it registers (`make generate` runs it).
package main

import (
	"fmt"
	"os"

	corewebhooks "github.com/capstan-dev/capstan/internal/webhooks/core"
	kubeadmwebhooks "github.com/capstan-dev/capstan/internal/webhooks/kubeadm"
	localwebhooks "github.com/capstan-dev/capstan/internal/webhooks/local"
	operatorwebhooks "github.com/capstan-dev/capstan/internal/webhooks/operator"
)

func main() {
	files := []struct {
		path   string
		render func() ([]byte, error)
	}{
		{corewebhooks.ManifestsFile, corewebhooks.Manifests},
		{localwebhooks.ManifestsFile, localwebhooks.Manifests},
		{kubeadmwebhooks.BootstrapManifestsFile, kubeadmwebhooks.BootstrapManifests},
		{kubeadmwebhooks.ControlPlaneManifestsFile, kubeadmwebhooks.ControlPlaneManifests},
		{operatorwebhooks.ManifestsFile, operatorwebhooks.Manifests},
		{operatorwebhooks.ChartFile, operatorwebhooks.ChartManifests},
	}
	for _, f := range files {
		data, err := f.render()
		if err == nil {
			err = os.WriteFile(f.path, data, 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error: writing %s: %v\n", f.path, err)
			os.Exit(1)
		}
	}
}
