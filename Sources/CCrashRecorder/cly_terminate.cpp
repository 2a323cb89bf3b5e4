// Monitor: uncaught C++ exceptions.
//
// `std::set_terminate` puts our hook in front of the previous terminate handler. The hook runs in normal
// code on the throwing thread (not in a signal handler), so demangling with `__cxa_demangle` (it allocates)
// and rethrowing to read `what()` are allowed here. It copies the type and the text into static buffers,
// writes the one report through the same path as a signal (cly_handle_crash, mechanism cxx_terminate),
// then calls the previous handler, which prints and aborts: the SIGABRT that follows finds the report
// written and only chains, so there is exactly one report.
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <exception>
#include <typeinfo>

#include "cly_internal.h"

namespace {

std::terminate_handler previous_handler = nullptr;
bool hook_installed = false;
char type_name[CLY_MAX_TYPE_NAME];
char what_text[CLY_MAX_MESSAGE];

void copy_text(char *out, size_t size, const char *text) {
    if (text == nullptr) {
        out[0] = 0;
        return;
    }
    std::strncpy(out, text, size - 1);
    out[size - 1] = 0;
}

[[noreturn]] void terminate_hook() {
    std::type_info *type = abi::__cxa_current_exception_type();
    const char *type_text = nullptr;
    const char *what = nullptr;
    if (type != nullptr) {
        int status = 0;
        char *demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
        copy_text(type_name, sizeof type_name, status == 0 && demangled ? demangled : type->name());
        std::free(demangled);
        type_text = type_name;
        try {
            throw;
        } catch (const std::exception &exception) {
            copy_text(what_text, sizeof what_text, exception.what());
            what = what_text;
        } catch (...) {
        }
    }
    if (type_text != nullptr) {
        cly_crash crash{};
        crash.signal_number = SIGABRT;
        crash.mechanism = CLY_MECHANISM_CXX_TERMINATE;
        crash.cxx_type = type_text;
        crash.cxx_what = what;
        cly_handle_crash(&crash);
    }
    // std::terminate without an active exception (a plain call) is left to the SIGABRT that follows.
    if (previous_handler != nullptr) previous_handler();
    std::abort();
}

}  // namespace

extern "C" void cly_terminate_install(void) {
    if (hook_installed) return;
    previous_handler = std::set_terminate(terminate_hook);
    hook_installed = true;
}
