package convert

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// variable matches a value that is only a clusterctl variable: ${NAME}, ${NAME:=default}, ${NAME:-default}.
var variable = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-=][^}]*)?\}$`)

// placeholderBase is the first placeholder number: far above any count or port a template sets, and
// within int32, the smallest number type of the API.
const placeholderBase = 2_147_000_000

// placeholders swaps the clusterctl variables a template puts where the API has a number (replicas:
// ${WORKER_MACHINE_COUNT}) for numbers, so that the object decodes into its Go type and converts, and
// swaps them back in the converted object.
type placeholders struct {
	byNumber map[int64]string
}

// replace walks obj, a decoded object whose Go type is t, and replaces each variable that stands where t
// has a number with a placeholder number. A variable where t has a boolean cannot be kept: that is an
// error.
func (p *placeholders) replace(obj map[string]any, t reflect.Type) error {
	return p.walk(obj, t, "")
}

func (p *placeholders) walk(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case map[string]any:
		for key, value := range v {
			ft, ok := childType(t, key)
			if !ok {
				continue // an unknown field: decoding reports it
			}
			if s, isString := value.(string); isString && variable.MatchString(s) {
				switch kindOf(ft) {
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
					n := int64(placeholderBase + len(p.byNumber))
					if p.byNumber == nil {
						p.byNumber = map[int64]string{}
					}
					p.byNumber[n] = s
					v[key] = n
				case reflect.Bool:
					return fmt.Errorf("%s is %s, where the API has a boolean: clusterctl convert keeps variables in strings and numbers only; write the value, convert, and put the variable back", path+"."+key, s)
				}
				continue
			}
			if err := p.walk(value, ft, path+"."+key); err != nil {
				return err
			}
		}
	case []any:
		if t.Kind() != reflect.Slice {
			return nil
		}
		for i, item := range v {
			if err := p.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// restore puts the variables back in place of their placeholder numbers.
func (p *placeholders) restore(v any) any {
	if len(p.byNumber) == 0 {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		for k, item := range v {
			v[k] = p.restore(item)
		}
	case []any:
		for i, item := range v {
			v[i] = p.restore(item)
		}
	case int64:
		if s, ok := p.byNumber[v]; ok {
			return s
		}
	}
	return v
}

func kindOf(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

// childType returns the Go type of key in t: a struct's field by its JSON name (inline and embedded
// structs included), or a map's values.
func childType(t reflect.Type, key string) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), true
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if (f.Anonymous && name == "") || strings.Contains(opts, "inline") {
				if ft, ok := childType(f.Type, key); ok {
					return ft, true
				}
				continue
			}
			if name == key {
				return f.Type, true
			}
		}
	}
	return nil, false
}
