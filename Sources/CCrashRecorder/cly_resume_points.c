// Swift resume points that have no unwind info of their own: the table the async walk (cly_async.c) consults
// when no FDE covers a context's ResumeParent.
//
// Why: the walk accepts a ResumeParent only where a function starts. Unwind info (an FDE starting exactly there)
// says so for every funclet swiftc emits into an app, but the toolchain's own Swift libraries lack FDEs for many
// of theirs: libswift_Concurrency.so of Swift 6.3.1 has none for 80 of its 556 resume funclets, among them
// `TaskLocal.withValueImpl`'s and `withTaskCancellationHandler`'s (the two every `withSpan`, `ServiceContext`,
// swift-log task-local and cancellation handler awaits through), and none for other Swift functions there
// either. Without another witness the chain ended at the first caller inside the runtime.
//
// The other witness is the symbol table, as for the Swift runtime's own backtracer, which decides that a frame is
// async by the name of the symbol holding it (a mangled Swift name ending in `TQ<n>_`, an await resume partial
// function, or `TY<n>_`, a suspend resume partial function). A resume point is accepted here when
//   - no FDE covers the address at all (the address lies in a gap of the unwind info: an address inside a
//     function that has an FDE is never a resume point), and
//   - a function symbol of the module that holds it starts exactly there, with such a name.
// The chain's other checks (aligned, readable contexts, no loop, at most CLY_MAX_ASYNC_FRAMES) stay as they are;
// nothing here invents a frame: every accepted address is the entry of a resume funclet the module names.
//
// What runs where:
//   - normal code, on a thread of its own ("cohorly-symbols", started by cly_resume_points_refresh at install,
//     at the first live capture, and when the module table sees libraries come or go): takes the loaded objects
//     from a copy of the module table (cly_modules.c; dl_iterate_phdr only before install has built one: this
//     thread never holds the loader's lock while a crash handler could wait for it), and for each one not
//     scanned yet reads its ELF file with pread — the file of the loaded object itself (/proc/self/exe for the
//     executable; any file only when its GNU build id is the mapped one, so a file replaced on disk is never
//     read as the loaded one, and an object without a build id is not scanned): the `.eh_frame_hdr` search table
//     (the FDE starts), then the `.symtab` (else `.dynsym`) function symbols that start where no FDE starts, and
//     of those the names of Swift resume funclets. Their addresses, sorted, are appended to a static pool as one
//     segment per module and published by an atomic count. Mapped memory of other objects is never read, so a
//     library unloaded meanwhile cannot make the scan fault. Its working memory is mapped for the scan and
//     unmapped after it (no malloc: no allocator arena for the thread, nothing kept resident once it is done).
//   - signal-safe (cly_resume_points_contains, in the walk): the segments published so far, each a sorted array
//     binary-searched; a segment whose module was unloaded is marked dead and skipped. Nothing is ever
//     rewritten once published, so a reader never sees a half-written entry.
// A crash before the scan of the module has finished (it ended 30-240 ms after install for CrashDemo on a
// machine loaded 17-fold; far sooner unloaded) walks as before (FDE starts only). Objects without a symbol table
// (stripped) add nothing.
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "cly_internal.h"

typedef struct {
    uintptr_t start;  // the module's extent (its PT_LOAD segments)
    uintptr_t end;
    uint32_t first;   // into `points`
    uint32_t count;
    atomic_int alive;  // 0 once the module is no longer loaded
    // The scanner's own bookkeeping (never read by the walk): the module it describes.
    uint8_t build_id_length;
    uint8_t build_id[32];
} segment;

static uintptr_t points[CLY_MAX_RESUME_POINTS];
static segment segments[CLY_MAX_RESUME_SEGMENTS];
static atomic_int published_segments;
static uint32_t points_used;  // the scanner's; never read by the walk

static atomic_int requested_generation;
static atomic_int completed_generation;
static atomic_int worker_pid;  // the process whose scanner runs now (0: none); a forked child has none

// ---- the walk's lookup (signal-safe) ----

bool cly_resume_points_contains(uintptr_t address) {
    int count = atomic_load_explicit(&published_segments, memory_order_acquire);
    for (int s = 0; s < count; s++) {
        const segment *seg = &segments[s];
        if (atomic_load_explicit(&seg->alive, memory_order_relaxed) == 0) continue;
        if (address - seg->start >= seg->end - seg->start) continue;
        uint32_t low = seg->first;
        uint32_t high = seg->first + seg->count;
        while (low < high) {
            uint32_t middle = low + (high - low) / 2;
            if (points[middle] < address) low = middle + 1;
            else high = middle;
        }
        if (low < seg->first + seg->count && points[low] == address) return true;
    }
    return false;
}

// ---- the scan (normal code, the scanner thread) ----

/// Working memory of the scan: anonymous pages, returned with scratch_free (pages are resident only once touched).
static void *scratch(size_t size) {
    void *memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return memory == MAP_FAILED ? NULL : memory;
}

static void scratch_free(void *memory, size_t size) {
    if (memory != NULL) munmap(memory, size);
}

/// Heap sort (qsort may allocate): `count` elements of `size` bytes (at most 16) ordered by `compare`.
static void sort(void *base, size_t count, size_t size, int (*compare)(const void *, const void *)) {
    char *bytes = base;
    char swap[16];
    for (size_t end = count, start = count / 2;;) {
        size_t root;
        if (start > 0) {
            root = --start;
        } else {
            if (end <= 1) return;
            end--;
            memcpy(swap, bytes, size);
            memcpy(bytes, bytes + end * size, size);
            memcpy(bytes + end * size, swap, size);
            root = 0;
        }
        for (size_t child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && compare(bytes + child * size, bytes + (child + 1) * size) < 0) child++;
            if (compare(bytes + root * size, bytes + child * size) >= 0) break;
            memcpy(swap, bytes + root * size, size);
            memcpy(bytes + root * size, bytes + child * size, size);
            memcpy(bytes + child * size, swap, size);
        }
    }
}

/// One loaded object, as the module table (or dl_iterate_phdr) describes it.
typedef struct {
    char path[CLY_MAX_PATH];
    uintptr_t start;  // the first PT_LOAD segment's page
    uintptr_t end;
    uint8_t build_id_length;
    uint8_t build_id[32];
} loaded_object;

typedef struct {
    loaded_object *objects;
    int count;
    int capacity;
    bool first;  // the next object dl_iterate_phdr reports is its first: the executable
} loaded_list;

static int list_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    loaded_list *list = data;
    if (list->count == list->capacity) return 1;
    loaded_object *object = &list->objects[list->count];
    // The executable's own file even when its path was replaced since it started.
    bool executable = list->first && (info->dlpi_name == NULL || info->dlpi_name[0] == 0);
    list->first = false;
    const char *path = executable ? "/proc/self/exe" : info->dlpi_name;
    if (path == NULL || path[0] != '/' || strlen(path) >= sizeof object->path) return 0;  // the vDSO, …
    memcpy(object->path, path, strlen(path) + 1);
    uintptr_t size_out = 0;
    cly_modules_extent(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &object->start, &size_out);
    object->end = object->start + size_out;
    object->build_id_length = (uint8_t)cly_modules_read_build_id(
        info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, object->build_id, (int)sizeof object->build_id);
    if (size_out > 0) list->count++;
    return 0;
}

static bool read_at(int fd, void *out, size_t size, uint64_t offset) {
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, (char *)out + done, size - done, (off_t)(offset + done));
        if (n <= 0) return false;
        done += (size_t)n;
    }
    return true;
}

/// Whether `name` is a Swift resume funclet's: a mangled name ending in `TQ<digits>_` or `TY<digits>_` (the test
/// the Swift runtime's backtracer applies to decide that a frame is async).
static bool is_resume_funclet_name(const char *name, size_t length) {
    if (length < 5 || name[length - 1] != '_') return false;
    if (!(name[0] == '$' && name[1] == 's') && !(name[0] == '_' && name[1] == '$' && name[2] == 's')) return false;
    size_t end = length - 1;
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') end--;
    return end >= 4 && name[end - 2] == 'T' && (name[end - 1] == 'Q' || name[end - 1] == 'Y');
}

/// A function symbol no FDE starts at: its name (an offset into the string table) is read later, in offset order.
typedef struct {
    uint64_t name;
    uintptr_t address;
} candidate;

static int compare_names(const void *a, const void *b) {
    uint64_t x = ((const candidate *)a)->name;
    uint64_t y = ((const candidate *)b)->name;
    return x < y ? -1 : x > y;
}

/// The string table, read through a window that moves forward: candidates sorted by name offset read each part of
/// the table once.
typedef struct {
    int fd;
    uint64_t offset;  // of the table in the file
    uint64_t size;
    char bytes[64 * 1024];
    uint64_t start;   // the window: table offsets [start, start + length)
    size_t length;
} string_window;

/// The name at `name` (NUL-terminated within the window), or NULL.
static const char *window_name(string_window *window, uint64_t name, size_t *length) {
    for (int attempt = 0; attempt < 2; attempt++) {
        if (name >= window->start && name < window->start + window->length) {
            size_t at = (size_t)(name - window->start);
            size_t n = strnlen(window->bytes + at, window->length - at);
            if (at + n < window->length) {
                *length = n;
                return window->bytes + at;
            }
        }
        if (attempt == 1 || name >= window->size) return NULL;  // longer than the window: not taken
        uint64_t available = window->size - name;
        window->length = available < sizeof window->bytes ? (size_t)available : sizeof window->bytes;
        window->start = name;
        if (!read_at(window->fd, window->bytes, window->length, window->offset + name)) {
            window->length = 0;
            return NULL;
        }
    }
    return NULL;
}

/// The sorted FDE start addresses (link-time addresses) of `.eh_frame_hdr`'s search table, when it has the
/// layout every linker here writes (a table of datarel sdata4 pairs), in scratch memory of `*count_out` * 8
/// bytes; NULL otherwise.
static int32_t *read_fde_starts(int fd, const ElfW(Phdr) *header, uint32_t *count_out, uintptr_t *base_out) {
    // version 1; the encodings of eh_frame_ptr, of fde_count (udata4) and of the table (datarel | sdata4); then
    // eh_frame_ptr, fde_count and the table of (initial location, FDE) pairs, sorted by location.
    enum { udata4 = 0x03, datarel_sdata4 = 0x3b };
    uint8_t head[16];
    if (header->p_filesz < sizeof head || !read_at(fd, head, sizeof head, header->p_offset)) return NULL;
    if (head[0] != 1 || head[2] != udata4 || head[3] != datarel_sdata4) return NULL;
    int format = head[1] & 0x0f;  // eh_frame_ptr's size: 4 (u/sdata4) or 8 (absptr, u/sdata8)
    size_t pointer_size = format == 0x03 || format == 0x0b                     ? 4
                          : format == 0x00 || format == 0x04 || format == 0x0c ? 8
                                                                               : 0;
    if (pointer_size == 0) return NULL;
    uint32_t count = 0;
    memcpy(&count, head + 4 + pointer_size, sizeof count);
    uint64_t table_offset = 4 + pointer_size + 4;
    if (count == 0 || table_offset + (uint64_t)count * 8 > header->p_filesz) return NULL;
    int32_t *pairs = scratch((size_t)count * 8);
    if (pairs == NULL) return NULL;
    if (!read_at(fd, pairs, (size_t)count * 8, header->p_offset + table_offset)) {
        scratch_free(pairs, (size_t)count * 8);
        return NULL;
    }
    *count_out = count;
    *base_out = header->p_vaddr;
    return pairs;
}

/// Whether an FDE starts at link-time address `address` (binary search of the (start, fde) pairs).
static bool fde_starts_at(const int32_t *pairs, uint32_t count, uintptr_t base, uintptr_t address) {
    int64_t target = (int64_t)address - (int64_t)base;
    if (target < INT32_MIN || target > INT32_MAX) return false;
    uint32_t low = 0;
    uint32_t high = count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (pairs[2 * middle] < target) low = middle + 1;
        else high = middle;
    }
    return low < count && pairs[2 * low] == (int32_t)target;
}

static int compare_addresses(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a;
    uintptr_t y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/// Whether the file's build id (or, when the loaded object has none, its program headers) is the loaded one's.
static bool file_is_loaded_object(int fd, const ElfW(Phdr) *phdrs, int count, const loaded_object *object) {
    uint8_t id[32];
    int length = 0;
    for (int i = 0; i < count && length == 0; i++) {
        if (phdrs[i].p_type != PT_NOTE || phdrs[i].p_filesz == 0 || phdrs[i].p_filesz > 4096) continue;
        uint8_t notes[4096];
        if (!read_at(fd, notes, phdrs[i].p_filesz, phdrs[i].p_offset)) continue;
        ElfW(Phdr) note = phdrs[i];
        note.p_vaddr = 0;
        note.p_memsz = note.p_filesz;
        length = cly_modules_read_build_id((uintptr_t)notes, &note, 1, id, (int)sizeof id);
    }
    return length > 0 && length == object->build_id_length && memcmp(id, object->build_id, (size_t)length) == 0;
}

/// Appends the resume funclets of one loaded object that no FDE starts at, sorted, to `points` (from
/// `points_used`); returns how many (0 when none, or when they do not fit).
static uint32_t scan_object(const loaded_object *object) {
    int fd = open(object->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint32_t found_count = 0;
    candidate *candidates = NULL;
    size_t candidates_size = 0;
    uint32_t candidate_count = 0;
    string_window *window = NULL;
    int32_t *fdes = NULL;
    uint32_t fde_count = 0;
    ElfW(Shdr) *sections = NULL;
    size_t sections_size = 0;
    enum { chunk = 2048 };
    ElfW(Sym) *symbols = NULL;
    ElfW(Ehdr) header;
    ElfW(Phdr) phdrs[64];
    if (!read_at(fd, &header, sizeof header, 0) || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 || header.e_phnum > 64 ||
        header.e_shentsize != sizeof(ElfW(Shdr)) || header.e_shnum == 0 ||
        !read_at(fd, phdrs, (size_t)header.e_phnum * sizeof(ElfW(Phdr)), header.e_phoff) ||
        !file_is_loaded_object(fd, phdrs, header.e_phnum, object))
        goto done;
    // The load bias: the object starts at the page of its lowest PT_LOAD segment (as cly_modules_extent says).
    uintptr_t lowest = UINTPTR_MAX;
    for (int i = 0; i < header.e_phnum; i++)
        if (phdrs[i].p_type == PT_LOAD && (phdrs[i].p_vaddr & ~(uintptr_t)0xfff) < lowest)
            lowest = phdrs[i].p_vaddr & ~(uintptr_t)0xfff;
    if (lowest == UINTPTR_MAX || lowest > object->start) goto done;
    uintptr_t bias = object->start - lowest;
    uintptr_t fde_base = 0;
    for (int i = 0; i < header.e_phnum && fdes == NULL; i++)
        if (phdrs[i].p_type == PT_GNU_EH_FRAME) fdes = read_fde_starts(fd, &phdrs[i], &fde_count, &fde_base);
    sections_size = (size_t)header.e_shnum * sizeof(ElfW(Shdr));
    sections = scratch(sections_size);
    if (sections == NULL || !read_at(fd, sections, sections_size, header.e_shoff)) goto done;
    const ElfW(Shdr) *table = NULL;
    for (int pass = 0; pass < 2 && table == NULL; pass++)
        for (int i = 0; i < header.e_shnum && table == NULL; i++)
            if (sections[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) table = &sections[i];
    if (table == NULL || table->sh_link >= header.e_shnum || table->sh_entsize != sizeof(ElfW(Sym)) ||
        sections[table->sh_link].sh_type != SHT_STRTAB)
        goto done;
    const ElfW(Shdr) *strings = &sections[table->sh_link];
    uint64_t total = table->sh_size / sizeof(ElfW(Sym));
    if (total == 0 || total > UINT32_MAX) goto done;
    symbols = scratch(chunk * sizeof(ElfW(Sym)));
    candidates_size = (size_t)total * sizeof(candidate);  // at most one per symbol; touched only as filled
    candidates = scratch(candidates_size);
    if (symbols == NULL || candidates == NULL) goto done;
    for (uint64_t at = 0; at < total; at += chunk) {
        size_t n = total - at < chunk ? (size_t)(total - at) : chunk;
        if (!read_at(fd, symbols, n * sizeof(ElfW(Sym)), table->sh_offset + at * sizeof(ElfW(Sym)))) break;
        for (size_t i = 0; i < n; i++) {
            const ElfW(Sym) *symbol = &symbols[i];
            if (ELF64_ST_TYPE(symbol->st_info) != STT_FUNC || symbol->st_shndx == SHN_UNDEF || symbol->st_value == 0)
                continue;
            uintptr_t address = bias + symbol->st_value;
            if (address - object->start >= object->end - object->start) continue;
            // Unwind info says where functions start: a function it knows needs no other witness.
            if (fdes != NULL && fde_starts_at(fdes, fde_count, fde_base, symbol->st_value)) continue;
            candidates[candidate_count++] = (candidate){symbol->st_name, address};
        }
    }
    if (candidate_count == 0) goto done;
    sort(candidates, candidate_count, sizeof *candidates, compare_names);
    window = scratch(sizeof *window);
    if (window == NULL) goto done;
    *window = (string_window){.fd = fd, .offset = strings->sh_offset, .size = strings->sh_size};
    // The addresses found go to the front of `candidates` (each write is at or before the entry it reads).
    uintptr_t *found = (uintptr_t *)(void *)candidates;
    for (uint32_t i = 0; i < candidate_count; i++) {
        size_t length = 0;
        uintptr_t address = candidates[i].address;
        const char *name = window_name(window, candidates[i].name, &length);
        if (name != NULL && is_resume_funclet_name(name, length)) found[found_count++] = address;
    }
    if (found_count > 0) {
        sort(found, found_count, sizeof *found, compare_addresses);
        uint32_t unique = 1;
        for (uint32_t i = 1; i < found_count; i++)
            if (found[i] != found[unique - 1]) found[unique++] = found[i];
        found_count = unique;
        if (found_count <= CLY_MAX_RESUME_POINTS - points_used)
            memcpy(&points[points_used], found, found_count * sizeof *found);
        else
            found_count = 0;  // full: the module adds nothing
    }
done:
    scratch_free(window, sizeof *window);
    scratch_free(candidates, candidates_size);
    scratch_free(symbols, chunk * sizeof(ElfW(Sym)));
    scratch_free(sections, sections_size);
    scratch_free(fdes, (size_t)fde_count * 8);
    close(fd);
    return found_count;
}

static bool same_object(const segment *seg, const loaded_object *object) {
    return seg->start == object->start && seg->end == object->end && seg->build_id_length == object->build_id_length &&
           memcmp(seg->build_id, object->build_id, object->build_id_length) == 0;
}

static void scan_loaded_objects(void) {
    size_t list_size = CLY_MAX_MODULES * sizeof(loaded_object);
    loaded_list list = {scratch(list_size), 0, CLY_MAX_MODULES, true};
    cly_module_table *table = scratch(sizeof *table);
    if (list.objects == NULL || table == NULL) {
        scratch_free(list.objects, list_size);
        scratch_free(table, sizeof *table);
        return;
    }
    if (cly_modules_copy(table)) {
        for (int i = 0; i < table->count && i < CLY_MAX_MODULES; i++) {
            const cly_module *module = &table->modules[i];
            if (module->path_offset >= CLY_MODULE_PATH_POOL || module->size == 0) continue;
            // The first is the executable: its own file even when its path was replaced since it started.
            const char *path = i == 0 ? "/proc/self/exe" : table->pool + module->path_offset;
            loaded_object *object = &list.objects[list.count];
            size_t length = strnlen(path, sizeof object->path);
            if (path[0] != '/' || length == sizeof object->path) continue;  // the vDSO, …
            memcpy(object->path, path, length + 1);
            object->start = module->base;
            object->end = module->base + module->size;
            object->build_id_length = module->build_id_length;
            memcpy(object->build_id, module->build_id, sizeof object->build_id);
            list.count++;
        }
    } else {
        dl_iterate_phdr(list_object, &list);  // before install (live captures alone): no crash handler to wait
    }
    scratch_free(table, sizeof *table);
    int existing = atomic_load(&published_segments);
    // Modules gone since the last scan: their segments no longer answer (one loaded again is scanned anew).
    for (int s = 0; s < existing; s++) {
        bool loaded = false;
        for (int i = 0; i < list.count && !loaded; i++) loaded = same_object(&segments[s], &list.objects[i]);
        if (!loaded) atomic_store(&segments[s].alive, 0);
    }
    for (int i = 0; i < list.count; i++) {
        if (atomic_load(&cly_crash_started) != 0) break;
        const loaded_object *object = &list.objects[i];
        int count = atomic_load(&published_segments);
        bool scanned = false;
        for (int s = 0; s < count && !scanned; s++)
            scanned = atomic_load(&segments[s].alive) != 0 && same_object(&segments[s], object);
        if (scanned || count == CLY_MAX_RESUME_SEGMENTS) continue;
        uint32_t found_count = scan_object(object);  // written to points[points_used...], not yet published
        segment *seg = &segments[count];
        seg->start = object->start;
        seg->end = object->end;
        seg->first = points_used;
        seg->count = found_count;
        seg->build_id_length = object->build_id_length;
        memcpy(seg->build_id, object->build_id, sizeof seg->build_id);
        points_used += found_count;
        atomic_store(&seg->alive, 1);
        atomic_store_explicit(&published_segments, count + 1, memory_order_release);
    }
    scratch_free(list.objects, list_size);
}

static void *scanner(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "cohorly-symbols");
    for (;;) {
        int target = atomic_load(&requested_generation);
        scan_loaded_objects();
        atomic_store(&completed_generation, target);
        cly_futex_wake(&completed_generation);
        if (atomic_load(&requested_generation) != target) continue;
        atomic_store(&worker_pid, 0);
        // A request made between the check and the store saw this thread running: take it over, unless a
        // scanner started for it meanwhile.
        if (atomic_load(&requested_generation) == target) break;
        int expected = 0;
        if (!atomic_compare_exchange_strong(&worker_pid, &expected, (int)getpid())) break;
    }
    return NULL;
}

void cly_resume_points_refresh(void) {
    atomic_fetch_add(&requested_generation, 1);
    int pid = (int)getpid();
    int running = atomic_load(&worker_pid);
    if (running != 0 && running != pid) atomic_compare_exchange_strong(&worker_pid, &running, 0);  // forked
    int expected = 0;
    if (!atomic_compare_exchange_strong(&worker_pid, &expected, pid)) return;  // the scanner will see the request
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, scanner, NULL) != 0) atomic_store(&worker_pid, 0);
    pthread_attr_destroy(&attributes);
}

bool cly_test_wait_resume_points(uint32_t timeout_ms) {
    uint64_t deadline = cly_monotonic_ns() + (uint64_t)timeout_ms * 1000000ull;
    for (;;) {
        int target = atomic_load(&requested_generation);
        int done = atomic_load(&completed_generation);
        if (target != 0 && done - target >= 0) return true;
        uint64_t now = cly_monotonic_ns();
        if (now >= deadline) return false;
        cly_futex_wait(&completed_generation, done, deadline - now);
    }
}

int32_t cly_test_resume_point_count(void) {
    int count = atomic_load(&published_segments);
    int32_t total = 0;
    for (int s = 0; s < count; s++)
        if (atomic_load(&segments[s].alive) != 0) total += (int32_t)segments[s].count;
    return total;
}

int32_t cly_test_resume_points_list(uintptr_t *out, int32_t capacity) {
    int count = atomic_load_explicit(&published_segments, memory_order_acquire);
    int32_t written = 0;
    for (int s = 0; s < count; s++) {
        if (atomic_load(&segments[s].alive) == 0) continue;
        for (uint32_t i = 0; i < segments[s].count && written < capacity; i++)
            out[written++] = points[segments[s].first + i];
    }
    return written;
}
