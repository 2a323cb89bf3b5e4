// elfutils' libdebuginfod for Swift, loaded on first use (see cly_library_loader.h): it links its own libcurl
// (the GnuTLS build) and the TLS stack behind it, which a symbolicator needs only when DEBUGINFOD_URLS is set.
// <elfutils/debuginfod.h> is included for its types only; the library is not linked.
#ifndef CLY_DEBUGINFOD_H
#define CLY_DEBUGINFOD_H

#include <elfutils/debuginfod.h>

/// NULL once libdebuginfod is loaded, else why it cannot be.
const char *cly_debuginfod_load_error(void);
/// `debuginfod_begin`, or NULL when the library cannot be loaded.
debuginfod_client *cly_debuginfod_begin(void);
void cly_debuginfod_end(debuginfod_client *client);
/// Makes every transfer of `client` still running `milliseconds` from now give up (libdebuginfod checks about
/// once a second, whether data arrives or not). Replaces any earlier deadline. Returns 0 when out of memory.
int cly_debuginfod_set_deadline(debuginfod_client *client, long long milliseconds);
int cly_debuginfod_find_debuginfo(debuginfod_client *client, const unsigned char *build_id, int build_id_length,
                                  char **path);
int cly_debuginfod_find_executable(debuginfod_client *client, const unsigned char *build_id, int build_id_length,
                                   char **path);

#endif
