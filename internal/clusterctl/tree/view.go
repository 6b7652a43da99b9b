package tree

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What other views of a tree (the web view of package ui) read from its nodes: the cells and conditions
// Print shows, without the table layout or ANSI colors.

// Tone is how a view paints a condition, as describe colours it.
type Tone string

// The Tone values.
const (
	// ToneGood: the condition is in its normal state (True, or False for negative-polarity types).
	ToneGood Tone = "good"
	// ToneBad: v1beta2, the condition is in its abnormal state; v1beta1, False with severity Error.
	ToneBad Tone = "bad"
	// ToneWarning: v1beta2, Unknown; v1beta1, False or Unknown with severity Warning.
	ToneWarning Tone = "warning"
	// ToneInfo: v1beta1, False or Unknown with severity Info or none.
	ToneInfo Tone = "info"
	// ToneNone: no condition, or a status that is not True, False or Unknown.
	ToneNone Tone = "none"
)

var tones = map[string]Tone{green: ToneGood, red: ToneBad, yellow: ToneWarning, white: ToneInfo, gray: ToneNone}

// ToneOf returns the tone of a condition in the v1beta2 or v1beta1 layout; ToneNone for nil.
func ToneOf(c *Condition, v1beta1 bool) Tone {
	if c == nil {
		return ToneNone
	}
	if v1beta1 {
		return tones[v1beta1Color(c)]
	}
	return tones[v1beta2Color(c)]
}

// Counters are the REPLICAS, AVAILABLE, READY and UP TO DATE cells of the node's row in the v1beta2
// layout; empty when the object does not report them.
func (n *Node) Counters() (replicas, available, ready, upToDate string) {
	return n.replicas, n.available, n.ready, n.upToDate
}

// Summary is the condition the node's row shows: in the v1beta2 layout the Available or Ready condition
// (its type says which), in the v1beta1 layout Ready; nil when the object has none. A group's summary
// has no message and the oldest transition time of its members.
func (n *Node) Summary(v1beta1 bool) *Condition {
	if v1beta1 {
		return n.v1Ready
	}
	return find(n.v2, n.summary)
}

// Conditions returns the object's v1beta2 and v1beta1 conditions, as `describe --show-conditions all`
// lists them; a group has only the state its members share.
func (n *Node) Conditions() (v1beta2, v1beta1 []Condition) {
	return n.v2, n.v1
}

// Since is how long ago t was, as describe's SINCE column prints it ("10s", "3m", "2d3h"); empty for the
// zero time.
func Since(now, t time.Time) string { return since(now, t) }

// ObjectConditions returns the v1beta2 and v1beta1 conditions of an object read as unstructured, as its
// node in a tree has them.
func ObjectConditions(u *unstructured.Unstructured) (v1beta2, v1beta1 []Condition) {
	return v1beta2Conditions(u), v1beta1Conditions(u)
}
