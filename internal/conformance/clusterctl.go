package conformance

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	clusterctlv1 "github.com/capstan-dev/capstan/api/clusterctl/v1alpha3"
	clusterv1 "github.com/capstan-dev/capstan/api/core/v1beta1"
	"github.com/capstan-dev/capstan/internal/contract"
)

// providerName is what clusterctl accepts as a provider name.
var providerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// commonVariables are the values the kit gives the common variables of `clusterctl generate cluster`
// when it decodes cluster templates.
var commonVariables = map[string]string{
	"CLUSTER_NAME":                "conformance",
	"NAMESPACE":                   "conformance-ns",
	"KUBERNETES_VERSION":          "v1.31.0",
	"CONTROL_PLANE_MACHINE_COUNT": "1",
	"WORKER_MACHINE_COUNT":        "1",
}

// clusterScopedKinds are the built-in and well-known kinds that are not namespaced; the components' own
// CRDs say the scope of their kinds.
var clusterScopedKinds = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
	"ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
	"APIService": true, "PriorityClass": true, "StorageClass": true, "PersistentVolume": true,
	"CSIDriver": true, "RuntimeClass": true, "IngressClass": true, "ClusterIssuer": true, "Node": true,
}

func checkProviderName(in *input) verdict {
	switch {
	case in.p.Name == "" && in.p.Repository == nil:
		return skip("Not checked: the provider has no name (Provider.Name)")
	case in.p.Name == "":
		return fail("The provider has no name (Provider.Name)")
	case len(in.p.Name) > 63 || !providerName.MatchString(in.p.Name):
		return fail("%q must be lower case alphanumerics or '-', start and end with an alphanumeric and be at most 63 characters", in.p.Name)
	}
	return pass("%q is a valid clusterctl provider name; its label is %s", in.p.Name, in.label())
}

func checkRepository(in *input) verdict {
	if in.p.Repository == nil {
		return skip("%s", in.repoSkipped)
	}
	if len(in.repoProblems) > 0 {
		return fail("%s", strings.Join(in.repoProblems, "; "))
	}
	return pass("%s has %s and %s", in.repo.dir, metadataFile, in.repo.components.file)
}

// release returns the newest release, or the verdict of a rule that needs one when there is none.
func (in *input) release() (*release, verdict, bool) {
	if in.repo == nil {
		return nil, skip("%s", in.repoSkipped), false
	}
	return in.repo, verdict{}, true
}

// componentObjects returns the objects of the components YAML, or the verdict of a rule that needs them
// when they cannot be read.
func (in *input) componentObjects() (*components, verdict, bool) {
	r, v, ok := in.release()
	if !ok {
		return nil, v, false
	}
	if r.components == nil {
		return nil, skip("Not checked: %s has no components YAML", r.dir), false
	}
	if r.components.decodeErr != nil {
		return nil, fail("%s/%s does not decode: %v", r.dir, r.components.file, r.components.decodeErr), false
	}
	return r.components, verdict{}, true
}

func checkMetadata(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if r.metadata == nil {
		return fail("%s has no %s", r.dir, metadataFile)
	}
	md := &clusterctlv1.Metadata{}
	if err := yaml.UnmarshalStrict(r.metadata, md); err != nil {
		return fail("%s/%s does not decode strictly: %v", r.dir, metadataFile, err)
	}
	if want := clusterctlv1.GroupVersion.String(); md.APIVersion != want || md.Kind != "Metadata" {
		return fail("%s/%s is %s %s, want %s Metadata", r.dir, metadataFile, md.APIVersion, md.Kind, want)
	}
	if len(md.ReleaseSeries) == 0 {
		return fail("%s/%s lists no release series", r.dir, metadataFile)
	}
	var problems []string
	seen := map[string]bool{}
	for _, s := range md.ReleaseSeries {
		key := fmt.Sprintf("v%d.%d", s.Major, s.Minor)
		if seen[key] {
			problems = append(problems, fmt.Sprintf("release series %s is listed twice", key))
		}
		seen[key] = true
		if !kubeVersion.MatchString(s.Contract) {
			problems = append(problems, fmt.Sprintf("release series %s has contract %q, not a contract version", key, s.Contract))
		}
	}
	series := md.GetReleaseSeriesForVersion(uint64(r.version.Major()), uint64(r.version.Minor()))
	if series == nil {
		problems = append(problems, fmt.Sprintf("no release series v%d.%d for version %s", r.version.Major(), r.version.Minor(), r.version))
	} else {
		c := contract.Version(series.Contract)
		if c != contract.V1Beta1 && c != contract.V1Beta2 {
			problems = append(problems, fmt.Sprintf("release series v%d.%d follows contract %s; capstan supports %s and %s",
				series.Major, series.Minor, c, contract.V1Beta1, contract.V1Beta2))
		} else if crd, ok := in.crds[in.p.InfraCluster.GroupKind()]; ok && crd.Labels[c.Label()] == "" {
			problems = append(problems, fmt.Sprintf("release series v%d.%d follows contract %s but CRD %s has no %s label",
				series.Major, series.Minor, c, crd.Name, c.Label()))
		}
	}
	if len(problems) > 0 {
		return fail("%s/%s: %s", r.dir, metadataFile, strings.Join(problems, "; "))
	}
	return pass("%s/%s maps release series v%d.%d to contract %s", r.dir, metadataFile, series.Major, series.Minor, series.Contract)
}

func checkComponentsNaming(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if r.components == nil {
		return skip("Not checked: %s has no components YAML", r.dir)
	}
	if r.components.file != componentsFile {
		return missing("The components YAML is named %s; infrastructure providers should name it %s", r.components.file, componentsFile)
	}
	return pass("The components YAML is named %s", componentsFile)
}

// namespaces returns the Namespace objects of the components.
func (c *components) namespaces() []*unstructured.Unstructured {
	return c.ofKind("", "Namespace")
}

// ofKind returns the objects of a group and kind.
func (c *components) ofKind(group, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range c.objects {
		if gvk := o.GroupVersionKind(); gvk.Group == group && gvk.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// crds returns the CRDs of the components.
func (c *components) crds() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range c.ofKind(apiextensionsv1.GroupName, "CustomResourceDefinition") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, crd); err != nil {
			return nil, fmt.Errorf("decoding CRD %s: %w", o.GetName(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}

func checkOneNamespace(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	switch ns := c.namespaces(); len(ns) {
	case 1:
		return pass("%s has one Namespace, %s", c.file, ns[0].GetName())
	case 0:
		return missing("%s has no Namespace: users must give clusterctl init a --target-namespace", c.file)
	default:
		return fail("%s has %d Namespaces (%s): clusterctl refuses to install components with more than one",
			c.file, len(ns), objectNames(ns))
	}
}

func checkTargetNamespace(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	ns := c.namespaces()
	if len(ns) > 1 {
		return skip("Not checked: %s has %d Namespaces, so no single target namespace", c.file, len(ns))
	}
	crds, err := c.crds()
	if err != nil {
		return fail("%s: %v", c.file, err)
	}
	clusterScoped := map[schema.GroupKind]bool{}
	for _, crd := range crds {
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			clusterScoped[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = true
		}
	}
	target := ""
	if len(ns) == 1 {
		target = ns[0].GetName()
	}
	byNamespace := map[string][]string{}
	for _, o := range c.objects {
		gvk := o.GroupVersionKind()
		if clusterScopedKinds[gvk.Kind] || clusterScoped[gvk.GroupKind()] || o.GetNamespace() == "" {
			continue
		}
		byNamespace[o.GetNamespace()] = append(byNamespace[o.GetNamespace()], o.GetKind()+"/"+o.GetName())
	}
	var bad []string
	for _, name := range sortedKeys(byNamespace) {
		if target != "" && name == target {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s in %s", strings.Join(byNamespace[name], ", "), name))
	}
	switch {
	case target != "" && len(bad) > 0:
		return fail("Objects outside the target namespace %s: %s", target, strings.Join(bad, "; "))
	case target == "" && len(bad) > 1:
		return fail("Namespaced objects are spread over several namespaces: %s", strings.Join(bad, "; "))
	case target == "":
		return pass("Every namespaced object is in the namespace clusterctl init is given")
	}
	return pass("Every namespaced object is in the target namespace %s", target)
}

func checkController(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	deployments := c.ofKind("apps", "Deployment")
	if len(deployments) == 0 {
		return fail("%s has no Deployment: the controller must be deployed with one", c.file)
	}
	var bad []string
	for _, d := range deployments {
		if _, found := managerContainer(d); !found {
			bad = append(bad, d.GetName())
		}
	}
	if len(bad) > 0 {
		return fail("Deployment %s has no container named manager", strings.Join(bad, ", "))
	}
	return pass("Deployment %s runs a container named manager", objectNames(deployments))
}

// managerContainer returns the container named manager of a Deployment.
func managerContainer(d *unstructured.Unstructured) (map[string]any, bool) {
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == "manager" {
			return m, true
		}
	}
	return nil, false
}

func checkComponentsVariables(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	use := variables(c.text)
	if len(use.problems) > 0 {
		return fail("%s uses variables clusterctl cannot substitute: %s", c.file, strings.Join(use.problems, "; "))
	}
	msg := fmt.Sprintf("%s uses %d variables", c.file, len(use.names))
	if len(use.names) > 0 {
		msg += ": " + strings.Join(use.names, ", ")
	}
	if len(use.spaced) > 0 {
		msg += fmt.Sprintf(" (note: lines %s use the deprecated form with spaces inside ${ })", joinInts(use.spaced))
	}
	return pass("%s", msg)
}

func checkComponentsLabels(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	want := in.label()
	var wrong, unlabelled []*unstructured.Unstructured
	for _, o := range c.objects {
		switch got, found := o.GetLabels()[clusterv1.ProviderNameLabel]; {
		case !found:
			unlabelled = append(unlabelled, o)
		case got != want:
			wrong = append(wrong, o)
		}
	}
	switch {
	case len(wrong) > 0:
		return fail("Objects labelled for another provider (want %s=%s): %s", clusterv1.ProviderNameLabel, want, objectNames(wrong))
	case len(unlabelled) > 0:
		return missing("%d of %d objects have no %s=%s label: %s", len(unlabelled), len(c.objects), clusterv1.ProviderNameLabel, want, objectNames(unlabelled))
	}
	return pass("Every object is labelled %s=%s", clusterv1.ProviderNameLabel, want)
}

func checkComponentsCRDs(in *input) verdict {
	c, v, ok := in.componentObjects()
	if !ok {
		return v
	}
	got, err := c.crds()
	if err != nil {
		return fail("%s: %v", c.file, err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range got {
		byName[crd.Name] = crd
	}
	var problems []string
	for _, want := range in.p.CRDs {
		crd, ok := byName[want.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("CRD %s is missing", want.Name))
			continue
		}
		delete(byName, want.Name)
		if d := crdDifference(want, crd); d != "" {
			problems = append(problems, fmt.Sprintf("CRD %s differs: %s", want.Name, d))
		}
	}
	for _, name := range sortedKeys(byName) {
		problems = append(problems, fmt.Sprintf("CRD %s is not one of the provider's CRDs", name))
	}
	if len(problems) > 0 {
		return fail("%s: %s", c.file, strings.Join(problems, "; "))
	}
	return pass("%s holds the provider's %d CRDs", c.file, len(in.p.CRDs))
}

// crdDifference says how a CRD in the components differs from the provider's where it matters to
// Cluster API: group, kind, scope, versions and contract labels. Empty when it does not.
func crdDifference(want, got *apiextensionsv1.CustomResourceDefinition) string {
	summary := func(crd *apiextensionsv1.CustomResourceDefinition) string {
		var versions, labels []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, fmt.Sprintf("%s(served=%t,storage=%t)", v.Name, v.Served, v.Storage))
		}
		for _, k := range sortedKeys(crd.Labels) {
			if contractLabel.MatchString(k) {
				labels = append(labels, k+"="+crd.Labels[k])
			}
		}
		return fmt.Sprintf("%s %s %s versions [%s] labels [%s]", crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Scope,
			strings.Join(versions, " "), strings.Join(labels, " "))
	}
	if w, g := summary(want), summary(got); w != g {
		return fmt.Sprintf("got %s, want %s", g, w)
	}
	return ""
}

// decodedTemplate is a cluster template or ClusterClass definition decoded with the common variables.
type decodedTemplate struct {
	artifact
	objects []*unstructured.Unstructured
	err     error
}

func decodeTemplate(a artifact) decodedTemplate {
	d := decodedTemplate{artifact: a}
	text, err := substitute(a.text, commonVariables)
	if err != nil {
		d.err = fmt.Errorf("substituting variables: %w", err)
		return d
	}
	d.objects, d.err = decodeDocuments(text)
	return d
}

func (d decodedTemplate) has(group, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range d.objects {
		if gvk := o.GroupVersionKind(); gvk.Group == group && gvk.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func checkTemplateNaming(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	var bad, flavors []string
	for _, t := range r.templates {
		m := templateName.FindStringSubmatch(t.name)
		if m == nil {
			bad = append(bad, fmt.Sprintf("%s is not cluster-template.yaml or cluster-template-<flavor>.yaml", t.name))
			continue
		}
		if m[1] == "" {
			flavors = append(flavors, "default")
		} else {
			flavors = append(flavors, strings.TrimPrefix(m[1], "-"))
		}
	}
	for _, a := range append(slices.Clone(r.others), r.classes...) {
		if d := decodeTemplate(a); len(d.has(clusterv1.GroupVersion.Group, "Cluster")) > 0 {
			bad = append(bad, fmt.Sprintf("%s holds a Cluster but is not named cluster-template[-<flavor>].yaml", a.name))
		}
	}
	switch {
	case len(bad) > 0:
		return fail("%s: %s", r.dir, strings.Join(bad, "; "))
	case len(flavors) == 0:
		return missing("%s has no cluster templates: clusterctl generate cluster has nothing to generate", r.dir)
	}
	return pass("%s has cluster templates for flavors %s", r.dir, strings.Join(flavors, ", "))
}

func checkTemplateNamespace(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if len(r.templates) == 0 {
		return skip("Not checked: %s has no cluster templates", r.dir)
	}
	var bad []string
	for _, t := range r.templates {
		d := decodeTemplate(t)
		if d.err != nil {
			continue // the variables rule reports it
		}
		if ns := d.has("", "Namespace"); len(ns) > 0 {
			bad = append(bad, fmt.Sprintf("%s creates %s: templates must assume the target namespace exists", t.name, objectNames(ns)))
		}
		others := map[string]bool{}
		for _, o := range d.objects {
			if n := o.GetNamespace(); n != "" && n != commonVariables["NAMESPACE"] {
				others[n] = true
			}
		}
		if len(others) > 0 {
			bad = append(bad, fmt.Sprintf("%s puts objects in namespace %s rather than the target namespace ${NAMESPACE}", t.name, strings.Join(sortedKeys(others), ", ")))
		}
	}
	if len(bad) > 0 {
		return fail("%s", strings.Join(bad, "; "))
	}
	return pass("Every cluster template deploys its objects in the target namespace")
}

func checkTemplateVariables(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if len(r.templates) == 0 {
		return skip("Not checked: %s has no cluster templates", r.dir)
	}
	var bad, unnamed []string
	used := map[string]bool{}
	for _, t := range r.templates {
		use := variables(t.text)
		if len(use.problems) > 0 {
			bad = append(bad, fmt.Sprintf("%s: %s", t.name, strings.Join(use.problems, "; ")))
			continue
		}
		for _, n := range use.names {
			if _, common := commonVariables[n]; common {
				used[n] = true
			}
		}
		d := decodeTemplate(t)
		if d.err != nil {
			bad = append(bad, fmt.Sprintf("%s does not decode once substituted: %v", t.name, d.err))
			continue
		}
		clusters := d.has(clusterv1.GroupVersion.Group, "Cluster")
		if len(clusters) == 0 || slices.ContainsFunc(clusters, func(c *unstructured.Unstructured) bool {
			return c.GetName() != commonVariables["CLUSTER_NAME"]
		}) {
			unnamed = append(unnamed, t.name)
		}
	}
	switch {
	case len(bad) > 0:
		return fail("%s", strings.Join(bad, "; "))
	case len(unnamed) > 0:
		return missing("The Cluster of %s is not named ${CLUSTER_NAME}, the common variable clusterctl generate cluster sets", strings.Join(unnamed, ", "))
	}
	return pass("The templates' variables parse and they use the common variables %s", strings.Join(sortedKeys(used), ", "))
}

func checkClusterClassNaming(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	var bad, names []string
	for _, a := range r.classes {
		m := clusterClassName.FindStringSubmatch(a.name)
		if m == nil {
			bad = append(bad, fmt.Sprintf("%s is not clusterclass-<name>.yaml", a.name))
			continue
		}
		d := decodeTemplate(a)
		if d.err != nil {
			bad = append(bad, fmt.Sprintf("%s does not decode: %v", a.name, d.err))
			continue
		}
		classes := d.has(clusterv1.GroupVersion.Group, "ClusterClass")
		if len(classes) != 1 || classes[0].GetName() != m[1] {
			bad = append(bad, fmt.Sprintf("%s must hold the ClusterClass %s, it holds %q", a.name, m[1], objectNames(classes)))
			continue
		}
		names = append(names, m[1])
	}
	for _, a := range r.others {
		if d := decodeTemplate(a); len(d.has(clusterv1.GroupVersion.Group, "ClusterClass")) > 0 {
			bad = append(bad, fmt.Sprintf("%s holds a ClusterClass but is not named clusterclass-<name>.yaml", a.name))
		}
	}
	switch {
	case len(bad) > 0:
		return fail("%s: %s", r.dir, strings.Join(bad, "; "))
	case len(names) == 0:
		return missing("%s has no ClusterClass definitions", r.dir)
	}
	return pass("%s has ClusterClass definitions %s", r.dir, strings.Join(names, ", "))
}

func checkClusterClassNamespace(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if len(r.classes) == 0 {
		return skip("Not checked: %s has no ClusterClass definitions", r.dir)
	}
	var bad []string
	for _, a := range r.classes {
		d := decodeTemplate(a)
		if d.err != nil {
			continue // the naming rule reports it
		}
		for _, o := range d.objects {
			if o.GetNamespace() != "" {
				bad = append(bad, fmt.Sprintf("%s: %s/%s specifies namespace %s", a.name, o.GetKind(), o.GetName(), o.GetNamespace()))
			}
			for _, ref := range namespacedRefs(o.Object["spec"], ".spec") {
				bad = append(bad, fmt.Sprintf("%s: %s/%s has a reference with a namespace at %s", a.name, o.GetKind(), o.GetName(), ref))
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return missing("ClusterClass definitions should not specify namespaces: %s", strings.Join(bad, "; "))
	}
	return pass("No object of the ClusterClass definitions, nor any reference in them, specifies a namespace")
}

// namespacedRefs returns the paths of the object references (maps with kind and name) that specify a
// namespace.
func namespacedRefs(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		_, kind := v["kind"].(string)
		_, name := v["name"].(string)
		if ns, _ := v["namespace"].(string); kind && name && ns != "" {
			out = append(out, at)
		}
		for _, k := range sortedKeys(v) {
			out = append(out, namespacedRefs(v[k], at+"."+k)...)
		}
	case []any:
		for i, item := range v {
			out = append(out, namespacedRefs(item, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return out
}

func checkClusterClassVariables(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if len(r.classes) == 0 {
		return skip("Not checked: %s has no ClusterClass definitions", r.dir)
	}
	var bad, uses []string
	for _, a := range r.classes {
		use := variables(a.text)
		if len(use.problems) > 0 {
			bad = append(bad, fmt.Sprintf("%s: %s", a.name, strings.Join(use.problems, "; ")))
		}
		if len(use.names) > 0 {
			uses = append(uses, fmt.Sprintf("%s uses %s", a.name, strings.Join(use.names, ", ")))
		}
	}
	switch {
	case len(bad) > 0:
		return fail("%s", strings.Join(bad, "; "))
	case len(uses) > 0:
		return missing("ClusterClass definitions should not use variables: %s", strings.Join(uses, "; "))
	}
	return pass("The ClusterClass definitions use no variables")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func checkClusterClassSharedObjects(in *input) verdict {
	r, v, ok := in.release()
	if !ok {
		return v
	}
	if len(r.classes) == 0 {
		return skip("Not checked: %s has no ClusterClass definitions", r.dir)
	}
	type definition struct {
		file string
		obj  *unstructured.Unstructured
	}
	byObject := map[string][]definition{}
	for _, a := range r.classes {
		d := decodeTemplate(a)
		if d.err != nil {
			continue // the naming rule reports it
		}
		for _, o := range d.objects {
			key := o.GroupVersionKind().GroupKind().String() + "/" + o.GetName()
			byObject[key] = append(byObject[key], definition{file: a.name, obj: o})
		}
	}
	var differing, shared []string
	for _, key := range sortedKeys(byObject) {
		defs := byObject[key]
		if len(defs) < 2 {
			continue
		}
		files := make([]string, 0, len(defs))
		same := true
		for _, d := range defs {
			files = append(files, d.file)
			if !reflect.DeepEqual(d.obj.Object, defs[0].obj.Object) {
				same = false
			}
		}
		what := fmt.Sprintf("%s in %s", key, strings.Join(files, ", "))
		if same {
			shared = append(shared, what)
		} else {
			differing = append(differing, what)
		}
	}
	switch {
	case len(differing) > 0:
		return fail("ClusterClass definitions define the same object differently, so installing one changes the others: %s", strings.Join(differing, "; "))
	case len(shared) > 0:
		return missing("Objects are shared between ClusterClass definitions (changing one changes every ClusterClass using it): %s", strings.Join(shared, "; "))
	case len(r.classes) == 1:
		return pass("%s is the only ClusterClass definition, so it shares no object", r.classes[0].name)
	}
	return pass("The %d ClusterClass definitions share no object", len(r.classes))
}
