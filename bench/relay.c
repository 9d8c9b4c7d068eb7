/* Minimal blocking CONNECT relay for bench/proxy_ceiling.sh: the ceiling a proxy could
 * reach on this machine. One thread per direction, no filtering, no logging.
 *   relay PORT MODE [SIZE]   MODE: rw (read/write, SIZE-byte buffer, default 1 MiB)
 *                                  splice (via a pipe of SIZE bytes, default 1 MiB)
 *                                  raw-rw / raw-splice: no CONNECT; every connection goes
 *                                  to $RELAY_TARGET (ip:port)
 * A CONNECT to NAME:PORT goes to 127.0.0.2:PORT (the bench's upstream), like --map. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int use_splice, raw; static size_t sz = 1 << 20;
static struct sockaddr_in raw_to;
struct pair { int from, to; };

static void *pump(void *arg) {
  struct pair *p = arg;
  if (use_splice) {
    int pp[2]; if (pipe2(pp, O_CLOEXEC)) { perror("pipe"); exit(1); }
    fcntl(pp[1], F_SETPIPE_SZ, (int)sz);
    for (;;) {
      ssize_t n = splice(p->from, NULL, pp[1], NULL, sz, SPLICE_F_MOVE | SPLICE_F_MORE);
      if (n <= 0) break;
      while (n > 0) {
        ssize_t m = splice(pp[0], NULL, p->to, NULL, n, SPLICE_F_MOVE | SPLICE_F_MORE);
        if (m <= 0) goto out;
        n -= m;
      }
    }
  out: close(pp[0]); close(pp[1]);
  } else {
    char *b = malloc(sz);
    for (;;) {
      ssize_t n = read(p->from, b, sz);
      if (n <= 0) break;
      for (ssize_t o = 0; o < n;) { ssize_t m = write(p->to, b + o, n - o); if (m <= 0) goto done; o += m; }
    }
  done: free(b);
  }
  shutdown(p->to, SHUT_WR);
  return NULL;
}

static void *conn(void *arg) {
  int c = (int)(long)arg, one = 1;
  struct sockaddr_in to = raw_to;
  if (!raw) {
    char h[4096]; size_t n = 0;
    while (n < sizeof h - 1) {           /* read the head byte by byte: nothing past it */
      if (read(c, h + n, 1) != 1) { close(c); return NULL; }
      n++; h[n] = 0;
      if (n >= 4 && !memcmp(h + n - 4, "\r\n\r\n", 4)) break;
    }
    char *colon = strchr(h, ' '); colon = colon ? strchr(colon, ':') : NULL;
    if (strncmp(h, "CONNECT ", 8) || !colon) { close(c); return NULL; }
    memset(&to, 0, sizeof to); to.sin_family = AF_INET;
    to.sin_port = htons(atoi(colon + 1)); inet_pton(AF_INET, "127.0.0.2", &to.sin_addr);
  }
  int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(u, (void *)&to, sizeof to)) { close(u); close(c); return NULL; }
  setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!raw) { const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n"; write(c, ok, strlen(ok)); }
  struct pair a = {c, u}, b = {u, c}; pthread_t t;
  pthread_create(&t, NULL, pump, &b); pump(&a); pthread_join(t, NULL);
  close(u); close(c); return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: relay PORT rw|splice|raw-rw|raw-splice [SIZE]\n"); return 2; }
  const char *m = argv[2];
  if (!strncmp(m, "raw-", 4)) { raw = 1; m += 4; }
  use_splice = !strcmp(m, "splice");
  if (argc > 3) sz = strtoul(argv[3], NULL, 0);
  if (raw) {
    char t[64]; snprintf(t, sizeof t, "%s", getenv("RELAY_TARGET")); char *c = strrchr(t, ':'); *c = 0;
    raw_to.sin_family = AF_INET; raw_to.sin_port = htons(atoi(c + 1)); inet_pton(AF_INET, t, &raw_to.sin_addr);
  }
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (bind(l, (void *)&a, sizeof a) || listen(l, 512)) { perror("bind"); return 1; }
  for (;;) {
    int c = accept4(l, NULL, NULL, SOCK_CLOEXEC); if (c < 0) continue;
    pthread_t t; pthread_create(&t, NULL, conn, (void *)(long)c); pthread_detach(t);
  }
}
