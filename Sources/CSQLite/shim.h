#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>
// SQLITE_TRANSIENT is a cast macro Swift cannot import.
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }
// Extended result codes are compound macros Swift cannot import.
static inline int CSQLite_constraintUnique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int CSQLite_constraintPrimaryKey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }
#endif
