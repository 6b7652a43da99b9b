package compat

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Document is one YAML document found in a file, with where it was found.
type Document struct {
	// Source is the file and line of the document, for messages.
	Source string
	// Raw is the document's text.
	Raw string
	// Object is the decoded object; nil when the text is not a complete Kubernetes object.
	Object *unstructured.Unstructured
	// Problem says why Object is nil or why the document is only an excerpt.
	Problem string
}

// DocumentsInFile returns the YAML documents in a YAML file or in the YAML examples of a Markdown file,
// fenced or not.
func DocumentsInFile(path string) ([]Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var blocks []block
	if strings.HasSuffix(path, ".md") {
		blocks = markdownBlocks(string(data))
	} else {
		blocks = []block{{line: 1, text: string(data)}}
	}
	var docs []Document
	for _, b := range blocks {
		for _, d := range splitDocuments(b) {
			doc := decode(d)
			doc.Source = fmt.Sprintf("%s:%d", filepath.Base(path), d.line)
			docs = append(docs, doc)
		}
	}
	return docs, nil
}

type block struct {
	line int
	text string
}

var (
	fence       = regexp.MustCompile("^\\s*```")
	yamlKeyLine = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*:(\s|$)`)
)

// markdownBlocks returns the fenced YAML blocks of a Markdown text and, outside them, runs of lines that
// start with "apiVersion:" and continue while they look like YAML (indented lines, top-level keys,
// list items, blank lines and document separators): the book excerpts print their examples unfenced.
func markdownBlocks(text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if fence.MatchString(lines[i]) {
			info := strings.ToLower(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i]), "`")))
			start := i + 1
			for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
			}
			text := strings.Join(lines[start:min(i, len(lines))], "\n")
			if info == "yaml" || info == "yml" || (info == "" && strings.Contains(text, "apiVersion:")) {
				out = append(out, block{line: start + 1, text: text})
			}
			continue
		}
		if !strings.HasPrefix(lines[i], "apiVersion:") {
			continue
		}
		start := i
		for i+1 < len(lines) && looksLikeYAML(lines[i+1]) && !fence.MatchString(lines[i+1]) {
			i++
		}
		out = append(out, block{line: start + 1, text: strings.Join(lines[start:i+1], "\n")})
	}
	return out
}

func looksLikeYAML(line string) bool {
	switch {
	case strings.TrimSpace(line) == "", line == "---":
		return true
	case strings.HasPrefix(line, " "), strings.HasPrefix(line, "- "), strings.HasPrefix(line, "#"):
		return true
	default:
		return yamlKeyLine.MatchString(line) && !strings.Contains(line, ". ")
	}
}

type rawDocument struct {
	line int
	text string
}

func splitDocuments(b block) []rawDocument {
	var out []rawDocument
	scanner := bufio.NewScanner(strings.NewReader(b.text))
	scanner.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	var cur []string
	start, n := b.line, b.line-1
	flush := func() {
		if strings.TrimSpace(strings.Join(cur, "\n")) != "" {
			out = append(out, rawDocument{line: start, text: strings.Join(cur, "\n")})
		}
		cur = nil
	}
	for scanner.Scan() {
		n++
		line := scanner.Text()
		if strings.TrimRight(line, " ") == "---" {
			flush()
			start = n + 1
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

// elision matches the marks examples use for left-out parts: a line of "...", a value of "...", or a
// comment standing for a whole block such as "# metadata".
var elision = regexp.MustCompile(`(?m)^\s*(\.\.\.|#\s*\.\.\.|…)\s*$|:\s*\.\.\.\s*$|^\s*#\s*metadata\s*$`)

func decode(d rawDocument) Document {
	doc := Document{Raw: d.text}
	if elision.MatchString(d.text) {
		doc.Problem = "an excerpt: parts are elided with ..."
		return doc
	}
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(d.text), &obj); err != nil {
		doc.Problem = "not valid YAML: " + firstLine(err.Error())
		return doc
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		doc.Problem = "not a Kubernetes object (no apiVersion or kind)"
		return doc
	}
	doc.Object = u
	return doc
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
