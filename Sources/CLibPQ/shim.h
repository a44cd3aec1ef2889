#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

// PG_DIAG_* are character-literal macros Swift cannot import.
static inline const char *CLibPQ_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}
static inline const char *CLibPQ_primaryMessage(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}
static inline const char *CLibPQ_constraintName(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_CONSTRAINT_NAME);
}

// Server notices ("relation already exists, skipping") would go to stderr by default.
static inline void CLibPQ_ignoreNotice(void *argument, const char *message) { (void)argument; (void)message; }
static inline void CLibPQ_silenceNotices(PGconn *connection) {
    PQsetNoticeProcessor(connection, CLibPQ_ignoreNotice, NULL);
}
#endif
