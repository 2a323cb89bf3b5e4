// libmicrohttpd for Swift. <microhttpd.h> expects the socket and integer types to be declared first;
// `MHD_start_daemon` is variadic, so the daemon is started through one fixed-argument wrapper.
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// Starts a daemon on `address` (IPv4, port 0 = any free port) with a thread per connection, the given
/// per-connection memory limit (bounds request headers) and a completion callback to free contexts.
static inline struct MHD_Daemon *cly_mhd_start(const struct sockaddr_in *address,
                                                MHD_AccessHandlerCallback handler, void *handler_context,
                                                MHD_RequestCompletedCallback completed,
                                                size_t connection_memory_limit, unsigned int timeout_seconds) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    return MHD_start_daemon(flags, ntohs(address->sin_port), NULL, NULL, handler, handler_context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_END);
}

/// The port the daemon listens on (useful after binding port 0).
static inline uint16_t cly_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// A response holding a private copy of `size` bytes at `buffer`.
static inline struct MHD_Response *cly_mhd_response_copy(size_t size, const void *buffer) {
    return MHD_create_response_from_buffer(size, (void *)buffer, MHD_RESPMEM_MUST_COPY);
}

/// The client's IP address as text in `buffer` (empty when unknown). Returns `buffer`.
static inline const char *cly_mhd_client_ip(struct MHD_Connection *connection, char *buffer, size_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return buffer;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, (socklen_t)size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, (socklen_t)size);
    }
    return buffer;
}
