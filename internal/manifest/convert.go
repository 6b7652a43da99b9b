package manifest

import (
	"fmt"
	"math"
	"strconv"
)

// jsonable converts a value decoded by the YAML library into what decoding the same document with
// sigs.k8s.io/yaml into an unstructured object gives: string keys, int64 for integers (and for floats
// with an integer value, as JSON does not tell them apart), float64 for other numbers.
func jsonable(v any) (any, error) {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			key, err := keyString(k)
			if err != nil {
				return nil, err
			}
			if m[key], err = jsonable(val); err != nil {
				return nil, err
			}
		}
		return m, nil
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			var err error
			if out[i], err = jsonable(val); err != nil {
				return nil, err
			}
		}
		return out, nil
	case int:
		return int64(t), nil
	case int64:
		return t, nil
	case uint64:
		if t > math.MaxInt64 {
			return float64(t), nil
		}
		return int64(t), nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("unsupported value: %v", t)
		}
		// JSON writes integral values below 1e21 without a fraction or exponent, and they come back as
		// int64 when they fit.
		if t == math.Trunc(t) && math.Abs(t) < 1e21 && t >= math.MinInt64 && t < math.MaxInt64 {
			return int64(t), nil
		}
		return t, nil
	}
	return v, nil
}

// keyString converts a map key as sigs.k8s.io/yaml does.
func keyString(k any) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case uint64:
		return strconv.FormatUint(t, 10), nil
	case float64:
		s := strconv.FormatFloat(t, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, nil
	case bool:
		return strconv.FormatBool(t), nil
	}
	return "", fmt.Errorf("unsupported map key of type %T: %v", k, k)
}
