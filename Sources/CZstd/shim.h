// libzstd for Swift (Debian libzstd-dev): the PostHog symbol-set payload is zstd-compressed.
#include <zstd.h>
