// Package scrape reads, in tests, the metrics that the managers' diagnostics endpoint serves: those of
// controller-runtime's registry, gathered as a Prometheus scrape would.
package scrape

import (
	"fmt"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Series returns the value of every series of a metric family whose labels include the given ones,
// keyed by the series' labels written as {name="value",...} in label name order.
func Series(name string, labels map[string]string) (map[string]float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering metrics: %w", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !matches(m, labels) {
				continue
			}
			out[labelString(m)] = value(m)
		}
	}
	return out, nil
}

// Value returns the value of the one series of a metric whose labels include the given ones; found is false
// when there is none, and err says so when there are several.
func Value(name string, labels map[string]string) (v float64, found bool, err error) {
	series, err := Series(name, labels)
	if err != nil {
		return 0, false, err
	}
	if len(series) > 1 {
		return 0, false, fmt.Errorf("%s%v matches %d series: %v", name, labels, len(series), series)
	}
	for _, v := range series {
		return v, true, nil
	}
	return 0, false, nil
}

// Sum returns the sum of the series of a metric whose labels include the given ones (0 when there is none).
func Sum(name string, labels map[string]string) (float64, error) {
	series, err := Series(name, labels)
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, v := range series {
		sum += v
	}
	return sum, nil
}

func matches(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

func labelString(m *dto.Metric) string {
	s := "{"
	for i, l := range m.GetLabel() { // Gather sorts labels by name.
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return s + "}"
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
