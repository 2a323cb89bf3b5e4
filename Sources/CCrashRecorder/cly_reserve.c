// The report's reserved space: a full disk must not lose the crash.
//
// At install (cly_reserve_make, normal code) the recorder makes `reserve-<insert id>.space` (0600) in the report
// directory and allocates CLY_MAX_REPORT_BYTES for it with fallocate(FALLOC_FL_KEEP_SIZE): the blocks are the
// file's, its size stays 0. When the file system cannot give that much, half is tried, down to
// CLY_MIN_REPORT_RESERVE. This runs before the launch marker is made (CohorlyCrash makes it after install), so on
// a nearly full disk the report wins the space. The descriptor stays open (close-on-exec) with an exclusive flock:
// a later launch that can take the lock knows the reserve's launch has ended and removes the file.
//
// The client's queue is made before install (the app creates the `Cohorly` client that install takes), so the
// client calls cly_reserve_before_queue_opens first (CStartupHooks, a weak reference: only when this recorder is
// linked): the reserve is made in the queue's directory before its SQLite files are, taking at most half of what
// the file system has free (the queue still gets the other half; at tens of KiB free both are small, and a report
// of a few KiB still holds its header and crashed thread). Install then moves it into the report directory with
// rename(2) — the blocks go with it — or, on another file system, drops it and reserves there instead.
//
// At crash time (cly_reserve_take, in the handler): rename(2) the reserve to the report's `.tmp` name and return
// its open descriptor; the writer fills the allocated blocks from offset 0 (no new block is needed while it stays
// within the reservation), then cuts the file to what it wrote. Async-signal-safe: rename, getpid, an atomic
// exchange. A normal exit removes the reserve (atexit, only in the process that made it).
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>  // for the rename(2) prototype only: no stdio stream is used
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cly_internal.h"

static char reserve_path[CLY_MAX_PATH + 64];
static int reserve_fd = -1;
static size_t reserved_bytes;
static atomic_int owner_pid;  // 0: no reserve (none made, taken by a crash, or removed at exit)
static bool exit_hook_registered;
static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;  // normal code only: the client's hook and install

static void at_exit(void) {
    int expected = (int)getpid();
    if (atomic_compare_exchange_strong(&owner_pid, &expected, 0)) unlink(reserve_path);
}

static bool is_reserve_name(const char *name) {
    size_t length = strlen(name);
    return length > 14 && strncmp(name, "reserve-", 8) == 0 && strcmp(name + length - 6, ".space") == 0;
}

/// Removes the reserves of launches that have ended (their lock is free).
static void remove_stale(const char *name, bool regular_file, void *context) {
    const char *directory = context;
    if (!regular_file || !is_reserve_name(name)) return;
    char path[CLY_MAX_PATH + 300];
    size_t n = strlen(directory);
    if (n + strlen(name) + 2 > sizeof path) return;
    memcpy(path, directory, n);
    path[n++] = '/';
    strcpy(path + n, name);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) unlink(path);
    close(fd);
}

/// `<directory>/reserve-<insert id>.space` into `path`; false when it does not fit.
static bool reserve_name(char *path, size_t size, const char *directory) {
    size_t n = strlen(directory);
    if (n + 60 > size) return false;
    memcpy(path, directory, n);
    memcpy(path + n, "/reserve-", 9);
    memcpy(path + n + 9, cly_insert_id_for_crash(), 36);
    memcpy(path + n + 45, ".space", 7);
    return true;
}

/// Moves this process's reserve (made before the queue opened) into `directory`, under this launch's insert id;
/// when it cannot be moved there (another file system, a removed directory), frees it. Called with make_lock held.
/// The handler cannot take it meanwhile (owner_pid is 0 until it is in place).
static size_t move_reserve(const char *directory) {
    int expected = (int)getpid();
    if (!atomic_compare_exchange_strong(&owner_pid, &expected, 0)) return 0;
    char moved[sizeof reserve_path];
    if (reserve_name(moved, sizeof moved, directory) && rename(reserve_path, moved) == 0) {
        memcpy(reserve_path, moved, sizeof moved);
        atomic_store(&owner_pid, (int)getpid());
        return reserved_bytes;
    }
    unlink(reserve_path);
    close(reserve_fd);
    reserve_fd = -1;
    reserved_bytes = 0;
    return 0;
}

/// Makes this launch's reserve in `directory`; with `half_of_free`, of at most half of what its file system has
/// free.
static size_t make_reserve(const char *directory, bool half_of_free) {
    cly_list_directory(directory, remove_stale, (void *)directory);
    if (!reserve_name(reserve_path, sizeof reserve_path, directory)) return 0;
    int fd = open(reserve_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    fchmod(fd, 0600);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        unlink(reserve_path);
        return 0;
    }
    size_t size = CLY_MAX_REPORT_BYTES;
    struct statfs info;
    if (half_of_free && fstatfs(fd, &info) == 0) {
        uint64_t half = (uint64_t)info.f_bavail * (uint64_t)info.f_bsize / 2;
        while (size >= 2 * CLY_MIN_REPORT_RESERVE && size > half) size /= 2;
    }
    while (size >= CLY_MIN_REPORT_RESERVE && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size) != 0) {
        if (errno != ENOSPC && errno != EDQUOT) {
            size = 0;  // not supported here (or failing otherwise): the writer sizes the report to the free space
            break;
        }
        size /= 2;
    }
    if (size < CLY_MIN_REPORT_RESERVE) size = 0;
    reserve_fd = fd;
    reserved_bytes = size;
    atomic_store(&owner_pid, (int)getpid());
    if (!exit_hook_registered) {
        exit_hook_registered = true;
        atexit(at_exit);
    }
    return size;
}

size_t cly_reserve_make(const char *directory) {
    pthread_mutex_lock(&make_lock);
    size_t size = 0;
    if (atomic_load(&owner_pid) == (int)getpid()) {
        cly_list_directory(directory, remove_stale, (void *)directory);  // its own flock keeps the early one
        size = move_reserve(directory);
    }
    if (atomic_load(&owner_pid) != (int)getpid()) size = make_reserve(directory, false);
    pthread_mutex_unlock(&make_lock);
    return size;
}

void cly_reserve_before_queue_opens(const char *directory) {
    pthread_mutex_lock(&make_lock);
    if (atomic_load(&owner_pid) != (int)getpid()) make_reserve(directory, true);
    pthread_mutex_unlock(&make_lock);
}

int cly_reserve_take(const char *path, size_t *capacity) {
    *capacity = 0;
    int expected = (int)getpid();
    if (!atomic_compare_exchange_strong(&owner_pid, &expected, 0)) return -1;  // none, or a forked child
    if (rename(reserve_path, path) != 0) return -1;
    *capacity = reserved_bytes;
    return reserve_fd;
}
