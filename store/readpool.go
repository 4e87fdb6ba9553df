package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// The read pool's connections bound every read by a deadline.
//
// A read SQLite cannot answer waits far longer than anyone should: when
// another process holds the WAL's read locks (its recovery after a crash,
// a checkpoint frozen on a slow disk) SQLite retries for about 10 s
// whatever busy_timeout says, and a stalled disk holds a read in its
// system call. Neither a context nor sqlite3_interrupt ends such a wait:
// go-sqlite3 waits for the C call to return. So each call on a read
// connection runs on the connection's own goroutine (its worker), and the
// caller stops waiting once one call has taken the read timeout (the
// query, or a batch of its rows; never the caller's own time between
// rows): the read fails with an
// *Unavailable saying the database is not answering, the connection is
// marked broken (database/sql drops it), and the worker closes it once
// SQLite returns. At most readSlots connections exist at once, stuck or
// not, so a long stall cannot pile up connections and file descriptors.

// readSlots caps the read connections, open or stuck: twice the pool.
const readSlots = 2 * readPool

// readPool is how many read connections database/sql keeps open.
const readPool = 8

// errReadTimeout is the cause of a read's own deadline.
var errReadTimeout = errors.New("the read's deadline passed")

// readConnector opens the read pool's connections.
type readConnector struct {
	dsn     string
	path    string
	timeout time.Duration
	slots   chan struct{}
	drv     sqlite3.SQLiteDriver
	// given counts the connections a read gave up on whose worker has
	// not ended yet.
	given sync.WaitGroup
}

var (
	_ driver.Connector      = (*readConnector)(nil)
	_ driver.QueryerContext = (*readConn)(nil)
	_ driver.Validator      = (*readConn)(nil)
)

func newReadConnector(dsn, path string, timeout time.Duration) *readConnector {
	return &readConnector{dsn: dsn, path: path, timeout: timeout, slots: make(chan struct{}, readSlots)}
}

// Driver is the underlying go-sqlite3 driver.
func (c *readConnector) Driver() driver.Driver { return &c.drv }

// Connect opens one read connection within the read deadline.
func (c *readConnector) Connect(ctx context.Context) (driver.Conn, error) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	select {
	case c.slots <- struct{}{}:
	default:
		// database/sql keeps at most readPool connections open, so with
		// every slot taken, readPool or more reads are stuck: waiting
		// here would only serialise more of them behind its one opener.
		return nil, c.notAnswering()
	}
	type opened struct {
		conn driver.Conn
		err  error
	}
	done := make(chan opened, 1)
	go func() {
		conn, err := c.drv.Open(c.dsn)
		done <- opened{conn, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			<-c.slots
			return nil, c.readError(o.err)
		}
		return c.serve(o.conn.(sqliteConn)), nil
	case <-ctx.Done():
		go func() { // owns the late connection: closes it, frees its slot
			if o := <-done; o.conn != nil {
				o.conn.Close()
			}
			<-c.slots
		}()
		return nil, c.gaveUp(ctx)
	}
}

// deadline bounds one read by the read timeout (or ctx's own, if sooner).
func (c *readConnector) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, c.timeout, errReadTimeout)
}

// gaveUp is the error of a read that ctx ended: in words when the read's
// own deadline passed, the caller's cause otherwise.
func (c *readConnector) gaveUp(ctx context.Context) error {
	if cause := context.Cause(ctx); !errors.Is(cause, errReadTimeout) {
		return cause
	}
	return c.notAnswering()
}

// notAnswering is the words of reads that got no answer in time.
func (c *readConnector) notAnswering() *Unavailable {
	return &Unavailable{path: c.path, state: "is not answering",
		Reason: fmt.Sprintf("a read got no answer within %v (store.read_timeout): its disk may be slow or stalled, or another program may hold it locked; opsbot answers again by itself once it does", c.timeout)}
}

// readError turns SQLite's error of a read into words where it is the
// database's fault, and leaves the others (a syntax error) as they are.
func (c *readConnector) readError(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrProtocol:
		return &Unavailable{path: c.path, state: "is not answering", err: err,
			Reason: "another program holds it locked; opsbot answers again by itself once it lets go"}
	}
	if u := diskFault(c.path, err); u != nil {
		u.state = "cannot be read"
		return u
	}
	return err
}

// sqliteConn is what the read pool uses of go-sqlite3's connection.
type sqliteConn interface {
	driver.Conn
	driver.QueryerContext
}

// readConn is one read connection: its calls run on its worker.
type readConn struct {
	c    *readConnector
	conn sqliteConn
	work chan func()   // calls to the worker
	done chan struct{} // one per call the worker finished
	// broken is set when a call was given up: the worker may still be in
	// it, so the connection is never used again. Only the user of the
	// connection (one at a time, by database/sql's rules) reads or sets it.
	broken bool
	// open is the rows of the query running; the worker's alone.
	open driver.Rows
}

// serve starts the worker of conn.
func (c *readConnector) serve(conn sqliteConn) *readConn {
	rc := &readConn{c: c, conn: conn, work: make(chan func()), done: make(chan struct{}, 1)}
	go rc.worker()
	return rc
}

// worker runs the connection's calls until Close, then closes the rows
// a given-up read left open and the connection, and frees its slot.
func (rc *readConn) worker() {
	defer func() { <-rc.c.slots }()
	for fn := range rc.work {
		fn()
		rc.done <- struct{}{}
	}
	if rc.open != nil {
		rc.open.Close()
	}
	rc.conn.Close()
	if rc.broken { // set before Close closed work
		rc.c.given.Done()
	}
}

// call runs fn on the worker and waits for it until ctx ends or the read
// timeout passes. The deadline is each call's, not the whole read's: the
// time a caller spends between rows (writing each to a slow client) is
// not the database's.
func (rc *readConn) call(ctx context.Context, fn func()) error {
	if rc.broken {
		return driver.ErrBadConn
	}
	ctx, cancel := rc.c.deadline(ctx)
	defer cancel()
	rc.work <- fn
	select {
	case <-rc.done:
		return nil
	case <-ctx.Done():
		rc.broken = true
		rc.c.given.Add(1)
		return rc.c.gaveUp(ctx)
	}
}

// QueryContext runs a query; its rows are read within ctx as well.
func (rc *readConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	var rows driver.Rows
	var err error
	if cerr := rc.call(ctx, func() {
		rows, err = rc.conn.QueryContext(context.Background(), query, args)
		rc.open = rows
	}); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, rc.c.readError(err)
	}
	return &readRows{rc: rc, rows: rows, ctx: ctx}, nil
}

// IsValid tells database/sql not to reuse a connection a read gave up on.
func (rc *readConn) IsValid() bool { return !rc.broken }

// Prepare is refused: the read pool only runs queries (QueryContext), so
// nothing can write through it.
func (rc *readConn) Prepare(string) (driver.Stmt, error) { return nil, errQueriesOnly }

// Begin is refused, as Prepare.
func (rc *readConn) Begin() (driver.Tx, error) { return nil, errQueriesOnly }

var errQueriesOnly = errors.New("store: the read pool only runs queries; write through Store.tx")

// Close ends the worker, which closes the connection once its call (if
// one is stuck) returns.
func (rc *readConn) Close() error {
	close(rc.work)
	return nil
}

// readRows reads a query's rows on the worker, each call within the read
// timeout, a batch at a time (a call to the worker per row would make
// reads several times slower). The rows are read into buffers of their
// own and copied out only once the worker is done with them: a batch
// given up on is never written under database/sql's feet.
type readRows struct {
	rc    *readConn
	rows  driver.Rows
	ctx   context.Context  // the query's
	batch [][]driver.Value // rows read and not yet handed out
	next  int              // the next row of batch to hand out
	end   error            // how reading ended (io.EOF at the end), once it did
}

// readBatch is how many rows one call to the worker reads.
const readBatch = 64

func (r *readRows) Columns() []string { return r.rows.Columns() }

func (r *readRows) Next(dest []driver.Value) error {
	if r.next == len(r.batch) {
		if r.end != nil {
			return r.end
		}
		if err := r.fill(len(dest)); err != nil {
			return err
		}
		if len(r.batch) == 0 {
			return r.end
		}
	}
	copy(dest, r.batch[r.next])
	r.next++
	return nil
}

// fill reads the next batch of rows on the worker.
func (r *readRows) fill(width int) error {
	batch := r.batch[:0]
	var end error
	if cerr := r.rc.call(r.ctx, func() {
		for len(batch) < readBatch {
			row := make([]driver.Value, width)
			if end = r.rows.Next(row); end != nil {
				return
			}
			batch = append(batch, row)
		}
	}); cerr != nil {
		return cerr
	}
	r.batch, r.next = batch, 0
	if end != nil && !errors.Is(end, io.EOF) {
		end = r.rc.c.readError(end)
	}
	r.end = end
	return nil
}

// Close closes the rows on the worker; on a connection given up on, the
// worker closes them itself when it stops.
func (r *readRows) Close() error {
	var err error
	if r.rc.call(context.Background(), func() { err = r.rows.Close(); r.rc.open = nil }) != nil {
		return nil
	}
	return err
}
