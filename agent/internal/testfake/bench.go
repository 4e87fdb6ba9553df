package testfake

import (
	"context"
	"iter"
	"testing"

	"github.com/opsbot/opsbot/agent"
)

// BenchStream measures whole calls of stream on req, each expected to
// yield deltas text events, and reports the time per delta.
func BenchStream(b *testing.B, deltas int, stream func(context.Context, agent.Request) iter.Seq[agent.StreamEvent], req agent.Request) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev := range stream(context.Background(), req) {
			if ev.Kind == agent.EventText {
				n++
			}
		}
		if n != deltas {
			b.Fatalf("deltas = %d", n)
		}
	}
	ReportPerDelta(b, deltas)
}

// ReportPerDelta reports the benchmark's elapsed time per delta, for a
// benchmark whose every iteration handled deltas text deltas.
func ReportPerDelta(b *testing.B, deltas int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
}
