#include <stdexcept>
#include <string>

#include "crash_demo_support.h"

namespace demo {

template <typename Payload> struct Widget {
    Payload payload;
    [[noreturn]] __attribute__((noinline)) void explode(const char *what) { throw std::runtime_error(what); }
};

}  // namespace demo

extern "C" __attribute__((noinline)) void demo_cxx_throw(const char *what) {
    demo::Widget<int> widget{42};
    widget.explode(what);
}

extern "C" int demo_cxx_catch(void) {
    try {
        demo::Widget<std::string> widget{"caught"};
        widget.explode("expected");
    } catch (const std::runtime_error &error) {
        return std::string(error.what()) == "expected" ? 1 : 0;
    }
    return 0;
}
