#define _GNU_SOURCE
// The baseline for savingsd's round-trip figures: the least a line server on a Unix socket can
// do. One thread per connection; every complete line read is written back unchanged.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void *serve(void *argument) {
    int fd = (int)(long)argument;
    char buffer[65536];
    size_t held = 0;
    for (;;) {
        ssize_t count = read(fd, buffer + held, sizeof buffer - held);
        if (count <= 0) break;
        held += (size_t)count;
        char *end = memrchr(buffer, '\n', held);
        if (end == NULL) {
            if (held == sizeof buffer) break;  // a line longer than the buffer: give up
            continue;
        }
        size_t lines = (size_t)(end - buffer) + 1;
        for (size_t sent = 0; sent < lines;) {
            ssize_t written = write(fd, buffer + sent, lines - sent);
            if (written <= 0) goto done;
            sent += (size_t)written;
        }
        memmove(buffer, buffer + lines, held - lines);
        held -= lines;
    }
done:
    close(fd);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bench-echo SOCKET\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof address.sun_path) {
        fprintf(stderr, "bench-echo: socket path too long\n");
        return 2;
    }
    strcpy(address.sun_path, argv[1]);
    unlink(argv[1]);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 128) != 0) {
        fprintf(stderr, "bench-echo: cannot listen on %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        pthread_t thread;
        if (pthread_create(&thread, NULL, serve, (void *)(long)fd) != 0) {
            close(fd);
            continue;
        }
        pthread_detach(thread);
    }
}
