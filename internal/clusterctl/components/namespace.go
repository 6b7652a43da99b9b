package components

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-dev/capstan/internal/manifest"
)

// injectCAFromAnnotation is cert-manager's annotation "<namespace>/<certificate>" on webhook
// configurations, CRDs and API services.
const injectCAFromAnnotation = "cert-manager.io/inject-ca-from"

// fixNamespaces moves the components into the target namespace: the Namespace object is renamed, every
// namespaced object gets the namespace, and so do the references that point at it: webhook and
// conversion services, API services, ServiceAccount subjects of (Cluster)RoleBindings, cert-manager's
// CA injection annotations and the DNS names of cert-manager Certificates.
func fixNamespaces(objs []unstructured.Unstructured, scope manifest.Scope, original, target string) {
	for i := range objs {
		o := &objs[i]
		kind := o.GetKind()
		if kind == "Namespace" && o.GroupVersionKind().Group == "" {
			o.SetName(target)
			continue
		}
		if !scope.IsClusterScoped(o) {
			o.SetNamespace(target)
		}
		switch kind {
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			webhooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for _, w := range webhooks {
				if m, ok := w.(map[string]any); ok {
					setServiceNamespace(m, target, "clientConfig", "service")
				}
			}
			if webhooks != nil {
				_ = unstructured.SetNestedSlice(o.Object, webhooks, "webhooks")
			}
		case "CustomResourceDefinition":
			setServiceNamespace(o.Object, target, "spec", "conversion", "webhook", "clientConfig", "service")
		case "APIService":
			setServiceNamespace(o.Object, target, "spec", "service")
		case "ClusterRoleBinding", "RoleBinding":
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" {
					if ns, _ := m["namespace"].(string); ns != "" {
						m["namespace"] = target
					}
				}
			}
			if subjects != nil {
				_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
			}
		case "Certificate":
			if strings.HasPrefix(o.GetAPIVersion(), "cert-manager.io/") && original != "" && original != target {
				names, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "dnsNames")
				for j, n := range names {
					names[j] = replaceNamespaceInDNSName(n, original, target)
				}
				if names != nil {
					_ = unstructured.SetNestedStringSlice(o.Object, names, "spec", "dnsNames")
				}
			}
		}
		if a := o.GetAnnotations(); a != nil {
			if v, ok := a[injectCAFromAnnotation]; ok {
				if ns, name, found := strings.Cut(v, "/"); found && (ns == original || original == "") {
					a[injectCAFromAnnotation] = target + "/" + name
					o.SetAnnotations(a)
				}
			}
		}
	}
}

// setServiceNamespace sets the namespace of the service reference at path, if there is one.
func setServiceNamespace(obj map[string]any, target string, path ...string) {
	service, found, err := unstructured.NestedMap(obj, path...)
	if err != nil || !found {
		return
	}
	service["namespace"] = target
	_ = unstructured.SetNestedMap(obj, service, path...)
}

// replaceNamespaceInDNSName turns "svc.<original>.svc[...]" into "svc.<target>.svc[...]".
func replaceNamespaceInDNSName(name, original, target string) string {
	parts := strings.Split(name, ".")
	for i := 1; i+1 < len(parts); i++ {
		if parts[i] == original && parts[i+1] == "svc" {
			parts[i] = target
			return strings.Join(parts, ".")
		}
	}
	return name
}
