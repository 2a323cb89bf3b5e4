// elfutils libelf/libdw (0.188 on Debian 12) for CohorlySymbols, plus the two demanglers.
// Headers only; the libraries come from pkg-config `libdw` (-ldw -lelf) and libstdc++.
#ifndef COHORLY_CDWARF_SHIM_H
#define COHORLY_CDWARF_SHIM_H

#include <gelf.h>
#include <libelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>

// Exported by libswiftCore (stdlib/public/runtime/Demangle.cpp). `flags` must be 0. Returns NULL for a
// name that is not a Swift symbol; with `output == NULL` the result is malloc'd and the caller frees it.
char *swift_demangle(const char *mangledName, size_t mangledNameLength, char *outputBuffer,
                     size_t *outputBufferSize, uint32_t flags);

// The Swift backtracer's demangler (libswiftCore SPI since Swift 5.9, stdlib/public/runtime/Backtrace.cpp):
// Swift names with the runtime's SimplifiedUIDemangleOptions (no module names, no argument types, sugared types
// such as `Int?` and `[A]`, `specialized …`), C++ names through __cxa_demangle. Returns NULL for other names;
// with `outputBuffer == NULL` the result is malloc'd. Referenced strongly, so a `--static-swift-stdlib` link
// pulls it in from libswiftCore.a (a weak reference would not, and would silently read as NULL).
char *_swift_backtrace_demangle(const char *mangledName, size_t mangledNameLength, char *outputBuffer,
                                size_t *outputBufferSize);

// `_swift_backtrace_demangle(name, length)` into malloc'd memory, or NULL when the name is not mangled.
static inline char *cly_simplified_demangle(const char *name, size_t length) {
    return _swift_backtrace_demangle(name, length, NULL, NULL);
}

// The Itanium C++ ABI demangler (libstdc++). Returns a malloc'd string, or NULL with `*status != 0`.
char *__cxa_demangle(const char *mangledName, char *outputBuffer, size_t *length, int *status);

// ELF constants that are macros in <elf.h>, so Swift sees them with a fixed type.
static const uint32_t cly_nt_gnu_build_id = NT_GNU_BUILD_ID;
static const uint64_t cly_shf_compressed = SHF_COMPRESSED;
static const uint32_t cly_elfcompress_zlib = ELFCOMPRESS_ZLIB;

#endif
