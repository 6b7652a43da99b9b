package delete_test

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// metaName returns the metadata of an object named name, in namespace when given.
func metaName(name string, namespace ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name}
	if len(namespace) > 0 {
		m.Namespace = namespace[0]
	}
	return m
}
