// Command capstan runs capstan's controller managers and its embedded management cluster.
package main

import (
	"fmt"
	"os"

	"github.com/capstan-dev/capstan/internal/cborclient"
	"github.com/capstan-dev/capstan/internal/cli/capstan"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
)

func main() {
	cborclient.Enable()
	if err := capstan.NewCommand(iostreams.Standard()).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
