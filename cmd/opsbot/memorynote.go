package main

import "github.com/opsbot/opsbot/store"

// noFullTextNote is what `opsbot run` logs and `opsbot config check`
// prints when this binary was built without the sqlite_fts5 tag ("" when
// it was not): the incident memory then recalls with a slower scan.
func noFullTextNote() string {
	if store.FullTextSearch() {
		return ""
	}
	return "this opsbot was built without the sqlite_fts5 build tag: the incident memory (search_history, " +
		"an alert's \"seen before\") searches with a slower scan instead of SQLite's full-text index; " +
		"build with 'make build' or -tags timetzdata,sqlite_fts5"
}
