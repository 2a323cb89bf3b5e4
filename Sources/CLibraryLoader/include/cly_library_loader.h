// Loading a shared library on first use (dlopen) instead of at program start (DT_NEEDED).
//
// libcurl, libmicrohttpd and libdebuginfod pull in about thirty more libraries (TLS, Kerberos, LDAP, IDN, …);
// linked normally, every process using Cohorly — and every run of the `cohorly` CLI, even one that only reads
// ELF files — pays to map and relocate them at exec (`cohorly --version`: 14.3 ms linked, 6.4 ms without them
// on the reference machine). Each wrapper target (CCurl, CMicroHTTPD, CDebuginfod, CZstd, CCrypto) loads its
// library through this once, when a function of it is first called, and reports a missing library as an error
// instead of failing to start.
#ifndef CLY_LIBRARY_LOADER_H
#define CLY_LIBRARY_LOADER_H

#include <stdatomic.h>
#include <stddef.h>

/// Opens `soname` (RTLD_NOW | RTLD_LOCAL: its symbols stay private to us) and resolves the `count` symbols
/// named in `names` into `slots`. Returns 1 on success. On failure returns 0, leaves every slot NULL and
/// writes why (dlerror's text, or the missing symbol) into `error`.
int cly_library_load(const char *soname, const char *const *names, void **slots, size_t count, char *error,
                     size_t error_size);

/// A library loaded on first use: its soname and the symbols to resolve, then the state
/// `cly_library_ready` keeps. Declare one per library as a static with the first five fields set.
struct cly_library {
    const char *soname;
    const char *const *names;
    void **slots;  // `count` entries, filled in the order of `names`
    size_t count;
    /// Run once after the symbols are resolved (may be NULL): returns 0, with why in `error`, when the library
    /// cannot be used after all (libcurl: `curl_global_init` failed).
    int (*initialize)(struct cly_library *library);
    _Atomic int state;  // 0: not tried yet, 1: usable, 2: failed (see `error`)
    char error[512];
};

/// Loads the library the first time it is asked for (from any thread; the others wait) and says whether it is
/// usable. Later calls are one atomic load.
int cly_library_ready(struct cly_library *library);

#endif
