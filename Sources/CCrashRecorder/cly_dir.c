// Listing a directory inside the crash handler: opendir/readdir may allocate, so the raw getdents64 syscall
// reads entries into a stack buffer. Signal-safe: open, getdents64, fstatat (only for file systems that do
// not report entry types; on the POSIX.1-2008 async-signal-safe list), close.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

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
            bool regular = entry->d_type == DT_REG;
            if (entry->d_type == DT_UNKNOWN) {
                struct stat info;
                regular = fstatat(fd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode);
            }
            visit(entry->d_name, regular, context);
        }
    }
    close(fd);
    return 0;
}
