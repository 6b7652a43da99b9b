package tree

import (
	"cmp"
	"io"
	"slices"
	"strings"
	"time"
)

// Tree lines, as upstream draws them.
const (
	branch   = "├─"
	lastItem = "└─"
	pipe     = "│ "
	indent   = "  "
	// conditionIndent indents the conditions listed under an object from the object's children.
	conditionIndent = "          "
)

// maxMessageWidth is where long v1beta2 messages are wrapped, and where v1beta1 messages are cut.
const maxMessageWidth = 100

// PrintOptions say how to print a tree.
type PrintOptions struct {
	// Now is the time SINCE is measured from; the current time when zero.
	Now time.Time
	// Color paints the tree lines, names and conditions with ANSI colors.
	Color bool
}

// Print writes the tree as a table to w.
func Print(w io.Writer, t *Tree, o PrintOptions) error {
	p := &printer{now: o.Now, paint: painter(o.Color), v1beta1: t.V1Beta1}
	if p.now.IsZero() {
		p.now = time.Now()
	}
	if t.V1Beta1 {
		p.table.add("NAME", "READY", "SEVERITY", "REASON", "SINCE", "MESSAGE")
	} else {
		p.table.add("NAME", "REPLICAS", "AVAILABLE", "READY", "UP TO DATE", "STATUS", "REASON", "SINCE", "MESSAGE")
	}
	p.node(t.Root, nil)
	return p.table.render(w)
}

type printer struct {
	now     time.Time
	paint   painter
	v1beta1 bool
	table   table
}

// node adds the rows of n and of the nodes under it. more says, for each level from the root's children
// down to n, whether the node at that level on the path to n has siblings after it.
func (p *printer) node(n *Node, more []bool) {
	// The tree lines before the row's name, and those that continue on the row's extra lines (multi-line
	// messages, conditions) down to the row's children.
	prefix, through := "", ""
	for i, m := range more {
		if i == len(more)-1 {
			prefix += choose(m, branch, lastItem)
		} else {
			prefix += choose(m, pipe, indent)
		}
		through += choose(m, pipe, indent)
	}
	below := choose(len(n.Children) > 0, pipe, "")

	name := p.paint.paint(gray, prefix) + n.rowName(p.paint)
	if p.v1beta1 {
		p.v1beta1Row(n, name, through+below)
	} else {
		p.v1beta2Row(n, name, through+below)
	}
	if n.show != ShowNoConditions {
		p.conditions(n, through+choose(len(n.Children) > 0, pipe, indent)+conditionIndent)
	}
	for i, c := range n.Children {
		p.node(c, append(slices.Clone(more), i < len(n.Children)-1))
	}
}

func (p *printer) v1beta2Row(n *Node, name, through string) {
	var status, reason, age, message string
	if c := find(n.v2, n.summary); c != nil {
		status = p.paint.paint(v1beta2Color(c), n.summary+": "+c.Status)
		reason, age, message = c.Reason, since(p.now, c.LastTransitionTime), wrap(c.Message, maxMessageWidth)
	}
	if n.IsGroup() {
		message = p.paint.paint(gray, seeItems(n.Items))
	}
	if n.show != ShowNoConditions {
		// The conditions are listed under the row.
		status, reason, age, message = "", "", "", ""
	}
	lines := strings.Split(message, "\n")
	p.table.add(name, n.replicas, n.available, n.ready, n.upToDate, status, reason, age, lines[0])
	for _, l := range lines[1:] {
		p.table.add(p.paint.paint(gray, through), "", "", "", "", "", "", "", l)
	}
}

func (p *printer) v1beta1Row(n *Node, name, through string) {
	var status, severity, reason, age, message string
	style := gray
	if c := n.v1Ready; c != nil {
		style = v1beta1Color(c)
		status, severity, reason, age, message = c.Status, c.Severity, c.Reason, since(p.now, c.LastTransitionTime), cut(c.Message)
	}
	if n.IsGroup() {
		message = p.paint.paint(gray, seeItems(n.Items))
	}
	lines := strings.Split(message, "\n")
	p.table.add(name, p.paint.paint(style, status), p.paint.paint(style, severity), p.paint.paint(style, reason), age, lines[0])
	for _, l := range lines[1:] {
		p.table.add(p.paint.paint(gray, through), "", "", "", "", l)
	}
}

// conditions adds a row for each condition of n listed by --show-conditions: every v1beta2 condition, or
// every v1beta1 condition but Ready (which is on the object's row); KIND+ leaves out those in their
// normal state without a message.
func (p *printer) conditions(n *Node, base string) {
	list := n.v2
	if p.v1beta1 {
		list = nil
		for _, c := range n.v1 {
			if c.Type != readyCondition {
				list = append(list, c)
			}
		}
		slices.SortFunc(list, func(a, b Condition) int { return cmp.Compare(a.Type, b.Type) })
	}
	if n.show == ShowNonZeroConditions {
		list = slices.DeleteFunc(slices.Clone(list), func(c Condition) bool {
			return c.Type != availableCondition && c.Type != readyCondition && c.isZero()
		})
	}
	for i, c := range list {
		last := i == len(list)-1
		name := p.paint.paint(gray, base+choose(!last, branch, lastItem)) + p.paint.paint(cyan, c.Type)
		through := p.paint.paint(gray, base+choose(!last, pipe, ""))
		age := since(p.now, c.LastTransitionTime)
		if p.v1beta1 {
			style := v1beta1Color(&c)
			lines := strings.Split(cut(c.Message), "\n")
			p.table.add(name, p.paint.paint(style, c.Status), p.paint.paint(style, c.Severity), p.paint.paint(style, c.Reason), age, lines[0])
			for _, l := range lines[1:] {
				p.table.add(through, "", "", "", "", l)
			}
			continue
		}
		lines := strings.Split(wrap(c.Message, maxMessageWidth), "\n")
		p.table.add(name, "", "", "", "", p.paint.paint(v1beta2Color(&c), c.Status), c.Reason, age, lines[0])
		for _, l := range lines[1:] {
			p.table.add(through, "", "", "", "", "", "", "", l)
		}
	}
}

// v1beta2Color paints a condition green when it is in its normal state (True, or False for
// negative-polarity types), red when in the other, and yellow when Unknown.
func v1beta2Color(c *Condition) string {
	normal, abnormal := "True", "False"
	if negativePolarity[c.Type] {
		normal, abnormal = abnormal, normal
	}
	switch c.Status {
	case normal:
		return green
	case abnormal:
		return red
	case "Unknown":
		return yellow
	}
	return gray
}

// v1beta1Color paints a v1beta1 condition green when True, and by severity otherwise: red for Error,
// yellow for Warning, white for Info or none.
func v1beta1Color(c *Condition) string {
	switch c.Status {
	case "True":
		return green
	case "False", "Unknown":
		switch c.Severity {
		case "Error":
			return red
		case "Warning":
			return yellow
		}
		return white
	}
	return gray
}

// seeItems is the message of a group row: its first two items.
func seeItems(items []string) string {
	if len(items) <= 2 {
		return "See " + strings.Join(items, ", ")
	}
	return "See " + strings.Join(items[:2], ", ") + ", ..."
}

// cut shortens a v1beta1 message to maxMessageWidth characters, as upstream does.
func cut(message string) string {
	if len(message) <= maxMessageWidth {
		return message
	}
	return message[:maxMessageWidth] + " ..."
}

// wrap breaks a message into lines of at most width characters at spaces. It keeps the message's line
// breaks and the indentation of each line; the continuation lines of a list item ("* ...") are indented
// under the item's text. Words longer than width stay whole.
func wrap(message string, width int) string {
	var out []string
	for _, line := range strings.Split(message, "\n") {
		lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
		hang := lead
		if strings.HasPrefix(strings.TrimSpace(line), "* ") {
			hang += "  "
		}
		current, empty := lead, true
		for _, word := range strings.Fields(line) {
			switch {
			case empty:
				current += word
			case len(current)+1+len(word) <= width:
				current += " " + word
			default:
				out = append(out, current)
				current = hang + word
			}
			empty = false
		}
		out = append(out, current)
	}
	return strings.Join(out, "\n")
}

func choose(c bool, yes, no string) string {
	if c {
		return yes
	}
	return no
}
