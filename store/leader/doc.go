// Package leader elects one opsbot among replicas through a Kubernetes
// Lease (coordination.k8s.io/v1), so that only one process owns the
// database, the chat connections and the side effects.
//
// It is client-go's leaderelection algorithm, written over net/http: the
// same Lease fields (holderIdentity, leaseDurationSeconds, acquireTime,
// renewTime, leaseTransitions), optimistic concurrency by resourceVersion
// (a conflicting write is a lost race, never an overwrite), and the same
// timings (lease 15 s, renew deadline 10 s, retry 2 s). client-go itself
// is not used: importing leaderelection links its typed clients and
// kubernetes/scheme, whose init registers every API group in every
// process, HA or not (docs/DEPLOY.md, "Why not client-go").
//
// The leadership generation is the Lease's leaseTransitions as this
// process acquired it: it fences who owns the database, and every audit
// row carries it.
package leader
