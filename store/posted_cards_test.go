package store

import (
	"context"
	"slices"
	"testing"
)

// A stream's open cards are on record with it: recorded, read back by
// recovery with the message, kept when the page's text is recorded again,
// and gone once none is open.
func TestOpenCardsRideThePageRecord(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	page := PostedMessage{Platform: "slack", Channel: "C1", Thread: "1.1", MessageID: "1.2", Text: "Checking"}
	m, err := s.Sessions().RecordStreaming(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	open := []OpenCard{{ID: "call-1", Title: "`df -h` on web-1"}, {ID: "call-2", Title: "`uptime` on web-2"}}
	if err := s.Sessions().RecordCards(ctx, m.ID, open); err != nil {
		t.Fatal(err)
	}
	page.Text = "Checking the disks"
	if _, err := s.Sessions().RecordStreaming(ctx, page); err != nil {
		t.Fatal(err)
	}
	if got := cardsOnRecord(t, s); !slices.Equal(got, open) {
		t.Errorf("cards on record %+v; want %+v", got, open)
	}
	if err := s.Sessions().RecordCards(ctx, m.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := cardsOnRecord(t, s); len(got) != 0 {
		t.Errorf("cards on record %+v once none is open", got)
	}
	if err := s.Sessions().RecordCards(ctx, m.ID+1, open); err == nil {
		t.Error("cards recorded for a message not on record")
	}
}

// cardsOnRecord are the open cards of the one message on record as
// being written.
func cardsOnRecord(t *testing.T, s *Store) []OpenCard {
	t.Helper()
	msgs, err := s.Sessions().StreamingMessages(context.Background())
	if err != nil || len(msgs) != 1 {
		t.Fatalf("StreamingMessages = %+v, %v; want the one page", msgs, err)
	}
	return msgs[0].Cards
}
