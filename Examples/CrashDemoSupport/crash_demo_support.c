#include "crash_demo_support.h"
void demo_placeholder(void) {}
