#include "cly_recorder.h"
int cly_placeholder(void) { return 0; }
