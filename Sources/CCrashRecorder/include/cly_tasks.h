// Swift tasks as context: the id of the task running on a thread, and a task-scoped context (tags set for the
// duration of a task and its children) that the crash handler can read for the crashed thread's task.
#ifndef CLY_TASKS_H
#define CLY_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The id of the Swift task running on the calling thread (the runtime's task id, unique in the process), or 0
/// outside a task. Signal-safe (cly_tasks.c says why).
uint64_t cly_task_current_id(void);

/// A task context prepared for the crash handler: the JSON object of the tags (at most CLY_MAX_TASK_CONTEXT
/// bytes), behind a header the handler checks. Made and freed in normal code; immutable in between.
typedef struct cly_task_context cly_task_context;

/// Makes a task context holding `json` (one JSON object; cut contexts are refused: NULL). Normal code.
cly_task_context *cly_task_context_make(const char *json, size_t length);

/// Frees a context made by cly_task_context_make (when no task can hold it any more). Normal code.
void cly_task_context_free(cly_task_context *context);

/// Tells the crash handler where the task context lives: `key` is the `TaskLocal` object whose value (an
/// optional Swift class instance whose first stored property is the `cly_task_context *`) holds it. Normal code.
void cly_task_context_set_key(const void *key);

#ifdef __cplusplus
}
#endif

#endif
