package store

import (
	"context"
	"database/sql"
	"encoding/json"
)

// OpenCard is a task card a stream shows still pending or in progress:
// what recovery needs to close it after a crash. Title is the redacted
// text that was shown.
type OpenCard struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// RecordCards records the task cards message id shows still open,
// replacing those on record: a card is on record from before it is first
// shown open until after it is shown ended.
func (s *Sessions) RecordCards(ctx context.Context, id int64, cards []OpenCard) error {
	return wrap("record cards", s.db.tx(ctx, func(tx *sql.Tx) error {
		return expectOne(tx.ExecContext(ctx, `UPDATE posted_messages SET open_cards = ?, updated_at = ? WHERE id = ?`,
			encodeCards(cards), s.db.now(), id))
	}))
}

// encodeCards is cards as the open_cards column holds them: "" for none.
func encodeCards(cards []OpenCard) string {
	if len(cards) == 0 {
		return ""
	}
	b, _ := json.Marshal(cards) // strings only: cannot fail
	return string(b)
}

// decodeCards reads the open_cards column. A column it cannot read
// (never written so) gives no cards: the message is still ended, with
// its note, rather than kept from recovery.
func decodeCards(col string) []OpenCard {
	var cards []OpenCard
	if col == "" || json.Unmarshal([]byte(col), &cards) != nil {
		return nil
	}
	return cards
}
