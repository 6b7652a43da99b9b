// Package envtest starts a real etcd and kube-apiserver (the binaries `make tools` builds into bin/) with
// capstan's CRDs installed, for integration tests. It wraps controller-runtime's envtest and adds a
// namespace per test and a TestMain helper.
package envtest
