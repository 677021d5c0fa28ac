// Package embedded is the durable single-node state.Store, the default
// when no server is configured: budget reservations, single-use keys,
// receipt chains and their checkpoints in one file, written through
// go.etcd.io/bbolt.
//
// Every write is committed and fsync'd (fdatasync) before the call that made
// it returns, so an acknowledged reservation, consumed key or receipt
// survives a crash of the process (kill -9) and, as far as the disk honours
// fsync, of the machine. Concurrent writers are grouped: while one
// transaction commits, the writes that arrive queue up and are committed
// together in the next one (group commit), so each caller still waits for
// its own durable commit but the fsync is shared. The one exception is
// AppendDeferred (state.DeferredLog), for the receipts of decisions that
// changed nothing: it queues the receipt and returns without waiting; the
// receipt is durable before any write queued after it returns.
//
// A file is opened by one process at a time (bbolt holds an exclusive file
// lock); several gateway replicas need package store/postgres instead.
//
// It imports core/ and bbolt only; it must never import a pack, a connector
// or a front door.
package embedded
