// The module table: every loaded ELF object with its load base, size and GNU build id.
//
// Built in normal code with dl_iterate_phdr (which takes the loader lock, so never in the handler) at
// install and again whenever the loader's add/sub counters change (cly_refresh_modules). Two static tables:
// a refresh fills the one not published, then publishes it with an atomic pointer store; nothing the handler
// may read is ever freed, and no refresh starts once a crash has begun.
//
// In the handler a PC outside the table (a library loaded since the last refresh) is looked up with
// `_dl_find_object` (glibc >= 2.35, documented async-signal-safe), and its build id is read from its
// program headers in mapped memory.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_recorder.h"

static cly_module_table tables[2];
static _Atomic(cly_module_table *) published;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long seen_adds = (unsigned long long)-1;
static unsigned long long seen_subs = (unsigned long long)-1;

int cly_modules_read_build_id(uintptr_t load_bias, const void *phdrs, int phdr_count, uint8_t *out, int capacity) {
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)phdrs;
    for (int i = 0; i < phdr_count; i++) {
        if (ph[i].p_type != PT_NOTE) continue;
        const uint8_t *note = (const uint8_t *)(load_bias + ph[i].p_vaddr);
        const uint8_t *end = note + ph[i].p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *header = (const ElfW(Nhdr) *)note;
            size_t name_size = (header->n_namesz + 3u) & ~3u;
            size_t desc_size = (header->n_descsz + 3u) & ~3u;
            const uint8_t *name = note + sizeof(ElfW(Nhdr));
            const uint8_t *desc = name + name_size;
            if (desc + header->n_descsz > end) break;
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                int n = (int)header->n_descsz < capacity ? (int)header->n_descsz : capacity;
                memcpy(out, desc, (size_t)n);
                return n;
            }
            note = desc + desc_size;
        }
    }
    return 0;
}

/// Base (first PT_LOAD page) and size (extent of the PT_LOAD segments) of a loaded object.
static void load_extent(uintptr_t bias, const ElfW(Phdr) *ph, int count, uintptr_t *base, uintptr_t *size) {
    uintptr_t low = UINTPTR_MAX;
    uintptr_t high = 0;
    for (int i = 0; i < count; i++) {
        if (ph[i].p_type != PT_LOAD) continue;
        uintptr_t start = (bias + ph[i].p_vaddr) & ~(uintptr_t)0xfff;
        uintptr_t end = bias + ph[i].p_vaddr + ph[i].p_memsz;
        if (start < low) low = start;
        if (end > high) high = end;
    }
    *base = low == UINTPTR_MAX ? bias : low;
    *size = high > low && low != UINTPTR_MAX ? high - low : 0;
}

static uint32_t pool_add(cly_module_table *table, const char *path) {
    size_t length = strlen(path);
    if (table->pool_used + length + 1 > CLY_MODULE_PATH_POOL) return UINT32_MAX;
    uint32_t offset = table->pool_used;
    memcpy(table->pool + offset, path, length + 1);
    table->pool_used += (uint32_t)length + 1;
    return offset;
}

typedef struct {
    cly_module_table *table;
    bool first;      // the first object of this iteration: where the loader's counters are compared
    bool unchanged;
} build_state;

static int add_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    build_state *state = data;
    if (state->first) {
        state->first = false;
        if (info->dlpi_adds == seen_adds && info->dlpi_subs == seen_subs) {
            state->unchanged = true;
            return 1;  // nothing loaded or unloaded since the last build
        }
        seen_adds = info->dlpi_adds;
        seen_subs = info->dlpi_subs;
    }
    cly_module_table *table = state->table;
    if (table->count == CLY_MAX_MODULES) return 1;
    cly_module *module = &table->modules[table->count];
    load_extent(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &module->base, &module->size);
    const char *path = info->dlpi_name;
    if (path == NULL || path[0] == 0) path = table->count == 0 ? cly_executable_path : "";
    module->path_offset = pool_add(table, path);
    if (module->path_offset == UINT32_MAX) return 1;
    module->build_id_length = (uint8_t)cly_modules_read_build_id(
        info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, module->build_id, (int)sizeof module->build_id);
    table->count++;
    return 0;
}

static void rebuild(void) {
    pthread_mutex_lock(&refresh_lock);
    if (atomic_load(&cly_crash_started) == 0) {
        cly_module_table *current = atomic_load(&published);
        cly_module_table *next = current == &tables[0] ? &tables[1] : &tables[0];
        next->count = 0;
        next->pool_used = 0;
        build_state state = {next, true, false};
        dl_iterate_phdr(add_module, &state);
        if (!state.unchanged && next->count > 0) {
            atomic_store(&published, next);
            cly_resume_points_refresh();  // the async walk's resume funclets of the objects loaded since
        }
    }
    pthread_mutex_unlock(&refresh_lock);
}

void cly_modules_build(void) { rebuild(); }

void cly_refresh_modules(void) { rebuild(); }

const cly_module_table *cly_modules_current(void) { return atomic_load(&published); }

bool cly_modules_copy(cly_module_table *out) {
    pthread_mutex_lock(&refresh_lock);  // no rebuild rewrites the published table meanwhile
    const cly_module_table *table = atomic_load(&published);
    if (table != NULL) memcpy(out, table, sizeof *out);
    pthread_mutex_unlock(&refresh_lock);
    return table != NULL;
}

int cly_module_count(void) {
    const cly_module_table *table = cly_modules_current();
    return table ? table->count : 0;
}

bool cly_modules_find_extra(uintptr_t pc, cly_module *out, char *path, size_t path_size) {
    struct dl_find_object found;
    if (_dl_find_object((void *)pc, &found) != 0) return false;  // glibc: async-signal-safe
    const struct link_map *map = found.dlfo_link_map;
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)found.dlfo_map_start;
    if (map == NULL || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) return false;
    const ElfW(Phdr) *phdrs = (const ElfW(Phdr) *)((const char *)header + header->e_phoff);
    load_extent(map->l_addr, phdrs, header->e_phnum, &out->base, &out->size);
    out->build_id_length = (uint8_t)cly_modules_read_build_id(
        map->l_addr, phdrs, header->e_phnum, out->build_id, (int)sizeof out->build_id);
    const char *name = map->l_name && map->l_name[0] ? map->l_name : cly_executable_path;
    size_t n = 0;
    while (name[n] != 0 && n + 1 < path_size) {
        path[n] = name[n];
        n++;
    }
    path[n] = 0;
    return true;
}

void cly_modules_extent(uintptr_t load_bias, const void *phdrs, int phdr_count, uintptr_t *base, uintptr_t *size) {
    load_extent(load_bias, (const ElfW(Phdr) *)phdrs, phdr_count, base, size);
}
