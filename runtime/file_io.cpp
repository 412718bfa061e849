#include "runtime/file_io.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace veda::detail {
namespace {
std::string errno_text(int err) {
  char buf[256];
  return strerror_r(err, buf, sizeof buf);  // GNU: returns the message
}

// What a non-regular file is, for the error message.
std::string not_regular(mode_t m) {
  const char* what = S_ISFIFO(m)   ? "a FIFO"
                     : S_ISCHR(m)  ? "a character device"
                     : S_ISBLK(m)  ? "a block device"
                     : S_ISDIR(m)  ? "a directory"
                     : S_ISSOCK(m) ? "a socket"
                     : S_ISLNK(m)  ? "a symbolic link"
                                   : "of an unknown kind";
  return std::string("not a regular file (") + what + ")";
}

std::string size_text(std::size_t bytes) {
  char buf[48];
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
  else
    std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  return buf;
}

// Closes on every path out.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

bool write_all(int fd, const char* p, std::size_t n, int& err) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      return false;
    }
    if (w == 0) {  // never for a regular file; do not spin
      err = EIO;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// An unpredictable file-name suffix: a planted name cannot be guessed, and
// O_EXCL refuses whatever is there anyway.
std::string random_suffix() {
  unsigned char r[8] = {};
  if (::getrandom(r, sizeof r, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof r)) {
    // No entropy yet (early boot): still unique, and O_EXCL keeps it safe.
    static std::atomic<unsigned> counter{0};
    const auto t = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
    const unsigned long long v = t ^ (static_cast<unsigned long long>(::getpid()) << 32) ^ ++counter;
    std::memcpy(r, &v, sizeof r);
  }
  char buf[17];
  for (int i = 0; i < 8; ++i) std::snprintf(buf + 2 * i, 3, "%02x", r[i]);
  return buf;
}

// Why an existing target must not be replaced, or "" if it may be.
std::string refuse_target(const struct stat& st) {
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link (not replaced)";
  if (!S_ISREG(st.st_mode)) return "it is " + not_regular(st.st_mode) + " (not replaced)";
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + "; not replaced)";
  return {};
}

std::string strip_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}
}  // namespace

FileText read_file(const std::string& path, std::size_t max_bytes, Owner owner) {
  FileText r;
  struct stat st {};
  // Checked before opening too: opening a device node can have effects of its own.
  if (::stat(path.c_str(), &st) != 0) {
    r.missing = errno == ENOENT;
    r.error = errno_text(errno);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = not_regular(st.st_mode);
    return r;
  }
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.fd < 0) {
    r.missing = errno == ENOENT;
    r.error = errno_text(errno);
    return r;
  }
  // What was opened is what counts: the path may have changed since stat().
  if (::fstat(fd.fd, &st) != 0) {
    r.error = errno_text(errno);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = not_regular(st.st_mode);
    return r;
  }
  if (owner == Owner::Me && st.st_uid != ::geteuid()) {
    r.error = "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
              std::to_string(::geteuid()) + ")";
    return r;
  }
  const std::string too_large = "larger than the " + size_text(max_bytes) + " veda reads from such a file";
  if (st.st_size < 0 || static_cast<unsigned long long>(st.st_size) > max_bytes) {
    r.error = too_large + " (" + std::to_string(st.st_size) + " bytes)";
    return r;
  }
  r.text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = errno_text(errno);
      r.text.clear();
      return r;
    }
    if (n == 0) break;
    if (r.text.size() + static_cast<std::size_t>(n) > max_bytes) {  // it grew while being read
      r.error = too_large;
      r.text.clear();
      return r;
    }
    r.text.append(buf, static_cast<std::size_t>(n));
  }
  r.ok = true;
  return r;
}

bool replace_file(const std::string& path, std::string_view text, unsigned mode, std::string& why) {
  if (path.empty()) {
    why = "no path given";
    return false;
  }
  const std::string clean = strip_trailing_slashes(path);
  const std::size_t slash = clean.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : clean.substr(0, slash);
  const std::string name = slash == std::string::npos ? clean : clean.substr(slash + 1);
  if (name.empty() || name == "." || name == ".." || clean != path) {
    why = "not a file name";
    return false;
  }
  // Every step relative to one open directory: the temporary and the rename
  // are in the same directory even if its path is changed meanwhile.
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.fd < 0) {
    why = "cannot open the directory " + dir + ": " + errno_text(errno);
    return false;
  }
  struct stat st {};
  if (::fstatat(dfd.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (std::string r = refuse_target(st); !r.empty()) {
      why = r;
      return false;
    }
  } else if (errno != ENOENT) {
    why = errno_text(errno);
    return false;
  }
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = "." + name + ".tmp-" + random_suffix();
    fd = ::openat(dfd.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                  static_cast<mode_t>(mode));
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    why = "cannot create a temporary file in " + dir + ": " + errno_text(errno);
    return false;
  }
  auto give_up = [&](const std::string& what, int err) {
    ::unlinkat(dfd.fd, tmp.c_str(), 0);
    why = what + ": " + errno_text(err);
    return false;
  };
  int err = 0;
  if (!write_all(fd, text.data(), text.size(), err)) {
    ::close(fd);
    return give_up("cannot write", err);
  }
  if (::close(fd) != 0) return give_up("cannot write (at close)", errno);
  // Checked again just before the rename: the target may have appeared since.
  if (::fstatat(dfd.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (std::string r = refuse_target(st); !r.empty()) {
      ::unlinkat(dfd.fd, tmp.c_str(), 0);
      why = r;
      return false;
    }
  }
  // Atomic: concurrent readers see the old file or the new one, never half.
  if (::renameat(dfd.fd, tmp.c_str(), dfd.fd, name.c_str()) != 0) return give_up("cannot replace it", errno);
  return true;
}

bool make_dirs(const std::string& dir, std::string& why) {
  const std::string clean = strip_trailing_slashes(dir);
  if (clean.empty()) {
    why = "no directory given";
    return false;
  }
  for (std::size_t at = 1; at <= clean.size(); ++at) {
    if (at != clean.size() && clean[at] != '/') continue;
    const std::string part = clean.substr(0, at);
    if (part.back() == '/' || part == "." || part == "..") continue;
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      const int err = errno;
      struct stat st {};
      if (::stat(part.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;  // there, merely not ours to create
      why = "cannot create " + part + ": " + errno_text(err);
      return false;
    }
  }
  return true;
}

bool ensure_private_dir(const std::string& dir, std::string& why) {
  if (!make_dirs(dir, why)) return false;
  const std::string clean = strip_trailing_slashes(dir);
  struct stat st {};
  if (::lstat(clean.c_str(), &st) != 0) {
    why = errno_text(errno);
    return false;
  }
  if (S_ISLNK(st.st_mode)) {
    why = "it is a symbolic link";
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    why = "it is not a directory";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    why = "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
          std::to_string(::geteuid()) + ")";
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char m[8];
    std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    why = std::string("it is writable by group or others (mode ") + m + "; chmod 700 it)";
    return false;
  }
  return true;
}

FileWriter::~FileWriter() { close(); }

bool FileWriter::fail(const std::string& what, int err) {
  if (error_.empty()) error_ = what + errno_text(err);
  buf_.clear();
  return false;
}

bool FileWriter::open(const std::string& path, std::string& why) {
  close();
  error_.clear();
  // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of waiting for
  // one; with a reader it opens and fstat() refuses it. No O_TRUNC: nothing
  // is truncated before it is known to be a regular file.
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666));
  if (fd.fd < 0) {
    const int err = errno;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      why = not_regular(st.st_mode);
    else
      why = errno_text(err);
    return false;
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) {
    why = errno_text(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    why = not_regular(st.st_mode);
    return false;
  }
  if (::ftruncate(fd.fd, 0) != 0) {
    why = "cannot truncate it: " + errno_text(errno);
    return false;
  }
  const int flags = ::fcntl(fd.fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd.fd, F_SETFL, flags & ~O_NONBLOCK);
  fd_ = fd.release();
  return true;
}

bool FileWriter::write(std::string_view s) {
  if (fd_ < 0 || !error_.empty()) return false;
  buf_.append(s);
  return buf_.size() < (std::size_t{1} << 16) || flush();
}

bool FileWriter::flush() {
  if (fd_ < 0 || !error_.empty()) return false;
  int err = 0;
  if (!write_all(fd_, buf_.data(), buf_.size(), err)) return fail("", err);
  buf_.clear();
  return true;
}

bool FileWriter::close() {
  if (fd_ < 0) return error_.empty();
  const bool flushed = error_.empty() && flush();
  const int fd = fd_;
  fd_ = -1;
  // close() reports what delayed write-back could not store (NFS, quotas).
  if (::close(fd) != 0 && flushed) return fail("at close: ", errno);
  return flushed;
}

}  // namespace veda::detail
