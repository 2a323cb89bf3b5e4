// Install's memory probe: resident memory measured between the steps of install, for `scripts/bench-crash`.
//
// Off unless a benchmark turns it on (cly_test_probe_enable); then each cly_test_probe_mark reads
// /proc/self/smaps_rollup (open/read/close into a static buffer: the probe itself adds no resident memory
// after its first read) and keeps the step's name with the Rss and Anonymous figures. With a directory it
// also copies /proc/self/smaps there at every step, so the growth can be attributed mapping by mapping.
// Normal code only (never the crash path).
#include <fcntl.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_recorder.h"

#define PROBE_STEPS 32

static bool enabled;
static char smaps_directory[CLY_MAX_PATH];
static char buffer[8192];
static const char *names[PROBE_STEPS];
static uint64_t rss_kib[PROBE_STEPS];
static uint64_t anonymous_kib[PROBE_STEPS];
static int count;

/// The value in kB of the line starting with `key` in the smaps_rollup text, or 0.
static uint64_t field(const char *text, const char *key) {
    const char *line = strstr(text, key);
    if (line == NULL) return 0;
    line += strlen(key);
    while (*line == ' ' || *line == '\t') line++;
    uint64_t value = 0;
    for (; *line >= '0' && *line <= '9'; line++) value = value * 10 + (uint64_t)(*line - '0');
    return value;
}

static void read_rollup(uint64_t *rss, uint64_t *anonymous) {
    *rss = 0;
    *anonymous = 0;
    int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (n <= 0) return;
    buffer[n] = 0;
    *rss = field(buffer, "\nRss:");
    *anonymous = field(buffer, "\nAnonymous:");
}

static void copy_smaps(int index, const char *step) {
    char path[CLY_MAX_PATH + 64];
    size_t n = strlen(smaps_directory);
    memcpy(path, smaps_directory, n);
    path[n++] = '/';
    path[n++] = (char)('0' + index / 10);
    path[n++] = (char)('0' + index % 10);
    path[n++] = '-';
    for (const char *s = step; *s && n + 8 < sizeof path; s++) path[n++] = *s == '/' ? '_' : *s;
    memcpy(path + n, ".smaps", 7);
    int in = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (in >= 0 && out >= 0) {
        ssize_t got;
        while ((got = read(in, buffer, sizeof buffer)) > 0)
            if (write(out, buffer, (size_t)got) != got) break;
    }
    if (in >= 0) close(in);
    if (out >= 0) close(out);
}

void cly_test_probe_enable(const char *directory) {
    smaps_directory[0] = 0;
    if (directory != NULL && strlen(directory) < sizeof smaps_directory)
        memcpy(smaps_directory, directory, strlen(directory) + 1);
    uint64_t rss, anonymous;
    read_rollup(&rss, &anonymous);  // touches the probe's own buffer before the first step
    count = 0;
    enabled = true;
}

void cly_test_probe_mark(const char *step) {
    if (!enabled || count == PROBE_STEPS) return;
    int index = count++;
    names[index] = step;
    read_rollup(&rss_kib[index], &anonymous_kib[index]);
    if (smaps_directory[0] != 0) copy_smaps(index, step);
}

int cly_test_probe_count(void) { return count; }

const char *cly_test_probe_step(int index, uint64_t *rss, uint64_t *anonymous) {
    if (index < 0 || index >= count) return NULL;
    *rss = rss_kib[index];
    *anonymous = anonymous_kib[index];
    return names[index];
}
