package openai

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/agent/internal/streamretry"
	"github.com/opsbot/opsbot/agent/internal/testfake"
)

// benchDeltas is the number of text deltas in the benchmark stream.
const benchDeltas = 2000

// longStream is a recorded-format transcript of one answer in n content
// chunks, as the API streams a long reply.
func longStream(n int) []byte {
	const head = `"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_44709d6fcb"`
	var b bytes.Buffer
	fmt.Fprintf(&b, "data: {%s,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head)
	for i := range n {
		fmt.Fprintf(&b, "data: {%s,\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word%04d of the answer\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i)
	}
	fmt.Fprintf(&b, "data: {%s,\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}\n\n", head)
	fmt.Fprintf(&b, "data: {%s,\"choices\":[],\"usage\":{\"prompt_tokens\":412,\"completion_tokens\":4000,\"total_tokens\":4412}}\n\n", head)
	b.WriteString("data: [DONE]\n\n")
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
// and chunk JSON plus this package's decoder, from memory, per delta.
func BenchmarkDecodePerDelta(b *testing.B) {
	data := longStream(benchDeltas)
	b.ReportAllocs()
	for b.Loop() {
		res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(data))}
		stream := ssestream.NewStream[sdk.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
		n := 0
		out := streamretry.NewEmitter(func(ev agent.StreamEvent) bool {
			if ev.Kind == agent.EventText {
				n++
			}
			return true
		})
		d := decoder{out: out, calls: map[int64]*toolCall{}}
		for stream.Next() {
			d.handle(stream.Current())
		}
		if err := d.finish(); err != nil || n != benchDeltas {
			b.Fatalf("deltas = %d, err = %v", n, err)
		}
	}
	testfake.ReportPerDelta(b, benchDeltas)
}
