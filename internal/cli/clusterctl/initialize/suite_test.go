package initialize_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/capstan-dev/capstan/internal/test/envtest"
)

var env *envtest.Environment

// TestMain starts the test API server and makes it an empty cluster: without the CRDs the harness
// installs, which init installs itself.
func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, envtest.Options{}, func(e *envtest.Environment) {
		env = e
		if err := deleteCRDs(e); err != nil {
			fmt.Fprintf(os.Stderr, "Emptying the test API server: %v\n", err)
			os.Exit(1)
		}
	}))
}

func deleteCRDs(e *envtest.Environment) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.Client.DeleteAllOf(ctx, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
		return err
	}
	for {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := e.Client.List(ctx, list); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d CRDs are still there", len(list.Items))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
