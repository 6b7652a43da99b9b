// Package labelformat turns names into label values the way upstream Cluster API does, so that labels such
// as cluster.x-k8s.io/set-name and cluster.x-k8s.io/pool-name, and selectors on them, are the same.
package labelformat

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Value returns s when it is a valid label value, and otherwise a hash of it that is one, in upstream's
// format: "hash_<base64url(fnv32a(s))>_z".
func Value(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("hash_%s_z", base64.RawURLEncoding.EncodeToString(h.Sum(nil)))
}
