package bot

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsbot/opsbot/agent"
	"github.com/opsbot/opsbot/connectors"
	"github.com/opsbot/opsbot/connectors/alerts"
	"github.com/opsbot/opsbot/store"
)

// BenchmarkAlertWebhookStalledModel: POST /hooks/am, each delivery a new
// alert group routed investigate: true, from 8 senders at once, while the
// model never answers (every investigation slot held, the queue full,
// the rest told "storm"). A delivery is answered once it is recorded in a
// real SQLite file (fsync); the desk posts its thread meanwhile. Reports
// the answer's p50 and p99.
func BenchmarkAlertWebhookStalledModel(b *testing.B) {
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(b.TempDir(), "bot.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	model := newStalledAgent()
	defer close(model.release)
	cfg := investigateConfig()
	inv := &Investigator{Agent: model, Sessions: st.Sessions(), Hosts: []agent.HostInfo{{Name: "web-1"}}}
	conn := newFakeConn(connectors.Limits{MaxText: 4000})
	conn.name = "web"
	desk := NewAlertDesk(AlertDeps{Store: st.Alerts(), Platforms: NewPlatforms(nil, nil, conn), Config: cfg, Investigator: inv})
	desk.Start(context.Background())
	defer desk.Close()
	mux := http.NewServeMux()
	(&alerts.Intake{Config: cfg, Record: st.Alerts(), Recorded: desk.Kick}).Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	var n atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(4) // 8 senders on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := groupPayload(fmt.Sprintf("bench-%d", n.Add(1)), "firing")
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/am", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer t")
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			d := time.Since(start)
			if err != nil || resp.StatusCode != http.StatusAccepted {
				b.Errorf("delivery: %v %v", resp, err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
