// Throw sites: where each thrown Swift error was thrown, kept so that a handled error's event can show it.
//
// The Swift runtime calls the `_swift_willThrow` hook (an atomic function pointer libswiftCore exports) on every
// `throw`, with the error's box (a `SwiftError` heap object; a typed throw is boxed for the hook). Ours records
// the throw's return addresses in a fixed table keyed by that box and chains to the hook installed before it.
// Everything here is normal code (never a signal handler).
#ifndef CLY_THROW_SITES_H
#define CLY_THROW_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Installs the hook once per process (later calls only turn recording back on), chaining to the hook already
/// installed (Swift Testing's, say). Needs libunwind (`cly_capture_prepare` first). Returns 0; ENOSYS when the
/// runtime has no `_swift_willThrow` or libunwind's `unw_backtrace` is missing.
int cly_throw_sites_install(void);

/// Turns recording on or off (the hook stays installed and keeps chaining; off, it records nothing).
void cly_throw_sites_set_enabled(bool enabled);

/// Whether throws are being recorded.
bool cly_throw_sites_enabled(void);

/// Whether the hook is installed (recording on or off).
bool cly_throw_sites_installed(void);

/// Copies the throw site of the error whose box is `box` into `frames` (at most `capacity`, innermost first:
/// return addresses, the first one into the function that threw). When the box was not seen, the throw site
/// of the last error the calling thread threw is taken if it has the same type (`type`: the error's dynamic
/// type metadata; a `catch let e as T` re-boxes the value it binds). Returns how many frames were copied (0:
/// none known). `*truncated` tells whether the stack went deeper than CLY_THROW_SITE_FRAMES.
int cly_throw_sites_find(const void *box, const void *type, uintptr_t *frames, int capacity, bool *truncated);

/// Test hook: the type metadata the recorder read from `box` (what cly_throw_sites_find compares).
const void *cly_test_throw_site_box_type(const void *box);

#ifdef __cplusplus
}
#endif

#endif
