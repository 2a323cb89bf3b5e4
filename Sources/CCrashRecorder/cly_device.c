// Device facts for the crash-time context: OS release, kernel, architecture, host name, app name and start.
//
// Read once at install (normal code, never the crash path) with plain open/read and byte loops into fixed
// buffers. The same facts could be gathered in Swift (the client's AutomaticProperties does it for its own
// events, and DeviceInfoTests checks both agree), but here they cost install no Swift string machinery: the
// generic split/dictionary/integer-parsing code that first use pages in is ~200 KiB of resident memory, more
// than the recorder's own tables.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/utsname.h>

#include "cly_internal.h"
#include "cly_recorder.h"
#include "cly_writer.h"

/// Reads up to `size - 1` bytes of a small file; returns the length (0 when it cannot be read).
static size_t read_file(const char *path, char *out, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        out[0] = 0;
        return 0;
    }
    size_t total = 0;
    while (total + 1 < size) {
        ssize_t n = read(fd, out + total, size - 1 - total);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        total += (size_t)n;
    }
    close(fd);
    out[total] = 0;
    return total;
}

static void copy_value(char *out, size_t size, const char *value, size_t length) {
    if (length >= size) length = size - 1;
    memcpy(out, value, length);
    out[length] = 0;
}

/// `KEY=value` lines of os-release: the value with blanks trimmed and one pair of matching quotes removed.
/// A later line overrides an earlier one with the same key (as the client's parser does).
static void parse_os_release(const char *text, size_t length, cly_device_facts *out) {
    char version_id[sizeof out->os_version] = {0};
    char build_id[sizeof out->os_version] = {0};
    const char *end = text + length;
    for (const char *line = text; line < end;) {
        const char *line_end = memchr(line, '\n', (size_t)(end - line));
        if (line_end == NULL) line_end = end;
        const char *equals = memchr(line, '=', (size_t)(line_end - line));
        if (equals != NULL && line[0] != '#') {
            const char *value = equals + 1;
            const char *value_end = line_end;
            while (value < value_end && (*value == ' ' || *value == '\t')) value++;
            while (value_end > value && (value_end[-1] == ' ' || value_end[-1] == '\t')) value_end--;
            if (value_end - value >= 2 && (*value == '"' || *value == '\'') && value_end[-1] == *value) {
                value++;
                value_end--;
            }
            size_t key_length = (size_t)(equals - line);
            size_t value_length = (size_t)(value_end - value);
            if (key_length == 10 && memcmp(line, "VERSION_ID", 10) == 0)
                copy_value(version_id, sizeof version_id, value, value_length);
            else if (key_length == 8 && memcmp(line, "BUILD_ID", 8) == 0)
                copy_value(build_id, sizeof build_id, value, value_length);
            else if (key_length == 4 && memcmp(line, "NAME", 4) == 0)
                copy_value(out->os_distribution, sizeof out->os_distribution, value, value_length);
        }
        line = line_end + 1;
    }
    const char *version = version_id[0] != 0 ? version_id : build_id;
    copy_value(out->os_version, sizeof out->os_version, version, strlen(version));
}

/// The `index`-th space-separated field (from 0) after `text`, parsed as a decimal number; false when missing.
static bool field_number(const char *text, int index, uint64_t *value) {
    const char *c = text;
    for (int field = 0;; field++) {
        while (*c == ' ') c++;
        if (*c == 0) return false;
        if (field == index) break;
        while (*c != ' ' && *c != 0) c++;
    }
    if (*c < '0' || *c > '9') return false;
    uint64_t number = 0;
    for (; *c >= '0' && *c <= '9'; c++) number = number * 10 + (uint64_t)(*c - '0');
    *value = number;
    return true;
}

/// When this process started (unix ms): its start time in clock ticks after boot (field 22 of
/// /proc/self/stat, the 20th after the command name) plus the boot time (`btime` of /proc/stat).
static uint64_t start_milliseconds(void) {
    char text[4096];
    if (read_file("/proc/self/stat", text, sizeof text) == 0) return 0;
    const char *close_paren = strrchr(text, ')');
    uint64_t ticks = 0;
    if (close_paren == NULL || !field_number(close_paren + 1, 19, &ticks)) return 0;
    if (read_file("/proc/stat", text, sizeof text) == 0) return 0;
    const char *line = strstr(text, "\nbtime ");
    uint64_t boot_seconds = 0;
    if (line == NULL || !field_number(line + 7, 0, &boot_seconds)) return 0;
    long per_second = sysconf(_SC_CLK_TCK);
    if (per_second < 1) per_second = 1;
    return boot_seconds * 1000 + ticks * 1000 / (uint64_t)per_second;
}

void cly_device_facts_read(const char *os_release_path, cly_device_facts *out) {
    // Static, not on the stack: only the pages the file fills become resident.
    static char text[65536];
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&lock);
    size_t length = read_file(os_release_path, text, sizeof text);
    parse_os_release(text, length, out);
    pthread_mutex_unlock(&lock);
    struct utsname names;
    if (uname(&names) == 0) {
        out->has_uname = true;
        copy_value(out->kernel_version, sizeof out->kernel_version, names.release, strlen(names.release));
        copy_value(out->arch, sizeof out->arch, names.machine, strlen(names.machine));
        copy_value(out->hostname, sizeof out->hostname, names.nodename, strlen(names.nodename));
    }
    // glibc's program_invocation_short_name: argv[0] after its last '/'.
    const char *name = program_invocation_short_name != NULL ? program_invocation_short_name : "";
    copy_value(out->app_name, sizeof out->app_name, name, strlen(name));
    out->start_ms = start_milliseconds();
}

size_t cly_device_facts_json(const cly_device_facts *facts, const char *lib, const char *lib_version, char *out,
                             size_t capacity) {
    if (capacity < 3) {
        if (capacity > 0) out[0] = 0;
        return 0;
    }
    // No descriptor: the writer never flushes while the output fits, and marks itself failed when it would.
    cly_writer w;
    cly_writer_init(&w, -1, out, capacity - 1, capacity - 1);
    cly_writer_begin_object(&w, NULL);
    cly_writer_string(&w, "$app_name", facts->app_name, sizeof facts->app_name);
    if (facts->start_ms > 0) cly_writer_uint(&w, "$app_start_ms", facts->start_ms);
    if (facts->has_uname) cly_writer_string(&w, "$arch", facts->arch, sizeof facts->arch);
    cly_writer_string(&w, "$hostname", facts->hostname, sizeof facts->hostname);
    if (facts->has_uname)
        cly_writer_string(&w, "$kernel_version", facts->kernel_version, sizeof facts->kernel_version);
    cly_writer_string(&w, "$lib", lib, 256);
    cly_writer_string(&w, "$lib_version", lib_version, 256);
    cly_writer_string(&w, "$os", "Linux", 8);
    if (facts->os_distribution[0] != 0)
        cly_writer_string(&w, "$os_distribution", facts->os_distribution, sizeof facts->os_distribution);
    if (facts->os_version[0] != 0)
        cly_writer_string(&w, "$os_version", facts->os_version, sizeof facts->os_version);
    cly_writer_end_object(&w);
    if (w.failed || w.used < 2) {
        out[0] = 0;
        return 0;
    }
    // The members without the braces.
    size_t length = w.used - 2;
    memmove(out, out + 1, length);
    out[length] = 0;
    return length;
}

