package topology

import "reflect"

// Holds reports whether current holds every value of desired: a map every key of desired with a value it
// holds, a list the same items (when metadata is true, desired being an object's metadata, its
// ownerReferences are each held by one of current's with the same uid, among others), anything else an
// equal value. A nil desired value is held by an absent one, and so is an empty desired map. Unlike
// contains (template rotation), list items must be equal: without the schema a list may be atomic, which
// an apply sets whole.
func Holds(current, desired any, metadata bool) bool {
	switch d := desired.(type) {
	case nil:
		return current == nil
	case map[string]any:
		if current == nil {
			return len(d) == 0
		}
		c, ok := current.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range d {
			if metadata && k == "ownerReferences" {
				if !holdsReferences(c[k], v) {
					return false
				}
				continue
			}
			if !Holds(c[k], v, false) {
				return false
			}
		}
		return true
	case []any:
		c, ok := current.([]any)
		if !ok || len(c) != len(d) {
			return false
		}
		for i := range d {
			if !Holds(c[i], d[i], false) || !Holds(d[i], c[i], false) {
				return false
			}
		}
		return true
	default:
		if df, ok := number(desired); ok {
			cf, ok := number(current)
			return ok && cf == df
		}
		return reflect.DeepEqual(current, desired)
	}
}

// holdsReferences reports whether the owner references current hold each of desired (matched by uid).
func holdsReferences(current, desired any) bool {
	d, ok := desired.([]any)
	if !ok {
		return Holds(current, desired, false)
	}
	c, _ := current.([]any)
	for _, ref := range d {
		r, ok := ref.(map[string]any)
		if !ok {
			return false
		}
		found := false
		for _, have := range c {
			if h, ok := have.(map[string]any); ok && h["uid"] == r["uid"] && Holds(h, r, false) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
