#include "cly_microhttpd.h"

#include "cly_library_loader.h"

enum {
    START_DAEMON,
    STOP_DAEMON,
    GET_DAEMON_INFO,
    CREATE_FROM_BUFFER,
    CREATE_FROM_FD64,
    ADD_RESPONSE_HEADER,
    QUEUE_RESPONSE,
    DESTROY_RESPONSE,
    GET_CONNECTION_VALUES,
    GET_CONNECTION_INFO,
    SYMBOL_COUNT
};
static const char *const names[SYMBOL_COUNT] = {
    "MHD_start_daemon",        "MHD_stop_daemon",        "MHD_get_daemon_info",
    "MHD_create_response_from_buffer", "MHD_create_response_from_fd64", "MHD_add_response_header",
    "MHD_queue_response",      "MHD_destroy_response",   "MHD_get_connection_values",
    "MHD_get_connection_info",
};
static void *slots[SYMBOL_COUNT];
static struct cly_library microhttpd = {"libmicrohttpd.so.12", names, slots, SYMBOL_COUNT, NULL};

static int ready(void) { return cly_library_ready(&microhttpd); }

const char *cly_mhd_load_error(void) { return ready() ? NULL : microhttpd.error; }

// Daemons, connections and responses exist only once the library is loaded: the functions taking one call
// straight through; those that create one check first.
typedef struct MHD_Daemon *(*start_function)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                             MHD_AccessHandlerCallback, void *, ...);

struct MHD_Daemon *cly_mhd_start(const struct sockaddr_in *address, MHD_AccessHandlerCallback handler,
                                 void *handler_context, MHD_RequestCompletedCallback completed,
                                 size_t connection_memory_limit, unsigned int timeout_seconds,
                                 unsigned int per_ip_limit, unsigned int connection_limit,
                                 MHD_NotifyConnectionCallback notify, void *notify_context,
                                 MHD_AcceptPolicyCallback accept_policy) {
    if (!ready()) return NULL;
    // libmicrohttpd's own default (FD_SETSIZE - 4) when no limit is given.
    if (connection_limit == 0) connection_limit = 1020;
    // poll(), not select(): with select libmicrohttpd refuses every socket numbered at or above FD_SETSIZE (1024),
    // so a process holding a thousand descriptors (a busy collector, a test runner) could not listen or accept.
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
    return ((start_function)slots[START_DAEMON])(
        flags, ntohs(address->sin_port), accept_policy, notify_context, handler, handler_context,
        MHD_OPTION_SOCK_ADDR, address, MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, handler_context, MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context, MHD_OPTION_END);
}

void cly_mhd_stop_daemon(struct MHD_Daemon *daemon) { ((void (*)(struct MHD_Daemon *))slots[STOP_DAEMON])(daemon); }

uint16_t cly_mhd_port(struct MHD_Daemon *daemon) {
    typedef const union MHD_DaemonInfo *(*info_function)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
    const union MHD_DaemonInfo *info = ((info_function)slots[GET_DAEMON_INFO])(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

struct MHD_Response *cly_mhd_response_copy(size_t size, const void *buffer) {
    typedef struct MHD_Response *(*create_function)(size_t, void *, enum MHD_ResponseMemoryMode);
    if (!ready()) return NULL;
    return ((create_function)slots[CREATE_FROM_BUFFER])(size, (void *)buffer, MHD_RESPMEM_MUST_COPY);
}

struct MHD_Response *cly_mhd_response_from_fd(uint64_t size, int fd) {
    if (!ready()) return NULL;
    return ((struct MHD_Response * (*)(uint64_t, int)) slots[CREATE_FROM_FD64])(size, fd);
}

enum MHD_Result cly_mhd_add_response_header(struct MHD_Response *response, const char *name, const char *value) {
    typedef enum MHD_Result (*add_function)(struct MHD_Response *, const char *, const char *);
    return ((add_function)slots[ADD_RESPONSE_HEADER])(response, name, value);
}

enum MHD_Result cly_mhd_queue_response(struct MHD_Connection *connection, unsigned int status,
                                       struct MHD_Response *response) {
    typedef enum MHD_Result (*queue_function)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    return ((queue_function)slots[QUEUE_RESPONSE])(connection, status, response);
}

void cly_mhd_destroy_response(struct MHD_Response *response) {
    ((void (*)(struct MHD_Response *))slots[DESTROY_RESPONSE])(response);
}

int cly_mhd_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                  MHD_KeyValueIterator iterator, void *context) {
    typedef int (*values_function)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
    return ((values_function)slots[GET_CONNECTION_VALUES])(connection, kind, iterator, context);
}

const char *cly_mhd_client_ip(struct MHD_Connection *connection, char *buffer, size_t size) {
    typedef const union MHD_ConnectionInfo *(*info_function)(struct MHD_Connection *, enum MHD_ConnectionInfoType,
                                                             ...);
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info =
        ((info_function)slots[GET_CONNECTION_INFO])(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return buffer;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, (socklen_t)size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, (socklen_t)size);
    }
    return buffer;
}

int cly_mhd_connection_fd(struct MHD_Connection *connection) {
    typedef const union MHD_ConnectionInfo *(*info_function)(struct MHD_Connection *, enum MHD_ConnectionInfoType,
                                                             ...);
    const union MHD_ConnectionInfo *info =
        ((info_function)slots[GET_CONNECTION_INFO])(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}
