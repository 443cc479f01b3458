/* pcsc_tcp.c: an LD_PRELOAD shim that takes the relay's client-side hop out of a relayed pcscd.
 *
 * libpcsclite reaches pcscd through one AF_UNIX stream socket per context, at the path in
 * PCSCLITE_CSOCK_NAME. With this library preloaded, a connect() of an AF_UNIX socket to
 * exactly that path connects a TCP socket (TCP_NODELAY) to NFCBENCH_PCSC_TCP ("HOST:PORT",
 * "[V6]:PORT") instead and puts it on the caller's descriptor (dup3, keeping its O_NONBLOCK
 * and FD_CLOEXEC): libpcsclite then speaks its own protocol straight to the exporter's relay,
 * with no local relay process in between. Every other connect() is the real one.
 *
 * pcsc-lite sends each request as several small send()s (a header, a struct, then the APDU
 * for SCardTransmit). On a redirected socket those go out with MSG_MORE and are pushed as one
 * segment when the caller next waits for an answer (poll/ppoll/select for input, read, recv),
 * so the exporter's relay and pcscd wake once per request, not once per piece.
 * NFCBENCH_PCSC_TCP_COALESCE=0 turns that off.
 *
 * Built by scripts/install-deps (gcc -shared -fPIC … -ldl) into contrib/labgrid/build/;
 * nfcbench_labgrid.links preloads it when it is there, and keeps the socat relay otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FD 4096
#define CONNECT_TIMEOUT_S 10

/* 1: a redirected descriptor; 2: one that has corked bytes waiting for a push. */
static _Atomic unsigned char ours[MAX_FD];

static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_recv)(int, void *, size_t, int);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_close)(int);
static int (*real_socket)(int, int, int);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);

static void *next(const char *name) { return dlsym(RTLD_NEXT, name); }

__attribute__((constructor)) static void init(void) {
    real_connect = next("connect");
    real_send = next("send");
    real_sendto = next("sendto");
    real_read = next("read");
    real_recv = next("recv");
    real_poll = next("poll");
    real_ppoll = next("ppoll");
    real_select = next("select");
    real_close = next("close");
    real_socket = next("socket");
    real_accept4 = next("accept4");
}

static int coalesce(void) {
    const char *v = getenv("NFCBENCH_PCSC_TCP_COALESCE");
    return !(v && strcmp(v, "0") == 0);
}

static int is_ours(int fd) { return fd >= 0 && fd < MAX_FD && atomic_load(&ours[fd]) != 0; }

/* Push what MSG_MORE held back: setting TCP_NODELAY sends the pending segments (tcp(7)). */
static void push(int fd) {
    if (fd >= 0 && fd < MAX_FD) {
        unsigned char two = 2;
        if (atomic_compare_exchange_strong(&ours[fd], &two, 1)) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
    }
}

/* The TCP socket for "HOST:PORT" / "[HOST]:PORT", connected; -1 with errno set. */
static int dial(const char *target) {
    char host[256], port[16];
    const char *colon = strrchr(target, ':');
    if (!colon || colon == target || strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof port) {
        errno = EINVAL;
        return -1;
    }
    const char *h = target;
    size_t hl = (size_t)(colon - target);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof host) {
        errno = EINVAL;
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = 0;
    strcpy(port, colon + 1);

    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res) {
        errno = EHOSTUNREACH;
        return -1;
    }
    int s = -1, err = ECONNREFUSED;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        s = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct timeval tv = {CONNECT_TIMEOUT_S, 0}, none = {0, 0};
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect() */
        if (real_connect(s, a->ai_addr, a->ai_addrlen) == 0) {
            setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
            break;
        }
        err = errno;
        real_close(s);
        s = -1;
    }
    freeaddrinfo(res);
    if (s < 0)
        errno = err;
    return s;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    if (!real_connect)
        init();
    const char *path = getenv("PCSCLITE_CSOCK_NAME");
    const char *target = getenv("NFCBENCH_PCSC_TCP");
    if (!addr || addr->sa_family != AF_UNIX || !path || !*path || !target || !*target ||
        len <= offsetof(struct sockaddr_un, sun_path))
        return real_connect(fd, addr, len);
    const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
    size_t max = len - offsetof(struct sockaddr_un, sun_path);
    if (strnlen(un->sun_path, max) != strlen(path) || strncmp(un->sun_path, path, max) != 0)
        return real_connect(fd, addr, len);

    int fl = fcntl(fd, F_GETFL);
    int fdfl = fcntl(fd, F_GETFD);
    int s = dial(target);
    if (s < 0)
        return -1;
    if (dup3(s, fd, (fdfl >= 0 && (fdfl & FD_CLOEXEC)) ? O_CLOEXEC : 0) < 0) {
        int e = errno;
        real_close(s);
        errno = e;
        return -1;
    }
    real_close(s);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl);
    if (fd < MAX_FD)
        atomic_store(&ours[fd], 1);
    return 0;
}

ssize_t send(int fd, const void *buf, size_t n, int flags) {
    if (!real_send)
        init();
    if (is_ours(fd) && coalesce()) {
        atomic_store(&ours[fd], 2); /* before: a wait that follows the send always pushes */
        return real_send(fd, buf, n, flags | MSG_MORE);
    }
    return real_send(fd, buf, n, flags);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tl) {
    if (!real_sendto)
        init();
    if (is_ours(fd) && coalesce() && to == NULL) {
        atomic_store(&ours[fd], 2);
        return real_sendto(fd, buf, n, flags | MSG_MORE, NULL, 0);
    }
    return real_sendto(fd, buf, n, flags, to, tl);
}

ssize_t read(int fd, void *buf, size_t n) {
    if (!real_read)
        init();
    push(fd);
    return real_read(fd, buf, n);
}

ssize_t recv(int fd, void *buf, size_t n, int flags) {
    if (!real_recv)
        init();
    push(fd);
    return real_recv(fd, buf, n, flags);
}

static void push_polled(struct pollfd *fds, nfds_t n) {
    for (nfds_t i = 0; i < n; i++)
        if (fds[i].events & POLLIN)
            push(fds[i].fd);
}

int poll(struct pollfd *fds, nfds_t n, int timeout) {
    if (!real_poll)
        init();
    push_polled(fds, n);
    return real_poll(fds, n, timeout);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *mask) {
    if (!real_ppoll)
        init();
    push_polled(fds, n);
    return real_ppoll(fds, n, t, mask);
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *t) {
    if (!real_select)
        init();
    if (r)
        for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++)
            if (FD_ISSET(fd, r))
                push(fd);
    return real_select(nfds, r, w, e, t);
}

/* A new socket on a number a redirected one had (closed some way close() did not see) is not ours. */
static int fresh(int fd) {
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&ours[fd], 0);
    return fd;
}

int socket(int domain, int type, int protocol) {
    if (!real_socket)
        init();
    return fresh(real_socket(domain, type, protocol));
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    if (!real_accept4)
        init();
    return fresh(real_accept4(fd, addr, len, 0));
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    if (!real_accept4)
        init();
    return fresh(real_accept4(fd, addr, len, flags));
}

int close(int fd) {
    if (!real_close)
        init();
    if (fd >= 0 && fd < MAX_FD)
        atomic_store(&ours[fd], 0);
    return real_close(fd);
}
