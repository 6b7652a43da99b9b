// Package conformance is the provider contract conformance kit: it checks an infrastructure provider
// against each rule of the Cluster API contract (the InfraCluster contract, the cluster infrastructure
// provider specification, the InfraMachine contract and the clusterctl provider contract) and reports
// Pass, Fail, Warn or Skip per rule, by the rule's name. docs/conformance.md lists the rules and what the
// kit does for each.
//
// The static rules look at the provider's CRDs and its release artifacts (a clusterctl local repository).
// The behavioural rules run the provider's controllers against a real API server while the kit plays
// Cluster API's core: it creates Clusters and Machines, sets the owner references and copies the fields
// the Cluster and Machine controllers would, pauses and unpauses, deletes, and records what the provider
// does. No core controller runs. Without an API server or a Start function the behavioural rules are
// skipped, never passed.
//
// A provider calls the kit from its tests through package conformancetest (internal/test/conformancetest),
// for example:
//
//	func TestConformance(t *testing.T) {
//		crds, err := crd.Local() // the provider's CRDs
//		if err != nil {
//			t.Fatal(err)
//		}
//		report := conformancetest.Run(t, conformance.Provider{
//			Name:       "local",
//			CRDs:       crds,
//			Repository: os.DirFS("testdata/repository"), // infrastructure-local/<version>/...
//			NewInfraCluster: func(namespace, name string) *unstructured.Unstructured {
//				return localCluster(namespace, name) // a LocalCluster the provider can provision
//			},
//			NewInfraMachine: func(namespace, name string) *unstructured.Unstructured {
//				return localMachine(namespace, name)
//			},
//			Start: func(ctx context.Context, cfg *rest.Config) error {
//				// Build a manager on cfg with the provider's controllers and run it until ctx is done.
//				// Controller names must not clash with another manager in the same test binary:
//				// set controller.Options.SkipNameValidation when the tests start it more than once.
//				return local.Run(ctx, cfg)
//			},
//			// Optional, for the multi tenancy rule: as the manager started with --namespace and
//			// --watch-filter.
//			StartScoped: func(ctx context.Context, cfg *rest.Config, scope conformance.Scope) error {
//				return local.Run(ctx, cfg, local.Namespace(scope.Namespace), local.WatchFilter(scope.WatchFilter))
//			},
//		}, conformance.Options{Config: env.Config}) // env: a running internal/test/envtest.Environment
//		_ = report // every rule is already a subtest; the report is there for more assertions
//	}
//
// conformancetest.Run makes each rule a subtest named after it: a Fail fails the subtest, a Skip skips it,
// Warn and Pass are logged. Check, which `capstan conformance` calls, returns the same Report without a
// testing.T: the kit is product code and does not import package testing.
package conformance
