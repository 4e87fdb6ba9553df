package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// MaxBody is the largest delivery taken (413 past it).
const MaxBody = 1 << 20

// RecordWait bounds how long a delivery waits for its record: past it the
// sender is told 503 and retries.
const RecordWait = 2 * time.Second

// Recorder keeps a delivery durably before it is acknowledged. first is
// false for a delivery id already on record (a retry): nothing is kept.
type Recorder interface {
	RecordDelivery(ctx context.Context, source, deliveryID string, body []byte) (first bool, err error)
}

// Intake serves POST /hooks/{name}: it authenticates the sender, reads
// the payload, records it, then answers 202. It acts on nothing: Recorded
// tells whoever reads the record that there is more.
type Intake struct {
	Config   Config
	Record   Recorder
	Recorded func()
	Metrics  *Metrics
	Log      *slog.Logger
	// Wait bounds the record (default RecordWait).
	Wait time.Duration
}

// Routes mounts the endpoint on the shared listener.
func (in *Intake) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /hooks/{name}", in.serve)
}

func (in *Intake) serve(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	src, ok := in.Config.Source(name)
	if !ok {
		in.refuse(w, name, RejectUnknownSource, http.StatusNotFound, fmt.Sprintf("no alert source is named %q here: name it in the config's alerts.sources", name))
		return
	}
	if src.Type != TypePagerDuty && !bearerOK(src.Token, r.Header) {
		in.unauthorized(w, src)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		in.refuse(w, name, RejectTooLarge, http.StatusRequestEntityTooLarge, "the body is over 1 MB: lower the sender's max_alerts, or group alerts more finely")
		return
	} else if err != nil {
		in.refuse(w, name, RejectBadPayload, http.StatusBadRequest, "the body could not be read to its end")
		return
	}
	if src.Type == TypePagerDuty && !signatureOK(src.Secrets, body, r.Header) {
		in.unauthorized(w, src)
		return
	}
	if _, err := Parse(src, body); err != nil {
		in.refuse(w, name, RejectBadPayload, http.StatusBadRequest, err.Error())
		return
	}
	in.record(r.Context(), w, src, DeliveryID(src, r.Header), body)
}

// record keeps the delivery within Wait, then answers 202 (503 when it
// could not be kept in time: the sender retries).
func (in *Intake) record(ctx context.Context, w http.ResponseWriter, src Source, id string, body []byte) {
	wait := in.Wait
	if wait <= 0 {
		wait = RecordWait
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	first, err := in.Record.RecordDelivery(ctx, src.Name, id, body)
	if err != nil {
		in.log().Error("an alert delivery was not recorded: the sender is told 503 and retries", "source", src.Name, "err", err)
		w.Header().Set("Retry-After", "5")
		in.refuse(w, src.Name, RejectNotRecorded, http.StatusServiceUnavailable, "not recorded: the database did not take it in time; send it again")
		return
	}
	in.Metrics.receive(src.Name, first)
	if first && in.Recorded != nil {
		in.Recorded()
	}
	answer(w, http.StatusAccepted, "recorded")
}

func (in *Intake) unauthorized(w http.ResponseWriter, src Source) {
	msg := "missing or wrong token: send Authorization: Bearer TOKEN with the source's token"
	if src.Type == TypePagerDuty {
		msg = "missing or wrong signature: X-PagerDuty-Signature must be v1=HMAC-SHA256 of the body with the subscription's signing secret"
	}
	in.refuse(w, src.Name, RejectUnauthorized, http.StatusUnauthorized, msg)
}

// refuse answers an error in words and counts it.
func (in *Intake) refuse(w http.ResponseWriter, source, reason string, code int, msg string) {
	if reason == RejectUnknownSource {
		source = "" // a name the config does not know: not a label
	}
	in.Metrics.reject(source, reason)
	answer(w, code, msg)
}

func answer(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	key := "error"
	if code < 300 {
		key = "status"
	}
	json.NewEncoder(w).Encode(map[string]string{key: msg})
}

func (in *Intake) log() *slog.Logger {
	if in.Log == nil {
		return slog.Default()
	}
	return in.Log
}
