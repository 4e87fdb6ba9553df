package store

import (
	"github.com/opsbot/opsbot/approvals"
	"github.com/opsbot/opsbot/checks"
	"github.com/opsbot/opsbot/hosts"
)

// The store keeps the domains' rows and implements the interfaces they
// declare for it.
var (
	_ approvals.Store  = (*Store)(nil)
	_ hosts.JobStore   = (*Store)(nil)
	_ checks.RunStore  = (*Store)(nil)
	_ checks.PostStore = (*Store)(nil)
)
