package anthropic

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// benchDeltas is the number of text deltas in the benchmark stream.
const benchDeltas = 2000

// longStream is a recorded-format transcript of one answer in n text
// deltas, as the API streams a long reply.
func longStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_bench\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-5-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":412,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range n {
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word%04d of the answer\"}}\n\n", i)
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":4000}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// BenchmarkStreamPerDelta measures a whole call over loopback HTTP (the
// SDK's request, SSE decoding, JSON, this package's events), per delta.
func BenchmarkStreamPerDelta(b *testing.B) {
	f := newFake(b, testfake.Reply{Raw: longStream(benchDeltas)})
	p, _ := newTestProvider(b, f)
	testfake.BenchStream(b, benchDeltas, p.Stream, testfake.Conversation())
}

// BenchmarkDecodePerDelta measures parsing alone: the SDK's SSE decoder
// and event JSON plus this package's decoder, from memory, per delta.
func BenchmarkDecodePerDelta(b *testing.B) {
	data := longStream(benchDeltas)
	b.ReportAllocs()
	for b.Loop() {
		res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(data))}
		stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
		n := 0
		out := streamretry.NewEmitter(func(ev agent.StreamEvent) bool {
			if ev.Kind == agent.EventText {
				n++
			}
			return true
		})
		d := decoder{out: out, calls: map[int64]*toolCall{}}
		for stream.Next() {
			if _, err := d.handle(stream.Current()); err != nil {
				b.Fatal(err)
			}
		}
		if n != benchDeltas {
			b.Fatalf("deltas = %d", n)
		}
	}
	testfake.ReportPerDelta(b, benchDeltas)
}
