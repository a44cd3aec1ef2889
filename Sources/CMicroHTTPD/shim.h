#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/random.h>
#include <microhttpd.h>

/*
 * Swift cannot call C variadic functions, and casting a function pointer to
 * intptr_t (as MHD_OPTION_ARRAY wants) is best left to the C compiler. These
 * wrappers are the whole C surface the HTTPServer module needs beyond the
 * plain (non-variadic) libmicrohttpd functions.
 */

/* The URI log callback type (MHD_OPTION_URI_LOG_CALLBACK has no typedef in microhttpd.h). */
typedef void *(*CMicroHTTPD_URILogCallback)(void *cls, const char *uri, struct MHD_Connection *connection);

/* Starts a daemon with the options given as an MHD_OPTION_ARRAY terminated by CMicroHTTPD_option_end(). */
static inline struct MHD_Daemon *CMicroHTTPD_start_daemon(unsigned int flags,
                                                          uint16_t port,
                                                          MHD_AccessHandlerCallback handler,
                                                          void *handler_cls,
                                                          const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

static inline struct MHD_OptionItem CMicroHTTPD_option_end(void) {
    struct MHD_OptionItem item = { MHD_OPTION_END, 0, NULL };
    return item;
}

/* Options whose single argument is an `unsigned int` (limits, timeout, pool size, backlog). */
static inline struct MHD_OptionItem CMicroHTTPD_option_uint(enum MHD_OPTION option, unsigned int value) {
    struct MHD_OptionItem item = { option, (intptr_t) value, NULL };
    return item;
}

/* Options whose single argument is a `size_t` (memory limit, memory increment). */
static inline struct MHD_OptionItem CMicroHTTPD_option_size(enum MHD_OPTION option, size_t value) {
    struct MHD_OptionItem item = { option, (intptr_t) value, NULL };
    return item;
}

/* MHD_OPTION_SOCK_ADDR: the address is only read during MHD_start_daemon. */
static inline struct MHD_OptionItem CMicroHTTPD_option_sock_addr(const struct sockaddr *address) {
    struct MHD_OptionItem item = { MHD_OPTION_SOCK_ADDR, 0, (void *) address };
    return item;
}

static inline struct MHD_OptionItem CMicroHTTPD_option_notify_completed(MHD_RequestCompletedCallback callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) callback, cls };
    return item;
}

static inline struct MHD_OptionItem CMicroHTTPD_option_uri_log(CMicroHTTPD_URILogCallback callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t) callback, cls };
    return item;
}

/* MHD_OPTION_NOTIFY_CONNECTION: called when a TCP connection is accepted and when it is closed
   (before its socket is closed). */
static inline struct MHD_OptionItem CMicroHTTPD_option_notify_connection(MHD_NotifyConnectionCallback callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t) callback, cls };
    return item;
}

/* The port the daemon is bound to (useful after binding port 0); 0 if unknown. */
static inline uint16_t CMicroHTTPD_daemon_bind_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* Number of open connections of the daemon (all worker threads). */
static inline unsigned int CMicroHTTPD_daemon_current_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

/* The peer address of a connection, or NULL. Valid while the connection is. */
static inline const struct sockaddr *CMicroHTTPD_connection_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/* The socket of a connection, or -1. Valid while the connection is. */
static inline int CMicroHTTPD_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The socket context set by the connection notification callback, or NULL. */
static inline void *CMicroHTTPD_connection_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/* getrandom(2) (not exported by Swift's Glibc module): fills `buffer` from the kernel's generator. */
static inline ssize_t CMicroHTTPD_getrandom(void *buffer, size_t length) {
    return getrandom(buffer, length, 0);
}

#endif
