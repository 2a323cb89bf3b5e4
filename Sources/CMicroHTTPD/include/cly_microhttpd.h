// libmicrohttpd for Swift, loaded on first use (see cly_library_loader.h): every function the collector
// uses, as a `cly_mhd_*` wrapper (the variadic ones with fixed arguments). <microhttpd.h> is included for
// types and constants only: the library is not linked, so calling an `MHD_*` function directly fails at
// link time. <microhttpd.h> expects the socket and integer types to be declared first.
#ifndef CLY_MICROHTTPD_H
#define CLY_MICROHTTPD_H

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// NULL once libmicrohttpd is loaded, else why it cannot be.
const char *cly_mhd_load_error(void);

/// Starts a daemon on `address` (IPv4, port 0 = any free port) with a thread per connection, the given
/// per-connection memory limit (bounds request headers), idle timeout, connections per client address (0: no
/// limit), open connections in all (0: libmicrohttpd's default), a completion callback to free contexts (given
/// `handler_context`), a callback told when each connection starts and closes, and an accept policy (NULL: none;
/// given `notify_context`). NULL when it cannot listen or libmicrohttpd cannot be loaded (`cly_mhd_load_error`
/// tells which).
struct MHD_Daemon *cly_mhd_start(const struct sockaddr_in *address, MHD_AccessHandlerCallback handler,
                                 void *handler_context, MHD_RequestCompletedCallback completed,
                                 size_t connection_memory_limit, unsigned int timeout_seconds,
                                 unsigned int per_ip_limit, unsigned int connection_limit,
                                 MHD_NotifyConnectionCallback notify, void *notify_context,
                                 MHD_AcceptPolicyCallback accept_policy);
/// Stops the daemon, closing connections and joining its threads.
void cly_mhd_stop_daemon(struct MHD_Daemon *daemon);
/// The port the daemon listens on (useful after binding port 0).
uint16_t cly_mhd_port(struct MHD_Daemon *daemon);

/// A response holding a private copy of `size` bytes at `buffer`.
struct MHD_Response *cly_mhd_response_copy(size_t size, const void *buffer);
/// A response streaming `size` bytes from `fd` (closed by libmicrohttpd with the response).
struct MHD_Response *cly_mhd_response_from_fd(uint64_t size, int fd);
enum MHD_Result cly_mhd_add_response_header(struct MHD_Response *response, const char *name, const char *value);
enum MHD_Result cly_mhd_queue_response(struct MHD_Connection *connection, unsigned int status,
                                       struct MHD_Response *response);
void cly_mhd_destroy_response(struct MHD_Response *response);

/// Calls `iterator` for each value of `kind` (headers, query arguments) of the request.
int cly_mhd_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind,
                                  MHD_KeyValueIterator iterator, void *context);
/// The client's IP address as text in `buffer` (empty when unknown). Returns `buffer`.
const char *cly_mhd_client_ip(struct MHD_Connection *connection, char *buffer, size_t size);

/// The connection's socket (-1 when unknown).
int cly_mhd_connection_fd(struct MHD_Connection *connection);

#endif
