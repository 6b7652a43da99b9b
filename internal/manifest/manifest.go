// Package manifest converts between multi-document YAML and Kubernetes objects: it is the one decoder of
// multi-document YAML (clusterctl's library and commands, the release build, the conformance kit, the
// ClusterResourceSet controller, the local provider's bootstrap data). It also knows the few facts about
// objects that clusterctl's transformations need: which kinds are cluster-scoped and where the images of
// workloads are.
//
// Output is the canonical form upstream clusterctl prints: each object marshalled as sigs.k8s.io/yaml does
// (keys sorted), documents separated by "---" lines. Both directions use the YAML library underneath
// sigs.k8s.io/yaml directly, without its round trip through JSON, and give the same objects and bytes
// (a test checks this against sigs.k8s.io/yaml).
package manifest

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Parse splits data into YAML documents and decodes each into an object. Documents that hold only
// comments or whitespace are skipped. Every document must be a mapping.
func Parse(data []byte) ([]unstructured.Unstructured, error) {
	docs := split(data)
	decoded := make([]map[string]any, len(docs))
	err := parallel(len(docs), func(i int) error {
		obj, err := decode(docs[i].data)
		if err != nil {
			return &DocumentError{Index: i + 1, Line: docs[i].line, Err: err}
		}
		decoded[i] = obj
		return nil
	})
	if err != nil {
		return nil, err
	}
	objs := make([]unstructured.Unstructured, 0, len(docs))
	for _, obj := range decoded {
		if obj != nil {
			objs = append(objs, unstructured.Unstructured{Object: obj})
		}
	}
	return objs, nil
}

// DocumentError is an error in one YAML document.
type DocumentError struct {
	// Index is the 1-based position of the document.
	Index int
	// Line is the 1-based line where the document starts.
	Line int
	// Err is the decoding error.
	Err error
}

func (e *DocumentError) Error() string {
	return fmt.Sprintf("YAML document %d (starting at line %d): %v", e.Index, e.Line, e.Err)
}

func (e *DocumentError) Unwrap() error { return e.Err }

// Documents splits data into its YAML documents, as Parse does, without decoding them: for readers that
// decode each document into their own types.
func Documents(data []byte) [][]byte {
	docs := split(data)
	out := make([][]byte, len(docs))
	for i, d := range docs {
		out[i] = d.data
	}
	return out
}

type document struct {
	data []byte
	line int
}

// split cuts data at lines that start with "---" followed by nothing but blanks or a comment.
func split(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	for pos := 0; pos <= len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data) + 1
		if end >= 0 {
			end += pos
			next = end + 1
		} else {
			end = len(data)
		}
		if isSeparator(data[pos:end]) {
			docs = append(docs, document{data: data[start:pos], line: startLine})
			start, startLine = next, line+1
			if start > len(data) {
				start = len(data)
			}
		}
		pos = next
		line++
	}
	if start < len(data) {
		docs = append(docs, document{data: data[start:], line: startLine})
	}
	return docs
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := bytes.TrimSpace(line[3:])
	return len(rest) == 0 || rest[0] == '#'
}

// decode returns nil for an empty document.
func decode(doc []byte) (map[string]any, error) {
	if isBlank(doc) {
		return nil, nil
	}
	var raw any
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, nil
	}
	if _, ok := raw.(map[any]any); !ok {
		return nil, fmt.Errorf("not a mapping of keys to values")
	}
	obj, err := jsonable(raw)
	if err != nil {
		return nil, err
	}
	return obj.(map[string]any), nil
}

// isBlank reports whether doc holds only whitespace and comments.
func isBlank(doc []byte) bool {
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// Marshal renders objects as YAML documents separated by "---" lines. The result ends without a newline,
// as upstream's; commands print it with a trailing newline.
func Marshal(objs []unstructured.Unstructured) ([]byte, error) {
	docs := make([][]byte, len(objs))
	err := parallel(len(objs), func(i int) error {
		b, err := yaml.Marshal(objs[i].Object)
		if err != nil {
			return fmt.Errorf("marshalling %s %s: %w", objs[i].GetKind(), objs[i].GetName(), err)
		}
		docs[i] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(bytes.Join(docs, []byte("---\n")), []byte("\n")), nil
}

// Reformat renders the YAML documents of data as Marshal renders the objects Parse decodes from it, one
// rendered document per object, without holding the objects: each document is decoded and rendered by a
// pool of workers and only the rendered bytes are kept. Joined with "---\n" they are Marshal(Parse(data))
// with its final newline. An error is that of the first document that fails, as Parse's, and nothing is
// rendered then.
func Reformat(data []byte) ([][]byte, error) {
	docs := split(data)
	rendered := make([][]byte, len(docs))
	err := parallel(len(docs), func(i int) error {
		obj, err := decode(docs[i].data)
		if err != nil {
			return &DocumentError{Index: i + 1, Line: docs[i].line, Err: err}
		}
		if obj == nil {
			return nil
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			u := unstructured.Unstructured{Object: obj}
			return fmt.Errorf("marshalling %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		rendered[i] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := rendered[:0]
	for _, b := range rendered {
		if b != nil {
			out = append(out, b)
		}
	}
	return out, nil
}
