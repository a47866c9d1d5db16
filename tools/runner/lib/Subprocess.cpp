#include "wsv/runner/Subprocess.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace wsv {
namespace runner {

static void writeAll(int Fd, const std::string &S) {
  size_t Done = 0;
  while (Done < S.size()) {
    const ssize_t N = write(Fd, S.data() + Done, S.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return;
    Done += static_cast<size_t>(N);
  }
}

ChildOutcome runWatchedChild(const std::function<int(const EmitFn &Emit)> &Body,
                             uint32_t SilenceLimitMs) {
  ChildOutcome Out;
  int Fds[2];
  if (pipe(Fds) != 0) {
    Out.Error = std::string("pipe: ") + std::strerror(errno);
    return Out;
  }
  std::fflush(nullptr); // the child must not flush the parent's buffered output a second time
  const pid_t Pid = fork();
  if (Pid < 0) {
    Out.Error = std::string("fork: ") + std::strerror(errno);
    close(Fds[0]);
    close(Fds[1]);
    return Out;
  }
  if (Pid == 0) {
    close(Fds[0]);
    const int WriteFd = Fds[1];
    const int Code = Body([WriteFd](const std::string &Line) { writeAll(WriteFd, Line + "\n"); });
    close(WriteFd);
    // _exit: skip the CUDA runtime's exit handlers, which can block on a context whose kernel
    // never finishes; process teardown ends that kernel.
    _exit(Code);
  }
  close(Fds[1]);

  using Clock = std::chrono::steady_clock;
  auto LastLine = Clock::now();
  std::string Buffer;
  bool Eof = false;
  while (!Eof) {
    const auto Silent =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - LastLine).count();
    if (Silent >= SilenceLimitMs) {
      kill(Pid, SIGKILL);
      Out.Killed = true;
      break;
    }
    pollfd P{Fds[0], POLLIN, 0};
    const int Ready = poll(&P, 1, static_cast<int>(std::min<int64_t>(SilenceLimitMs - Silent, 1000)));
    if (Ready < 0 && errno != EINTR)
      break;
    if (Ready <= 0)
      continue;
    char Chunk[65536];
    const ssize_t N = read(Fds[0], Chunk, sizeof Chunk);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Eof = true;
      break;
    }
    Buffer.append(Chunk, static_cast<size_t>(N));
    size_t Nl;
    while ((Nl = Buffer.find('\n')) != std::string::npos) {
      Out.LastLine = Buffer.substr(0, Nl);
      Buffer.erase(0, Nl + 1);
      LastLine = Clock::now();
    }
  }
  close(Fds[0]);
  int WStatus = 0;
  while (waitpid(Pid, &WStatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(WStatus)) {
    Out.Exited = true;
    Out.ExitCode = WEXITSTATUS(WStatus);
  } else if (WIFSIGNALED(WStatus)) {
    Out.Signal = WTERMSIG(WStatus);
  }
  return Out;
}

} // namespace runner
} // namespace wsv
