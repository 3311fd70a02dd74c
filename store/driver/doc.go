// Package driver is the contract a store implements for the Service: the
// Store interface, the parameter structs of its methods, the sentinels it
// returns and the helpers stores share (search folding, phone digits).
// It is for store implementers, like database/sql/driver or River's
// riverdriver; an embedder picks a store (store/memstore,
// store/sqlitestore, store/pgstore) and never calls one directly.
//
// Every store passes the conformance suite in store/storetest.
package driver
