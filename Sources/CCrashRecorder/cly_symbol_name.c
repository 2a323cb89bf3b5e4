// Naming one address in the crash handler, for the crash's stderr line (cly_crash_line.c). The report itself
// carries raw addresses only; everything else is symbolicated later, off the crash path.
//
// What runs, in call order:
//   cly_symbol_describe
//     - _dl_find_object (glibc >= 2.35, documented async-signal-safe): the object holding the address, its load
//       bias and path (the executable's path from install);
//     - find_symbol: open the object's file, pread its ELF header and section headers, then scan `.symtab` (else
//       `.dynsym`) in chunks for the function containing the address, within the caller's budget (the line's:
//       CLY_CRASH_LINE_SYMBOL_CPU_BUDGET_MS, CLY_CRASH_LINE_SYMBOL_WALL_BUDGET_MS): a symbol table not in the
//       page cache, or a huge one, is given up rather than delay the death;
//     - cly_swift_readable_name: a Swift symbol's context, Module.Type.name (a small bounded reader of the
//       mangling's identifiers, word substitutions included; anything it does not know ends the name there);
//     - without a symbol: `<object file name>+0x<offset>`.
// Calls: open, pread, close, clock_gettime, _dl_find_object, string functions; static memory only.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_recorder.h"

#define SYMBOL_CHUNK 2730  // symbols read per pread (64 KiB)
#define MAX_SECTIONS 4096

static ElfW(Sym) symbol_chunk[SYMBOL_CHUNK];

bool cly_symbol_in_executable(uintptr_t address) {
    struct dl_find_object found;
    if (_dl_find_object((void *)address, &found) != 0 || found.dlfo_link_map == NULL) return false;
    const char *name = found.dlfo_link_map->l_name;
    return name == NULL || name[0] == 0;  // the main program's link map has an empty name
}

static bool read_exactly(int fd, void *out, size_t size, off_t offset) {
    ssize_t n = pread(fd, out, size, offset);
    return n == (ssize_t)size;
}

/// The name of the function symbol containing `address` (a link-time address) in the ELF file `fd`, into `name`.
static bool find_symbol(int fd, uintptr_t address, const cly_symbol_budget *budget, char *name, size_t name_size) {
    ElfW(Ehdr) header;
    if (!read_exactly(fd, &header, sizeof header, 0) || memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(ElfW(Shdr)) ||
        header.e_shnum == 0 || header.e_shnum > MAX_SECTIONS)
        return false;
    ElfW(Shdr) symbols = {0}, dynamic_symbols = {0}, section;
    for (int i = 0; i < header.e_shnum; i++) {
        if (!read_exactly(fd, &section, sizeof section, (off_t)(header.e_shoff + (size_t)i * sizeof section)))
            return false;
        if (section.sh_type == SHT_SYMTAB) symbols = section;
        if (section.sh_type == SHT_DYNSYM) dynamic_symbols = section;
    }
    const ElfW(Shdr) *table = symbols.sh_size != 0 ? &symbols : &dynamic_symbols;
    ElfW(Shdr) strings;
    if (table->sh_size == 0 || table->sh_link >= header.e_shnum ||
        !read_exactly(fd, &strings, sizeof strings, (off_t)(header.e_shoff + table->sh_link * sizeof strings)))
        return false;
    size_t count = table->sh_size / sizeof(ElfW(Sym));
    bool found = false;
    ElfW(Sym) best = {0};
    for (size_t start = 0; start < count && !found; start += SYMBOL_CHUNK) {
        if (cly_monotonic_ns() > budget->wall_ns || cly_thread_cpu_ns() > budget->cpu_ns) return false;
        size_t n = count - start < SYMBOL_CHUNK ? count - start : SYMBOL_CHUNK;
        ssize_t got = pread(fd, symbol_chunk, n * sizeof(ElfW(Sym)), (off_t)(table->sh_offset + start * sizeof(ElfW(Sym))));
        if (got <= 0) return false;
        n = (size_t)got / sizeof(ElfW(Sym));
        for (size_t i = 0; i < n; i++) {
            const ElfW(Sym) *symbol = &symbol_chunk[i];
            int type = ELF64_ST_TYPE(symbol->st_info);
            if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol->st_shndx == SHN_UNDEF) continue;
            if (symbol->st_value <= address && address - symbol->st_value < symbol->st_size) {
                best = *symbol;
                found = true;
                break;
            }
        }
    }
    if (!found || best.st_name >= strings.sh_size) return false;
    size_t length = name_size - 1;
    if (length > strings.sh_size - best.st_name) length = strings.sh_size - best.st_name;
    ssize_t got = pread(fd, name, length, (off_t)(strings.sh_offset + best.st_name));
    if (got <= 0) return false;
    name[got] = 0;
    return name[0] != 0;
}

static size_t copy_text(char *out, size_t size, const char *text) {
    size_t n = strlen(text);
    if (n > size - 1) n = size - 1;
    memcpy(out, text, n);
    out[n] = 0;
    return n;
}

size_t cly_symbol_describe(uintptr_t address, const cly_symbol_budget *budget, char *out, size_t size) {
    if (size < 32) return 0;
    struct dl_find_object found;
    if (_dl_find_object((void *)address, &found) != 0 || found.dlfo_link_map == NULL) return 0;
    const char *path = found.dlfo_link_map->l_name;
    if (path == NULL || path[0] == 0) path = cly_executable_path;
    static char symbol[1024];
    int fd = path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    bool named = false;
    if (fd >= 0) {
        named = find_symbol(fd, address - found.dlfo_link_map->l_addr, budget, symbol, sizeof symbol);
        close(fd);
    }
    if (named) {
        size_t n = cly_swift_readable_name(symbol, out, size);
        return n > 0 ? n : copy_text(out, size, symbol);
    }
    const char *slash = strrchr(path, '/');
    size_t n = copy_text(out, size - 20, slash != NULL ? slash + 1 : path);
    uintptr_t offset = address - (uintptr_t)found.dlfo_map_start;
    out[n++] = '+';
    out[n++] = '0';
    out[n++] = 'x';
    int shift = 60;
    while (shift > 0 && ((offset >> shift) & 0xf) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) out[n++] = "0123456789abcdef"[(offset >> shift) & 0xf];
    out[n] = 0;
    return n;
}

// ---- Swift names: the identifiers of a mangled symbol's context (docs/ABI/Mangling.rst in the Swift repository)

#define MAX_WORDS 26

typedef struct {
    const char *text;
    size_t pos;
    int word_count;
    const char *words[MAX_WORDS];
    uint8_t word_lengths[MAX_WORDS];
    char *out;
    size_t size;
    size_t used;
} swift_name_reader;

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

static void emit(swift_name_reader *r, const char *text, size_t length) {
    if (r->out == NULL) return;
    if (r->used + length + 1 > r->size) length = r->used + 1 < r->size ? r->size - 1 - r->used : 0;
    memcpy(r->out + r->used, text, length);
    r->used += length;
    r->out[r->used] = 0;
}

static bool read_natural(swift_name_reader *r, size_t *value) {
    if (!is_digit(r->text[r->pos])) return false;
    size_t n = 0;
    while (is_digit(r->text[r->pos])) {
        n = n * 10 + (size_t)(r->text[r->pos++] - '0');
        if (n > 4096) return false;
    }
    *value = n;
    return true;
}

/// The words of an identifier's literal part, as the demangler collects them for later substitutions.
static void collect_words(swift_name_reader *r, const char *slice, size_t length) {
    int start = -1;
    for (size_t i = 0; i <= length; i++) {
        char c = i < length ? slice[i] : 0;
        bool ends = c == '_' || c == 0 || (i > 0 && !is_upper(slice[i - 1]) && is_upper(c));
        if (start >= 0 && ends) {
            if ((int)i - start >= 2 && r->word_count < MAX_WORDS) {
                r->words[r->word_count] = slice + start;
                r->word_lengths[r->word_count++] = (uint8_t)((int)i - start > 255 ? 255 : (int)i - start);
            }
            start = -1;
        }
        if (start < 0 && !is_digit(c) && c != '_' && c != 0) start = (int)i;
    }
}

/// Reads one identifier (plain, or with word substitutions) and emits it. False when there is none here.
static bool read_identifier(swift_name_reader *r) {
    if (!is_digit(r->text[r->pos])) return false;
    bool substitutions = false;
    if (r->text[r->pos] == '0') {
        if (r->text[r->pos + 1] == '0') return false;  // punycode: not read here
        r->pos++;
        substitutions = true;
    }
    do {
        while (substitutions && (is_lower(r->text[r->pos]) || is_upper(r->text[r->pos]))) {
            char c = r->text[r->pos++];
            int index = is_lower(c) ? c - 'a' : c - 'A';
            if (is_upper(c)) substitutions = false;
            if (index >= r->word_count) return false;
            emit(r, r->words[index], r->word_lengths[index]);
        }
        if (r->text[r->pos] == '0') {
            r->pos++;
            break;
        }
        size_t length = 0;
        if (!read_natural(r, &length) || length == 0 || memchr(r->text + r->pos, 0, length) != NULL) return false;
        emit(r, r->text + r->pos, length);
        collect_words(r, r->text + r->pos, length);
        r->pos += length;
    } while (substitutions);
    return true;
}

size_t cly_swift_readable_name(const char *symbol, char *out, size_t size) {
    if (symbol == NULL || out == NULL || size < 2 || strncmp(symbol, "$s", 2) != 0) return 0;
    swift_name_reader r = {.text = symbol, .pos = 2, .out = out, .size = size};
    out[0] = 0;
    if (symbol[2] == 's' && is_digit(symbol[3])) {  // the standard library's module
        emit(&r, "Swift", 5);
        r.pos++;
    } else if (!read_identifier(&r)) {
        return 0;
    }
    for (;;) {
        size_t pos = r.pos, used = r.used;
        emit(&r, ".", 1);
        if (!read_identifier(&r)) {
            r.pos = pos;
            r.used = used;
            out[used] = 0;
            break;
        }
        // A private declaration's discriminator follows its name (`<n>_<hash>LL`): not part of the name.
        size_t p = r.pos, length = 0;
        while (is_digit(symbol[p]) && length <= 64) length = length * 10 + (size_t)(symbol[p++] - '0');
        if (p > r.pos && symbol[r.pos] != '0' && length <= 64 && symbol[p] == '_' &&
            memchr(symbol + p, 0, length) == NULL && symbol[p + length] == 'L' && symbol[p + length + 1] == 'L') {
            collect_words(&r, symbol + p, length);
            r.pos = p + length + 2;
        }
        char kind = symbol[r.pos];
        if (kind == 'V' || kind == 'C' || kind == 'O' || kind == 'P') {
            r.pos++;  // a type: its members follow
            continue;
        }
        if (kind == 'E') {  // the module of an extension: the extended type's members follow
            r.pos++;
            r.used = used;
            out[used] = 0;
            continue;
        }
        // The declaration's own name: what follows is its signature. An initializer has no name, and what was read
        // is its first argument label: its signature ends in a function type then `fC` / `fc` (`…cfC`; `…LlfC`
        // for a private one).
        const char *rest = symbol + r.pos;
        if (strstr(rest, "cfC") != NULL || strstr(rest, "cfc") != NULL || strstr(rest, "LlfC") != NULL ||
            strstr(rest, "Llfc") != NULL) {
            r.used = used;
            out[used] = 0;
            emit(&r, ".init", 5);
        }
        break;
    }
    return r.used;
}
