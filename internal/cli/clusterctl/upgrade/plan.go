package upgrade

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	clusterctlcli "github.com/capstan-dev/capstan/internal/cli/clusterctl"
	"github.com/capstan-dev/capstan/internal/cli/iostreams"
	"github.com/capstan-dev/capstan/internal/clusterctl/client"
	"github.com/capstan-dev/capstan/internal/clusterctl/cluster"
)

func newPlanCommand(streams iostreams.Streams, deps *clusterctlcli.Deps) *cobra.Command {
	k := &cluster.Kubeconfig{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Provide a list of recommended target versions for upgrading Cluster API providers in a management cluster",
		Long: `The upgrade plan command provides a list of recommended target versions for upgrading the
Cluster API providers in a management cluster.

All the providers should be supporting the same API Version of Cluster API (contract) in order
to guarantee the proper functioning of the management cluster.

Then, for each provider, the following upgrade options are provided:
- The latest patch release for the current API Version of Cluster API (contract).
- The latest patch release for the next API Version of Cluster API (contract), if available.`,
		Example: `  # Gets the recommended target versions for upgrading Cluster API providers.
  clusterctl upgrade plan`,
		Args: cobra.NoArgs,
		RunE: deps.RunE(streams, k, func(ctx context.Context, c *client.Client) error {
			certManager, err := c.PlanCertManagerUpgrade(ctx)
			if err != nil {
				return err
			}
			plans, err := c.PlanUpgrade(ctx)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(streams.Out, formatPlan(certManager, plans))
			return err
		}),
	}
	clusterctlcli.AddKubeconfigFlags(cmd.Flags(), k, "")
	return cmd
}

// formatPlan renders plans as upstream's `clusterctl upgrade plan` prints them.
func formatPlan(certManager client.CertManagerPlan, plans []client.UpgradePlan) string {
	var b strings.Builder
	if certManager.Managed {
		if certManager.ShouldUpgrade {
			fmt.Fprintf(&b, "Cert-Manager will be upgraded from %q to %q\n\n", certManager.From, certManager.To)
		} else {
			b.WriteString("Cert-Manager is already up to date\n\n")
		}
	}
	for _, plan := range plans {
		fmt.Fprintf(&b, "\nLatest release available for the %s API Version of Cluster API (contract):\n\n", plan.Contract)
		w := tabwriter.NewWriter(&b, 10, 4, 3, ' ', 0)
		fmt.Fprintln(w, "NAME\tNAMESPACE\tTYPE\tCURRENT VERSION\tNEXT VERSION")
		for _, item := range plan.Providers {
			next := item.NextVersion
			if next == "" {
				next = "Already up to date"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", item.Name, item.Namespace, item.Type, item.Version, next)
		}
		_ = w.Flush()
		b.WriteString("\n")
		var byOperator []string
		for _, item := range plan.Providers {
			if item.Operator != "" && item.NextVersion != "" {
				byOperator = append(byOperator, fmt.Sprintf("  %s: spec.version: %s", item.Operator, item.NextVersion))
			}
		}
		if len(byOperator) > 0 {
			fmt.Fprintf(&b, "The provider operator manages some of them: upgrade them by setting spec.version of their objects:\n%s\n\n", strings.Join(byOperator, "\n"))
		}
		switch {
		case !plan.UpgradeAvailable():
			b.WriteString("You are already up to date!\n")
		case plan.Contract == client.SupportedContract:
			fmt.Fprintf(&b, "You can now apply the upgrade by executing the following command:\n\nclusterctl upgrade apply --contract %s\n", plan.Contract)
		default:
			fmt.Fprintf(&b, "The current version of clusterctl could only upgrade to %s contract, please upgrade clusterctl for %s.\n", client.SupportedContract, plan.Contract)
		}
		b.WriteString("\n")
	}
	return b.String()
}
