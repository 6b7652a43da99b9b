package tree

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ANSI styles, as upstream paints them.
const (
	gray      = "90"
	red       = "31"
	green     = "32"
	yellow    = "33"
	white     = "37"
	cyan      = "36"
	bold      = "1"
	whiteBold = "37;1"
)

// painter paints text with ANSI styles when colors are on.
type painter bool

const plain painter = false

func (p painter) paint(style, s string) string {
	if !p || s == "" {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// columnPadding separates the columns of the table.
const columnPadding = "  "

// table lays out rows in left-aligned columns, each as wide as its widest cell, separated by two spaces.
// Widths ignore ANSI styles. Lines carry no trailing spaces.
type table struct {
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) render(w io.Writer) error {
	var widths []int
	for _, row := range t.rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], visibleWidth(cell))
		}
	}
	out := bufio.NewWriter(w)
	var line strings.Builder
	for _, row := range t.rows {
		line.Reset()
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-visibleWidth(cell)))
				line.WriteString(columnPadding)
			}
		}
		if _, err := out.WriteString(strings.TrimRight(line.String(), " ") + "\n"); err != nil {
			return err
		}
	}
	return out.Flush()
}

var ansiStyle = regexp.MustCompile("\x1b\\[[0-9;]*m")

// visibleWidth is the number of characters of s a terminal shows.
func visibleWidth(s string) int {
	if strings.IndexByte(s, '\x1b') >= 0 {
		s = ansiStyle.ReplaceAllString(s, "")
	}
	return utf8.RuneCountInString(s)
}
