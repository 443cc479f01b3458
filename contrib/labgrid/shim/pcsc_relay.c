/* pcsc_relay.c: the exporter's side of a relayed pcscd, TCP to pcscd's Unix socket.
 *
 *   nfcbench-pcsc-relay BIND_ADDRESS UNIX_SOCKET
 *
 * Listens on BIND_ADDRESS (port chosen by the kernel; the exporter reads it from /proc), and
 * for each connection forks a child that connects to UNIX_SOCKET and copies bytes both ways
 * until either side closes. What socat's TCP-LISTEN:…,fork,nodelay UNIX-CONNECT:… does, with
 * three system calls per message crossing (poll, read, send) against socat 1.7.4's
 * fifteen or so. TCP_NODELAY on every accepted socket. Ends on SIGTERM; its children are in
 * its process group, which the exporter ends as a whole, and each also gets SIGTERM when the
 * relay itself dies (PR_SET_PDEATHSIG), so no connection outlives it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int copy(int from, int to, char *buf, size_t size) {
    ssize_t n = read(from, buf, size);
    if (n <= 0)
        return -1;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = send(to, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        off += w;
    }
    return 0;
}

static void serve(int tcp, const char *path) {
    int un = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (un < 0 || strlen(path) >= sizeof sa.sun_path) {
        perror("socket");
        _exit(1);
    }
    strcpy(sa.sun_path, path);
    if (connect(un, (struct sockaddr *)&sa, sizeof sa) < 0) {
        fprintf(stderr, "nfcbench-pcsc-relay: connect %s: %s\n", path, strerror(errno));
        _exit(1);
    }
    char buf[65536];
    struct pollfd p[2] = {{.fd = tcp, .events = POLLIN}, {.fd = un, .events = POLLIN}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        if (p[0].revents && copy(tcp, un, buf, sizeof buf) < 0)
            _exit(0);
        if (p[1].revents && copy(un, tcp, buf, sizeof buf) < 0)
            _exit(0);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: nfcbench-pcsc-relay BIND_ADDRESS UNIX_SOCKET\n");
        return 64;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *res;
    int rc = getaddrinfo(argv[1], "0", &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "nfcbench-pcsc-relay: %s: %s\n", argv[1], gai_strerror(rc));
        return 69;
    }
    int ls = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ls < 0 || bind(ls, res->ai_addr, res->ai_addrlen) < 0 || listen(ls, 64) < 0) {
        fprintf(stderr, "nfcbench-pcsc-relay: listen on %s: %s\n", argv[1], strerror(errno));
        return 69;
    }
    freeaddrinfo(res);
    signal(SIGCHLD, SIG_IGN); /* no zombies */
    pid_t relay = getpid();
    for (;;) {
        int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            perror("accept");
            return 1;
        }
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != relay) /* it died before the line above */
                _exit(0);
            close(ls);
            signal(SIGCHLD, SIG_DFL);
            serve(c, argv[2]);
        }
        close(c);
    }
}
