package testfake

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// HistogramCount sums the sample counts of every series of a histogram.
func HistogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, s := range mf.GetMetric() {
				n += s.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}
