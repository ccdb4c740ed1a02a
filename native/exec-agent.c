/*
 * lbot-exec-agent: runs box execs from inside a bwrap session instead of entering it per exec.
 *
 *   lbot-exec-agent listen SOCKET FD -- CMD [ARG...]
 *     On the host, before the sandbox exists: binds and listens on the unix socket SOCKET (owner only,
 *     in the session's private dir, which is never mounted into the sandbox), moves it to FD and
 *     replaces itself with CMD (bwrap), which passes FD down to the sandbox's first process.
 *
 *   lbot-exec-agent serve FD -- CMD [ARG...]
 *     Inside the sandbox as its PID 1 (bwrap --as-pid-1): already in the session's namespaces and
 *     cgroup, under no-new-privs and the seccomp filter. Runs CMD (the idle keeper) as its child and
 *     exits when it does, which ends the session. Reaps orphans. Each connection gets a forked
 *     handler that runs one command in its own process group and streams its output back.
 *
 * Nothing in the sandbox can reach the listening socket: no path to it exists inside, the fd is
 * close-on-exec everywhere, and the agent and its handlers are not dumpable (their /proc fd entries
 * cannot be opened; ptrace is refused by the filter anyway). As PID 1 of the namespace the agent
 * cannot be killed or stopped from inside: the kernel drops those signals for an init without handlers.
 *
 * Protocol (integers little-endian). Request: "LBX1", u32 argc, u32 envc, u32 strings_len,
 * u32 stdin_len, strings_len bytes of NUL-terminated argv then env entries, stdin_len bytes of
 * stdin; then single control bytes: 'K' kills the command's process group. End of input before the
 * command exited kills it too. Reply frames: u8 type, u32 len, payload: 'O' stdout, 'E' stderr,
 * 'X' exit (u8 0 = exited / 1 = signaled, u8 value), 'D' done (both pipes at end of file),
 * 'F' refused (a message; nothing ran).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 4096
#define MAX_ENV 4096
#define MAX_STRINGS (4u << 20)
#define MAX_STDIN (1u << 30)
#define CHUNK 65536
#define REQUEST_TIMEOUT_SEC 10

static void die(const char *what) {
  fprintf(stderr, "lbot-exec-agent: %s: %s\n", what, strerror(errno));
  exit(125);
}

static int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int read_all(int fd, void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int frame(int conn, char type, const void *data, uint32_t len) {
  unsigned char head[5] = {(unsigned char)type, len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, (len >> 24) & 0xff};
  if (write_all(conn, head, sizeof head) != 0) return -1;
  return len > 0 ? write_all(conn, data, len) : 0;
}

static void refuse(int conn, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof msg) n = sizeof msg - 1;
  frame(conn, 'F', msg, (uint32_t)n);
}

static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Splits `n` NUL-terminated strings off `buf`; -1 when they do not fill it exactly. */
static int split(char *buf, size_t len, char **out, uint32_t n, size_t *used) {
  size_t at = *used;
  for (uint32_t i = 0; i < n; i++) {
    char *end = memchr(buf + at, '\0', len - at);
    if (at >= len || end == NULL) return -1;
    out[i] = buf + at;
    at = (size_t)(end - buf) + 1;
  }
  out[n] = NULL;
  *used = at;
  return 0;
}

static void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/* One connection: read the request, run the command, stream it back. Runs in a forked handler. */
static int handle(int conn) {
  struct timeval tv = {REQUEST_TIMEOUT_SEC, 0};
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  unsigned char head[20];
  if (read_all(conn, head, sizeof head) != 0) return 1;
  uint32_t argc = le32(head + 4), envc = le32(head + 8), slen = le32(head + 12), ilen = le32(head + 16);
  if (memcmp(head, "LBX1", 4) != 0) return refuse(conn, "bad request magic"), 1;
  if (argc < 1 || argc > MAX_ARGS || envc > MAX_ENV || slen > MAX_STRINGS || ilen > MAX_STDIN)
    return refuse(conn, "request over bounds (argc %u, envc %u, %u bytes of strings, %u of stdin)", argc, envc, slen, ilen), 1;
  char *strings = malloc(slen + 1);
  char **argv = calloc(argc + 1, sizeof *argv);
  char **envp = calloc(envc + 1, sizeof *envp);
  if (!strings || !argv || !envp) return refuse(conn, "out of memory"), 1;
  if (read_all(conn, strings, slen) != 0) return refuse(conn, "truncated request"), 1;
  size_t used = 0;
  if (split(strings, slen, argv, argc, &used) != 0 || split(strings, slen, envp, envc, &used) != 0 || used != slen)
    return refuse(conn, "malformed request strings"), 1;
  for (uint32_t i = 0; i < envc; i++)
    if (strchr(envp[i], '=') == NULL || envp[i][0] == '=') return refuse(conn, "malformed environment entry"), 1;
  tv.tv_sec = 0;
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

  int out[2], err[2], in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return refuse(conn, "pipe: %s", strerror(errno)), 1;
  if (ilen > 0 && pipe2(in, O_CLOEXEC) != 0) return refuse(conn, "pipe: %s", strerror(errno)), 1;
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return refuse(conn, "signalfd: %s", strerror(errno)), 1;
  pid_t pid = fork();
  if (pid < 0) return refuse(conn, "fork: %s", strerror(errno)), 1;
  if (pid == 0) {
    /* Own session and process group, so a timeout kills everything the command started. */
    setsid();
    int nul = ilen > 0 ? in[0] : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(125);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &chld, NULL);
    if (chdir("/") != 0) _exit(125);
    execve(argv[0], argv, envp);
    int code = errno == ENOENT ? 127 : 126;
    dprintf(2, "lbot-exec-agent: %s: %s\n", argv[0], strerror(errno));
    _exit(code);
  }
  close(out[1]);
  close(err[1]);
  if (in[0] >= 0) close(in[0]);
  set_nonblock(out[0]);
  set_nonblock(err[0]);
  if (in[1] >= 0) set_nonblock(in[1]);

  static char buf[CHUNK];
  static char pending[CHUNK];
  size_t pend_at = 0, pend_len = 0;
  uint32_t stdin_left = ilen;
  int out_open = 1, err_open = 1, exited = 0, conn_open = 1;
  while (out_open || err_open || !exited) {
    struct pollfd p[5] = {
        {sfd, POLLIN, 0},
        {out_open ? out[0] : -1, POLLIN, 0},
        {err_open ? err[0] : -1, POLLIN, 0},
        /* While stdin bytes wait for the child, the connection is not read (hang-ups still show). */
        {conn_open ? conn : -1, pend_len == 0 ? POLLIN : 0, 0},
        {in[1] >= 0 && pend_len > 0 ? in[1] : -1, POLLOUT, 0},
    };
    if (poll(p, 5, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[0].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) {
      }
      int status;
      if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
        exited = 1;
        unsigned char x[2] = {WIFSIGNALED(status) ? 1 : 0, (unsigned char)(WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status))};
        if (frame(conn, 'X', x, 2) != 0) return 1; /* exited already: nothing left to kill */
      }
    }
    for (int s = 1; s <= 2; s++) {
      if (!(p[s].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p[s].fd, buf, sizeof buf);
      if (n > 0 && frame(conn, s == 1 ? 'O' : 'E', buf, (uint32_t)n) != 0) {
        if (!exited) kill(-pid, SIGKILL);
        return 1;
      }
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        if (s == 1) out_open = 0;
        else err_open = 0;
      }
    }
    if (p[3].revents & (POLLIN | POLLHUP | POLLERR)) {
      size_t want = stdin_left > 0 ? (stdin_left < CHUNK ? stdin_left : CHUNK) : 1;
      ssize_t n = (p[3].revents & POLLIN) ? read(conn, stdin_left > 0 ? pending : buf, want) : 0;
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        /* The host gave up or died: a command still running must not outlive its caller. */
        conn_open = 0;
        if (!exited) kill(-pid, SIGKILL);
        if (exited) return 0;
      } else if (stdin_left > 0) {
        pend_at = 0;
        pend_len = (size_t)n;
        stdin_left -= (uint32_t)n;
      } else if (buf[0] == 'K' && !exited) {
        kill(-pid, SIGKILL);
      }
    }
    if (in[1] >= 0 && (p[4].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in[1], pending + pend_at, pend_len);
      if (n > 0) {
        pend_at += (size_t)n;
        pend_len -= (size_t)n;
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        /* The child closed its stdin: drop the rest of it. */
        pend_len = 0;
        close(in[1]);
        in[1] = -1;
      }
    }
    if (in[1] >= 0 && pend_len == 0 && stdin_left == 0) {
      close(in[1]);
      in[1] = -1;
    }
    if (in[1] < 0 && pend_len > 0) pend_len = 0;
  }
  frame(conn, 'D', NULL, 0);
  return 0;
}

static int listen_main(const char *sock, int fd, char **cmd) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  /* Long private dirs do not fit sun_path: bind by the last component from inside the dir. */
  const char *slash = strrchr(sock, '/');
  int dirfd = -1, cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (slash != NULL) {
    char dir[4096];
    size_t dl = (size_t)(slash - sock);
    if (dl >= sizeof dir) errno = ENAMETOOLONG, die("socket path");
    memcpy(dir, sock, dl);
    dir[dl > 0 ? dl : 1] = '\0';
    if (dl == 0) dir[0] = '/';
    dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0 || fchdir(dirfd) != 0) die("socket dir");
    sock = slash + 1;
  }
  if (strlen(sock) >= sizeof addr.sun_path) errno = ENAMETOOLONG, die("socket name");
  strcpy(addr.sun_path, sock);
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) die("socket");
  mode_t old = umask(0077);
  if (bind(s, (struct sockaddr *)&addr, sizeof addr) != 0) die("bind");
  umask(old);
  if (listen(s, 64) != 0) die("listen");
  if (cwd >= 0 && fchdir(cwd) != 0) die("chdir back");
  if (s != fd) {
    if (dup2(s, fd) < 0) die("dup2");
    close(s);
  }
  execvp(cmd[0], cmd);
  die(cmd[0]);
  return 125;
}

static int serve_main(int lfd, char **cmd) {
  if (fcntl(lfd, F_SETFD, FD_CLOEXEC) != 0) die("listening fd");
  /* Non-dumpable: processes of the sandbox (same uid) cannot open /proc/1/fd or attach to it. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) die("signalfd");
  pid_t keeper = fork();
  if (keeper < 0) die("fork");
  if (keeper == 0) {
    sigprocmask(SIG_UNBLOCK, &chld, NULL);
    signal(SIGPIPE, SIG_DFL);
    execvp(cmd[0], cmd);
    die(cmd[0]);
  }
  /* The keeper took what it needs (the ready pipe); the agent keeps only its socket and stdio. */
  for (int fd = 3; fd < 1024; fd++)
    if (fd != lfd && fd != sfd) close(fd);
  for (;;) {
    struct pollfd p[2] = {{sfd, POLLIN, 0}, {lfd, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (p[0].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) {
      }
      pid_t w;
      int status;
      while ((w = waitpid(-1, &status, WNOHANG)) > 0)
        if (w == keeper) return 0;
    }
    if (p[1].revents & POLLIN) {
      int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
      if (conn < 0) continue;
      pid_t h = fork();
      if (h == 0) {
        close(lfd);
        close(sfd);
        _exit(handle(conn));
      }
      if (h < 0) refuse(conn, "fork: %s", strerror(errno));
      close(conn);
    }
  }
}

int main(int argc, char **argv) {
  if (argc >= 6 && strcmp(argv[1], "listen") == 0 && strcmp(argv[4], "--") == 0) return listen_main(argv[2], atoi(argv[3]), argv + 5);
  if (argc >= 5 && strcmp(argv[1], "serve") == 0 && strcmp(argv[3], "--") == 0) return serve_main(atoi(argv[2]), argv + 4);
  fprintf(stderr, "usage: lbot-exec-agent listen SOCKET FD -- CMD [ARG...] | serve FD -- CMD [ARG...]\n");
  return 125;
}
