#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>
// SQLITE_TRANSIENT is a cast macro Swift cannot import.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }
// Extended result codes are compound macros Swift cannot import.
static inline int CSQLite_constraintUnique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int CSQLite_constraintPrimaryKey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }
// sqlite3_config is variadic: Swift cannot call it. Turns off SQLite's memory statistics, whose
// process-wide mutex every allocation of every connection takes; SQLITE_MISUSE once SQLite is
// already initialized.
static inline int CSQLite_disableMemoryStatistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
// The size up to which a savepoint's statement journal (the pages it changed, as they were) is
// kept in memory before SQLite spills it to a temporary file; SQLITE_MISUSE as above.
static inline int CSQLite_statementJournalSpill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}
#endif
