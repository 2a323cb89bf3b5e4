// libunwind's local-only API (types and the `_UL<arch>_*` names). Headers only: the library is
// loaded privately at run time, never linked (see Package.swift).
#define UNW_LOCAL_ONLY 1
#include <libunwind.h>
