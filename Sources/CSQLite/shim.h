// SQLite for Swift. `SQLITE_TRANSIENT` is a cast macro that does not import: use `cly_sqlite_bind_text`.
#include <sqlite3.h>

static inline int cly_sqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
