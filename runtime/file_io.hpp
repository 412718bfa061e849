// The rules every file veda reads or writes follows (the machine profile and
// its cache, the learned history, the decision record and replay, the trace,
// `veda calibrate -o`):
//
//   reading    - regular files only (a symbolic link to one is fine), opened
//                with O_NONBLOCK so a FIFO cannot hang the caller, and at
//                most a caller-given size, so /dev/zero or a huge file cannot
//                exhaust memory. A FIFO, device, socket or directory is an
//                error naming what it is; nothing is read from it.
//   replacing  - (whole files: the profile, the history, `calibrate -o`) a
//                temporary with an unpredictable name, created O_EXCL |
//                O_NOFOLLOW in the target's own directory, renamed over the
//                target only if the target is absent or a regular file owned
//                by this user: a symbolic link, device node, FIFO or
//                directory is never replaced, nor someone else's file.
//   streaming  - (the decision record, the trace) opened O_NOFOLLOW |
//                O_NONBLOCK, accepted only if it is a regular file, truncated
//                only after that check; every write and the close are checked,
//                so a full disk is reported, not lost.
//   cache dir  - created with mode 0700; refused when it is a symbolic link,
//                not a directory, owned by another user, or writable by group
//                or others (anyone could plant files there).
//
// Every failure is reported as text naming the reason (errno's message, or
// "not a regular file (a FIFO)", ...); callers add the path and what they were
// doing. Nothing here throws but std::bad_alloc.
//
// Thread-safety: the free functions are; a FileWriter belongs to one thread
// at a time (its users lock).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace veda::detail {

// Size caps of the files veda reads. A profile is about 2 KB; a history holds
// at most 64 buckets of 8 samples per site and type; a record is one short
// line per decision (256 MiB is about 10^7 decisions); a trace keeps at most
// 2^17 spans of about 200 bytes.
inline constexpr std::size_t kProfileMaxBytes = std::size_t{4} << 20;
inline constexpr std::size_t kHistoryMaxBytes = std::size_t{64} << 20;
inline constexpr std::size_t kRecordMaxBytes = std::size_t{256} << 20;
inline constexpr std::size_t kTraceMaxBytes = std::size_t{256} << 20;

enum class Owner { Anyone, Me };  // whose file a read accepts (Me: geteuid())

struct FileText {
  bool ok = false;
  bool missing = false;  // nothing at the path (ENOENT): often not an error
  std::string text;      // the content, when ok
  std::string error;     // why not, when !ok
};

// Reads a whole regular file of at most `max_bytes`.
FileText read_file(const std::string& path, std::size_t max_bytes, Owner owner = Owner::Anyone);

// Replaces `path` with `text` through a temporary in its directory (see the
// rules above); a new file gets `mode` (less the umask). False and `why` on
// any failure, the temporary removed.
bool replace_file(const std::string& path, std::string_view text, unsigned mode, std::string& why);

// Creates `dir` and its missing parents with mode 0700 (existing ones are
// left as they are). False and `why` if a component cannot be made.
bool make_dirs(const std::string& dir, std::string& why);

// make_dirs, then checks that `dir` is private: a real directory (not a
// symbolic link), owned by this user, not writable by group or others.
bool ensure_private_dir(const std::string& dir, std::string& why);

// A file written in order, buffered (the decision record, the trace).
class FileWriter {
 public:
  FileWriter() = default;
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  ~FileWriter();  // closes; a failure then is lost, so call close() first

  // Creates or truncates `path` (mode 0666 less the umask): never through a
  // symbolic link, never blocking, a regular file only. False and `why` else.
  bool open(const std::string& path, std::string& why);
  // Buffers `s`; false once anything has failed (the first failure is kept).
  bool write(std::string_view s);
  bool flush();
  // Flushes and closes; false if this or any earlier write failed.
  bool close();
  bool is_open() const noexcept { return fd_ >= 0; }
  const std::string& error() const noexcept { return error_; }

 private:
  bool fail(const std::string& what, int err);
  int fd_ = -1;
  std::string buf_;
  std::string error_;
};

}  // namespace veda::detail
