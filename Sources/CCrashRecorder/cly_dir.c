// Listing a directory inside the crash handler: opendir/readdir may allocate, so the raw getdents64 syscall
// reads entries into a stack buffer. Signal-safe: open, getdents64, close.
#include <fcntl.h>

#include "cly_internal.h"

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

int cly_list_directory(const char *path, cly_directory_visitor visit, void *context) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    char entries[4096] __attribute__((aligned(8)));
    for (;;) {
        long n = syscall(SYS_getdents64, fd, entries, sizeof entries);
        if (n <= 0) break;
        for (long offset = 0; offset < n;) {
            struct linux_dirent64 *entry = (struct linux_dirent64 *)(entries + offset);
            offset += entry->d_reclen;
            visit(entry->d_name, context);
        }
    }
    close(fd);
    return 0;
}
