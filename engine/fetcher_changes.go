package engine

// A fetcher thread's turn costs what changed, not the thread's size. Kafka's thread walks every
// partition it fetches at every turn: maybeTruncate looks for Truncating ones, and buildFetch
// (with FetchSessionHandler.Builder) looks at each for readiness and compares its fetch data with
// what the session last sent. The engine keeps the result and looks at fewer partitions. The
// state for it is package broker's (brk.FetcherThread and its PartitionFetchStates; the walks,
// Build, walking all or the change list; a log start's move: brk.Broker.LogStartMoved); what
// the engine keeps here is asking what a Fetch carried by partition name (sentByTP):
//
//   - the thread counts the Truncating partitions (SetTruncating, Add, Remove); maybeTruncate
//     walks only while there is one.
//   - The change list holds the partitions a build must look at: those whose fetch data or
//     readiness may have changed since the last build (NoteChange: added, epoch replaced, fetch
//     offset, last fetched epoch, Truncating or backoff changed, the log start of its log moved)
//     and those backing off at the last build (their readiness changes with time alone). An
//     incremental build looks only at those, in pid order; any other partition is as the last
//     build left it, either in the session with the fetch data the session last sent (neither
//     listed nor forgotten, and its readiness cannot lapse: only a backoff delays it), or
//     Truncating (out of the session, no backoff deadline to report). A full build looks at every
//     partition, as Kafka's full request lists them, and starts the list anew.
//   - What a Fetch carried is stamped on each partition when a build finds it ready (Stamp,
//     Sent) instead of a list of every partition per build: between a build and its answer
//     no other build runs, so a partition's InSession says whether the Fetch in flight carried it;
//     one that left the thread since keeps its stamp in the handler's gone list, and takes it
//     back if it rejoins before the next build (brk.FetchSent).
//
// e.rules.Fetcher.WalkAll (tests) walks every partition at every build and at every
// maybeTruncate, and checks answers against the list of what each Fetch carried, as Kafka's
// thread does; TestFollowerChangesMatchWalkingAll requires the same trace, event for event, and
// the same fetcher state. e.rules.Fetcher.Check (tests) checks, before each incremental build,
// that every partition off the list is as the last build left it (package broker's
// fetcher_check.go).
