/*
 * lbot-seccomp-exec FILTER CMD [ARG...]
 *
 * The first program of every exec that enters a bwrap box session: it sets no-new-privileges,
 * loads the classic BPF seccomp filter from FILTER (struct sock_filter[], as written by
 * src/core/box/seccomp.ts) and replaces itself with CMD. Processes that join a session with
 * nsenter do not inherit the holder's filter, so each one installs it here before running
 * anything the caller chose.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_FILTER_BYTES (4096 * 8)

static int fail(const char *what) {
  fprintf(stderr, "lbot-seccomp-exec: %s: %s\n", what, strerror(errno));
  return 125;
}

int main(int argc, char **argv) {
  static struct sock_filter insns[MAX_FILTER_BYTES / sizeof(struct sock_filter)];
  if (argc < 3) {
    fprintf(stderr, "usage: lbot-seccomp-exec FILTER CMD [ARG...]\n");
    return 125;
  }
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("open filter");
  size_t len = 0;
  for (;;) {
    ssize_t n = read(fd, (char *)insns + len, sizeof(insns) - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("read filter");
    if (n == 0) break;
    len += (size_t)n;
    if (len == sizeof(insns)) break;
  }
  close(fd);
  if (len == 0 || len % sizeof(struct sock_filter) != 0) {
    fprintf(stderr, "lbot-seccomp-exec: malformed filter (%zu bytes)\n", len);
    return 125;
  }
  struct sock_fprog prog = { .len = (unsigned short)(len / sizeof(struct sock_filter)), .filter = insns };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("no_new_privs");
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return fail("seccomp");
  execvp(argv[2], argv + 2);
  int code = errno == ENOENT ? 127 : 126;
  fprintf(stderr, "lbot-seccomp-exec: %s: %s\n", argv[2], strerror(errno));
  return code;
}
