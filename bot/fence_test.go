package bot

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/opsbot/opsbot/connectors"
)

// endCounting is a platform with recovery's enders, counting what reaches
// them.
type endCounting struct {
	*fakeConn
	ends atomic.Int32
}

func (c *endCounting) EndCut(context.Context, connectors.Ref, string, string) error {
	c.ends.Add(1)
	return nil
}

func (c *endCounting) EndCutIn(context.Context, connectors.Dest, string) (bool, error) {
	c.ends.Add(1)
	return true, nil
}

// Recovery's notes on cut answers reach the platform past the redactor
// (the record was redacted when shown), but not past the fence: with it
// closed neither ender reaches the platform; open, both do. A connector
// without enders gains none from the wrapper.
func TestRecoveryEndersAskTheFence(t *testing.T) {
	conn := &endCounting{fakeConn: newFakeConn(connectors.Limits{MaxText: 4000})}
	p := NewPlatforms(nil, nil, conn)
	errDeposed := errors.New("not the leader")
	var closed atomic.Bool
	p.Fence(func() error {
		if closed.Load() {
			return errDeposed
		}
		return nil
	})
	c, _ := p.conn(conn.Name())
	cut, okCut := cutEnderOf(c)
	unrec, okUnrec := unrecordedEnderOf(c)
	if !okCut || !okUnrec {
		t.Fatal("the wrapper hides the platform's enders from recovery")
	}
	ends := func() (errs []error) {
		_, err := unrec.EndCutIn(t.Context(), connectors.Dest{Platform: conn.Name(), Channel: "C1"}, "note")
		return append(errs, cut.EndCut(t.Context(), connectors.Ref{Platform: conn.Name(), Channel: "C1", ID: "1"}, "text", "note"), err)
	}
	if err := errors.Join(ends()...); err != nil || conn.ends.Load() != 2 {
		t.Fatalf("fence open: %d reached the platform (want 2), err %v", conn.ends.Load(), err)
	}
	closed.Store(true)
	for i, err := range ends() {
		if !errors.Is(err, errDeposed) {
			t.Errorf("ender %d with the fence closed: err %v, want the fence's", i, err)
		}
	}
	if got := conn.ends.Load(); got != 2 {
		t.Errorf("with the fence closed %d more ends reached the platform", got-2)
	}
	plain, _ := NewPlatforms(nil, nil, newFakeConn(connectors.Limits{MaxText: 4000})).conn("fake")
	if _, ok := cutEnderOf(plain); ok {
		t.Error("a platform without a cutEnder gained one behind the wrapper")
	}
}
